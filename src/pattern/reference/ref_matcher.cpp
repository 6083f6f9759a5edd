// ref.pattern: the oracle. Each pattern's position automaton (regex/automaton.hpp) simulated on
// its own, one offset at a time: the positions a match may have reached, assertions checked
// against the bytes around the offset. Streams are kept whole and scanned at close.
// Deliberately naive: no shared automaton, no skipping beyond "nothing active and this byte
// cannot start a match".
#include <algorithm>

#include "pattern/engines.hpp"
#include "pattern/matches.hpp"
#include "pattern/regex/automaton.hpp"

namespace warpath::pattern::detail {
namespace {

struct Compiled {
  uint32_t id;
  Automaton a;
  ByteSet starts;           ///< bytes a first position consumes
  bool assertion_first;     ///< a first position is an assertion
};

void scan_one(const Compiled& c, const uint8_t* d, size_t n, std::vector<Match>& out) {
  const Automaton& a = c.a;
  const size_t np    = a.positions.size();
  std::vector<uint32_t> active, next, work;
  std::vector<uint64_t> seen(np, UINT64_MAX);  // the offset a position was last visited at
  for (size_t i = 0; i <= n; ++i) {
    if (active.empty() && !c.assertion_first && (i == n || !c.starts.test(d[i]))) continue;
    bool accept = false;
    work.clear();
    for (uint32_t p : active) {
      if (a.last[p]) accept = true;
      work.insert(work.end(), a.follow[p].begin(), a.follow[p].end());
    }
    work.insert(work.end(), a.first.begin(), a.first.end());
    next.clear();
    while (!work.empty()) {
      const uint32_t p = work.back();
      work.pop_back();
      if (seen[p] == i) continue;
      seen[p] = i;
      const Position& pos = a.positions[p];
      if (pos.assertion != Assertion::kNone) {
        if (!assertion_holds(pos.assertion, d, n, i)) continue;
        if (a.last[p]) accept = true;
        work.insert(work.end(), a.follow[p].begin(), a.follow[p].end());
      } else if (i < n && pos.bytes.test(d[i])) {
        next.push_back(p);
      }
    }
    if (accept) {  // at offset 0 only through ^ (an empty match, reported as Hyperscan does)
      out.push_back({c.id, i});
      if (a.single_match) return;
    }
    active.swap(next);
  }
}

class RefMatcher final : public Matcher {
 public:
  explicit RefMatcher(std::vector<Compiled> c) : compiled_(std::move(c)) {}
  std::string_view id() const noexcept override { return "ref.pattern"; }
  size_t patterns() const override { return compiled_.size(); }
  size_t database_bytes() const override {
    size_t b = 0;
    for (const Compiled& c : compiled_) {
      b += c.a.positions.size() * sizeof(Position);
      for (const auto& f : c.a.follow) b += f.size() * sizeof(uint32_t);
    }
    return b;
  }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    for (const Compiled& c : compiled_) scan_one(c, data, len, out);
    sort_unique(out, from);
    return Status::ok();
  }
  Result<std::unique_ptr<Stream>> open_stream() override { return open_whole_stream(*this); }

 private:
  std::vector<Compiled> compiled_;
};

}  // namespace

Result<std::unique_ptr<Matcher>> make_ref_matcher(const std::vector<Pattern>& patterns) {
  std::vector<Compiled> compiled;
  compiled.reserve(patterns.size());
  for (const Pattern& p : patterns) {
    auto a = build_automaton(p);
    if (!a.is_ok()) return a.status();
    Compiled c{p.id, std::move(*a), {}, false};
    for (uint32_t f : c.a.first) {
      if (c.a.positions[f].assertion != Assertion::kNone) c.assertion_first = true;
      else c.starts.merge(c.a.positions[f].bytes);
    }
    compiled.push_back(std::move(c));
  }
  return std::unique_ptr<Matcher>(std::make_unique<RefMatcher>(std::move(compiled)));
}

}  // namespace warpath::pattern::detail
