// src/openflow/core/action_core.hpp: OpenFlow 1.0 header rewrites on one packet, the body the
// switch module runs on the CPU and a CUDA kernel can run on the device.
//
// Semantics (checked against Open vSwitch 3.1's ofproto/trace)
//   mod_vlan_vid  tagged: the outermost VID replaced, PCP and CFI kept; untagged: an 802.1Q
//                 tag pushed (PCP 0)
//   mod_vlan_pcp  tagged: the PCP replaced; untagged: a tag pushed with VID 0
//   strip_vlan    the outermost tag removed (none: nothing)
//   mod_dl_*      the MAC written
//   mod_nw_*      IPv4 only (ARP and others: nothing): the address or the DSCP bits (ECN kept),
//                 the IPv4 header checksum and the TCP/UDP checksum (pseudo header, on the
//                 first fragment) updated incrementally (RFC 1624); a UDP checksum of 0 (none)
//                 stays 0
//   mod_tp_*      IPv4 TCP or UDP with its header captured (others: nothing), checksum updated
// Only captured bytes are touched: a rewrite whose header (or, for ports, whose checksum) lies
// beyond the capture does nothing.
// `info` (the parse result) is kept true for later modules.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/net/checksum.hpp"
#include "warpath/openflow/flow.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::openflow::core {

struct PacketRef {
  uint8_t* data;      ///< first byte (moves by 4 when a tag is pushed or stripped)
  uint32_t caplen;    ///< captured bytes
  uint32_t len;       ///< wire bytes
  uint32_t headroom;  ///< free bytes before data
};

WARPATH_HD uint16_t rd16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
WARPATH_HD void wr16(uint8_t* p, uint16_t v) {
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
}


/// Updates the checksum at `at` (when captured) for a 16-bit word change.
WARPATH_HD void fix_csum(PacketRef& p, uint32_t at, uint16_t old_w, uint16_t new_w,
                                bool udp) {
  if (at + 2 > p.caplen) return;
  const uint16_t c = rd16(p.data + at);
  if (udp && c == 0) return;  // no UDP checksum
  uint16_t n = net::checksum_update16(c, old_w, new_w);
  if (udp && n == 0) n = 0xffff;
  wr16(p.data + at, n);
}

WARPATH_HD bool ipv4_ok(const PacketRef& p, const packet::PacketInfo& in) {
  return in.ip_version == 4 && in.l3_offset && in.l3_offset + 20u <= p.caplen;
}
/// Offset of the TCP or UDP checksum, or 0 when there is none to update.
WARPATH_HD uint32_t l4_csum_at(const packet::PacketInfo& in) {
  if (!(in.flags & packet::kHasPorts) || !in.l4_offset) return 0;
  if (in.proto == 6) return in.l4_offset + 16u;
  if (in.proto == 17) return in.l4_offset + 6u;
  return 0;
}

WARPATH_HD void set_ipv4_addr(PacketRef& p, packet::PacketInfo& in, bool src,
                                     uint32_t addr) {
  if (!ipv4_ok(p, in)) return;
  uint8_t* a        = p.data + in.l3_offset + (src ? 12 : 16);
  const uint16_t o1 = rd16(a), o2 = rd16(a + 2);
  const uint16_t n1 = uint16_t(addr >> 16), n2 = uint16_t(addr);
  wr16(a, n1);
  wr16(a + 2, n2);
  fix_csum(p, in.l3_offset + 10u, o1, n1, false);
  fix_csum(p, in.l3_offset + 10u, o2, n2, false);
  if (const uint32_t c = l4_csum_at(in)) {
    fix_csum(p, c, o1, n1, in.proto == 17);
    fix_csum(p, c, o2, n2, in.proto == 17);
  }
  uint8_t* f = src ? in.src : in.dst;
  f[0] = uint8_t(addr >> 24), f[1] = uint8_t(addr >> 16), f[2] = uint8_t(addr >> 8), f[3] = uint8_t(addr);
}

/// Pushes an 802.1Q tag (false when there is no headroom).
WARPATH_HD bool push_tag(PacketRef& p, packet::PacketInfo& in, uint16_t tci) {
  if (p.headroom < 4 || p.caplen < 12) return false;
  uint8_t* d = p.data - 4;
  for (int i = 0; i < 12; ++i) d[i] = p.data[i];
  wr16(d + 12, kEthVlan);
  wr16(d + 14, tci);
  p.data = d;
  p.caplen += 4;
  p.len += 4;
  p.headroom -= 4;
  in.vlan_tci[1] = in.vlan_tci[0];
  in.vlan_tci[0] = tci;
  if (in.vlan_count < 2) ++in.vlan_count;
  if (in.l3_offset) in.l3_offset = uint16_t(in.l3_offset + 4);
  if (in.l4_offset) in.l4_offset = uint16_t(in.l4_offset + 4);
  return true;
}

WARPATH_HD void strip_tag(PacketRef& p, packet::PacketInfo& in) {
  if (in.vlan_count == 0 || p.caplen < 16) return;
  for (int i = 11; i >= 0; --i) p.data[i + 4] = p.data[i];
  p.data += 4;
  p.caplen -= 4;
  p.len -= 4;
  p.headroom += 4;
  in.vlan_tci[0] = in.vlan_tci[1];
  in.vlan_tci[1] = 0;
  --in.vlan_count;
  if (in.l3_offset) in.l3_offset = uint16_t(in.l3_offset - 4);
  if (in.l4_offset) in.l4_offset = uint16_t(in.l4_offset - 4);
}

/// Applies one rewrite; false only when a tag could not be pushed (no headroom).
WARPATH_HD bool apply_rewrite(PacketRef& p, packet::PacketInfo& in, const Action& a) {
  switch (a.type) {
    case ActionType::kSetVlanVid:
    case ActionType::kSetVlanPcp: {
      const bool vid = a.type == ActionType::kSetVlanVid;
      if (in.vlan_count && p.caplen >= 16) {
        uint16_t tci = rd16(p.data + 14);
        tci = vid ? uint16_t((tci & 0xf000) | a.value) : uint16_t((tci & 0x1fff) | a.value << 13);
        wr16(p.data + 14, tci);
        in.vlan_tci[0] = tci;
        return true;
      }
      return push_tag(p, in, vid ? uint16_t(a.value) : uint16_t(a.value << 13));
    }
    case ActionType::kStripVlan: strip_tag(p, in); return true;
    case ActionType::kSetDlSrc:
    case ActionType::kSetDlDst:
      if (p.caplen >= 12) {
        uint8_t* m = p.data + (a.type == ActionType::kSetDlSrc ? 6 : 0);
        for (int i = 0; i < 6; ++i) m[i] = a.mac[i];
      }
      return true;
    case ActionType::kSetNwSrc:
    case ActionType::kSetNwDst:
      set_ipv4_addr(p, in, a.type == ActionType::kSetNwSrc, a.value);
      return true;
    case ActionType::kSetNwTos:
      if (ipv4_ok(p, in)) {
        uint8_t* h       = p.data + in.l3_offset;
        const uint16_t o = rd16(h);
        h[1]             = uint8_t((h[1] & 0x03) | (a.value & 0xfc));
        fix_csum(p, in.l3_offset + 10u, o, rd16(h), false);
        in.tos = h[1];
      }
      return true;
    case ActionType::kSetTpSrc:
    case ActionType::kSetTpDst: {
      const uint32_t c = l4_csum_at(in);
      if (!ipv4_ok(p, in) || !c) return true;
      const bool src   = a.type == ActionType::kSetTpSrc;
      const uint32_t at = in.l4_offset + (src ? 0u : 2u);
      if (c + 2 > p.caplen) return true;  // the checksum (after the ports) is not captured
      const uint16_t o = rd16(p.data + at), n = uint16_t(a.value);
      wr16(p.data + at, n);
      fix_csum(p, c, o, n, in.proto == 17);
      (src ? in.sport : in.dport) = n;
      return true;
    }
    default: return true;  // outputs are not rewrites
  }
}

}  // namespace warpath::openflow::core
