// src/lookup/cpu/bsl6_cpu.cpp: scalar and G-Opt loops over the bsl6 step functions, with the
// portable bucket compares or (dispatched at run time) AVX-512 ones.
#include "lookup/cpu/bsl6_cpu.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "warpath/core/cpu_features.hpp"

namespace warpath::lookup::detail {
namespace {

// Lookups in flight for large batches (G-Opt with refill). Measured before the initial array
// on the full 2024 table, one core of the 2-core AMD EPYC (Zen 4, KVM) dev machine: G = 16
// 36, 32: 38.5, 64: 37.8, 128: 40.0 M/s; beyond 32 the gain is within the noise while the
// group's state leaves L1, so 32.
constexpr uint32_t kGroup = 32;

// G-Opt with refill (closer to AMAC than to fixed rounds): `G` slots each hold one lookup.
// A round computes and prefetches the bucket of every live slot, then steps every slot; a
// slot whose lookup finished writes its answer and takes the next address (its start is two
// loads from the initial array, most often already done at the start), so searches of
// different depths never leave slots idle.
#if defined(__x86_64__)
#define WARPATH_AVX512 __attribute__((target("avx512f"))) inline
// The bucket compares as one AVX-512 compare of the bucket's key words against the key (the
// line is loaded once; the used-slot mask and the overflow walk are the core's): about a
// quarter of a step's instructions with the portable compares.
struct Avx512Match {
  WARPATH_AVX512 static uint32_t narrow(const core::Bsl6Narrow& b, uint64_t key) {
    const __m512i line = _mm512_load_si512(static_cast<const void*>(&b));
    const uint32_t m   = _mm512_mask_cmpeq_epi64_mask(0x1F, line, _mm512_set1_epi64(int64_t(key)));
    return m & ((1u << (b.vals[core::kBsl6NarrowSlots] & 0xFFu)) - 1u);
  }
  WARPATH_AVX512 static uint32_t wide(const core::Bsl6Wide& b, uint64_t hi, uint64_t lo) {
    const __m512i line = _mm512_load_si512(static_cast<const void*>(&b));
    const uint32_t mh  = _mm512_mask_cmpeq_epi64_mask(0x07, line, _mm512_set1_epi64(int64_t(hi)));
    const uint32_t ml  = _mm512_mask_cmpeq_epi64_mask(0x38, line, _mm512_set1_epi64(int64_t(lo)));
    return mh & (ml >> 3) & ((1u << (b.vals[core::kBsl6WideSlots] & 0xFFu)) - 1u);
  }
};
#endif

template <uint32_t G, class Match>
__attribute__((always_inline)) inline void lookup_gopt(const core::Bsl6View& v, const Ip6* addrs,
                                                       NextHop* out, uint32_t n) {
  Ip6 a[G];
  core::Bsl6Cursor c[G];
  uint32_t idx[G];
  const core::Bsl6Bucket* b[G];
  uint32_t next = 0, live = 0;
  // Fills slot j with the next address that needs a probe, answering the ones that do not.
  auto refill = [&](uint32_t j) {
    while (next < n) {
      const uint32_t i = next++;
      c[j]             = core::bsl6_start(v, addrs[i]);
      if (core::bsl6_done(c[j])) {
        out[i] = c[j].bmp;
        continue;
      }
      a[j]   = addrs[i];
      idx[j] = i;
      return true;
    }
    return false;
  };
  for (uint32_t j = 0; j < G; ++j) {
    if (!refill(j)) break;
    ++live;
  }
  while (live > 0) {
    for (uint32_t j = 0; j < live; ++j) {
      b[j] = core::bsl6_probe_address(v, c[j], a[j]);
      WARPATH_PREFETCH(b[j]);
    }
    for (uint32_t j = 0; j < live;) {
      core::bsl6_step<Match>(v, c[j], a[j], b[j]);
      if (!core::bsl6_done(c[j])) {
        ++j;
        continue;
      }
      out[idx[j]] = c[j].bmp;
      if (refill(j)) {
        ++j;
        continue;
      }
      // No address left: the last live slot takes this one's place (its probe address too).
      --live;
      a[j] = a[live], c[j] = c[live], idx[j] = idx[live], b[j] = b[live];
    }
  }
}

// Small batches (a burst of 64 from the pipeline or a bulk call): every lookup in flight at
// once, in lockstep rounds over the ones still searching (compacted after each round), so a
// burst of n keeps up to n misses outstanding instead of draining a G-slot pipeline.
constexpr uint32_t kLockstepMax = 128;

template <class Match>
__attribute__((always_inline)) inline void lookup_lockstep(const core::Bsl6View& v,
                                                           const Ip6* addrs, NextHop* out,
                                                           uint32_t n) {
  core::Bsl6Cursor c[kLockstepMax];
  const core::Bsl6Bucket* b[kLockstepMax];
  uint32_t act[kLockstepMax];
  uint32_t live = 0;
  for (uint32_t i = 0; i < n; ++i) {
    c[i]      = core::bsl6_start(v, addrs[i]);
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
  if (n <= kLockstepMax)
    lookup_lockstep<Match>(v, addrs, out, n);
  else
    lookup_gopt<kGroup, Match>(v, addrs, out, n);
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
