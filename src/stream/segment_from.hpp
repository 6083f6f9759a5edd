// src/stream/segment_from.hpp: a parsed packet's TCP segment (segment_of's body, stream.hpp).
#pragma once
#include "warpath/stream/stream.hpp"

namespace warpath::stream::detail {

/// Whether TCP options [p, end) (captured) hold TCP Fast Open's: kind 34, or the experimental
/// kind 254 with the magic 0xF989 (what Linux sent before the kind was assigned; Suricata takes
/// both). A malformed list stops the walk.
inline uint8_t has_fast_open(const uint8_t* p, const uint8_t* end) {
  while (p < end) {
    const uint8_t kind = p[0];
    if (kind == 0) break;  // end of the list
    if (kind == 1) {       // no-operation
      ++p;
      continue;
    }
    if (end - p < 2 || p[1] < 2 || p[1] > end - p) break;
    if (kind == 34 || (kind == 254 && p[1] >= 4 && p[2] == 0xF9 && p[3] == 0x89)) return 1;
    p += p[1];
  }
  return 0;
}

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
  s.tfo     = (s.flags & packet::kTcpSyn) ? has_fast_open(t + 20, t + doff) : 0;
  return true;
}

}  // namespace warpath::stream::detail
