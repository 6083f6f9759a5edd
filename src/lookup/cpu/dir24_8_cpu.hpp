// src/lookup/cpu/dir24_8_cpu.hpp: the CPU loops over core::dir24_8_lookup.
#pragma once
#include "lookup/core/dir24_8_core.hpp"
#include "lookup/core/tbl24_chunks_core.hpp"

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

/// The compressed tbl24 (core/tbl24_chunks_core.hpp) takes two dependent accesses where
/// DIR-24-8 takes one, but both fall in about 4 MiB that the last-level cache keeps, where
/// DIR-24-8's falls in 32 MiB that it does not. In groups of kGroup, G-Opt style: every
/// address's chunk record is prefetched, then every address's run, then the entries are read.
/// No stage branches on the address (uniform chunks have records too): on random addresses a
/// branch per stage mispredicted often enough to cost more than the accesses saved.
template <class E>
__attribute__((always_inline)) inline void dir24_8_chunked_loop(const core::Dir24_8View<E>& view,
                                                                const core::Tbl24ChunksView& chunks,
                                                                const uint32_t* addrs, NextHop* out,
                                                                uint32_t n) {
  constexpr uint32_t kGroup = 64;
  // Copies: the tables' pointers stay in registers instead of being reloaded after every store
  // to out[] or the stage arrays, which the compiler cannot prove do not alias them.
  const core::Dir24_8View<E> v  = view;
  const core::Tbl24ChunksView c = chunks;
  const uint8_t* record[kGroup];
  const E* run[kGroup];
  for (uint32_t base = 0; base < n; base += kGroup) {
    const uint32_t m  = n - base < kGroup ? n - base : kGroup;
    const uint32_t* a = addrs + base;
    for (uint32_t j = 0; j < m; ++j) {
      record[j] = core::tbl24_chunk_record(c, a[j]);
      WARPATH_PREFETCH(record[j]);
    }
    for (uint32_t j = 0; j < m; ++j) {
      run[j] = core::tbl24_chunk_run<E>(record[j], a[j]);
      WARPATH_PREFETCH(run[j]);
    }
    for (uint32_t j = 0; j < m; ++j)
      out[base + j] = core::dir24_8_resolve(v, core::dir24_8_entry(v, a[j], *run[j]));
  }
}

/// The loop for any x86-64 (popcount without the instruction costs about 3 ns a lookup)...
template <class E>
void dir24_8_chunked_lookup_batched(const core::Dir24_8View<E>& v, const core::Tbl24ChunksView& c,
                                    const uint32_t* addrs, NextHop* out, uint32_t n) {
  dir24_8_chunked_loop(v, c, addrs, out, n);
}

/// ...and for CPUs with POPCNT (every x86-64 since 2008; chosen at run time).
template <class E>
__attribute__((target("popcnt"))) void dir24_8_chunked_lookup_batched_popcnt(
    const core::Dir24_8View<E>& v, const core::Tbl24ChunksView& c, const uint32_t* addrs,
    NextHop* out, uint32_t n) {
  dir24_8_chunked_loop(v, c, addrs, out, n);
}

}  // namespace warpath::lookup::detail
