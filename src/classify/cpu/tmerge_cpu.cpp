// cpu.tuplemerge: TupleMerge (core/tmerge_core.hpp) for rule sets that change while traffic
// is classified.
//
// Readers: one ReadGuard section per classify call; the published version and table list are
// loaded once, so every key of a batch (on every thread) is answered from the same rule set.
// Keys advance G-Opt style in groups of kGroup: for each table (sorted by best, descending,
// and stopped once no key of the group can improve), the group's masked values are hashed and
// their slots prefetched, then the buckets are found and prefetched, then scanned.
// Writers: TmWriter (tmerge_image.hpp), whose periodic collection waits for this engine's
// readers (ReadGuard::synchronize); so an update waits for readers only then, and its p99 is
// one bucket copy and a few slot stores.
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

// Probes table t for the group's active keys act[0, na) (each with best below t.best).
template <unsigned NW>
inline void probe_group(const core::TmTable<NW>& t, const uint32_t (*k)[NW], uint64_t version,
                        uint64_t* best, const uint32_t* act, uint32_t na) {
  uint32_t u[kGroup][NW];
  uint64_t h[kGroup], s[kGroup];
  uint32_t at[kGroup], found[kGroup];
  // Stage 1: mask, hash, prefetch the slot.
  for (uint32_t l = 0; l < na; ++l) {
    core::tm_mask<NW>(t, k[act[l]], u[l]);
    h[l] = core::tm_hash<NW>(u[l]);
    WARPATH_PREFETCH(&t.slots[uint32_t(h[l]) & t.cap_mask]);
  }
  // Stage 2: the slots (now cached) give the candidate buckets, prefetched.
  uint32_t nf = 0;
  for (uint32_t l = 0; l < na; ++l) {
    at[l] = uint32_t(h[l]) & t.cap_mask;
    s[l]  = core::tm_next_tagged<NW>(t, h[l], at[l]);
    WARPATH_PREFETCH(core::tm_entries(core::tm_bucket_of<NW>(s[l])));
    found[nf] = l;
    nf += s[l] != 0;
  }
  // Stage 3: the bucket's value is checked and its entries scanned.
  for (uint32_t f = 0; f < nf; ++f) {
    const uint32_t l = found[f];
    const uint64_t x = core::tm_find_from<NW>(t, u[l], h[l], at[l], s[l]);
    if (x) core::tm_scan<NW>(x, k[act[l]], version, best[act[l]]);
  }
}

// Keys advance through the tables (sorted by best, descending) while some table ahead could
// still improve them: after each table the active list keeps the keys whose best is below the
// next table's best, so a key leaves as soon as its answer is final.
template <unsigned NW>
void classify_range(const TmList<NW>& list, uint64_t version, const KeyBatch& keys,
                    uint32_t begin, uint32_t end, uint32_t* out) {
  const core::TmTable<NW>* tables = list.tables.data();
  const uint32_t n                = uint32_t(list.tables.size());
  uint32_t k[kGroup][NW];
  uint64_t best[kGroup];
  uint32_t act[kGroup];
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = std::min(kGroup, end - base);
    for (unsigned w = 0; w < NW; ++w)
      for (uint32_t j = 0; j < m; ++j) k[j][w] = keys.word(w, base + j);
    uint32_t na = 0;
    for (uint32_t j = 0; j < m; ++j) best[j] = 0, act[j] = j;
    na = n ? m : 0;
    for (uint32_t c = 0; c < n && na; ++c) {
      probe_group<NW>(tables[c], k, version, best, act, na);
      const uint64_t next = c + 1 < n ? tables[c + 1].best : 0;
      uint32_t kept       = 0;
      for (uint32_t l = 0; l < na; ++l) {
        act[kept] = act[l];
        kept += best[act[l]] < next;
      }
      na = kept;
    }
    for (uint32_t j = 0; j < m; ++j) out[base + j] = core::order_index(best[j]);
  }
}

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
      classify_range<NW>(list, version, keys, begin, end, out.data);
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
