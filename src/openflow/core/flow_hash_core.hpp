// src/openflow/core/flow_hash_core.hpp: the per-key body of the flow image's hash tables
// (flow_table.hpp: FlowImage), for the CPU engine and a CUDA kernel alike.
//
// A table: buckets of 8 (signature, slot) pairs in one 64-byte line; slot s is a record, one
// line holding the masked key and its flow. A key's hash picks its first bucket (low bits) and
// its signature (high bits, never 0: 0 marks an empty pair); a full bucket continues in the
// next. Images are immutable, so a probe stops at the first bucket with an empty pair. A hit
// reads two lines, its bucket and its record. Keys (36 bytes) and flows in arrays of their own
// cost a third line per hit (the flow, read only after the compare) and, half the time, a
// fourth for a key across two: at a million flows, where lookups wait on memory, records took
// them from 39 to 17 ns. (A table of 64-byte entries holding the key without buckets was
// measured too: equal at 1M flows and 25% slower at 1K, where its lines fall out of L1:
// docs/adr/0012-openflow-switch.md.)
#pragma once
#include <cstdint>

#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
#include <emmintrin.h>
#endif

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

/// A slot: a masked key and the flow it answers, alone in its line.
struct alignas(64) Record {
  packet::OfTuple key;
  uint32_t flow;
};
static_assert(sizeof(Record) == 64, "a record is one cache line");

struct HashView {
  const Bucket* buckets = nullptr;
  uint32_t bucket_mask  = 0;  ///< buckets - 1 (a power of two)
  const Record* records = nullptr;
  packet::OfTuple mask{};
};

// Written out word by word on the device; on the host two SSE2 words and a scalar one (the
// compiler leaves a 9-iteration loop rolled at -O2, and these run for every key of every table
// probed).
WARPATH_HD packet::OfTuple apply_mask(const packet::OfTuple& k, const packet::OfTuple& m) {
  packet::OfTuple r;
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  const auto* kv = reinterpret_cast<const __m128i*>(k.w);
  const auto* mv = reinterpret_cast<const __m128i*>(m.w);
  auto* rv       = reinterpret_cast<__m128i*>(r.w);
  _mm_storeu_si128(rv, _mm_and_si128(_mm_loadu_si128(kv), _mm_loadu_si128(mv)));
  _mm_storeu_si128(rv + 1, _mm_and_si128(_mm_loadu_si128(kv + 1), _mm_loadu_si128(mv + 1)));
#else
  r.w[0] = k.w[0] & m.w[0];
  r.w[1] = k.w[1] & m.w[1];
  r.w[2] = k.w[2] & m.w[2];
  r.w[3] = k.w[3] & m.w[3];
  r.w[4] = k.w[4] & m.w[4];
  r.w[5] = k.w[5] & m.w[5];
  r.w[6] = k.w[6] & m.w[6];
  r.w[7] = k.w[7] & m.w[7];
#endif
  r.w[8] = k.w[8] & m.w[8];
  return r;
}

// The NH sum's mix, and the ninth word's product (it has no partner): both hash forms' own.
WARPATH_HD uint64_t nh_last(const packet::OfTuple& k) {
  return uint64_t(uint32_t(k.w[8] + 0xB55A'4F09u)) * 0x9E37'79B9u;
}
WARPATH_HD uint64_t nh_mix(uint64_t h) {
  h ^= h >> 31;
  h *= 0xC4CE'B9FE'1A85'EC53ull;
  return h ^ (h >> 29);
}

/// NH-style hash (as in UMAC): the key's words in pairs, each pair one 64-bit product of
/// 32-bit sums, the products summed, then mixed. The products are independent, so a CPU runs
/// them in parallel (about 10 cycles a key where a chained mix takes 40); the same function on
/// the device reads the same tables. This is the definition, word by word (the device's);
/// hash_key is the same function, vectorised on the host.
WARPATH_HD uint64_t hash_key_words(const packet::OfTuple& k) {
  const uint64_t a = uint64_t(uint32_t(k.w[0] + 0x9E37'79B9u)) * uint32_t(k.w[1] + 0x7F4A'7C15u);
  const uint64_t b = uint64_t(uint32_t(k.w[2] + 0x85EB'CA6Bu)) * uint32_t(k.w[3] + 0xC2B2'AE35u);
  const uint64_t c = uint64_t(uint32_t(k.w[4] + 0x27D4'EB2Fu)) * uint32_t(k.w[5] + 0x1656'67B1u);
  const uint64_t d = uint64_t(uint32_t(k.w[6] + 0xD3A2'646Cu)) * uint32_t(k.w[7] + 0xFD70'46C5u);
  return nh_mix(a + b + c + d + nh_last(k));
}

WARPATH_HD uint64_t hash_key(const packet::OfTuple& k) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  // Four of the products in two pmuludq (each 64-bit lane multiplies its even word by its odd
  // one): at 1K flows, where lookups are bound by instructions, 30% faster than word by word.
  const auto* kv  = reinterpret_cast<const __m128i*>(k.w);
  const __m128i x = _mm_add_epi32(
      _mm_loadu_si128(kv),
      _mm_set_epi32(int(0xC2B2'AE35u), int(0x85EB'CA6Bu), int(0x7F4A'7C15u), int(0x9E37'79B9u)));
  const __m128i y = _mm_add_epi32(
      _mm_loadu_si128(kv + 1),
      _mm_set_epi32(int(0xFD70'46C5u), int(0xD3A2'646Cu), int(0x1656'67B1u), int(0x27D4'EB2Fu)));
  const __m128i p = _mm_add_epi64(_mm_mul_epu32(x, _mm_srli_epi64(x, 32)),
                                  _mm_mul_epu32(y, _mm_srli_epi64(y, 32)));
  return nh_mix(uint64_t(_mm_cvtsi128_si64(_mm_add_epi64(p, _mm_unpackhi_epi64(p, p)))) +
                nh_last(k));
#else
  return hash_key_words(k);
#endif
}

WARPATH_HD uint32_t signature(uint64_t h) { return uint32_t(h >> 32) | 1u; }

WARPATH_HD int lowest_bit(uint32_t m) {
#if defined(__CUDA_ARCH__)
  return __ffs(int(m)) - 1;
#else
  return __builtin_ctz(m);
#endif
}

WARPATH_HD bool same_key(const packet::OfTuple& a, const packet::OfTuple& b) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  const auto* av  = reinterpret_cast<const __m128i*>(a.w);
  const auto* bv  = reinterpret_cast<const __m128i*>(b.w);
  const __m128i d = _mm_or_si128(_mm_xor_si128(_mm_loadu_si128(av), _mm_loadu_si128(bv)),
                                 _mm_xor_si128(_mm_loadu_si128(av + 1), _mm_loadu_si128(bv + 1)));
  return _mm_movemask_epi8(_mm_cmpeq_epi32(d, _mm_setzero_si128())) == 0xFFFF && a.w[8] == b.w[8];
#else
  const uint32_t d = (a.w[0] ^ b.w[0]) | (a.w[1] ^ b.w[1]) | (a.w[2] ^ b.w[2]) |
                     (a.w[3] ^ b.w[3]) | (a.w[4] ^ b.w[4]) | (a.w[5] ^ b.w[5]) |
                     (a.w[6] ^ b.w[6]) | (a.w[7] ^ b.w[7]) | (a.w[8] ^ b.w[8]);
  return d == 0;
#endif
}

/// The ways of bucket `bk` whose signature is `sig` (bit j: way j), and whether it has an empty
/// way (a probe ends there). SSE2 on the host (one compare for four ways), a loop on the device.
WARPATH_HD uint32_t sig_matches(const Bucket& bk, uint32_t sig, bool& open) {
#if defined(__SSE2__) && !defined(__CUDA_ARCH__)
  const __m128i s  = _mm_set1_epi32(int(sig)), z = _mm_setzero_si128();
  const __m128i lo = _mm_load_si128(reinterpret_cast<const __m128i*>(bk.sig));
  const __m128i hi = _mm_load_si128(reinterpret_cast<const __m128i*>(bk.sig + 4));
  const int m = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, s))) |
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, s))) << 4;
  const int e = _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(lo, z))) |
                _mm_movemask_ps(_mm_castsi128_ps(_mm_cmpeq_epi32(hi, z))) << 4;
  open = e != 0;
  return uint32_t(m);
#else
  uint32_t m = 0, e = 0;
  for (uint32_t j = 0; j < kBucketWays; ++j) {
    m |= uint32_t(bk.sig[j] == sig) << j;
    e |= uint32_t(bk.sig[j] == 0) << j;
  }
  open = e != 0;
  return m;
#endif
}

/// The slot holding `masked` (already masked with t.mask, hashed to h), or kMiss.
WARPATH_HD uint32_t find_slot(const HashView& t, const packet::OfTuple& masked, uint64_t h) {
  const uint32_t sig = signature(h);
  uint32_t b         = uint32_t(h) & t.bucket_mask;
  for (uint32_t step = 0; step <= t.bucket_mask; ++step, b = (b + 1) & t.bucket_mask) {
    const Bucket& bk = t.buckets[b];
    bool open        = false;
    for (uint32_t m = sig_matches(bk, sig, open); m; m &= m - 1) {
      const uint32_t slot = bk.slot[lowest_bit(m)];
      if (same_key(t.records[slot].key, masked)) return slot;
    }
    if (open) return kMiss;
  }
  return kMiss;
}

/// The flow of `masked` (already masked with t.mask, hashed to h), or kMiss.
WARPATH_HD uint32_t probe(const HashView& t, const packet::OfTuple& masked, uint64_t h) {
  const uint32_t slot = find_slot(t, masked, h);
  return slot == kMiss ? kMiss : t.records[slot].flow;
}

}  // namespace warpath::openflow::core
