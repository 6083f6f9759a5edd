// src/classify/cpu/tmerge_probe.hpp: TupleMerge lookups on the CPU (core/tmerge_core.hpp's
// body, staged G-Opt style), for cpu.tuplemerge and cpu.overlay.
//
// Keys go in groups of kTmGroup through the tables (sorted by best, descending). Per table:
// the group's active keys are masked and hashed and their slots prefetched; then the slots
// give the buckets, prefetched; then the buckets are checked and scanned. After each table
// the active list keeps the keys whose best is below the next table's best, so a key leaves
// as soon as its answer is final, and the group ends when none is left.
#pragma once
#include <algorithm>
#include <cstdint>

#include "classify/core/tmerge_core.hpp"
#include "classify/core/tuple_core.hpp"
#include "classify/tmerge_image.hpp"

namespace warpath::classify::detail {

inline constexpr uint32_t kTmGroup = 64;

// Probes table t for the group's active keys act[0, na) (each with best below t.best).
template <unsigned NW>
inline void tm_probe_group(const core::TmTable<NW>& t, const uint32_t (*k)[NW], uint64_t version,
                           uint64_t* best, const uint32_t* act, uint32_t na) {
  uint32_t u[kTmGroup][NW];
  uint64_t h[kTmGroup], s[kTmGroup];
  uint32_t at[kTmGroup], found[kTmGroup];
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
    if (s[l]) WARPATH_PREFETCH(core::tm_entries(core::tm_bucket_of<NW>(s[l])));
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

/// Keys begin, begin + 1, ... (tm_lookup's `sel` for a contiguous range).
struct TmKeysFrom {
  uint32_t begin;
  uint32_t operator[](uint32_t j) const { return begin + j; }
};

/// Raises best[j] (order keys, 0 for none) for the keys sel[j] of `keys`, j < n, to their best
/// match in `list` at `version`. Sel: a const uint32_t* of key indices, or TmKeysFrom.
template <unsigned NW, class Sel>
void tm_lookup(const TmList<NW>& list, uint64_t version, const KeyBatch& keys, Sel sel,
               uint32_t n, uint64_t* best) {
  const core::TmTable<NW>* tables = list.tables.data();
  const uint32_t nt               = uint32_t(list.tables.size());
  if (nt == 0) return;
  uint32_t k[kTmGroup][NW];
  uint32_t act[kTmGroup];
  for (uint32_t base = 0; base < n; base += kTmGroup) {
    const uint32_t m = std::min(kTmGroup, n - base);
    uint64_t* b      = best + base;
    for (unsigned w = 0; w < NW; ++w)
      for (uint32_t j = 0; j < m; ++j) k[j][w] = keys.word(w, sel[base + j]);
    uint32_t na = 0;
    for (uint32_t j = 0; j < m; ++j) {
      act[na] = j;
      na += b[j] < tables[0].best;
    }
    for (uint32_t c = 0; c < nt && na; ++c) {
      tm_probe_group<NW>(tables[c], k, version, b, act, na);
      const uint64_t next = c + 1 < nt ? tables[c + 1].best : 0;
      uint32_t kept       = 0;
      for (uint32_t l = 0; l < na; ++l) {
        act[kept] = act[l];
        kept += b[act[l]] < next;
      }
      na = kept;
    }
  }
}

/// out[i] = the best rule for keys [begin, end) (kNoMatch for none).
template <unsigned NW>
void tm_lookup_range(const TmList<NW>& list, uint64_t version, const KeyBatch& keys,
                     uint32_t begin, uint32_t end, uint32_t* out) {
  uint64_t best[kTmGroup];
  for (uint32_t base = begin; base < end; base += kTmGroup) {
    const uint32_t m = std::min(kTmGroup, end - base);
    for (uint32_t j = 0; j < m; ++j) best[j] = 0;
    tm_lookup<NW>(list, version, keys, TmKeysFrom{base}, m, best);
    for (uint32_t j = 0; j < m; ++j) out[base + j] = core::order_index(best[j]);
  }
}

}  // namespace warpath::classify::detail
