// src/forward/core/forward_core.hpp
//
// The router's per-packet body (the post-shade stage of PacketShader's IPv4 and IPv6
// forwarding, section 6.2): one function for every engine. forward_batch() in
// src/forward/forward_batch.cpp loops over it on the CPU; a CUDA kernel would run it one
// thread per packet. It includes only hd.hpp-level headers, so g++ and nvcc both compile it.
//
// Contract
//   forward_packet(frame, caplen, len, info, in_port, nexthop, view) decides the verdict of one frame
//   from its parse result (`info`, produced by the packet parser for these very bytes), the
//   next hop the FIB gave its destination and the router's tables, in the order documented in
//   include/warpath/forward/router.hpp. Only a kForward packet is modified (TTL or hop limit,
//   IPv4 checksum, Ethernet addresses); slow-path and dropped packets keep their bytes. It
//   reads and writes only the first `caplen` bytes.
//
// Tested by tests/forward/{checksum,forward_core,forward_batch}_test.cpp.
#pragma once
#include <cstdint>

#include "packet/core/bytes.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/forward/verdict.hpp"
#include "warpath/net/checksum.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::forward::core {

using packet::core::fold_checksum;
using packet::core::load_be16;
using packet::core::load_be32;
using packet::core::ones_sum;

inline constexpr uint32_t kEthHeaderBytes = 14;

WARPATH_HD ForwardResult make_result(Reason reason, uint32_t nexthop, uint16_t port = 0) {
  ForwardResult r;
  r.verdict = reason_verdict(reason);
  r.reason  = reason;
  r.port    = port;
  r.nexthop = nexthop;
  return r;
}

using net::checksum_update16;  // RFC 1624 (warpath/net/checksum.hpp)

/// RFC 1812 section 5.2.2 checks of the IPv4 header at `ip` (`avail` bytes captured from `ip`,
/// `wire` bytes of the frame from `ip` on the wire). Returns kForwarded when the header may be
/// forwarded. The parser (parse_core.hpp) reports the same problems, but only the first one it
/// meets, and a problem in the transport header hides a bad IPv4 checksum from its status, so
/// the router checks the 20-60 header bytes itself.
WARPATH_HD Reason check_ipv4_header(const uint8_t* ip, uint32_t avail, uint32_t wire) {
  if (avail < 1) return Reason::kTruncated;
  const uint32_t ihl = uint32_t(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || ihl < 20) return Reason::kBadIpv4Header;
  if (avail < ihl) return Reason::kTruncated;
  if (!net::ipv4_header_checksum_ok(ip, ihl)) return Reason::kBadIpv4Checksum;
  const uint32_t total = load_be16(ip + 2);
  if (total < ihl || total > wire) return Reason::kBadIpv4Length;
  return Reason::kForwarded;
}

/// Decrements the TTL of a valid IPv4 header with TTL >= 2 and updates its checksum
/// incrementally (RFC 1624): TTL is the high byte of the word at offset 8 (TTL, protocol).
WARPATH_HD void decrement_ttl4(uint8_t* ip) {
  const uint16_t old_word = load_be16(ip + 8);
  const uint16_t new_word = uint16_t(old_word - 0x0100u);
  const uint16_t sum      = checksum_update16(load_be16(ip + 10), old_word, new_word);
  ip[8]                   = uint8_t(ip[8] - 1);
  ip[10]                  = uint8_t(sum >> 8);
  ip[11]                  = uint8_t(sum);
}

/// Decrements the hop limit of an IPv6 header (IPv6 has no header checksum).
WARPATH_HD void decrement_hop_limit6(uint8_t* ip) { ip[7] = uint8_t(ip[7] - 1); }

/// Writes the Ethernet destination and source addresses.
WARPATH_HD void rewrite_macs(uint8_t* frame, const uint8_t* dst, const uint8_t* src) {
#if defined(__CUDA_ARCH__)
  for (int i = 0; i < 6; ++i) frame[i] = dst[i];
  for (int i = 0; i < 6; ++i) frame[6 + i] = src[i];
#else  // two copies of 6 bytes, not byte loops (the compiler cannot rule out overlap there)
  __builtin_memcpy(frame, dst, 6);
  __builtin_memcpy(frame + 6, src, 6);
#endif
}

/// The neighbour of `nexthop`, or nullptr: one load in the direct index where the table has one
/// (next hops are a FIB's dense ids), else a binary search of the sorted table.
WARPATH_HD const NeighborEntry* find_neighbor(const RouterView& v, uint32_t nexthop) {
  if (v.neighbor_slots) {
    const uint32_t s = nexthop < v.neighbor_slot_count ? v.neighbor_slots[nexthop] : kNoNeighborSlot;
    return s < v.neighbor_count ? &v.neighbors[s] : nullptr;
  }
  uint32_t lo = 0, hi = v.neighbor_count;
  while (lo < hi) {
    const uint32_t mid = lo + (hi - lo) / 2;
    if (v.neighbors[mid].nexthop < nexthop)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo < v.neighbor_count && v.neighbors[lo].nexthop == nexthop ? &v.neighbors[lo] : nullptr;
}

/// Source MAC of `port`: the table's, or the documented default 02:00:00:00:PP:PP.
WARPATH_HD void port_mac(const RouterView& v, uint16_t port, uint8_t out[6]) {
  if (port < v.port_count) {
    for (int i = 0; i < 6; ++i) out[i] = v.port_macs[6u * port + i];
    return;
  }
  out[0] = 0x02;
  out[1] = out[2] = out[3] = 0;
  out[4]                   = uint8_t(port >> 8);
  out[5]                   = uint8_t(port);
}

WARPATH_HD bool is_router_addr4(const RouterView& v, uint32_t addr) {
  for (uint32_t i = 0; i < v.addr4_count; ++i)
    if (v.addrs4[i] == addr) return true;
  return false;
}

WARPATH_HD bool is_router_addr6(const RouterView& v, const uint8_t* addr) {
  for (uint32_t i = 0; i < v.addr6_count; ++i) {
    const uint8_t* a = v.addrs6 + 16u * i;
    bool same        = true;
    for (int b = 0; b < 16; ++b) same = same && a[b] == addr[b];
    if (same) return true;
  }
  return false;
}

/// IPv4 destinations this unicast data path never forwards: 224.0.0.0/4 and 255.255.255.255.
WARPATH_HD bool is_multicast4(uint32_t addr) { return (addr >> 28) == 0xe || addr == 0xFFFF'FFFFu; }

/// Host-order halves of a 16-byte IPv6 address (lookup::Ip6's layout).
WARPATH_HD uint64_t ip6_half(const uint8_t* a) {
  uint64_t v = 0;
  for (int i = 0; i < 8; ++i) v = v << 8 | a[i];
  return v;
}

/// RFC 1812 5.3.7: IPv4 sources a router never forwards from: 0/8 ("this network"), 127/8
/// (loopback), 224/4 (multicast) and 240/4 (reserved, with 255.255.255.255).
WARPATH_HD bool is_martian_source4(uint32_t a) {
  const uint32_t top = a >> 24;
  return top == 0 || top == 127 || (a >> 28) >= 0xe;
}
/// RFC 1812 5.3.7: IPv4 destinations never forwarded: 0/8, 127/8 and 240/4 (255.255.255.255
/// is the limited broadcast, sent to the slow path as multicast before this check).
WARPATH_HD bool is_martian_destination4(uint32_t a) {
  const uint32_t top = a >> 24;
  return top == 0 || top == 127 || (a >> 28) == 0xf;
}
/// The address classes below take an IPv6 address as host-order halves (ip6_half of its first
/// and last 8 bytes): two loads a packet instead of a byte loop a test.
/// RFC 4291: ::, ::1 (2.5.2, 2.5.3).
WARPATH_HD bool is_unspecified_or_loopback6(uint64_t hi, uint64_t lo) { return hi == 0 && lo <= 1; }
/// fe80::/10.
WARPATH_HD bool is_link_local6(uint64_t hi) { return (hi >> 54) == 0x3fa; }
/// ff00::/8.
WARPATH_HD bool is_multicast6(uint64_t hi) { return (hi >> 56) == 0xff; }
/// RFC 4291 2.5.5.2: ::ffff:0:0/96, IPv4-mapped, stands for an IPv4 host inside a dual stack
/// and never appears on the wire (RFC 6890: not forwardable); a packet from ::ffff:127.0.0.1
/// would otherwise pass as an ordinary IPv6 source.
WARPATH_HD bool is_ipv4_mapped6(uint64_t hi, uint64_t lo) {
  return hi == 0 && (lo >> 32) == 0xffffu;
}

/// The Ethernet destination check of a port in promiscuous mode: a unicast frame for neither
/// the port's MAC nor its interface's is not the router's (a NIC filters these; a promiscuous
/// socket sees them all).
WARPATH_HD bool not_for_us(const uint8_t* frame, uint16_t in_port, const RouterView& v) {
  if (in_port >= v.mac_check_count || !v.mac_check[in_port] || (frame[0] & 1)) return false;
  uint8_t mine[6];
  port_mac(v, in_port, mine);
  const uint8_t* iface = v.hw_macs + 6u * in_port;  // all zero: unknown
  bool port = true, hw = true, known = false;
  for (int i = 0; i < 6; ++i) {
    port  = port && frame[i] == mine[i];
    hw    = hw && frame[i] == iface[i];
    known = known || iface[i] != 0;
  }
  return !port && !(known && hw);
}

/// The route-independent checks, run before the next hop is considered.
WARPATH_HD Reason pre_route_reason(const uint8_t* frame, uint32_t caplen, uint32_t len,
                                   const packet::PacketInfo& info, uint16_t in_port,
                                   const RouterView& v) {
  if (caplen < kEthHeaderBytes) return Reason::kTruncated;
  if (not_for_us(frame, in_port, v)) return Reason::kNotForUs;
  const bool l2_group = (frame[0] & 1) != 0;  // Ethernet broadcast or multicast
  if (info.l3 == packet::L3::kArp) return Reason::kArp;
  if (info.l3 == packet::L3::kIpv4) {
    const uint32_t off = info.l3_offset;
    if (off == 0 || off >= caplen) return Reason::kTruncated;
    const uint8_t* ip = frame + off;
    // A parse that ended kOk checked all that check_ipv4_header checks (version and IHL, the
    // header captured, its checksum, the total length between the IHL and the frame's): the
    // header is verified once a packet (test: Verdict.ParsedOkMeansTheHeaderChecksPass). Any
    // other status (a bad checksum behind a bad TCP header, say) gets the full check.
    if (info.status != packet::ParseStatus::kOk) {
      const Reason bad = check_ipv4_header(ip, caplen - off, len > off ? len - off : 0);
      if (bad != Reason::kForwarded) return bad;
    }
    const uint32_t dst = load_be32(ip + 16);
    if (is_router_addr4(v, dst)) return Reason::kToRouter;
    if (is_multicast4(dst)) return Reason::kMulticast;
    // RFC 1812 5.3.4: a unicast datagram that arrived as a link-layer broadcast is discarded.
    if (l2_group) return Reason::kL2BroadcastUnicastIp;
    if (is_martian_source4(load_be32(ip + 12))) return Reason::kMartianSource;
    if (is_martian_destination4(dst)) return Reason::kMartianDestination;
    if (ip[8] <= 1) return Reason::kTtlExpired;
    if ((ip[0] & 0x0f) > 5) return Reason::kIpv4Options;
    return Reason::kForwarded;
  }
  if (info.l3 == packet::L3::kIpv6) {
    const uint32_t off = info.l3_offset;
    if (off == 0 || off >= caplen) return Reason::kTruncated;
    const uint8_t* ip = frame + off;
    if ((ip[0] >> 4) != 6) return Reason::kBadIpv6Header;
    if (caplen - off < 40) return Reason::kTruncated;
    const uint32_t payload = load_be16(ip + 4);
    const uint8_t next     = ip[6];
    // Payload length 0 with a hop-by-hop header is a jumbogram (RFC 2675): the frame bounds it.
    const bool jumbo = payload == 0 && next == 0;
    if (!jumbo && uint64_t(off) + 40 + payload > len) return Reason::kBadIpv6Length;
    const uint8_t* dst = ip + 24;
    if (is_router_addr6(v, dst)) return Reason::kToRouter;
    const uint64_t dst_hi = ip6_half(dst), dst_lo = ip6_half(dst + 8);
    const uint64_t src_hi = ip6_half(ip + 8), src_lo = ip6_half(ip + 16);
    if (is_multicast6(dst_hi)) return Reason::kMulticast;
    if (is_link_local6(dst_hi)) return Reason::kLinkLocal;
    if (l2_group) return Reason::kL2BroadcastUnicastIp;
    if (is_unspecified_or_loopback6(src_hi, src_lo) || is_multicast6(src_hi) ||
        is_link_local6(src_hi) || is_ipv4_mapped6(src_hi, src_lo))
      return Reason::kMartianSource;
    if (is_unspecified_or_loopback6(dst_hi, dst_lo) || is_ipv4_mapped6(dst_hi, dst_lo))
      return Reason::kMartianDestination;
    if (ip[7] <= 1) return Reason::kHopLimitExpired;
    if (next == 0) return Reason::kIpv6HopByHop;
    return Reason::kForwarded;
  }
  // A frame cut inside its VLAN tags never reached the ethertype.
  if (info.status == packet::ParseStatus::kTruncated) return Reason::kTruncated;
  return Reason::kNotIp;
}

/// The whole data path for one frame (see the header comment).
WARPATH_HD ForwardResult forward_packet(uint8_t* frame, uint32_t caplen, uint32_t len,
                                        const packet::PacketInfo& info, uint16_t in_port,
                                        uint32_t nexthop, const RouterView& v) {
  if (len < caplen) len = caplen;
  const Reason early = pre_route_reason(frame, caplen, len, info, in_port, v);
  if (early != Reason::kForwarded) return make_result(early, nexthop);
  if (nexthop == kNoNextHop) return make_result(Reason::kNoRoute, nexthop);
  const NeighborEntry* n = find_neighbor(v, nexthop);
  if (n == nullptr) return make_result(Reason::kNoNeighbor, nexthop);
  uint8_t* ip = frame + info.l3_offset;
  if (info.l3 == packet::L3::kIpv4)
    decrement_ttl4(ip);
  else
    decrement_hop_limit6(ip);
  uint8_t src[6];
  port_mac(v, n->port, src);
  rewrite_macs(frame, n->mac, src);
  return make_result(Reason::kForwarded, nexthop, n->port);
}

/// The FIB key of a parsed packet: IPv4 destination in host order. False when the packet is
/// not IPv4 or its destination was not captured.
WARPATH_HD bool route_key4(const packet::PacketInfo& info, uint32_t& dst) {
  if (info.l3 != packet::L3::kIpv4 || info.ip_version != 4 || !(info.fields & packet::kFieldDst))
    return false;
  dst = load_be32(info.dst);
  return true;
}

/// The FIB key of a parsed packet: IPv6 destination as host-order halves (lookup::Ip6).
WARPATH_HD bool route_key6(const packet::PacketInfo& info, uint64_t& hi, uint64_t& lo) {
  if (info.l3 != packet::L3::kIpv6 || info.ip_version != 6 || !(info.fields & packet::kFieldDst))
    return false;
  hi = ip6_half(info.dst);
  lo = ip6_half(info.dst + 8);
  return true;
}

}  // namespace warpath::forward::core
