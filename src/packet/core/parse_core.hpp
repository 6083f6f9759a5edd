// src/packet/core/parse_core.hpp
//
// The packet parser: one body for every engine (cpu.parse loops over it, cuda.parse runs it one
// thread per packet). Includes only hd.hpp-level headers so nvcc and g++ both compile it.
//
// Contract (see include/warpath/packet/info.hpp for the fields)
//   parse_packet(data, caplen, len) reads at most `caplen` bytes of `data`. `len` (the wire
//   length) bounds the IP datagram. It fills every field of the PacketInfo it returns; fields of
//   layers that were not reached stay zero. The first problem found sets `status` and stops the
//   parse; fields found before it are kept.
//
// Tested by tests/packet/{parser_paths,truncation,engines}_test.cpp (every engine against
// ref.parse on generated and real captures, and hand-made packets cut inside every header),
// fuzz/parse_fuzz.cpp, and tests/cli/test_parse_golden.py (tshark's view of ../shared/data/pcap).
#pragma once
#include <cstdint>
#include <cstring>

#include "packet/core/bytes.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/net/protocols.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet::core {

using net::kEthArp, net::kEthIpv4, net::kEthIpv6, net::kEthQinQ, net::kEthQinQOld, net::kEthVlan;
using net::kProtoGre, net::kProtoIcmp, net::kProtoIcmpv6, net::kProtoIpInIp, net::kProtoIpv6,
    net::kProtoSctp, net::kProtoTcp, net::kProtoUdp;
using net::kGenevePort, net::kVxlanPort;

// The stages fill one PacketInfo by reference: passing 64 bytes by value between them costs
// store-forwarding stalls (byte stores read back as vectors), about half of the parse.
WARPATH_HD void fail(PacketInfo& info, ParseStatus status) { info.status = status; }

/// Transport layer: ports, TCP flags, ICMP type/code. `end` bounds the datagram (in bytes from
/// the frame start); `cap` is the captured length.
WARPATH_HD_HOT void parse_l4(const uint8_t* p, uint32_t off, uint32_t end, uint32_t cap,
                             PacketInfo& info) {
  info.l4_offset      = uint16_t(off < 0xffffu ? off : 0);
  const uint8_t proto = info.proto;
  if (proto == kProtoTcp || proto == kProtoUdp || proto == kProtoSctp) {
    const uint32_t need   = proto == kProtoTcp ? 20u : proto == kProtoUdp ? 8u : 12u;
    const ParseStatus bad = proto == kProtoTcp   ? ParseStatus::kBadTcpHeader
                            : proto == kProtoUdp ? ParseStatus::kBadUdpHeader
                                                 : ParseStatus::kTruncated;
    if (proto == kProtoTcp && off + 20 <= end && off + 20 <= cap) {
      // A whole TCP header's fixed part (nearly every TCP packet): one bounds test for it.
      info.sport     = load_be16(p + off);
      info.dport     = load_be16(p + off + 2);
      info.tcp_flags = p[off + 13];
      info.tcp_seq   = load_be32(p + off + 4);
      info.flags |= kHasPorts;
      const uint32_t doff = uint32_t(p[off + 12] >> 4) * 4;
      if (doff < 20 || off + doff > end) return fail(info, ParseStatus::kBadTcpHeader);
      if (off + doff > cap) return fail(info, ParseStatus::kTruncated);
      return;
    }
    if (off + 4 > end) return fail(info, bad);
    if (off + 4 > cap) return fail(info, ParseStatus::kTruncated);
    info.sport = load_be16(p + off);
    info.dport = load_be16(p + off + 2);
    info.flags |= kHasPorts;
    if (proto == kProtoUdp && (info.dport == kVxlanPort || info.dport == kGenevePort))
      info.tunnel = info.dport == kVxlanPort ? Tunnel::kVxlan : Tunnel::kGeneve;
    if (off + need > end) return fail(info, bad);
    if (off + need > cap) return fail(info, ParseStatus::kTruncated);
    if (proto == kProtoTcp) {
      const uint32_t doff = uint32_t(p[off + 12] >> 4) * 4;
      info.tcp_flags      = p[off + 13];
      info.tcp_seq        = load_be32(p + off + 4);
      if (doff < 20 || off + doff > end) return fail(info, ParseStatus::kBadTcpHeader);
      if (off + doff > cap) return fail(info, ParseStatus::kTruncated);
    } else if (proto == kProtoUdp) {
      const uint32_t ulen = load_be16(p + off + 4);
      // Length 0 is legal only over IPv6, for jumbograms (RFC 2675); otherwise 8..datagram.
      const bool jumbo = ulen == 0 && info.ip_version == 6;
      if (!jumbo && (ulen < 8 || off + ulen > end)) return fail(info, ParseStatus::kBadUdpHeader);
    }
  } else if (proto == kProtoIcmp || proto == kProtoIcmpv6) {
    if (off + 2 > cap) {
      if (off + 2 <= end) fail(info, ParseStatus::kTruncated);
      return;
    }
    info.icmp_type = p[off];
    info.icmp_code = p[off + 1];
    info.flags |= kHasIcmp;
  } else if (proto == kProtoGre) {
    info.tunnel = Tunnel::kGre;
  } else if (proto == kProtoIpInIp) {
    info.tunnel = Tunnel::kIpInIp;
  } else if (proto == kProtoIpv6) {
    info.tunnel = Tunnel::kIpv6InIp;
  }
}

WARPATH_HD_HOT void parse_ipv4(const uint8_t* p, uint32_t off, uint32_t cap, uint32_t len,
                               PacketInfo& info) {
  info.l3        = L3::kIpv4;
  info.l3_offset = uint16_t(off);
  if (off + 1 > cap) return fail(info, ParseStatus::kTruncated);
  const uint32_t ihl = uint32_t(p[off] & 0x0f) * 4;
  if ((p[off] >> 4) != 4 || ihl < 20) return fail(info, ParseStatus::kBadIpv4Header);
  info.ip_version = 4;
  if (off + 20 > cap) {
    // Fields are taken as far as the capture goes, so a cut header still reports what it has.
    if (off + 2 <= cap) info.tos = p[off + 1];
    if (off + 8 <= cap) {
      const uint16_t frag = load_be16(p + off + 6);
      if (frag & 0x3fff) info.flags |= kFragment;  // more fragments, or an offset
      if (frag & 0x1fff) info.flags |= kLaterFragment;
      info.fields |= kFieldFrag;
    }
    if (off + 10 <= cap) {
      info.ttl   = p[off + 8];
      info.proto = p[off + 9];
      info.fields |= kFieldProto;
    }
    if (off + 16 <= cap) {
      memcpy(info.src, p + off + 12, 4);
      info.fields |= kFieldSrc;
    }
    return fail(info, ParseStatus::kTruncated);
  }
  // The whole fixed header was captured (nearly every packet): its fields at once, with one
  // bounds test instead of one per field.
  const uint16_t frag = load_be16(p + off + 6);
  info.tos            = p[off + 1];
  info.ttl            = p[off + 8];
  info.proto          = p[off + 9];
  memcpy(info.src, p + off + 12, 4);
  memcpy(info.dst, p + off + 16, 4);
  info.flags |= uint8_t(((frag & 0x3fff) ? kFragment : 0) | ((frag & 0x1fff) ? kLaterFragment : 0) |
                        (ihl > 20 ? kIpOptions : 0));
  info.fields |= kFieldFrag | kFieldProto | kFieldSrc | kFieldDst;
  if (off + ihl > cap) return fail(info, ParseStatus::kTruncated);
  const uint32_t total = load_be16(p + off + 2);
  if (total < ihl) return fail(info, ParseStatus::kBadIpv4Length);
  // Neither a bad checksum nor a datagram longer than the frame stops the parse: the fields stay
  // useful for counters and the slow path, and the transport header is read within the frame.
  const bool too_long    = off + total > len;
  const bool checksum_ok = net::ipv4_header_checksum_ok(p + off, ihl);
  if (!(info.flags & kLaterFragment))
    parse_l4(p, off + ihl, too_long ? len : off + total, cap, info);
  if (too_long) info.status = ParseStatus::kBadIpv4Length;
  if (!checksum_ok && info.status == ParseStatus::kOk) info.status = ParseStatus::kBadIpv4Checksum;
}

WARPATH_HD bool is_ipv6_ext(uint8_t nh) { return nh == 0 || nh == 43 || nh == 44 || nh == 60; }

/// The IPv6 header and extension-header chain; `end` is where the datagram ends (the frame's
/// end when the payload length claims more).
WARPATH_HD void parse_ipv6_chain(const uint8_t* p, uint32_t cur, uint32_t end, uint32_t cap,
                                 uint8_t nh, PacketInfo& info) {
  // RFC 8200 allows each extension header once (destination options twice); a chain longer
  // than eight is malformed or hostile, and bounding it keeps device threads uniform.
  for (int hops = 0; is_ipv6_ext(nh); ++hops) {
    info.flags |= kIpv6ExtHeaders;
    if (nh == 44) info.flags |= kFragment;
    if (hops == 8 || cur + 8 > end) return fail(info, ParseStatus::kBadIpv6ExtHeader);
    if (cur + 8 > cap) return fail(info, ParseStatus::kTruncated);
    const uint8_t next = p[cur];
    uint32_t hlen      = (uint32_t(p[cur + 1]) + 1) * 8;
    if (nh == 44) {
      hlen = 8;
      if (load_be16(p + cur + 2) & 0xfff8) info.flags |= kLaterFragment;
    }
    if (cur + hlen > end) return fail(info, ParseStatus::kBadIpv6ExtHeader);
    nh         = next;
    info.proto = nh;
    cur += hlen;
  }
  info.fields |= kFieldProto;
  if (info.flags & kLaterFragment) return;
  parse_l4(p, cur, end, cap, info);
}

WARPATH_HD void parse_ipv6(const uint8_t* p, uint32_t off, uint32_t cap, uint32_t len,
                           PacketInfo& info) {
  info.l3        = L3::kIpv6;
  info.l3_offset = uint16_t(off);
  if (off + 1 > cap) return fail(info, ParseStatus::kTruncated);
  if ((p[off] >> 4) != 6) return fail(info, ParseStatus::kBadIpv6Header);
  info.ip_version = 6;
  info.fields |= kFieldFrag;  // IPv6 fragments are marked by a header, found or not
  if (off + 2 <= cap) info.tos = uint8_t(load_be16(p + off) >> 4);
  uint8_t nh = 0;
  if (off + 8 <= cap) {
    nh         = p[off + 6];
    info.ttl   = p[off + 7];
    info.proto = nh;
    if (nh == 44) info.flags |= kFragment;
    if (!is_ipv6_ext(nh)) info.fields |= kFieldProto;
  }
  if (off + 24 <= cap) {
    memcpy(info.src, p + off + 8, 16);
    info.fields |= kFieldSrc;
  }
  if (off + 40 > cap) return fail(info, ParseStatus::kTruncated);
  memcpy(info.dst, p + off + 24, 16);
  info.fields |= kFieldDst;
  info.fields &= uint8_t(~kFieldProto);  // set again once the chain is walked
  const uint32_t payload = load_be16(p + off + 4);
  // Payload length 0 with a hop-by-hop header is a jumbogram: the frame bounds the datagram.
  const uint32_t end  = (payload == 0 && nh == 0) ? len : off + 40 + payload;
  const bool too_long = end > len;
  parse_ipv6_chain(p, off + 40, too_long ? len : end, cap, nh, info);
  if (too_long) info.status = ParseStatus::kBadIpv6Length;
}

/// Parses one Ethernet frame into `info` (every field written). Host code that keeps the
/// result in memory calls this form: it stores straight into the destination, where the
/// by-value form builds the PacketInfo on the stack with byte stores and copies it as vectors,
/// loads that store forwarding cannot serve (perf put two thirds of parse_range's samples on
/// that copy; a parse that follows a header rewrite, as esp-in's, gains most).
WARPATH_HD_HOT void parse_packet_into(const uint8_t* p, uint32_t caplen, uint32_t len,
                                      PacketInfo& info) {
  info = PacketInfo{};
  if (len < caplen) len = caplen;
  if (caplen < 14) {
    fail(info, ParseStatus::kTruncated);
    return;
  }
  uint32_t off  = 12;
  uint16_t type = load_be16(p + off);
  while (type == kEthVlan || type == kEthQinQ || type == kEthQinQOld) {
    if (info.vlan_count == 2) break;  // a third tag: report the ethertype as it stands
    if (off + 6 > caplen) {
      fail(info, ParseStatus::kTruncated);
      return;
    }
    info.vlan_tci[info.vlan_count++] = load_be16(p + off + 2);
    off += 4;
    type = load_be16(p + off);
  }
  info.ethertype = type;
  off += 2;
  if (type == kEthIpv4)
    parse_ipv4(p, off, caplen, len, info);
  else if (type == kEthIpv6)
    parse_ipv6(p, off, caplen, len, info);
  else
    info.l3 = type == kEthArp ? L3::kArp : L3::kOther;
}

/// Parses one Ethernet frame (by value: the device kernel keeps it in registers).
WARPATH_HD PacketInfo parse_packet(const uint8_t* p, uint32_t caplen, uint32_t len) {
  PacketInfo info;
  parse_packet_into(p, caplen, len, info);
  return info;
}

}  // namespace warpath::packet::core
