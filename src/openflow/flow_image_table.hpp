// src/openflow/flow_image_table.hpp: one hash table of a flow image (FlowImage::Table), for
// the image's builder (flow_image.cpp) and its lookups (flow_lookup_body.hpp).
#pragma once
#include <cstdint>

#include "core/huge_pages.hpp"
#include "openflow/core/flow_hash_core.hpp"
#include "warpath/openflow/flow_table.hpp"

/// Whether this build has FlowImage's AVX-512 lookup (flow_image_avx512.cpp): x86-64 with
/// GCC, whose target pragma compiles it (clang ignores the pragma).
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__)
#define WARPATH_AVX512_LOOKUP 1
#else
#define WARPATH_AVX512_LOOKUP 0
#endif

namespace warpath::openflow {

inline constexpr bool kHaveAvx512Lookup = WARPATH_AVX512_LOOKUP;

/// An override table's tombstone (no live flow).
inline constexpr uint32_t kGone = 0xFFFF'FFFEu;

// The big arrays are on huge pages (core/huge_pages.hpp): a million-flow table then costs a
// handful of TLB entries instead of thousands.
struct FlowImage::Table {
  warpath::detail::LargeVector<core::Bucket> buckets;
  warpath::detail::LargeVector<core::Record> records;  ///< by slot
  packet::OfTuple mask{};
  uint64_t max_rank = 0;

  core::HashView view() const {
    return {buckets.data(), uint32_t(buckets.size() - 1), records.data(), mask};
  }
  size_t size() const { return records.size(); }
  void append(const packet::OfTuple& value, uint32_t flow) { records.push_back({value, flow}); }
  void build() {
    size_t n = 1;
    while (n * core::kBucketWays < 2 * records.size()) n <<= 1;  // at most half full
    buckets.assign(n, core::Bucket{});
    for (uint32_t s = 0; s < records.size(); ++s) place(s);
  }
  /// Whether `count` slots fit at most half full (place() needs a free way somewhere).
  bool room_for(size_t count) const { return count * 2 <= buckets.size() * core::kBucketWays; }
  /// Files slot s (records[s]) in its first bucket with a free way.
  void place(uint32_t s) {
    const uint32_t bmask = uint32_t(buckets.size() - 1);
    const uint64_t h     = core::hash_key(records[s].key);
    for (uint32_t b = uint32_t(h) & bmask;; b = (b + 1) & bmask) {
      core::Bucket& bk = buckets[b];
      uint32_t j       = 0;
      while (j < core::kBucketWays && bk.sig[j]) ++j;
      if (j == core::kBucketWays) continue;
      bk.sig[j]  = core::signature(h);
      bk.slot[j] = s;
      return;
    }
  }
  /// The slot holding `masked`, or core::kMiss.
  uint32_t find(const packet::OfTuple& masked) const {
    return buckets.empty() ? core::kMiss : core::find_slot(view(), masked, core::hash_key(masked));
  }
};

}  // namespace warpath::openflow
