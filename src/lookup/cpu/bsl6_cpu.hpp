// src/lookup/cpu/bsl6_cpu.hpp: the CPU loops over core::bsl6_lookup's step functions.
//
//   bsl6_lookup_scalar   one address at a time (cpu.lpm.scalar's IPv6 path).
//   bsl6_lookup_batched  G-Opt group prefetching (cpu.lpm's IPv6 path): groups of up to 256
//                        lookups advance one binary-search step per round; each round first
//                        computes and prefetches every live lookup's bucket, then consumes
//                        them, so the group's cache misses overlap instead of queueing.
//                        On a CPU with AVX-512 a bucket's keys are compared in one instruction.
//   bsl6_lookup_batched_portable
//                        the same without AVX-512, whatever the CPU (what tests compare).
// All give exactly core::bsl6_lookup(v, addrs[i]) for every i; `out` may not alias `addrs`.
// Thread-safe (they only read the image); they allocate nothing.
#pragma once
#include <cstdint>

#include "lookup/core/bsl6_core.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup::detail {

void bsl6_lookup_scalar(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n);
void bsl6_lookup_batched(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n);
void bsl6_lookup_batched_portable(const core::Bsl6View& v, const Ip6* addrs, NextHop* out,
                                  uint32_t n);

}  // namespace warpath::lookup::detail
