// bench/anchors/hash_anchor.hpp
//
// DPDK's rte_hash as the anchor of the switch's exact-match table (warpath-flow-bench): the
// same 36-byte OpenFlow 1.0 keys (packet::OfTuple), the same flows, looked up in bursts with
// rte_hash_lookup_bulk_data (at most RTE_HASH_LOOKUP_BULK_MAX = 64 keys a call), the fastest
// lookup rte_hash has for keys it hashes itself. Built as the DPDK documentation sets up a
// flow table: rte_hash_crc, entries = twice the flows (so inserts never fail), no extra flags
// (single writer, no readers during the build). dpdk_start (lookup_anchor.hpp) first.
//
// Two key layouts, each a row: the 36-byte key as it is, and the key padded with zeros to 48
// bytes (PaddedOfTuple), the queries padded before timing. rte_hash keeps a key after an 8-byte
// data pointer in a slot rounded up to 16 bytes: 48 bytes for a 36-byte key, half of them across
// two cache lines, and one 64-byte line for a 48-byte key (also its vector compare instead of
// memcmp, and 12 more bytes hashed). At 1M flows the padded layout is 1.6x faster
// (bench/results/flow-cpu-2026-11-27-k48.md: the slot, not the compare).
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/packet/flow_key.hpp"

namespace warpath::bench {

/// An OfTuple and 12 zero bytes: rte_hash's key slot is then one cache line.
struct PaddedOfTuple {
  packet::OfTuple key;
  uint8_t pad[12] = {};
};
static_assert(sizeof(PaddedOfTuple) == 48, "with its 8-byte pointer, one 64-byte key slot");

class HashAnchor {
 public:
  /// Key i maps to data i, stored as 36-byte keys or (`padded`) as 48-byte PaddedOfTuples.
  /// kNotSupported when DPDK refuses (no memory).
  static Result<std::unique_ptr<HashAnchor>> build(const std::vector<packet::OfTuple>& keys,
                                                   bool padded = false);
  virtual ~HashAnchor() = default;
  /// ids[k] = the data of key k, or 0xFFFFFFFF; n <= 64. `keys` holds n keys of the layout
  /// the table was built with (OfTuple, or PaddedOfTuple when padded), side by side.
  virtual void lookup_bulk(const void* keys, uint32_t n, uint32_t* ids) const = 0;
  double build_ms() const { return build_ms_; }

 protected:
  double build_ms_ = 0;
};

}  // namespace warpath::bench
