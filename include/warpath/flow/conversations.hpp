// include/warpath/flow/conversations.hpp
//
// Generated conversations for flow tracking's tests, self-test and benchmarks: parse results
// (PacketInfo) and metadata (wire length, timestamp) as a parser would give them, without
// building frames. TCP conversations open with a handshake (or midstream), exchange data and
// close with FINs, a RST, or not at all; UDP, ICMP and other protocols talk both ways; a small
// address and port pool makes 5-tuples recur (port reuse). Spice: non-IP packets, later
// fragments, malformed packets, VLAN tags, IPv6, timestamps that jump ahead (expiry) or step
// back a little (capture reordering).
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::flow {

struct ConversationParams {
  uint64_t seed       = 1;
  uint32_t packets    = 10000;
  uint32_t concurrent = 256;  ///< conversations alive at a time
  uint32_t hosts      = 64;   ///< addresses per side (fewer: more 5-tuple reuse)
  uint32_t ports      = 64;   ///< client ports per host
  uint64_t start_ns   = 1700000000ull * 1000000000ull;
  uint64_t mean_gap_ns = 1000000;  ///< between packets
  uint32_t jump_percent = 1;       ///< packets preceded by a jump of 10..700 s
  bool spice          = true;      ///< non-IP, fragments, malformed, VLAN, clock steps back
};

struct Conversations {
  std::vector<packet::PacketInfo> infos;
  std::vector<packet::PacketMeta> metas;
};

Conversations generate_conversations(const ConversationParams& params);

}  // namespace warpath::flow
