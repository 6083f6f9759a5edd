// cpu.tuple and cpu.bloom: tuple space search over the class tables of a TupleClassSet
// (GSwitch 4.2-4.3), with Open vSwitch's two subtable tricks:
//   - early termination: a table whose best order key cannot beat the best match found so far
//     is skipped, and tables after the hot ones are sorted by best so a group of keys stops
//     at the first table none of its keys can improve (OVS's priority-sorted subtables);
//   - ranking: the table that gave each (sampled) answer counts a hit; after 2^12, 2^14, ...
//     sampled hits a classify call that finds the writer idle publishes a version whose first
//     tables are the ones that hold most answers (OVS dpcls subtable ranking), so the best
//     match is usually found first and most other tables are skipped.
// Keys advance G-Opt style in groups of kGroup: for each table, the group's probes compute
// their slots and prefetch them, then compare. Large batches are split over ctx.threads.
// Updates change copies of the touched class tables (tuple_image.hpp) and publish the next
// version (update_version, no re-sort) by pointer swap. Reclamation is deferred: unpublished
// versions (and the tables only they hold) are retired, and one ReadGuard::synchronize frees
// all of them once kMaxRetired of them or kMaxRetiredBytes have piled up (or at destruction).
// That is safe because synchronize waits for every reader that entered before the call, and
// every retired version was unpublished before it; an update thus never waits for readers
// except on every kMaxRetired-th call, which took most of an update's time beside a busy
// reader (it waits for the reader's batch in flight).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <mutex>
#include <thread>
#include <vector>

#include "classify/engines.hpp"
#include "classify/tuple_image.hpp"
#include "core/parallel.hpp"
#include "warpath/core/read_guard.hpp"

namespace warpath::classify::detail {
namespace {

constexpr uint32_t kGroup         = 32;
constexpr uint32_t kMinPerThread  = 1u << 14;
constexpr size_t kMaxRetired      = 64;         ///< versions awaiting reclamation
constexpr size_t kMaxRetiredBytes = 16u << 20;  ///< their (and their own tables') bytes
/// Tables at least this large are updated left-right (TupleClassSet::set_quiesce). When their
/// spare is not free yet, those that would take longer to copy than readers' batches in flight
/// took to finish lately (reclaim() times them), and all from kCopyBytes on, wait for readers.
constexpr size_t kInPlaceBytes = 64u << 10;
constexpr size_t kCopyBytes    = 1u << 20;

// Probes table `t` (position c) for the keys of a group that it could still improve.
template <unsigned NW, bool kBloom>
inline void probe_table(const core::TupleTable& t, uint32_t c, const uint32_t (*k)[NW],
                        uint64_t* best, uint32_t* who, uint32_t m) {
  uint32_t idx[kGroup][core::kCuckooWays];
  uint32_t live[kGroup];
  uint32_t nlive = 0;
  // Stage 1: the keys this table could improve are masked and hashed, Bloom-tested, and
  // their candidate slots prefetched.
  for (uint32_t j = 0; j < m; ++j) {
    if (best[j] >= t.best) continue;
    uint32_t u[NW];
    core::tuple_mask<NW>(t, k[j], u);
    const uint32_t x = core::tuple_hash<NW>(u, t.ka);
    if (kBloom && !core::bloom_test(t, t.bloom, x)) continue;
    for (unsigned i = 0; i < core::kCuckooWays; ++i) {
      idx[nlive][i] = core::cuckoo_index(t, i, x);
      WARPATH_PREFETCH(t.slots + size_t(idx[nlive][i]) * core::slot_words(NW));
    }
    live[nlive++] = j;
  }
  // Stage 2: compare.
  for (uint32_t l = 0; l < nlive; ++l) {
    const uint32_t j = live[l];
    uint32_t u[NW];
    core::tuple_mask<NW>(t, k[j], u);
    uint64_t found = 0;
    for (unsigned i = 0; i < core::kCuckooWays; ++i) {
      const uint64_t f = core::slot_match<NW>(t.slots, idx[l][i], u);
      found            = f > found ? f : found;
    }
    if (found > best[j]) best[j] = found, who[j] = c;
  }
}

template <unsigned NW, bool kBloom>
uint64_t classify_range(const TupleVersion& v, const KeyBatch& keys, uint32_t begin, uint32_t end,
                        uint32_t* out) {
  const core::TupleTable* views = v.views.data();
  const uint32_t n = uint32_t(v.views.size()), hot = v.hot;
  uint32_t k[kGroup][NW];
  uint64_t best[kGroup];
  uint32_t who[kGroup];
  uint64_t samples = 0;
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = std::min(kGroup, end - base);
    for (unsigned w = 0; w < NW; ++w)
      for (uint32_t j = 0; j < m; ++j) k[j][w] = keys.word(w, base + j);
    for (uint32_t j = 0; j < m; ++j) best[j] = 0;
    for (uint32_t c = 0; c < hot; ++c) probe_table<NW, kBloom>(views[c], c, k, best, who, m);
    uint64_t floor = best[0];
    for (uint32_t j = 1; j < m; ++j) floor = std::min(floor, best[j]);
    for (uint32_t c = hot; c < n && floor < views[c].best; ++c) {
      probe_table<NW, kBloom>(views[c], c, k, best, who, m);
      floor = best[0];
      for (uint32_t j = 1; j < m; ++j) floor = std::min(floor, best[j]);
    }
    for (uint32_t j = 0; j < m; ++j) out[base + j] = core::order_index(best[j]);
    if (best[0] != 0) {  // one sampled answer per group
      v.tables[who[0]]->hits.fetch_add(1, std::memory_order_relaxed);
      ++samples;
    }
  }
  return samples;
}

class TupleCpu final : public Classifier {
 public:
  TupleCpu(KeyLayout layout, bool bloom, uint64_t seed) : set_(layout, seed, 0), bloom_(bloom) {}
  ~TupleCpu() override { delete current_.load(); }

  Status init(const RuleSet& rules) {
    set_.set_quiesce([this] { reclaim(); }, kInPlaceBytes, kCopyBytes);
    WARPATH_TRY(set_.add_all(rules));
    current_.store(make_version(set_.tables(), false).release());
    return Status::ok();
  }

  std::string_view id() const noexcept override { return bloom_ ? "cpu.bloom" : "cpu.tuple"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != set_.layout())
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    std::atomic<uint64_t> samples{0};
    parallel_ranges(keys.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      ReadGuard::Section section(guard_);
      const TupleVersion& v = *current_.load(std::memory_order_acquire);
      uint64_t s            = 0;
      if (set_.layout() == KeyLayout::kFiveTuple) {
        s = bloom_ ? classify_range<4, true>(v, keys, begin, end, out.data)
                   : classify_range<4, false>(v, keys, begin, end, out.data);
      } else {
        s = bloom_ ? classify_range<9, true>(v, keys, begin, end, out.data)
                   : classify_range<9, false>(v, keys, begin, end, out.data);
      }
      samples.fetch_add(s, std::memory_order_relaxed);
    });
    maybe_rerank(samples.load(std::memory_order_relaxed));
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override {
    std::lock_guard<std::mutex> lock(mutex_);
    changes_.clear();
    WARPATH_TRY(set_.insert(index, rule, &changes_));
    publish();
    return Status::ok();
  }
  Status erase(uint32_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    changes_.clear();
    WARPATH_TRY(set_.erase(index, &changes_));
    publish();
    return Status::ok();
  }

  ClassifierStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    ClassifierStats s = set_.stats();
    char buf[96];
    std::snprintf(buf, sizeof buf, "expansion %.2fx, %u tables",
                  s.rules ? double(s.entries) / double(s.rules) : 0.0,
                  unsigned(current_.load()->views.size()));
    s.detail = buf;
    return s;
  }

 private:
  // Writer (mutex held): the next version after changes_ (none: the tables are the same, e.g.
  // a rule shadowed by a better one with the same values); the old one is retired.
  void publish() {
    if (changes_.empty()) return;
    const TupleVersion* cur = current_.load(std::memory_order_relaxed);
    auto next               = update_version(*cur, changes_);
    retire(current_.exchange(next.release(), std::memory_order_acq_rel));
    for (const TableChange& c : changes_)
      if (c.before && !c.before_kept) retired_bytes_ += c.before->memory_bytes();
    changes_.clear();  // drop this call's references to the replaced tables
    if (retired_.size() >= kMaxRetired || retired_bytes_ >= kMaxRetiredBytes) reclaim();
  }

  // Mutex held: waits until no reader holds a retired version (or a table only they hold),
  // then frees them; the class set may then write its spare tables (left-right).
  // The wait is timed: a table is copied rather than waited for when copying it (at about
  // 10 bytes/ns) costs less than the recent waits (a moving average).
  void reclaim() {
    const auto t0 = std::chrono::steady_clock::now();
    guard_.synchronize();
    const double ns =
        std::chrono::duration<double, std::nano>(std::chrono::steady_clock::now() - t0).count();
    wait_ns_ = (3 * wait_ns_ + ns) / 4;
    set_.set_copy_bytes(size_t(std::min(wait_ns_ * 10, double(kCopyBytes))));
    retired_.clear();
    retired_bytes_ = 0;
    set_.quiesced();
  }

  // Mutex held: `v` was unpublished; freed after the next synchronize.
  void retire(const TupleVersion* v) const {
    retired_bytes_ += version_bytes(*v);
    retired_.emplace_back(v);
  }

  // A reader outside its section: re-ranks when enough answers were sampled and no writer is
  // busy. The old version is retired and freed by a later writer's synchronize (or at
  // destruction), so the reader never waits for other readers.
  void maybe_rerank(uint64_t samples) const {
    if (samples == 0) return;
    const uint64_t total = sampled_.fetch_add(samples, std::memory_order_relaxed) + samples;
    if (total < next_rank_.load(std::memory_order_relaxed) || !mutex_.try_lock()) return;
    std::lock_guard<std::mutex> lock(mutex_, std::adopt_lock);
    if (total < next_rank_.load(std::memory_order_relaxed)) return;
    next_rank_.store(total * 4, std::memory_order_relaxed);
    const TupleVersion* cur = current_.load(std::memory_order_relaxed);
    retire(current_.exchange(make_version(cur->tables, true).release(), std::memory_order_acq_rel));
  }

  TupleClassSet set_;
  bool bloom_;
  mutable std::atomic<const TupleVersion*> current_{nullptr};
  ReadGuard guard_;
  mutable std::mutex mutex_;
  mutable std::vector<std::unique_ptr<const TupleVersion>> retired_;
  mutable size_t retired_bytes_ = 0;
  std::vector<TableChange> changes_;  // the current update's (writer scratch)
  double wait_ns_ = 0;                // moving average of reclaim()'s synchronize
  mutable std::atomic<uint64_t> sampled_{0}, next_rank_{1u << 12};
};

}  // namespace

Made make_cpu_tuple(const RuleSet& rules, const ClassifyParams& params, bool bloom) {
  auto engine = std::make_unique<TupleCpu>(rules.layout, bloom, params.seed);
  WARPATH_TRY(engine->init(rules));
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace warpath::classify::detail
