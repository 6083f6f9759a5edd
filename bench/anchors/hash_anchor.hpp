// bench/anchors/hash_anchor.hpp
//
// DPDK's rte_hash as the anchor of the switch's exact-match table (warpath-flow-bench): the
// same 36-byte OpenFlow 1.0 keys (packet::OfTuple), the same flows, looked up in bursts with
// rte_hash_lookup_bulk_data (at most RTE_HASH_LOOKUP_BULK_MAX = 64 keys a call), the fastest
// lookup rte_hash has for keys it hashes itself. Built as the DPDK documentation sets up a
// flow table: rte_hash_crc, entries = twice the flows (so inserts never fail), no extra flags
// (single writer, no readers during the build). dpdk_start (lookup_anchor.hpp) first.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/packet/flow_key.hpp"

namespace warpath::bench {

class HashAnchor {
 public:
  /// Key i maps to data i. kNotSupported when DPDK refuses (no memory).
  static Result<std::unique_ptr<HashAnchor>> build(const std::vector<packet::OfTuple>& keys);
  virtual ~HashAnchor() = default;
  /// ids[k] = the data of keys[k], or 0xFFFFFFFF; n <= 64.
  virtual void lookup_bulk(const packet::OfTuple* keys, uint32_t n, uint32_t* ids) const = 0;
  double build_ms() const { return build_ms_; }

 protected:
  double build_ms_ = 0;
};

}  // namespace warpath::bench
