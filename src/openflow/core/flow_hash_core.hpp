// src/openflow/core/flow_hash_core.hpp: the per-key body of the flow image's hash tables
// (flow_table.hpp: FlowImage), for the CPU engine and a CUDA kernel alike.
//
// A table: buckets of 8 (signature, slot) pairs in one 64-byte line; slot s holds the masked
// key keys[s] and its flow flows[s]. A key's hash picks its first bucket (low bits) and its
// signature (high bits, never 0: 0 marks an empty pair); a full bucket continues in the next.
// Images are immutable, so a probe stops at the first bucket with an empty pair.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/packet/flow_key.hpp"

namespace warpath::openflow::core {

inline constexpr uint32_t kBucketWays = 8;
inline constexpr uint32_t kMiss       = 0xFFFF'FFFFu;

struct alignas(64) Bucket {
  uint32_t sig[kBucketWays];
  uint32_t slot[kBucketWays];
};
static_assert(sizeof(Bucket) == 64, "a bucket is one cache line");

struct HashView {
  const Bucket* buckets         = nullptr;
  uint32_t bucket_mask          = 0;  ///< buckets - 1 (a power of two)
  const packet::OfTuple* keys   = nullptr;
  const uint32_t* flows         = nullptr;
  packet::OfTuple mask{};
};

WARPATH_HD packet::OfTuple apply_mask(const packet::OfTuple& k, const packet::OfTuple& m) {
  packet::OfTuple r;
  for (int i = 0; i < packet::kOfWords; ++i) r.w[i] = k.w[i] & m.w[i];
  return r;
}

WARPATH_HD uint64_t hash_key(const packet::OfTuple& k) {
  uint64_t h = 0x243F'6A88'85A3'08D3ull;
  for (int i = 0; i < packet::kOfWords; ++i) {
    h = (h ^ k.w[i]) * 0xFF51'AFD7'ED55'8CCDull;
    h ^= h >> 33;
  }
  h *= 0xC4CE'B9FE'1A85'EC53ull;
  return h ^ (h >> 29);
}

WARPATH_HD uint32_t signature(uint64_t h) { return uint32_t(h >> 32) | 1u; }

WARPATH_HD bool same_key(const packet::OfTuple& a, const packet::OfTuple& b) {
  uint32_t d = 0;
  for (int i = 0; i < packet::kOfWords; ++i) d |= a.w[i] ^ b.w[i];
  return d == 0;
}

/// The flow of `masked` (already masked with t.mask, hashed to h), or kMiss.
WARPATH_HD uint32_t probe(const HashView& t, const packet::OfTuple& masked, uint64_t h) {
  const uint32_t sig = signature(h);
  uint32_t b         = uint32_t(h) & t.bucket_mask;
  for (uint32_t step = 0; step <= t.bucket_mask; ++step, b = (b + 1) & t.bucket_mask) {
    const Bucket& bk = t.buckets[b];
    bool open        = false;
    for (uint32_t j = 0; j < kBucketWays; ++j) {
      if (bk.sig[j] == sig && same_key(t.keys[bk.slot[j]], masked)) return t.flows[bk.slot[j]];
      open |= bk.sig[j] == 0;
    }
    if (open) return kMiss;
  }
  return kMiss;
}

}  // namespace warpath::openflow::core
