// src/classify/core/tuple_core.hpp
//
// Tuple space search and Bloom search (GSwitch section 4.2-4.3, Algorithms 4 and 5): the one
// probe body of cpu.tuple, cpu.bloom, cuda.tuple and cuda.bloom. No STL, no CUDA includes.
//
// A class table (TupleTable) holds the entries of one class, i.e. of one mask vector after
// port ranges are expanded to prefixes (expand.hpp); the GPU splits classes of more than
// kGpuTableEntries entries into several tables with the same mask (GSwitch Table 2).
//
// Layout of a table (built by src/classify/tuple_image.cpp)
//   mask[w]        the class mask, key_words(layout) words.
//   slots          a cuckoo hash table of kCuckooWays subtables of d = 1 << log2d slots each;
//                  slot j of subtable i is at slots + ((i << log2d) + j) * (NW + 2). A slot is
//                  NW words of masked key value, then the 64-bit order_key() of the best
//                  entry with that value (low word first). An empty slot is all zero: its
//                  order key 0 is "no match", so a probe takes the maximum over the three
//                  candidate slots of (value equal ? order key : 0), without a branch.
//   hashing        x = tuple_hash(u, ka), a 32-bit hash of the masked key u (TUPLEHASH);
//                  subtable slot h_i(x) = ((a_i x + b_i) mod p) mod d with p = 2^61 - 1,
//                  1 <= a_i < 2^32 (so a_i x is exact in 64 bits) and 0 <= b_i < p.
//   bloom          m = 1 << (32 - bloom_shift) bits (a power of two, >= 64), k = 2 hash
//                  functions g_i(x) = (a_i x + b_i) >> (32 - log2 m) in 32-bit arithmetic
//                  (multiply-shift), a_i odd. Only the *.bloom engines read it.
//   best           the largest order key in the table: a key whose best match so far is at
//                  least `best` cannot be improved by this table, so the probe is skipped.
#pragma once
#include <cstdint>

#include "warpath/classify/rule.hpp"
#include "warpath/core/hd.hpp"

namespace warpath::classify::core {

inline constexpr unsigned kCuckooWays      = 3;
inline constexpr unsigned kBloomHashes     = 2;
inline constexpr uint64_t kHashPrime       = (uint64_t(1) << 61) - 1;
inline constexpr uint32_t kGpuTableEntries = 256;  ///< GSwitch Table 2: a table per 256 rules

/// One class table as the probe functions see it. Pointers are host or device memory.
struct TupleTable {
  uint32_t mask[kMaxKeyWords];
  uint32_t log2d;        ///< subtable size d = 1 << log2d
  uint32_t bloom_shift;  ///< 32 - log2 m
  uint32_t entries;      ///< distinct values stored
  uint32_t ga[kBloomHashes], gb[kBloomHashes];
  uint64_t ha[kCuckooWays], hb[kCuckooWays];
  uint64_t ka[kMaxKeyWords];  ///< tuple_hash multipliers
  uint64_t best;              ///< max order key in the table
  const uint32_t* slots;      ///< kCuckooWays << log2d slots of NW + 2 words
  const uint32_t* bloom;      ///< m / 32 words
};

/// Words of one slot for keys of NW words.
WARPATH_HD constexpr uint32_t slot_words(unsigned nw) { return nw + 2; }
WARPATH_HD constexpr uint32_t table_slot_words(unsigned nw, uint32_t log2d) {
  return slot_words(nw) * (kCuckooWays << log2d);
}
WARPATH_HD constexpr uint32_t bloom_words(uint32_t bloom_shift) {
  return (uint32_t(1) << (32 - bloom_shift)) / 32;
}

WARPATH_HD uint32_t rotl32(uint32_t x, unsigned r) { return (x << r) | (x >> (32 - r)); }

/// TUPLEHASH: a 32-bit hash of the masked key, vector multiply-shift (Dietzfelbinger):
/// x = (sum over w of ka[w] * u[w] mod 2^64) >> 32, ka[w] random 64-bit per table. Almost
/// universal (two distinct keys collide with probability <= 2^-31), four multiplies for a
/// 5-tuple; a failed cuckoo build draws new ka along with the slot hash parameters.
template <unsigned NW>
WARPATH_HD uint32_t tuple_hash(const uint32_t* u, const uint64_t* ka) {
  uint64_t h = 0;
  for (unsigned w = 0; w < NW; ++w) h += ka[w] * u[w];
  return uint32_t(h >> 32);
}

/// Universal hashing: ((a x + b) mod p) mod 2^log2d, p = 2^61 - 1, a < 2^32, b < p.
WARPATH_HD uint32_t cuckoo_slot(uint64_t a, uint64_t b, uint32_t x, uint32_t log2d) {
  uint64_t v = a * x;                         // exact: a < 2^32
  v          = (v & kHashPrime) + (v >> 61);  // < 2^61 + 8
  v += b;                                     // < 2^62 + 8
  v = (v & kHashPrime) + (v >> 61);           // < 2^61 + 2
  if (v >= kHashPrime) v -= kHashPrime;
  return uint32_t(v) & ((uint32_t(1) << log2d) - 1);
}

/// Slot index (in slots, not words) of subtable i for hash x.
WARPATH_HD uint32_t cuckoo_index(const TupleTable& t, unsigned i, uint32_t x) {
  return (uint32_t(i) << t.log2d) + cuckoo_slot(t.ha[i], t.hb[i], x, t.log2d);
}

/// Bloom filter bit of hash function i.
WARPATH_HD uint32_t bloom_bit(const TupleTable& t, unsigned i, uint32_t x) {
  return (t.ga[i] * x + t.gb[i]) >> t.bloom_shift;
}

/// Whether the filter may hold x (false: no entry of the table has this hash).
WARPATH_HD bool bloom_test(const TupleTable& t, const uint32_t* bloom, uint32_t x) {
  bool hit = true;
  for (unsigned i = 0; i < kBloomHashes; ++i) {
    const uint32_t j = bloom_bit(t, i, x);
    hit &= ((bloom[j >> 5] >> (j & 31)) & 1u) != 0;
  }
  return hit;
}

/// u = key & mask, for a key given word by word.
template <unsigned NW>
WARPATH_HD void tuple_mask(const TupleTable& t, const uint32_t* key, uint32_t* u) {
  for (unsigned w = 0; w < NW; ++w) u[w] = key[w] & t.mask[w];
}

/// The order key stored at slot `s` if its value is u, else 0.
template <unsigned NW>
WARPATH_HD uint64_t slot_match(const uint32_t* slots, uint32_t s, const uint32_t* u) {
  const uint32_t* p = slots + size_t(s) * slot_words(NW);
  uint32_t diff     = 0;
  for (unsigned w = 0; w < NW; ++w) diff |= p[w] ^ u[w];
  const uint64_t key = uint64_t(p[NW + 1]) << 32 | p[NW];
  return diff == 0 ? key : 0;
}

/// Cuckoo probe of masked key u with hash x: the order key of the entry with value u, or 0.
/// `slots` is t.slots or a copy of it (GPU shared memory).
template <unsigned NW>
WARPATH_HD uint64_t cuckoo_probe(const TupleTable& t, const uint32_t* slots, const uint32_t* u,
                                 uint32_t x) {
  uint64_t found = 0;
  for (unsigned i = 0; i < kCuckooWays; ++i) {
    const uint64_t k = slot_match<NW>(slots, cuckoo_index(t, i, x), u);
    found            = k > found ? k : found;
  }
  return found;
}

/// The whole lookup of one key in one table (Algorithm 4 lines 6-16; with kBloom, Algorithm 5
/// lines 7-24): the order key of the matching entry, or 0.
template <unsigned NW, bool kBloom>
WARPATH_HD uint64_t tuple_lookup(const TupleTable& t, const uint32_t* slots, const uint32_t* bloom,
                                 const uint32_t* key) {
  uint32_t u[NW];
  tuple_mask<NW>(t, key, u);
  const uint32_t x = tuple_hash<NW>(u, t.ka);
  if (kBloom && !bloom_test(t, bloom, x)) return 0;
  return cuckoo_probe<NW>(t, slots, u, x);
}

/// Order key -> rule index (kNoMatch for 0).
WARPATH_HD uint32_t order_index(uint64_t k) {
  return k == 0 ? kNoMatch : 0xFFFF'FFFFu - uint32_t(k);
}

}  // namespace warpath::classify::core
