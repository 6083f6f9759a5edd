// src/classify/core/tmerge_core.hpp
//
// TupleMerge (Daly, Liu, Torng: "TupleMerge: Fast Software Packet Processing for Online
// Packet Classification", IEEE/ACM ToN 2019): the per-key body of cpu.tuplemerge and
// cuda.tuplemerge. No STL, no CUDA includes; host/device functions over one layout.
//
// Why TupleMerge (docs/adr/0014-classification-under-updates.md has the numbers): tuple space
// search takes an update in O(1) but needs one table per distinct mask, and expanding port
// ranges to prefixes multiplies both. TupleMerge keeps rules whole (port ranges checked, never
// expanded) and files a rule in any table whose mask is a subset of the rule's: a table for
// (src /24, dst /16) also holds rules with (src /27, dst /20). Rules whose masked values
// collide share a bucket, a short list checked rule by rule, so few tables serve a whole set.
//
// Layout (built and updated by src/classify/tmerge_image.cpp)
//   table    mask[NW] (a subset of each of its rules' effective masks), best (an upper bound
//            of its entries' order keys: a key whose best match so far is at least `best`
//            skips the table), and an open-addressed array of cap = 2^k 64-bit slots, linear
//            probing. A slot is 0 (empty: the probe stops), 1 (a tombstone: the probe goes on)
//            or tag << 48 | bucket address | count, tag = the hash's top 16 bits (tm_slot).
//   bucket   a header (the table-masked value shared by its entries, their count: the
//            writer's) then the entries sorted by order key, best first (a scan stops at the
//            first that cannot win). Readers take the count from the slot's low 6 bits and
//            check the value on the first entry, so a probe reads the slot and the entries'
//            lines only. Immutable once published except each entry's `death`.
//   entry    one rule: effective value/mask words, the two port ranges, its order key, and the
//            versions
//            [birth, death) in which it is part of the rule set. A reader takes the published
//            version v once per batch and sees an entry iff birth <= v < death, so a batch
//            sees exactly the rule set of version v (never a mix of updates); an update
//            writes its new entries and deaths first and publishes v + 1 last.
//   effective mask: the rule's mask plus each port half whose range is one value (exact
//            ports are hashed; ranges are checked in the entry, never expanded).
#pragma once
#include <cstdint>

#include "warpath/classify/rule.hpp"
#include "warpath/core/hd.hpp"

namespace warpath::classify::core {

inline constexpr uint64_t kTmEmpty = 0;
inline constexpr uint64_t kTmTomb  = 1;
inline constexpr uint64_t kTmNever = ~uint64_t(0);  ///< death of a live entry

/// A 64-bit load that may race with the writer's stores (acquire on the host; on the device a
/// plain load: the CUDA engine's patches store whole aligned 8-byte words, and a kernel reads
/// at its own version).
WARPATH_HD uint64_t tm_load(const uint64_t* p) {
#if defined(__CUDA_ARCH__)
  return *p;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

template <unsigned NW>
struct alignas(64) TmEntry {
  uint32_t value[NW];
  uint32_t mask[NW];
  uint16_t sport_lo, sport_span, dport_lo, dport_span;  ///< a range is [lo, lo + span]
  uint64_t key;    ///< order_key(priority, index)
  uint64_t birth;  ///< first version that holds the rule
  uint64_t death;  ///< first version without it (kTmNever); written while readers run
};

template <unsigned NW>
struct alignas(64) TmBucket {
  uint32_t value[NW];  ///< the table-masked value of every entry
  uint32_t count;
  // TmEntry<NW> entries[count] follow (tm_entries).
};

// Buckets are 64-byte aligned blocks of a header and entries: the slot's low 6 bits are free.
static_assert(sizeof(TmBucket<4>) % 64 == 0 && sizeof(TmBucket<9>) % 64 == 0);
static_assert(sizeof(TmEntry<4>) % 64 == 0 && sizeof(TmEntry<9>) % 64 == 0);

template <unsigned NW>
WARPATH_HD TmEntry<NW>* tm_entries(TmBucket<NW>* b) {
  return reinterpret_cast<TmEntry<NW>*>(b + 1);
}
template <unsigned NW>
WARPATH_HD const TmEntry<NW>* tm_entries(const TmBucket<NW>* b) {
  return reinterpret_cast<const TmEntry<NW>*>(b + 1);
}

/// A published table as readers see it.
template <unsigned NW>
struct TmTable {
  uint32_t mask[NW];
  uint32_t cap_mask;     ///< slots - 1
  uint64_t best;         ///< >= every order key in the table
  const uint64_t* slots;
};

/// 64-bit hash of a masked value: each word times its own odd constant, pairs multiplied
/// together (independent multiplies, no chain through the words), then one final mix.
template <unsigned NW>
WARPATH_HD uint64_t tm_hash(const uint32_t* u) {
  constexpr uint64_t kMul[10] = {0x9E37'79B9'7F4A'7C15ull, 0xC2B2'AE3D'27D4'EB4Full,
                                 0x1656'67B1'9E37'79F9ull, 0x85EB'CA77'C2B2'AE63ull,
                                 0x27D4'EB2F'1656'67C5ull, 0xFF51'AFD7'ED55'8CCDull,
                                 0xC4CE'B9FE'1A85'EC53ull, 0x9FB2'1C65'1E98'DF25ull,
                                 0xD6E8'FEB8'6659'FD93ull, 0xA076'1D64'78BD'642Full};
  uint64_t h = 0;
  for (unsigned w = 0; w + 1 < NW; w += 2)
    h += (u[w] + kMul[w]) * (u[w + 1] + kMul[w + 1]);
  if (NW % 2) h += (u[NW - 1] + kMul[NW - 1]) * kMul[9];
  h ^= h >> 32;
  h *= 0xFF51'AFD7'ED55'8CCDull;
  return h ^ (h >> 29);
}

/// A slot: the hash's top 16 bits, the bucket's address (64-byte aligned, below 2^48) and in
/// its low 6 bits the entry count (kTmCountInHeader: 63 or more, read the bucket's header).
inline constexpr uint32_t kTmCountInHeader = 63;
WARPATH_HD uint64_t tm_slot(uint64_t hash, const void* bucket, uint32_t count) {
  return (hash >> 48) << 48 | uint64_t(reinterpret_cast<uintptr_t>(bucket)) |
         (count < kTmCountInHeader ? count : kTmCountInHeader);
}
WARPATH_HD bool tm_tag_equal(uint64_t slot, uint64_t hash) {
  return slot > kTmTomb && (slot >> 48) == (hash >> 48);
}
template <unsigned NW>
WARPATH_HD const TmBucket<NW>* tm_bucket_of(uint64_t slot) {
  return reinterpret_cast<const TmBucket<NW>*>(uintptr_t(slot & 0x0000'FFFF'FFFF'FFC0ull));
}
template <unsigned NW>
WARPATH_HD uint32_t tm_count_of(uint64_t slot) {
  const uint32_t c = uint32_t(slot & kTmCountInHeader);
  return c == kTmCountInHeader ? tm_bucket_of<NW>(slot)->count : c;
}

template <unsigned NW>
WARPATH_HD void tm_mask(const TmTable<NW>& t, const uint32_t* k, uint32_t* u) {
  for (unsigned w = 0; w < NW; ++w) u[w] = k[w] & t.mask[w];
}

/// Whether key k matches the entry's rule (every word under its mask, both port ranges).
/// The word holding both ports in keys of NW words (rule.hpp's ports_word()).
template <unsigned NW>
WARPATH_HD constexpr unsigned tm_ports_word() {
  return ports_word(NW == 4 ? KeyLayout::kFiveTuple : KeyLayout::kOpenFlow);
}

/// Branch-free: a range check is one unsigned compare, (port - lo) <= span.
template <unsigned NW>
WARPATH_HD bool tm_entry_matches(const TmEntry<NW>& e, const uint32_t* k) {
  uint32_t diff = 0;
  for (unsigned w = 0; w < NW; ++w) diff |= (k[w] & e.mask[w]) ^ e.value[w];
  const uint32_t p = k[tm_ports_word<NW>()];
  const uint32_t s = p >> 16, d = p & 0xFFFF;
  const bool out   = (s - e.sport_lo > e.sport_span) | (d - e.dport_lo > e.dport_span);
  return (diff == 0) & !out;
}

/// The first slot at or after `i` on the probe chain of `hash` whose tag matches (*i is left
/// there), or 0 at the end of the chain. Reads only the slot array.
template <unsigned NW>
WARPATH_HD uint64_t tm_next_tagged(const TmTable<NW>& t, uint64_t hash, uint32_t& i) {
  for (;; i = (i + 1) & t.cap_mask) {
    const uint64_t s = tm_load(&t.slots[i]);
    if (s == kTmEmpty) return 0;
    if (tm_tag_equal(s, hash)) return s;
  }
}

/// Whether the bucket of slot s holds masked value u: its first entry's value under the
/// table's mask (every entry of a bucket has the same), so the header is never read.
template <unsigned NW>
WARPATH_HD bool tm_holds(const TmTable<NW>& t, uint64_t s, const uint32_t* u) {
  const TmEntry<NW>& e = tm_entries(tm_bucket_of<NW>(s))[0];
  bool same            = true;
  for (unsigned w = 0; w < NW; ++w) same &= (e.value[w] & t.mask[w]) == u[w];
  return same;
}

/// The slot of masked value u's bucket in table t (0 when none), from slot `i` of the chain
/// of `hash` and its tagged slot `s` (tm_next_tagged): a tag collision goes on down the chain.
template <unsigned NW>
WARPATH_HD uint64_t tm_find_from(const TmTable<NW>& t, const uint32_t* u, uint64_t hash,
                                 uint32_t i, uint64_t s) {
  while (s != 0) {
    if (tm_holds<NW>(t, s, u)) return s;
    i = (i + 1) & t.cap_mask;
    s = tm_next_tagged<NW>(t, hash, i);
  }
  return 0;
}

/// The slot of masked value u's bucket in table t (0 when none).
template <unsigned NW>
WARPATH_HD uint64_t tm_find(const TmTable<NW>& t, const uint32_t* u, uint64_t hash) {
  uint32_t i       = uint32_t(hash) & t.cap_mask;
  const uint64_t s = tm_next_tagged<NW>(t, hash, i);
  return tm_find_from<NW>(t, u, hash, i, s);
}

/// Raises `best` to the best entry of the bucket of slot s that matches key k and is in the
/// rule set of `version` (entries are sorted by order key, so the scan stops at the first that
/// cannot win).
template <unsigned NW>
WARPATH_HD void tm_scan(uint64_t s, const uint32_t* k, uint64_t version, uint64_t& best) {
  const TmEntry<NW>* e = tm_entries(tm_bucket_of<NW>(s));
  const uint32_t n     = tm_count_of<NW>(s);
  for (uint32_t i = 0; i < n && e[i].key > best; ++i) {
    const bool alive = (e[i].birth <= version) & (tm_load(&e[i].death) > version);
    if (alive & tm_entry_matches<NW>(e[i], k)) {
      best = e[i].key;
      return;
    }
  }
}

/// One key against one table: the whole probe (the CPU engine stages it across a group).
template <unsigned NW>
WARPATH_HD void tm_probe(const TmTable<NW>& t, const uint32_t* k, uint64_t version,
                                uint64_t& best) {
  if (best >= t.best) return;
  uint32_t u[NW];
  tm_mask<NW>(t, k, u);
  const uint64_t s = tm_find<NW>(t, u, tm_hash<NW>(u));
  if (s) tm_scan<NW>(s, k, version, best);
}

}  // namespace warpath::classify::core
