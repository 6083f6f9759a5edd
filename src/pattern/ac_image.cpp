// The Aho-Corasick automaton of a literal set (ac_image.hpp): a trie of the lower-cased
// literals, failure links in breadth-first order, then the full transition table over byte
// classes and the output links.
#include <algorithm>
#include <map>

#include "pattern/ac_image.hpp"
#include "pattern/regex/automaton.hpp"

namespace warpath::pattern::detail {
namespace {

uint8_t lower(uint8_t c) { return unsigned(c - 'A') < 26u ? uint8_t(c + 32) : c; }

}  // namespace

Result<AcImage> build_ac_image(const std::vector<Pattern>& patterns, uint32_t dense_depth) {
  AcImage img;
  struct Lit {
    uint32_t id;
    std::string bytes;
    bool caseless;
  };
  std::vector<Lit> lits;
  lits.reserve(patterns.size());
  bool used[256] = {};
  for (const Pattern& p : patterns) {
    auto a = build_automaton(p);
    if (!a.is_ok()) return a.status();
    Lit l{p.id, {}, false};
    if (!as_literal(*a, l.bytes, l.caseless))
      return Status(Errc::kNotSupported, "pattern " + std::to_string(p.id) +
                                             (p.where.empty() ? "" : " (" + p.where + ")") +
                                             ": not a literal (cpu.ac and cuda.ac take literals only)");
    if (a->single_match) img.single_match.push_back(p.id);
    img.max_len = std::max<uint32_t>(img.max_len, uint32_t(l.bytes.size()));
    for (unsigned char c : l.bytes) used[lower(c)] = true;
    lits.push_back(std::move(l));
  }
  std::sort(img.single_match.begin(), img.single_match.end());
  // Byte classes: one per folded byte some literal uses; the rest share class 0.
  uint8_t class_of[256] = {};
  img.width = 1;
  for (unsigned b = 0; b < 256; ++b)
    if (used[b]) class_of[b] = uint8_t(img.width++);
  if (img.width > 256) img.width = 256;  // cannot happen: A-Z fold away
  for (unsigned b = 0; b < 256; ++b) img.classes[b] = class_of[lower(uint8_t(b))];

  // The trie (sparse children), its own outputs per state.
  std::vector<std::map<uint8_t, uint32_t>> kids(1);
  std::vector<std::vector<uint32_t>> own(1);  // indexes into lits
  for (uint32_t li = 0; li < lits.size(); ++li) {
    uint32_t s = 0;
    for (unsigned char c : lits[li].bytes) {
      const uint8_t k = img.classes[c];
      auto it         = kids[s].find(k);
      if (it == kids[s].end()) {
        it = kids[s].emplace(k, uint32_t(kids.size())).first;
        kids.emplace_back();
        own.emplace_back();
      }
      s = it->second;
    }
    own[s].push_back(li);
  }
  img.states = uint32_t(kids.size());
  if (img.states > core::kStateMask)
    return Status(Errc::kNotSupported, "the automaton would have " + std::to_string(img.states) + " states");

  // Breadth-first numbering (the root stays 0), depths and failure links.
  std::vector<uint32_t> bfs_id(img.states, 0), order{0}, depth(img.states, 0);
  order.reserve(img.states);
  for (size_t q = 0; q < order.size(); ++q)
    for (const auto& [k, child] : kids[order[q]]) {
      bfs_id[child] = uint32_t(order.size());
      depth[child]  = depth[order[q]] + 1;
      order.push_back(child);
    }
  std::vector<uint32_t> fail(img.states, 0);  // by old id
  auto go = [&](uint32_t st, uint8_t k) {  // the goto function through failure links
    while (true) {
      auto it = kids[st].find(k);
      if (it != kids[st].end()) return it->second;
      if (st == 0) return uint32_t(0);
      st = fail[st];
    }
  };
  for (uint32_t st : order)
    for (const auto& [k, child] : kids[st]) fail[child] = st == 0 ? 0 : go(fail[st], k);
  // Dense: every state up to dense_depth (a prefix of the breadth-first order).
  img.dense = 0;
  while (img.dense < img.states && depth[order[img.dense]] <= dense_depth) ++img.dense;
  if (uint64_t(img.dense) * img.width * 4 > kMaxAcTableBytes)
    return Status(Errc::kNotSupported,
                  "the automaton's dense part would have " + std::to_string(img.dense) + " states x " +
                      std::to_string(img.width) + " classes, over the " +
                      std::to_string(kMaxAcTableBytes >> 20) + " MiB table limit");
  // Outputs: own ones per state, the output link to the next suffix state that has some.
  std::vector<uint32_t> link(img.states, 0);  // by old id
  std::vector<uint8_t> has(img.states, 0);
  for (uint32_t st : order) {
    if (st == 0) continue;
    const uint32_t f = fail[st];
    link[st]         = own[f].empty() ? link[f] : f;
    has[st]          = !own[st].empty() || link[st] != 0;
  }
  auto entry = [&](uint32_t old) { return bfs_id[old] | (has[old] ? core::kMatchBit : 0u); };
  // Full rows of the dense states: a child, else the failure state's row (shallower: done).
  img.next.assign(size_t(img.dense) * img.width, 0);
  for (uint32_t n = 0; n < img.dense; ++n) {
    const uint32_t st = order[n];
    uint32_t* row     = &img.next[size_t(n) * img.width];
    if (st != 0) {
      const uint32_t* frow = &img.next[size_t(bfs_id[fail[st]]) * img.width];
      std::copy(frow, frow + img.width, row);
    }
    for (const auto& [k, child] : kids[st]) row[k] = entry(child);
  }
  // Sparse states: children and failure link.
  img.sparse_begin.assign(img.states - img.dense + 1, 0);
  img.fail.assign(img.states - img.dense, 0);
  for (uint32_t n = img.dense; n < img.states; ++n) {
    const uint32_t st                    = order[n];
    img.sparse_begin[n - img.dense]      = uint32_t(img.sparse_class.size());
    img.fail[n - img.dense]              = bfs_id[fail[st]];
    for (const auto& [k, child] : kids[st]) {
      img.sparse_class.push_back(k);
      img.sparse_next.push_back(entry(child));
    }
  }
  img.sparse_begin[img.states - img.dense] = uint32_t(img.sparse_class.size());
  img.out_link.assign(img.states, 0);
  for (uint32_t n = 0; n < img.states; ++n) img.out_link[n] = link[order[n]] ? bfs_id[link[order[n]]] : 0;
  // Own outputs per state in the new numbering.
  std::vector<std::vector<uint32_t>> own_new(img.states);
  for (uint32_t n = 0; n < img.states; ++n) own_new[n] = std::move(own[order[n]]);
  own.swap(own_new);
  // Outputs per state, in state order; case-sensitive literals keep their bytes to confirm.
  img.out_begin.assign(img.states + 1, 0);
  for (uint32_t s = 0; s < img.states; ++s) {
    img.out_begin[s] = uint32_t(img.outputs.size());
    for (uint32_t li : own[s]) {
      const Lit& l = lits[li];
      core::AcOutput o{l.id, uint32_t(l.bytes.size()), core::kNoConfirm};
      if (!l.caseless) {
        o.bytes = uint32_t(img.literals.size());
        img.literals.insert(img.literals.end(), l.bytes.begin(), l.bytes.end());
      }
      img.outputs.push_back(o);
    }
  }
  img.out_begin[img.states] = uint32_t(img.outputs.size());
  return img;
}

}  // namespace warpath::pattern::detail
