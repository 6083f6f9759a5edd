// src/defrag/generate.hpp: generated IP fragments for the defragmentation tests and self-test:
// IPv4 and IPv6 datagrams (TCP, UDP, ICMP) cut at random 8-byte boundaries, shuffled, with
// duplicates, overlapping re-sends of the same bytes and (on request) of different bytes.
#pragma once
#include <cstdint>
#include <vector>

namespace warpath::defrag {

struct FragGenParams {
  uint64_t seed          = 1;
  uint32_t datagrams     = 20;
  uint32_t max_payload   = 3000;
  uint32_t v6_percent    = 30;
  uint32_t overlap_percent  = 0;  ///< extra fragments re-sending bytes already sent
  uint32_t conflict_percent = 0;  ///< ... with different bytes
  uint32_t shuffle_percent  = 50; ///< fragments swapped with a later one
};

struct FragFrames {
  std::vector<std::vector<uint8_t>> frames;  ///< Ethernet frames, arrival order
  std::vector<std::vector<uint8_t>> payloads;  ///< per datagram: the payload as sent first
};

FragFrames generate_fragments(const FragGenParams& params);

/// One fragment frame (for hand-made tests): IPv4 (proto, id) or IPv6 (next header, id) from
/// 10.0.0.1 / 2001:db8::1 to 10.0.0.2 / 2001:db8::2, at byte `offset`, MF `more`.
std::vector<uint8_t> fragment_frame(bool v6, uint8_t proto, uint32_t id, uint32_t offset, bool more,
                                    const uint8_t* data, uint32_t len);

}  // namespace warpath::defrag
