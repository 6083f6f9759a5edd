// src/openflow/flow_lookup_body.hpp: FlowImage's batched lookup, once for every instruction
// set: `Ops` supplies the four per-key steps of openflow/core/flow_hash_core.hpp (mask, hash,
// signature match, key compare) as plain SSE2 (flow_image.cpp: core's own) or AVX-512VL
// (flow_image_avx512.cpp: core/flow_hash_avx512.hpp, the same values). flow_image_avx512.cpp
// includes it inside its target pragma, after every header it shares with other files (so
// that only this body and the steps are compiled for AVX-512).
// The slow paths (a bucket that overflowed, the layers of an incremental image) call core's
// functions directly: they are rare, and give the same answers.
#pragma once
#include <algorithm>
#include <cstdint>
#include <vector>

#include "openflow/flow_image_table.hpp"

namespace warpath::openflow {

// Per chunk of keys and per table: hash every key and prefetch its bucket; then read each
// bucket's matching way and prefetch that slot's key; then compare (G-Opt's staged prefetch:
// a key's two memory accesses overlap the other keys' work). A bucket that overflowed, or a
// signature that matched the wrong key, takes the plain probe.
template <class Ops>
void FlowImage::lookup_with(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  constexpr uint32_t kChunk = 64, kSmallTable = 16384;
  // cand[q] codes besides a slot: no entry, the plain probe, the layers' answer.
  constexpr uint32_t kNone = 0xFFFF'FFFFu, kSlow = 0xFFFF'FFFEu, kOverridden = 0xFFFF'FFFDu;
  uint64_t h[kChunk], best[kChunk];
  uint32_t cand[kChunk], todo[kChunk], said[kChunk];
  packet::OfTuple mk[kChunk];
  const std::vector<uint64_t>& ranks = *ranks_;
  // One mask's tables for `count` keys. kFirst: the exact-match table, keys q = 0..count, every
  // key's answer set (no memset per chunk, whose cost shows at bursts of 32). kWild: a
  // subtable, for keys todo[q]. Keys are masked and hashed once: the layers over table t (an
  // incremental image's recent and override tables: small, in cache, probed directly) answer
  // first, in order, and t (its bucket prefetched meanwhile) for the keys they do not know. A
  // tombstone is no answer.
  enum Mode { kFirst, kWild };
  auto run = [&](const Table& t, const Table* layer1, const Table* layer2, const packet::OfTuple* k,
                 uint32_t* out, uint32_t count, Mode mode) __attribute__((always_inline)) {
    const core::HashView v = t.view();
    for (uint32_t q = 0; q < count; ++q) {
      mk[q] = Ops::apply_mask(k[mode == kFirst ? q : todo[q]], v.mask);
      h[q]  = Ops::hash_key(mk[q]);
      WARPATH_PREFETCH(&v.buckets[uint32_t(h[q]) & v.bucket_mask]);
    }
    if (layer1) {
      const core::HashView a = layer1->view();
      for (uint32_t q = 0; q < count; ++q) said[q] = core::probe(a, mk[q], h[q]);
      if (layer2) {
        const core::HashView b = layer2->view();
        for (uint32_t q = 0; q < count; ++q)
          if (said[q] == core::kMiss) said[q] = core::probe(b, mk[q], h[q]);
      }
    }
    for (uint32_t q = 0; q < count; ++q) {
      if (layer1 && said[q] != core::kMiss) {
        cand[q] = kOverridden;
        continue;
      }
      const core::Bucket& bk = v.buckets[uint32_t(h[q]) & v.bucket_mask];
      bool open              = false;
      const uint32_t m       = Ops::sig_matches(bk, core::signature(h[q]), open);
      if (m && !(m & (m - 1))) {
        cand[q] = bk.slot[__builtin_ctz(m)];
        WARPATH_PREFETCH(&v.records[cand[q]]);
      } else {
        cand[q] = m || !open ? kSlow : kNone;
      }
    }
    for (uint32_t q = 0; q < count; ++q) {
      uint32_t f = core::kMiss;
      if (cand[q] < kOverridden && Ops::same_key(v.records[cand[q]].key, mk[q]))
        f = v.records[cand[q]].flow;
      else if (cand[q] == kOverridden)
        f = said[q];
      else if (cand[q] != kNone)
        f = core::probe(v, mk[q], h[q]);
      if (f == kGone) f = core::kMiss;
      if (mode == kFirst) {
        out[q]  = f == core::kMiss ? kNoFlow : f;
        best[q] = f == core::kMiss ? 0 : ~0ull;  // exact beats every subtable
        continue;
      }
      if (f == core::kMiss) continue;
      const uint32_t i = todo[q];
      if (ranks[f] > best[i]) {
        best[i] = ranks[f];
        out[i]  = f;
      }
    }
  };
  // A mask's tables, the one probed by bucket last: recent, override, full image's.
  auto layered = [&](const Sub& s, const packet::OfTuple* k, uint32_t* out, uint32_t count,
                     Mode mode) __attribute__((always_inline)) {
    const Table* l[3];
    int n = 0;
    if (s.recent) l[n++] = s.recent.get();
    if (s.over) l[n++] = s.over.get();
    if (s.base) l[n++] = s.base.get();
    run(*l[n - 1], n > 1 ? l[0] : nullptr, n > 2 ? l[1] : nullptr, k, out, count, mode);
  };
  const bool has_exact = exact_.base->size() || exact_.over || exact_.recent;
  // Keys per stage: 64 keep enough bucket and record misses in flight for a big table; a small
  // exact-match table (its records, 64 bytes a flow, in L2) misses little, and there the keys'
  // own lines, when they stream from memory, are what the hashing loop waits on: chunks of 32
  // prefetch the second half of a burst of 64 while the first is hashed (Xeon VM, keys from
  // memory: 1K flows 7.3 -> 6.7 ns a key; at 1M, 32 loses: 16.5 -> 20 ns; 100K even). Tables
  // with wildcard subtables keep 64 (not measured with 32).
  const uint32_t chunk =
      subtables_.empty() && exact_.base->size() <= kSmallTable ? kChunk / 2 : kChunk;
  // The keys of the chunk at `base`: the first chunk's at the start, each next one's while this
  // chunk's buckets load (keys read from a big array in memory otherwise stall the hashing loop
  // on each of their lines).
  auto prefetch_keys = [&](uint32_t base) __attribute__((always_inline)) {
    if (base >= keys.size) return;
    const char* from   = reinterpret_cast<const char*>(keys.data + base);
    const size_t bytes = std::min(chunk, keys.size - base) * sizeof(packet::OfTuple);
    for (size_t at = 0; at < bytes; at += 64) WARPATH_PREFETCH(from + at);
  };
  prefetch_keys(0);
  for (uint32_t base = 0; base < keys.size; base += chunk) {
    const uint32_t n         = std::min(chunk, keys.size - base);
    const packet::OfTuple* k = keys.data + base;
    uint32_t* out            = ids.data + base;
    prefetch_keys(base + chunk);
    if (has_exact) {
      layered(exact_, k, out, n, kFirst);
    } else {
      for (uint32_t i = 0; i < n; ++i) out[i] = kNoFlow, best[i] = 0;
    }
    for (const Sub& s : subtables_) {
      uint32_t count = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (best[i] < s.max_rank) todo[count++] = i;
      if (count == 0) break;  // ranked: no later subtable can beat what every key has
      layered(s, k, out, count, kWild);
    }
  }
}

}  // namespace warpath::openflow
