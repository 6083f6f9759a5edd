// src/stream/segment_from.hpp: a parsed packet's TCP segment (segment_of's body, stream.hpp).
#pragma once
#include "warpath/stream/stream.hpp"

namespace warpath::stream::detail {

/// segment_of's body, inlined where a loop over packets takes their segments (reassemble_batch,
/// cpu.flowstream: a call per packet otherwise).
__attribute__((always_inline)) inline bool segment_from(const packet::PacketInfo& p,
                                                        const uint8_t* frame, uint32_t caplen,
                                                        Segment& s, bool any_checksum) {
  const bool ok = p.status == packet::ParseStatus::kOk ||
                  (any_checksum && p.status == packet::ParseStatus::kBadIpv4Checksum);
  if (!ok || p.proto != 6 || !(p.flags & packet::kHasPorts) ||
      (p.flags & packet::kFragment) || !p.l3_offset || !p.l4_offset)
    return false;
  const uint32_t l3 = p.l3_offset, l4 = p.l4_offset;
  uint32_t ip_end   = 0;
  if (p.l3 == packet::L3::kIpv4) {
    if (l3 + 4 > caplen) return false;
    ip_end = l3 + (uint32_t(frame[l3 + 2]) << 8 | frame[l3 + 3]);
  } else if (p.l3 == packet::L3::kIpv6) {
    if (l3 + 6 > caplen) return false;
    ip_end = l3 + 40 + (uint32_t(frame[l3 + 4]) << 8 | frame[l3 + 5]);
  } else {
    return false;
  }
  if (l4 + 20 > caplen) return false;
  const uint8_t* t    = frame + l4;
  const uint32_t doff = uint32_t(t[12] >> 4) * 4;
  const uint32_t data = l4 + doff;
  if (doff < 20 || data > ip_end || data > caplen) return false;
  s.seq   = uint32_t(t[4]) << 24 | uint32_t(t[5]) << 16 | uint32_t(t[6]) << 8 | t[7];
  s.ack   = uint32_t(t[8]) << 24 | uint32_t(t[9]) << 16 | uint32_t(t[10]) << 8 | t[11];
  s.flags = t[13];
  const uint32_t captured_end = ip_end < caplen ? ip_end : caplen;
  s.ip_version = p.l3 == packet::L3::kIpv4 ? 4 : 6;
  s.src        = p.src;
  s.dst        = p.dst;
  s.data    = frame + data;
  s.len     = captured_end - data;
  s.missing = ip_end - captured_end;
  return true;
}

}  // namespace warpath::stream::detail
