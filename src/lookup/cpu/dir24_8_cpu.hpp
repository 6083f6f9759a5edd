// src/lookup/cpu/dir24_8_cpu.hpp: the CPU loops over core::dir24_8_lookup.
#pragma once
#include "lookup/core/dir24_8_core.hpp"

namespace warpath::lookup::detail {

/// One address at a time.
template <class E>
void dir24_8_lookup_scalar(const core::Dir24_8View<E>& v, const uint32_t* addrs, NextHop* out,
                           uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) out[i] = core::dir24_8_lookup(v, addrs[i]);
}

/// G-Opt's lesson (gopt-nsdi15-slides.md) for a one-probe structure: keep many lookups' memory
/// accesses in flight. The tbl24 line of the address kAhead positions ahead is prefetched
/// while this one is looked up, so about kAhead misses overlap. The rare tbl8 access (961 of
/// 900K prefixes are longer than /24) is left to the core body. Measured on the 2024 full
/// table, 2M mixed addresses, bursts of 64 and 4096, on a busy 2-core machine: G-Opt groups of
/// 16/32/64 with the next group prefetched reached 0.6-1.0x of this; distances 16/32 were
/// 15-40% slower than 64; 96 and 128 within noise of 64.
template <class E>
void dir24_8_lookup_batched(const core::Dir24_8View<E>& v, const uint32_t* addrs, NextHop* out,
                            uint32_t n) {
  constexpr uint32_t kAhead = 64;
  for (uint32_t i = 0; i < n && i < kAhead; ++i)
    WARPATH_PREFETCH(&v.tbl24[core::dir24_8_slot(addrs[i])]);
  for (uint32_t i = 0; i < n; ++i) {
    if (i + kAhead < n) WARPATH_PREFETCH(&v.tbl24[core::dir24_8_slot(addrs[i + kAhead])]);
    out[i] = core::dir24_8_lookup(v, addrs[i]);
  }
}

}  // namespace warpath::lookup::detail
