// cpu.dfa: regexes as a few search DFAs (dfa_image.hpp; core/dfa_core.hpp is the body shared
// with cuda.dfa), and a fallback matcher for the patterns no DFA takes: per pattern, Vectorscan
// where it is built and takes the pattern, else ref.pattern.
#include <algorithm>

#include "pattern/dfa_image.hpp"
#include "pattern/engines.hpp"
#include "pattern/matches.hpp"

namespace warpath::pattern::detail {
namespace {

class DfaCpuStream final : public Stream {
 public:
  DfaCpuStream(const DfaSet& set, std::unique_ptr<Stream> rest) : set_(set), rest_(std::move(rest)) {
    for (const DfaGroup& g : set_.groups) state_.push_back(g.start);
  }
  Status write(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    start(out);
    auto emit = [&out](uint32_t id, uint64_t end) { out.push_back({id, end}); };
    for (size_t k = 0; k < set_.groups.size(); ++k)
      state_[k] = core::dfa_scan(set_.groups[k].view(), state_[k], data, 0, len, offset_, emit);
    if (rest_) WARPATH_TRY(rest_->write(data, len, out));
    offset_ += len;
    sort_unique(out, from);
    keep_first_of(set_.single_match, out, from, reported_);
    return Status::ok();
  }
  Status close(std::vector<Match>& out) override {
    const size_t from = out.size();
    start(out);  // an empty stream has its empty matches at offset 0 too
    if (rest_) WARPATH_TRY(rest_->close(out));
    sort_unique(out, from);
    return Status::ok();
  }
  size_t state_bytes() const override {
    return state_.size() * 4 + 8 + (rest_ ? rest_->state_bytes() : 0);
  }

 private:
  // The empty matches at offset 0 (/^a?/), once.
  void start(std::vector<Match>& out) {
    if (started_) return;
    started_ = true;
    for (const DfaGroup& g : set_.groups)
      for (uint32_t id : g.empty_at_start) out.push_back({id, 0});
  }
  bool started_ = false;
  const DfaSet& set_;
  std::unique_ptr<Stream> rest_;
  std::vector<uint32_t> state_;
  uint64_t offset_ = 0;
  std::vector<uint32_t> reported_;
};

class DfaCpuMatcher final : public Matcher {
 public:
  DfaCpuMatcher(DfaSet set, std::unique_ptr<Matcher> rest, size_t n)
      : set_(std::move(set)), rest_(std::move(rest)), patterns_(n) {}
  std::string_view id() const noexcept override { return "cpu.dfa"; }
  size_t patterns() const override { return patterns_; }
  size_t database_bytes() const override {
    size_t b = rest_ ? rest_->database_bytes() : 0;
    for (const DfaGroup& g : set_.groups) b += g.bytes();
    return b;
  }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    auto emit = [&out](uint32_t id, uint64_t end) { out.push_back({id, end}); };
    for (const DfaGroup& g : set_.groups) {
      for (uint32_t id : g.empty_at_start) out.push_back({id, 0});
      core::dfa_scan(g.view(), g.start, data, 0, len, 0, emit);
    }
    if (rest_) WARPATH_TRY(rest_->scan(data, len, out));
    sort_unique(out, from);
    std::vector<uint32_t> reported;
    keep_first_of(set_.single_match, out, from, reported);
    return Status::ok();
  }
  Result<std::unique_ptr<Stream>> open_stream() override {
    std::unique_ptr<Stream> rest;
    if (rest_) {
      auto r = rest_->open_stream();
      if (!r.is_ok()) return r.status();
      rest = std::move(*r);
    }
    return std::unique_ptr<Stream>(std::make_unique<DfaCpuStream>(set_, std::move(rest)));
  }
  const DfaSet& set() const { return set_; }
  Matcher* rest() const { return rest_.get(); }

 private:
  DfaSet set_;
  std::unique_ptr<Matcher> rest_;
  size_t patterns_;
};

}  // namespace

namespace {

// Two matchers as one: Vectorscan for the patterns it takes, ref.pattern for the others.
class SplitMatcher final : public Matcher {
 public:
  SplitMatcher(std::unique_ptr<Matcher> a, std::unique_ptr<Matcher> b) : a_(std::move(a)), b_(std::move(b)) {}
  std::string_view id() const noexcept override { return a_->id(); }
  size_t patterns() const override { return a_->patterns() + b_->patterns(); }
  size_t database_bytes() const override { return a_->database_bytes() + b_->database_bytes(); }
  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    WARPATH_TRY(a_->scan(data, len, out));
    WARPATH_TRY(b_->scan(data, len, out));
    sort_unique(out, from);
    return Status::ok();
  }
  Result<std::unique_ptr<Stream>> open_stream() override {
    auto sa = a_->open_stream();
    if (!sa.is_ok()) return sa.status();
    auto sb = b_->open_stream();
    if (!sb.is_ok()) return sb.status();
    return std::unique_ptr<Stream>(std::make_unique<Both>(std::move(*sa), std::move(*sb)));
  }

 private:
  struct Both final : Stream {
    Both(std::unique_ptr<Stream> x, std::unique_ptr<Stream> y) : a(std::move(x)), b(std::move(y)) {}
    Status write(const uint8_t* d, size_t n, std::vector<Match>& out) override {
      const size_t from = out.size();
      WARPATH_TRY(a->write(d, n, out));
      WARPATH_TRY(b->write(d, n, out));
      sort_unique(out, from);
      return Status::ok();
    }
    Status close(std::vector<Match>& out) override {
      const size_t from = out.size();
      WARPATH_TRY(a->close(out));
      WARPATH_TRY(b->close(out));
      sort_unique(out, from);
      return Status::ok();
    }
    size_t state_bytes() const override { return a->state_bytes() + b->state_bytes(); }
    std::unique_ptr<Stream> a, b;
  };
  std::unique_ptr<Matcher> a_, b_;
};

}  // namespace

Result<std::unique_ptr<Matcher>> make_dfa_fallback(const std::vector<Pattern>& rest) {
  if (rest.empty()) return std::unique_ptr<Matcher>();
#if defined(WARPATH_HAVE_HS)
  // Per pattern: Vectorscan where it takes one (it streams in bounded state), ref.pattern for
  // the others (whose streams are kept whole until close: only what Vectorscan refuses).
  std::vector<Pattern> hs, ref;
  for (const Pattern& p : rest) (hs_supports(p).is_ok() ? hs : ref).push_back(p);
  if (!hs.empty()) {
    auto h = make_hs_matcher(hs);
    if (!h.is_ok()) return h.status();
    if (ref.empty()) return h;
    auto r = make_ref_matcher(ref);
    if (!r.is_ok()) return r.status();
    return std::unique_ptr<Matcher>(std::make_unique<SplitMatcher>(std::move(*h), std::move(*r)));
  }
#endif
  return make_ref_matcher(rest);
}

const DfaSet& dfa_set_of(const Matcher& cpu_dfa) {
  return dynamic_cast<const DfaCpuMatcher&>(cpu_dfa).set();
}
Matcher* dfa_fallback_of(const Matcher& cpu_dfa) {
  return dynamic_cast<const DfaCpuMatcher&>(cpu_dfa).rest();
}

Result<std::unique_ptr<Matcher>> make_dfa_cpu_matcher(const std::vector<Pattern>& patterns) {
  auto set = build_dfa_set(patterns);
  if (!set.is_ok()) return set.status();
  auto rest = make_dfa_fallback(set->rest);
  if (!rest.is_ok()) return rest.status();
  return std::unique_ptr<Matcher>(
      std::make_unique<DfaCpuMatcher>(std::move(*set), std::move(*rest), patterns.size()));
}

}  // namespace warpath::pattern::detail
