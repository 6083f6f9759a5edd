// src/lookup/cpu/bsl6_cpu.cpp: scalar and G-Opt loops over the bsl6 step functions.
#include "lookup/cpu/bsl6_cpu.hpp"

namespace warpath::lookup::detail {
namespace {

// Lookups in flight. Measured on the full 2024 table (160K prefixes, 4.5 MiB image), 1M
// addresses half under a random prefix and half uniform, one core of the 2-core AMD EPYC
// (Zen 4, KVM) dev machine, thread CPU time, best of 7 (the machine was shared, so +-10%):
//   scalar 15-20 M/s; G = 16: 36, 32: 38.5, 48: 38.6, 64: 37.8, 96: 39.5, 128: 40.0 M/s;
//   rte_lpm6 (rte_lpm6_lookup_bulk_func, chunks of 64) in the same runs: 32-35 M/s.
// Beyond 32 the gain is within the noise while the group's state leaves L1, so 32.
// The uniform half costs 8 ns a lookup (one probe at the /16 root), the prefix half 45 ns
// (4.4 probes, mostly L2/L3 misses in the /48, /40 and /44 tables).
constexpr uint32_t kGroup = 32;

// G-Opt with refill (closer to AMAC than to fixed rounds): `G` slots each hold one lookup.
// A round computes and prefetches the bucket of every slot, then steps every slot; a slot
// whose lookup finished has written its answer and takes the next address, so searches of
// different depths (the tree is weighted: 1 probe to its height) never leave slots idle.
// While at least G addresses are left, a round cannot run out of them, so the refill is
// branch-free selects (a finished lookup is an unpredictable event); the drain at the end
// of the batch lets finished slots idle on the terminal node instead.
template <uint32_t G>
void lookup_gopt(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
  if (v.root == v.terminal) {  // no table, perhaps ::/0
    for (uint32_t i = 0; i < n; ++i) out[i] = v.default_nh;
    return;
  }
  const uint32_t m = n < G ? n : G;
  Ip6 a[G];
  core::Bsl6Cursor c[G];
  uint32_t idx[G];
  const core::Bsl6Bucket* b[G];
  for (uint32_t j = 0; j < m; ++j) {
    a[j]   = addrs[j];
    c[j]   = core::bsl6_start(v);
    idx[j] = j;
  }
  uint32_t next = m;
  while (next + G <= n) {
    for (uint32_t j = 0; j < G; ++j) {
      b[j] = core::bsl6_probe_address(v, c[j], a[j]);
      WARPATH_PREFETCH(b[j]);
    }
    for (uint32_t j = 0; j < G; ++j) {
      core::bsl6_step(v, c[j], a[j], b[j]);
      out[idx[j]]         = c[j].bmp;  // final once the lookup is done
      const uint32_t done = 0u - uint32_t(core::bsl6_done(v, c[j]));
      const Ip6 fresh     = addrs[next];
      idx[j]              = idx[j] ^ ((idx[j] ^ next) & done);
      a[j].hi             = a[j].hi ^ ((a[j].hi ^ fresh.hi) & (uint64_t(0) - (done & 1u)));
      a[j].lo             = a[j].lo ^ ((a[j].lo ^ fresh.lo) & (uint64_t(0) - (done & 1u)));
      c[j].node           = c[j].node ^ ((c[j].node ^ v.root) & done);
      c[j].bmp            = c[j].bmp ^ ((c[j].bmp ^ v.default_nh) & done);
      next += done & 1u;
    }
  }
  // Drain: refill while addresses last, then let slots idle.
  uint32_t live = m;
  while (live > 0) {
    for (uint32_t j = 0; j < m; ++j) {
      b[j] = core::bsl6_probe_address(v, c[j], a[j]);
      WARPATH_PREFETCH(b[j]);
    }
    for (uint32_t j = 0; j < m; ++j) {
      if (core::bsl6_done(v, c[j])) continue;
      core::bsl6_step(v, c[j], a[j], b[j]);
      if (!core::bsl6_done(v, c[j])) continue;
      out[idx[j]] = c[j].bmp;
      if (next < n) {
        a[j]   = addrs[next];
        c[j]   = core::bsl6_start(v);
        idx[j] = next++;
      } else {
        --live;
      }
    }
  }
}

// Small batches (a burst of 64 from the pipeline or a bulk call): every lookup in flight at
// once, in lockstep rounds over the ones still searching (compacted after each round), so a
// burst of n keeps up to n misses outstanding instead of draining a G-slot pipeline.
constexpr uint32_t kLockstepMax = 128;

void lookup_lockstep(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
  core::Bsl6Cursor c[kLockstepMax];
  const core::Bsl6Bucket* b[kLockstepMax];
  uint32_t act[kLockstepMax];
  for (uint32_t i = 0; i < n; ++i) {
    c[i]   = core::bsl6_start(v);
    act[i] = i;
  }
  uint32_t live = core::bsl6_done(v, core::bsl6_start(v)) ? 0 : n;
  if (live == 0)
    for (uint32_t i = 0; i < n; ++i) out[i] = v.default_nh;
  while (live > 0) {
    for (uint32_t k = 0; k < live; ++k) {
      const uint32_t i = act[k];
      b[i]             = core::bsl6_probe_address(v, c[i], addrs[i]);
      WARPATH_PREFETCH(b[i]);
    }
    uint32_t kept = 0;
    for (uint32_t k = 0; k < live; ++k) {
      const uint32_t i = act[k];
      core::bsl6_step(v, c[i], addrs[i], b[i]);
      if (core::bsl6_done(v, c[i])) {
        out[i] = c[i].bmp;
      } else {
        act[kept++] = i;
      }
    }
    live = kept;
  }
}

}  // namespace

void bsl6_lookup_scalar(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
  for (uint32_t i = 0; i < n; ++i) out[i] = core::bsl6_lookup(v, addrs[i]);
}

void bsl6_lookup_batched(const core::Bsl6View& v, const Ip6* addrs, NextHop* out, uint32_t n) {
  if (n <= kLockstepMax) {
    lookup_lockstep(v, addrs, out, n);
    return;
  }
  lookup_gopt<kGroup>(v, addrs, out, n);
}

}  // namespace warpath::lookup::detail
