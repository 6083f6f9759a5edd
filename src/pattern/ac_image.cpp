// The Aho-Corasick automaton of a literal set (ac_image.hpp): a trie of the lower-cased
// literals, failure links in breadth-first order, then the full transition table over byte
// classes and the output links.
#include <algorithm>
#include <deque>
#include <map>

#include "pattern/ac_image.hpp"
#include "pattern/regex/automaton.hpp"

namespace warpath::pattern::detail {
namespace {

uint8_t lower(uint8_t c) { return unsigned(c - 'A') < 26u ? uint8_t(c + 32) : c; }

}  // namespace

Result<AcImage> build_ac_image(const std::vector<Pattern>& patterns) {
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
  if (uint64_t(img.states) * img.width * 4 > kMaxAcTableBytes || img.states > core::kStateMask)
    return Status(Errc::kNotSupported,
                  "the automaton would have " + std::to_string(img.states) + " states x " +
                      std::to_string(img.width) + " classes, over the " +
                      std::to_string(kMaxAcTableBytes >> 20) + " MiB table limit");

  // Breadth first: failure links and the full table.
  std::vector<uint32_t> fail(img.states, 0);
  img.out_link.assign(img.states, 0);
  img.next.assign(size_t(img.states) * img.width, 0);
  std::vector<uint8_t> has(img.states, 0);
  std::deque<uint32_t> queue;
  for (const auto& [k, child] : kids[0]) {
    img.next[k] = child;
    queue.push_back(child);
  }
  std::vector<uint32_t> order;
  order.reserve(img.states);
  while (!queue.empty()) {
    const uint32_t s = queue.front();
    queue.pop_front();
    order.push_back(s);
    const uint32_t f = fail[s];
    img.out_link[s]  = own[f].empty() ? img.out_link[f] : f;
    has[s]           = !own[s].empty() || img.out_link[s] != 0;
    uint32_t* row        = &img.next[size_t(s) * img.width];
    const uint32_t* frow = &img.next[size_t(f) * img.width];
    std::copy(frow, frow + img.width, row);
    for (const auto& [k, child] : kids[s]) {
      fail[child] = frow[k] & core::kStateMask;
      row[k]      = child;
      queue.push_back(child);
    }
    std::map<uint8_t, uint32_t>().swap(kids[s]);
  }
  // The match bit on every entry whose target ends some literal.
  for (uint32_t& e : img.next)
    if (has[e & core::kStateMask]) e |= core::kMatchBit;
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

void keep_first_matches(const AcImage& image, std::vector<Match>& out, size_t from,
                        std::unordered_set<uint32_t>& reported) {
  if (image.single_match.empty()) return;
  size_t w = from;
  for (size_t r = from; r < out.size(); ++r) {
    const Match m = out[r];
    if (std::binary_search(image.single_match.begin(), image.single_match.end(), m.id) &&
        !reported.insert(m.id).second)
      continue;
    out[w++] = m;
  }
  out.resize(w);
}

}  // namespace warpath::pattern::detail
