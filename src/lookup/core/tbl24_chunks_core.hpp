// src/lookup/core/tbl24_chunks_core.hpp
//
// DIR-24-8's tbl24 stored compressed, one record per /16 (a "chunk" of 256 tbl24 entries):
// the one lookup body of cpu.lpm.compressed. No STL, no CUDA includes.
//
// Why
//   A 32 MiB tbl24 is one cache miss per lookup: on the 2024 full table (901,899 prefixes)
//   DIR-24-8 is bound by the misses a core keeps in flight, as rte_lpm and rte_fib are. Along
//   a /16, tbl24 holds long runs of equal entries; storing each run once (Poptrie's leaf
//   vector, Asai and Ohara 2015, applied to DIR-24-8's first level) shrinks the first level to
//   about 3.7 MiB, which stays in the last-level cache and within the TLB's reach. tbl8 and
//   the entry values are DIR-24-8's own (dir24_8_core.hpp), so everything after the tbl24
//   entry is the same code.
//
// Layout (built and updated by src/lookup/tbl24_chunks.cpp)
//   chunk[a >> 16]  the offset of the /16's record in the pool, in 64-byte units.
//   record          uint64_t bits[4]   bit i set where entry i of the chunk starts a run
//                                      (bit 0 always set);
//                   uint8_t before[4]  set bits in the words before word w;
//                   E runs[]           the entry of each run, in order, from byte 36.
//                   Records are 64-byte aligned; one with up to 14 (16-bit) or 7 (32-bit)
//                   runs is one cache line. Every chunk has a record: chunks whose 256
//                   entries are equal share one per value, so a lookup never branches on it.
//   tbl24 entry of a = runs[rank of bit ((a >> 8) & 255)], rank counting bit 0 as 1.
//
// Concurrency
//   Records are immutable once published. The writer builds a changed chunk's record in free
//   pool space and publishes it with one release store of chunk[]; a reader's acquire load
//   of chunk[] then sees it filled. Replaced records are reused only after
//   ReadGuard::synchronize() (see fib_state.hpp).
#pragma once
#include <cstdint>

#include "lookup/core/dir24_8_core.hpp"

namespace warpath::lookup::core {

constexpr uint32_t kChunkRecordAlign  = 64;
constexpr uint32_t kChunkRecordHeader = 36;  ///< bits[4] + before[4]

struct Tbl24ChunksView {
  const uint32_t* chunk = nullptr;  ///< 2^16 record offsets, in kChunkRecordAlign units
  const uint8_t* pool   = nullptr;
};

WARPATH_HD uint32_t tbl24_chunk_popcount(uint64_t x) {
#if WARPATH_DEVICE_PASS
  return uint32_t(__popcll(x));
#else
  return uint32_t(__builtin_popcountll(x));
#endif
}

/// The record of addr's /16: the first dependent access of a lookup.
WARPATH_HD const uint8_t* tbl24_chunk_record(const Tbl24ChunksView& c, uint32_t addr) {
  return c.pool + uint64_t(dir24_8_load(&c.chunk[addr >> 16])) * kChunkRecordAlign;
}

/// Where addr's tbl24 entry lies in its chunk's record: the second.
template <class E>
WARPATH_HD const E* tbl24_chunk_run(const uint8_t* record, uint32_t addr) {
  const uint32_t i    = (addr >> 8) & 255u;
  const uint32_t w    = i >> 6;
  const auto* bits    = reinterpret_cast<const uint64_t*>(record);
  const uint32_t rank = record[32 + w] + tbl24_chunk_popcount(bits[w] & (~0ull >> (63 - (i & 63))));
  return reinterpret_cast<const E*>(record + kChunkRecordHeader) + (rank - 1);
}

/// addr's tbl24 entry, as dir24_8_core.hpp's tbl24[addr >> 8] holds it.
template <class E>
WARPATH_HD E tbl24_chunk_entry(const Tbl24ChunksView& c, uint32_t addr) {
  return *tbl24_chunk_run<E>(tbl24_chunk_record(c, addr), addr);
}

// The whole lookup is dir24_8_resolve(v, dir24_8_entry(v, a, tbl24_chunk_entry(c, a))); the
// CPU loop (cpu/dir24_8_cpu.hpp) runs it in prefetched stages.

}  // namespace warpath::lookup::core
