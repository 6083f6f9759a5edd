// cpu.tuplemerge: TupleMerge (core/tmerge_core.hpp) for rule sets that change while traffic
// is classified.
//
// Readers: one ReadGuard section per classify call; the published version and table list are
// loaded once, so every key of a batch (on every thread) is answered from the same rule set.
// Keys advance G-Opt style in groups of kGroup: for each table (sorted by best, descending,
// and stopped once no key of the group can improve), the group's masked values are hashed and
// their slots prefetched, then the buckets are found and prefetched, then scanned.
// Writers (one at a time, a mutex): an update is applied for version v + 1 and v + 1 is
// published last (tmerge_image.hpp). Every kCollectEvery updates (or kMaxRetiredBytes of
// retired memory) the writer waits for readers (ReadGuard::synchronize), frees what was
// retired before, and collects the entries dead by then; so an update waits for readers only
// then, and its p99 is one bucket copy and a few slot stores.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "classify/core/tuple_core.hpp"
#include "classify/engines.hpp"
#include "classify/tmerge_image.hpp"
#include "core/parallel.hpp"
#include "warpath/core/read_guard.hpp"

namespace warpath::classify::detail {
namespace {

constexpr uint32_t kGroup           = 64;
constexpr uint32_t kMinPerThread    = 1u << 14;
constexpr uint32_t kCollectEvery    = 1024;
constexpr size_t kMaxRetiredBytes   = 8u << 20;

template <unsigned NW>
inline void probe_group(const core::TmTable<NW>& t, const uint32_t (*k)[NW], uint64_t version,
                        uint64_t* best, uint32_t m) {
  uint32_t u[kGroup][NW];
  uint64_t h[kGroup];
  uint32_t live[kGroup];
  uint64_t s[kGroup];
  uint32_t at[kGroup];
  uint32_t n = 0;
  for (uint32_t j = 0; j < m; ++j) {
    if (best[j] >= t.best) continue;
    core::tm_mask<NW>(t, k[j], u[n]);
    h[n] = core::tm_hash<NW>(u[n]);
    WARPATH_PREFETCH(&t.slots[uint32_t(h[n]) & t.cap_mask]);
    live[n++] = j;
  }
  // Stage 2: the slots (now cached) give the candidate buckets, prefetched.
  for (uint32_t l = 0; l < n; ++l) {
    at[l] = uint32_t(h[l]) & t.cap_mask;
    s[l]  = core::tm_next_tagged<NW>(t, h[l], at[l]);
    if (s[l]) {
      const core::TmBucket<NW>* b = core::tm_bucket_of<NW>(s[l]);
      WARPATH_PREFETCH(b);
      WARPATH_PREFETCH(core::tm_entries(b));
    }
  }
  // Stage 3: the bucket's value is checked and its entries scanned.

  for (uint32_t l = 0; l < n; ++l) {
    if (!s[l]) continue;
    const core::TmBucket<NW>* b = core::tm_find_from<NW>(t, u[l], h[l], at[l], s[l]);
    if (b) core::tm_scan<NW>(b, k[live[l]], version, best[live[l]]);
  }
}

template <unsigned NW>
void classify_range(const TmList<NW>& list, uint64_t version, const KeyBatch& keys,
                    uint32_t begin, uint32_t end, uint32_t* out) {
  const core::TmTable<NW>* tables = list.tables.data();
  const uint32_t n                = uint32_t(list.tables.size());
  uint32_t k[kGroup][NW];
  uint64_t best[kGroup];
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = std::min(kGroup, end - base);
    for (unsigned w = 0; w < NW; ++w)
      for (uint32_t j = 0; j < m; ++j) k[j][w] = keys.word(w, base + j);
    for (uint32_t j = 0; j < m; ++j) best[j] = 0;
    uint64_t floor = 0;
    for (uint32_t c = 0; c < n && floor < tables[c].best; ++c) {
      probe_group<NW>(tables[c], k, version, best, m);
      floor = best[0];
      for (uint32_t j = 1; j < m; ++j) floor = std::min(floor, best[j]);
    }
    for (uint32_t j = 0; j < m; ++j) out[base + j] = core::order_index(best[j]);
  }
}

template <unsigned NW>
class TupleMergeCpu final : public Classifier {
 public:
  explicit TupleMergeCpu(KeyLayout layout) : layout_(layout) {}

  Status init(const RuleSet& rules) {
    set_.set_building(true);
    for (uint32_t i = 0; i < rules.rules.size(); ++i) WARPATH_TRY(set_.insert(i, rules.rules[i], 0));
    set_.publish_list();
    set_.set_building(false);
    return Status::ok();
  }

  std::string_view id() const noexcept override { return "cpu.tuplemerge"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    ReadGuard::Section section(guard_);
    const uint64_t version = version_.load(std::memory_order_acquire);
    const TmList<NW>& list = *set_.list();
    parallel_ranges(keys.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      classify_range<NW>(list, version, keys, begin, end, out.data);
    });
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t next = version_.load(std::memory_order_relaxed) + 1;
    WARPATH_TRY(set_.insert(index, rule, next));
    return publish(next);
  }
  Status erase(uint32_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    const uint64_t next = version_.load(std::memory_order_relaxed) + 1;
    WARPATH_TRY(set_.erase(index, next));
    return publish(next);
  }

  ClassifierStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    ClassifierStats s;
    s.rules        = set_.rules();
    s.entries      = set_.rules();
    s.classes      = set_.tables();
    s.memory_bytes = set_.memory_bytes();
    char buf[96];
    std::snprintf(buf, sizeof buf, "%u tables, %.2f rules per table", set_.tables(),
                  set_.tables() ? double(s.rules) / set_.tables() : 0.0);
    s.detail = buf;
    return s;
  }

 private:
  // Mutex held: the list, then the version; collection every kCollectEvery updates.
  Status publish(uint64_t next) {
    set_.publish_list();
    version_.store(next, std::memory_order_release);
    if (++since_collect_ >= kCollectEvery || set_.retired_bytes() >= kMaxRetiredBytes) {
      guard_.synchronize();  // readers now take `next` or later
      set_.free_retired();
      set_.collect(next);
      since_collect_ = 0;
    }
    return Status::ok();
  }

  KeyLayout layout_;
  TmSet<NW> set_;
  std::atomic<uint64_t> version_{0};
  ReadGuard guard_;
  mutable std::mutex mutex_;
  uint32_t since_collect_ = 0;
};

template <unsigned NW>
Made make(const RuleSet& rules) {
  auto engine = std::make_unique<TupleMergeCpu<NW>>(rules.layout);
  WARPATH_TRY(engine->init(rules));
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace

Made make_cpu_tuplemerge(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return rules.layout == KeyLayout::kFiveTuple ? make<4>(rules) : make<9>(rules);
}

}  // namespace warpath::classify::detail
