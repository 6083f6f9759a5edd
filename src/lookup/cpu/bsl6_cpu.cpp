// src/lookup/cpu/bsl6_cpu.cpp: scalar and G-Opt loops over the bsl6 step functions, with the
// portable bucket compares or (dispatched at run time) AVX-512 ones.
#include "lookup/cpu/bsl6_cpu.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "warpath/core/cpu_features.hpp"

namespace warpath::lookup::detail {
namespace {

#if defined(__x86_64__)
#define WARPATH_AVX512 __attribute__((target("avx512f"))) inline
// The bucket compares as one AVX-512 compare of the bucket's key words against the key (the
// line is loaded once; the used-slot mask and the overflow walk are the core's): about a
// quarter of a step's instructions with the portable compares.
struct Avx512Match {
  WARPATH_AVX512 static uint32_t narrow(const core::Bsl6Narrow& b, uint64_t key) {
    const __m512i line = _mm512_load_si512(static_cast<const void*>(&b));
    const uint32_t m   = _mm512_mask_cmpeq_epi64_mask(0x1F, line, _mm512_set1_epi64(int64_t(key)));
    return m & core::bsl6_used(b.vals[core::kBsl6NarrowSlots]);
  }
  WARPATH_AVX512 static uint32_t wide(const core::Bsl6Wide& b, uint64_t hi, uint64_t lo) {
    const __m512i line = _mm512_load_si512(static_cast<const void*>(&b));
    const uint32_t mh  = _mm512_mask_cmpeq_epi64_mask(0x07, line, _mm512_set1_epi64(int64_t(hi)));
    const uint32_t ml  = _mm512_mask_cmpeq_epi64_mask(0x38, line, _mm512_set1_epi64(int64_t(lo)));
    return mh & (ml >> 3) & core::bsl6_used(b.vals[core::kBsl6WideSlots]);
  }
};
#endif

// G-Opt for a search of 0 to 6 dependent probes: a group of lookups advances in lockstep
// rounds; a round first computes and prefetches the bucket of every lookup still searching,
// then steps each (the group is compacted after each round). Batches are cut into groups of
// kLockstep. Measured on the full 2024 table, bursts of 1,024, one core of the dev VM, in
// round-robin runs beside rte_lpm6: groups of 64 gave 43-45 M/s, 128 46-62, 256 65-66, 512
// 64; a G-Opt loop with refill (slots taking the next address as soon as theirs ended)
// 40-48 M/s: a group of 256 keeps more misses in flight and spends less per probe on
// bookkeeping.
constexpr uint32_t kLockstep = 256;

template <class Match>
__attribute__((always_inline)) inline void lookup_lockstep(const core::Bsl6View& v,
                                                           const Ip6* addrs, NextHop* out,
                                                           uint32_t n) {
  core::Bsl6Cursor c[kLockstep];
  const core::Bsl6Bucket* b[kLockstep];
  uint32_t act[kLockstep];
  uint32_t live = 0;
  // The start, in two prefetched rounds: the /16 entries, then the entries they lead to (the
  // same one, or the /24 entry of a block).
  for (uint32_t i = 0; i < n; ++i) WARPATH_PREFETCH(&v.starts[core::bsl6_top_index(addrs[i])]);
  for (uint32_t i = 0; i < n; ++i) {
    act[i] = core::bsl6_start_index(addrs[i], v.starts[core::bsl6_top_index(addrs[i])]);
    WARPATH_PREFETCH(&v.starts[act[i]]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    const core::Bsl6Start s = v.starts[act[i]];
    c[i]                    = core::Bsl6Cursor{s.node, s.bmp};
    WARPATH_PREFETCH(&v.nodes[s.node]);
  }
  for (uint32_t i = 0; i < n; ++i) {
    out[i]    = c[i].bmp;  // final when the start already ends the search
    act[live] = i;
    live += core::bsl6_done(c[i]) ? 0 : 1;
  }
  while (live > 0) {
    for (uint32_t k = 0; k < live; ++k) {
      const uint32_t i = act[k];
      b[i]             = core::bsl6_probe_address(v, c[i], addrs[i]);
      WARPATH_PREFETCH(b[i]);
    }
    uint32_t kept = 0;
    for (uint32_t k = 0; k < live; ++k) {
      const uint32_t i = act[k];
      core::bsl6_step<Match>(v, c[i], addrs[i], b[i]);
      out[i]    = c[i].bmp;
      act[kept] = i;
      kept += core::bsl6_done(c[i]) ? 0 : 1;
    }
    live = kept;
  }
}

template <class Match>
__attribute__((always_inline)) inline void lookup_batched(const core::Bsl6View& v, const Ip6* addrs,
                                                          NextHop* out, uint32_t n) {
  for (uint32_t i = 0; i < n; i += kLockstep)
    lookup_lockstep<Match>(v, addrs + i, out + i, std::min(kLockstep, n - i));
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void lookup_avx512(const core::Bsl6View& v, const Ip6* addrs,
                                                      NextHop* out, uint32_t n) {
  lookup_batched<Avx512Match>(v, addrs, out, n);
}
#endif

}  // namespace

void bsl6_lookup_scalar(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) out[i] = core::bsl6_lookup(v, addrs[i]);
}

void bsl6_lookup_batched(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
#if defined(__x86_64__)
  static const bool avx512 = cpu_features().avx512f;
  if (avx512) return lookup_avx512(v, addrs, out, n);
#endif
  bsl6_lookup_batched_portable(v, addrs, out, n);
}

void bsl6_lookup_batched_portable(const core::Bsl6View& v, const Ip6* addrs, NextHop* out,
                                  uint32_t n) {
  lookup_batched<core::Bsl6PortableMatch>(v, addrs, out, n);
}

}  // namespace warpath::lookup::detail
