// cpu.tuplemerge: TupleMerge (core/tmerge_core.hpp) for rule sets that change while traffic
// is classified.
//
// Readers: one ReadGuard section per classify call; the published version and table list are
// loaded once, so every key of a batch (on every thread) is answered from the same rule set.
// The probes: cpu/tmerge_probe.hpp.
// Writers: TmWriter (tmerge_image.hpp), whose periodic collection waits for this engine's
// readers (ReadGuard::synchronize); so an update waits for readers only then, and its p99 is
// one bucket copy and a few slot stores.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "classify/core/tuple_core.hpp"
#include "classify/engines.hpp"
#include "classify/cpu/tmerge_probe.hpp"
#include "classify/tmerge_image.hpp"
#include "core/parallel.hpp"
#include "warpath/core/read_guard.hpp"

namespace warpath::classify::detail {
namespace {

constexpr uint32_t kMinPerThread = 1u << 14;

template <unsigned NW>
class TupleMergeCpu final : public Classifier {
 public:
  explicit TupleMergeCpu(KeyLayout layout) : layout_(layout) {}

  Status init(const RuleSet& rules) { return writer_.init(rules); }

  std::string_view id() const noexcept override { return "cpu.tuplemerge"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    ReadGuard::Section section(guard_);
    const uint64_t version = writer_.version();
    const TmList<NW>& list = *writer_.set().list();
    parallel_ranges(keys.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      tm_lookup_range<NW>(list, version, keys, begin, end, out.data);
    });
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override {
    return writer_.update(true, index, &rule, &quiesce, &guard_);
  }
  Status erase(uint32_t index) override {
    return writer_.update(false, index, nullptr, &quiesce, &guard_);
  }

  ClassifierStats stats() const override {
    std::lock_guard<std::mutex> lock(writer_.mutex());
    return tm_stats(writer_.set());
  }

 private:
  static void quiesce(const void* guard) { static_cast<const ReadGuard*>(guard)->synchronize(); }

  KeyLayout layout_;
  TmWriter<NW> writer_;
  ReadGuard guard_;
};

}  // namespace

Made make_cpu_tuplemerge(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return make_by_width<TupleMergeCpu>(rules);
}

}  // namespace warpath::classify::detail
