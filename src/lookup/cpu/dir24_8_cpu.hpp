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

/// G-Opt style (gopt-nsdi15-slides.md): lookups advance in groups of kGroup; the tbl24 lines of
/// the next group are prefetched while this group loads its tbl24 entries and prefetches the
/// tbl8 lines it needs, then resolves. Every step is the core body's (dir24_8_slot, _entry,
/// _resolve), only reordered.
template <class E>
void dir24_8_lookup_batched(const core::Dir24_8View<E>& v, const uint32_t* addrs, NextHop* out,
                            uint32_t n) {
  constexpr uint32_t kGroup = 16;  // bench/results/lookup-*: 8, 16 and 32 measured, 16 best
  E e24[kGroup];
  for (uint32_t i = 0; i < n && i < kGroup; ++i)
    WARPATH_PREFETCH(&v.tbl24[core::dir24_8_slot(addrs[i])]);
  for (uint32_t base = 0; base < n; base += kGroup) {
    const uint32_t m    = n - base < kGroup ? n - base : kGroup;
    const uint32_t next = base + kGroup;
    for (uint32_t j = 0; next + j < n && j < kGroup; ++j)
      WARPATH_PREFETCH(&v.tbl24[core::dir24_8_slot(addrs[next + j])]);
    for (uint32_t j = 0; j < m; ++j) {
      const uint32_t a = addrs[base + j];
      e24[j]           = core::dir24_8_load(&v.tbl24[core::dir24_8_slot(a)]);
      if (e24[j] & core::Dir24_8Traits<E>::kGroup)
        WARPATH_PREFETCH(
            &v.tbl8[(uint64_t(e24[j] & ~core::Dir24_8Traits<E>::kGroup) << 8) | (a & 0xffu)]);
    }
    for (uint32_t j = 0; j < m; ++j)
      out[base + j] = core::dir24_8_resolve(v, core::dir24_8_entry(v, addrs[base + j], e24[j]));
  }
}

}  // namespace warpath::lookup::detail
