// src/packet/core/key_core.hpp: flow-key extraction from PacketInfo, one body for host and
// device (the pipeline's gather step may run it on either).
#pragma once
#include <cstdint>

#include "packet/core/bytes.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/packet/flow_key.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet::core {

/// True when the addresses and protocol were captured and, for TCP, UDP and SCTP outside a
/// later fragment, the ports too: a key whose ports were cut off would look like port 0.
WARPATH_HD bool has_ip_key(const PacketInfo& in) {
  constexpr uint8_t kNeed = kFieldSrc | kFieldDst | kFieldProto;
  if ((in.fields & kNeed) != kNeed) return false;
  const bool ported = in.proto == 6 || in.proto == 17 || in.proto == 132;
  return !ported || (in.flags & (kHasPorts | kLaterFragment)) != 0;
}

WARPATH_HD bool five_tuple4(const PacketInfo& in, FiveTuple4& key) {
  key = FiveTuple4{};
  if (in.ip_version != 4 || !has_ip_key(in)) return false;
  key.src   = load_be32(in.src);
  key.dst   = load_be32(in.dst);
  key.proto = in.proto;
  if (in.flags & kHasPorts) {
    key.sport = in.sport;
    key.dport = in.dport;
  }
  return true;
}

WARPATH_HD bool five_tuple6(const PacketInfo& in, FiveTuple6& key) {
  key = FiveTuple6{};
  if (in.ip_version != 6 || !has_ip_key(in)) return false;
  for (int i = 0; i < 16; ++i) {
    key.src[i] = in.src[i];
    key.dst[i] = in.dst[i];
  }
  key.proto = in.proto;
  if (in.flags & kHasPorts) {
    key.sport = in.sport;
    key.dport = in.dport;
  }
  return true;
}

/// OpenFlow 1.0 12-tuple. `frame` is the packet (at least 14 bytes when parsed at all).
WARPATH_HD OfTuple of_tuple(const uint8_t* frame, uint32_t caplen, uint16_t in_port,
                            const PacketInfo& in) {
  OfFields f;
  f.in_port = in_port;
  if (caplen >= 12) {
    for (int i = 0; i < 6; ++i) {
      f.dl_dst[i] = frame[i];
      f.dl_src[i] = frame[6 + i];
    }
  }
  if (in.vlan_count) {
    f.dl_vlan     = in.vlan_tci[0] & 0x0fff;
    f.dl_vlan_pcp = uint8_t(in.vlan_tci[0] >> 13);
  }
  f.dl_type = in.ethertype;
  if (in.ip_version == 4 && has_ip_key(in)) {
    f.nw_tos   = uint8_t(in.tos & 0xfc);
    f.nw_proto = in.proto;
    f.nw_src   = load_be32(in.src);
    f.nw_dst   = load_be32(in.dst);
    if (in.flags & kHasPorts) {
      f.tp_src = in.sport;
      f.tp_dst = in.dport;
    } else if (in.flags & kHasIcmp) {
      f.tp_src = in.icmp_type;
      f.tp_dst = in.icmp_code;
    }
  } else if (in.l3 == L3::kArp) {
    // OpenFlow 1.0 matches the ARP opcode (low byte) and the sender/target protocol addresses.
    const uint32_t a = 14u + 4u * in.vlan_count;
    if (caplen >= a + 28) {
      f.nw_proto = frame[a + 7];
      f.nw_src   = load_be32(frame + a + 14);
      f.nw_dst   = load_be32(frame + a + 24);
    }
  }
  return of_pack(f);
}

}  // namespace warpath::packet::core
