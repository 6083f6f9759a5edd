// Search DFAs for groups of regex patterns (dfa_image.hpp): the position automata of a group
// side by side, byte classes by partition refinement, subset construction with the start of
// every pattern added at every offset (an unanchored search), ^ holding only in the start state.
#include <algorithm>
#include <optional>
#include <unordered_map>

#include "pattern/dfa_image.hpp"
#include "pattern/regex/automaton.hpp"

namespace warpath::pattern::detail {
namespace {

struct Member {
  uint32_t id;
  const Automaton* a;
};

// Why an automaton cannot go into a DFA here ("" when it can).
std::string dfa_obstacle(const Automaton& a) {
  for (const Position& p : a.positions)
    if (p.assertion != Assertion::kNone && p.assertion != Assertion::kBegin)
      return "an assertion other than ^ and \\A ($, \\b, multi-line ^): left to the fallback";
  return {};
}

struct Merged {
  std::vector<const ByteSet*> bytes;  ///< nullptr: a ^ position
  std::vector<const std::vector<uint32_t>*> follow;
  std::vector<uint32_t> base;         ///< per member: its first global position
  std::vector<uint32_t> owner;        ///< per position: the member's id
  std::vector<uint8_t> last;
  std::vector<uint32_t> first_any;    ///< consuming first positions (any offset)
  std::vector<uint32_t> first_zero;   ///< consuming positions that may begin a match at offset 0
  std::vector<uint32_t> empty_ids;    ///< members with an empty match at offset 0
};

Merged merge(const std::vector<Member>& members) {
  Merged m;
  for (const Member& mem : members) {
    const auto base = uint32_t(m.bytes.size());
    m.base.push_back(base);
    for (size_t i = 0; i < mem.a->positions.size(); ++i) {
      const Position& p = mem.a->positions[i];
      m.bytes.push_back(p.assertion == Assertion::kNone ? &p.bytes : nullptr);
      m.follow.push_back(&mem.a->follow[i]);
      m.owner.push_back(mem.id);
      m.last.push_back(mem.a->last[i]);
    }
    // Offset 0: through ^ positions (which hold there) to the consuming ones.
    std::vector<uint32_t> work(mem.a->first.begin(), mem.a->first.end());
    std::vector<uint8_t> seen(mem.a->positions.size(), 0);
    bool empty = false;
    while (!work.empty()) {
      const uint32_t p = work.back();
      work.pop_back();
      if (seen[p]) continue;
      seen[p] = 1;
      if (mem.a->positions[p].assertion == Assertion::kNone) {
        m.first_zero.push_back(base + p);
      } else {
        empty = empty || mem.a->last[p];
        work.insert(work.end(), mem.a->follow[p].begin(), mem.a->follow[p].end());
      }
    }
    if (empty) m.empty_ids.push_back(mem.id);
    for (uint32_t f : mem.a->first)
      if (mem.a->positions[f].assertion == Assertion::kNone) m.first_any.push_back(base + f);
  }
  return m;
}

// Local follow ids are per member: a member's positions are contiguous from its base.
std::optional<DfaGroup> determinize(const std::vector<Member>& members, uint32_t budget) {
  Merged m = merge(members);
  DfaGroup g;
  g.patterns = members.size();
  // Byte classes: refine by every distinct byte set.
  uint16_t cls[256] = {};
  uint32_t width    = 1;
  {
    std::vector<ByteSet> distinct;
    for (const ByteSet* b : m.bytes)
      if (b && std::find(distinct.begin(), distinct.end(), *b) == distinct.end()) distinct.push_back(*b);
    for (const ByteSet& s : distinct) {
      std::unordered_map<uint32_t, uint16_t> remap;
      uint32_t n = 0;
      for (unsigned b = 0; b < 256; ++b) {
        const uint32_t key = uint32_t(cls[b]) * 2 + (s.test(b) ? 1 : 0);
        auto it = remap.find(key);
        if (it == remap.end()) it = remap.emplace(key, uint16_t(n++)).first;
        cls[b] = it->second;
      }
      width = n;
    }
  }
  g.width = width;
  std::vector<uint8_t> rep(width);
  for (unsigned b = 0; b < 256; ++b) {
    g.classes[b] = uint8_t(cls[b]);
    rep[cls[b]]  = uint8_t(b);
  }
  // Member of a global position: its base (for the local follow ids).
  std::vector<uint32_t> base_of(m.bytes.size());
  for (size_t k = 0; k < m.base.size(); ++k) {
    const uint32_t end = k + 1 < m.base.size() ? m.base[k + 1] : uint32_t(m.bytes.size());
    for (uint32_t p = m.base[k]; p < end; ++p) base_of[p] = m.base[k];
  }
  // States: sets of consuming positions just matched. Two special keys: the start (offset 0)
  // and every other state's sets.
  std::unordered_map<std::string, uint32_t> index;
  std::vector<std::vector<uint32_t>> sets;
  auto key_of = [](const std::vector<uint32_t>& s, bool start) {
    std::string k(reinterpret_cast<const char*>(s.data()), s.size() * 4);
    if (start) k.push_back('S');
    return k;
  };
  auto intern = [&](std::vector<uint32_t> s, bool start) -> std::optional<uint32_t> {
    const std::string k = key_of(s, start);
    auto it = index.find(k);
    if (it != index.end()) return it->second;
    if (sets.size() >= budget) return std::nullopt;
    const auto id = uint32_t(sets.size());
    index.emplace(k, id);
    sets.push_back(std::move(s));
    return id;
  };
  (void)intern({}, true);  // state 0: the start
  g.start = 0;
  std::vector<uint32_t> cand, next_set;
  for (uint32_t s = 0; s < sets.size(); ++s) {
    // Candidates: what may follow the set, and every pattern's start.
    cand.clear();
    const std::vector<uint32_t>& firsts = s == 0 ? m.first_zero : m.first_any;
    cand.insert(cand.end(), firsts.begin(), firsts.end());
    for (uint32_t q : sets[s])
      for (uint32_t f : *m.follow[q]) {
        const uint32_t gpos = base_of[q] + f;
        if (m.bytes[gpos]) cand.push_back(gpos);  // a ^ after a byte never holds
      }
    std::sort(cand.begin(), cand.end());
    cand.erase(std::unique(cand.begin(), cand.end()), cand.end());
    for (uint32_t c = 0; c < width; ++c) {
      next_set.clear();
      for (uint32_t q : cand)
        if (m.bytes[q]->test(rep[c])) next_set.push_back(q);
      auto id = intern(next_set, false);
      if (!id) return std::nullopt;
      g.next.push_back(*id);
    }
  }
  g.states = uint32_t(sets.size());
  // Accepts and the match bits.
  std::vector<uint8_t> has(g.states, 0);
  g.accept_begin.assign(g.states + 1, 0);
  std::vector<uint32_t> ids;
  for (uint32_t s = 0; s < g.states; ++s) {
    g.accept_begin[s] = uint32_t(g.accepts.size());
    ids.clear();
    for (uint32_t q : sets[s])
      if (m.last[q]) ids.push_back(m.owner[q]);
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    g.accepts.insert(g.accepts.end(), ids.begin(), ids.end());
    has[s] = !ids.empty();
  }
  g.accept_begin[g.states] = uint32_t(g.accepts.size());
  for (uint32_t& e : g.next)
    if (has[e]) e |= core::kDfaMatchBit;
  g.empty_at_start = m.empty_ids;
  std::sort(g.empty_at_start.begin(), g.empty_at_start.end());
  g.empty_at_start.erase(std::unique(g.empty_at_start.begin(), g.empty_at_start.end()), g.empty_at_start.end());
  return g;
}

}  // namespace

Result<DfaSet> build_dfa_set(const std::vector<Pattern>& patterns, uint32_t budget) {
  DfaSet set;
  std::vector<Automaton> autos;
  autos.reserve(patterns.size());
  std::vector<size_t> candidates;  // indexes of patterns that may go into a DFA
  for (size_t i = 0; i < patterns.size(); ++i) {
    auto a = build_automaton(patterns[i]);
    if (!a.is_ok()) return a.status();
    autos.push_back(std::move(*a));
    const std::string why = dfa_obstacle(autos.back());
    if (why.empty()) {
      candidates.push_back(i);
    } else {
      set.rest.push_back(patterns[i]);
      set.rest_why.push_back(why);
    }
  }
  // Patterns with a wide unbounded loop (.* and the like) multiply a DFA's states with every
  // other such pattern (Becchi and Crowley's "dot-star" blow-up): pack the others first,
  // densely, and the loopy ones after, by how many such loops they have.
  auto loops = [&](size_t i) {
    const Automaton& a = autos[i];
    uint32_t n = 0;
    for (size_t p = 0; p < a.positions.size(); ++p)
      if (a.positions[p].assertion == Assertion::kNone && a.positions[p].bytes.count() > 128 &&
          std::binary_search(a.follow[p].begin(), a.follow[p].end(), uint32_t(p)))
        ++n;
    return n;
  };
  std::vector<uint32_t> loop_count(patterns.size(), 0);
  for (size_t c : candidates) loop_count[c] = loops(c);
  std::stable_sort(candidates.begin(), candidates.end(),
                   [&](size_t x, size_t y) { return loop_count[x] < loop_count[y]; });
  // Greedy packing: try to add the next k candidates to the open group (k doubles while that
  // works and halves when it does not); a pattern that fits no group alone goes to the rest.
  std::vector<Member> open;
  std::optional<DfaGroup> open_dfa;
  std::vector<uint8_t> over_budget(patterns.size(), 0);
  size_t i = 0, k = 1;
  while (i < candidates.size()) {
    const size_t take = std::min(k, candidates.size() - i);
    std::vector<Member> trial = open;
    for (size_t j = 0; j < take; ++j)
      trial.push_back({patterns[candidates[i + j]].id, &autos[candidates[i + j]]});
    auto dfa = determinize(trial, budget);
    if (dfa) {
      open     = std::move(trial);
      open_dfa = std::move(dfa);
      i += take;
      k *= 2;
      continue;
    }
    if (take > 1) {
      k = take / 2;
      continue;
    }
    if (open.empty()) {  // alone over the budget
      over_budget[candidates[i]] = 1;
      set.rest.push_back(patterns[candidates[i]]);
      set.rest_why.push_back("its DFA exceeds " + std::to_string(budget) + " states: left to the fallback");
      ++i;
    } else {  // close the group, start a new one with this pattern
      set.groups.push_back(std::move(*open_dfa));
      open.clear();
      open_dfa.reset();
    }
    k = 1;
  }
  if (open_dfa) set.groups.push_back(std::move(*open_dfa));
  for (size_t c : candidates)
    if ((patterns[c].flags & kSingleMatch) && !over_budget[c]) set.single_match.push_back(patterns[c].id);
  std::sort(set.single_match.begin(), set.single_match.end());
  return set;
}

}  // namespace warpath::pattern::detail
