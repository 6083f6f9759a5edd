// src/forward/icmp.cpp: ICMP and ICMPv6 errors (Time Exceeded, Fragmentation Needed / Packet
// Too Big), built by the slow path.
#include <algorithm>
#include <cstring>

#include "forward/core/forward_core.hpp"
#include "packet/core/bytes.hpp"
#include "warpath/forward/router.hpp"

namespace warpath::forward {

namespace {

using core::fold_checksum;
using core::load_be16;
using core::load_be32;
using core::ones_sum;

constexpr uint32_t kIcmp4MaxDatagram = 576;   // RFC 1812 4.3.2.3
constexpr uint32_t kIcmp6MaxDatagram = 1280;  // RFC 4443 2.4(c): the IPv6 minimum MTU
constexpr uint8_t kProtoIcmp = 1, kProtoIcmpv6 = 58;


// ICMP types that are error messages (RFC 792, RFC 1812 4.3.2.7): no error about an error.
bool is_icmp4_error(uint8_t type) {
  return type == 3 || type == 4 || type == 5 || type == 11 || type == 12;
}

// RFC 1812 4.3.2.7: the source must define a single host (not 0/8, 127/8, class D or E).
bool is_single_host4(uint32_t a) {
  const uint32_t top = a >> 24;
  return top != 0 && top != 127 && top < 224;
}

uint32_t build4(const uint8_t* ip, uint32_t avail, uint32_t src4, const IcmpError& e, uint8_t* o) {
  if (avail < 20) return 0;
  const uint32_t ihl = uint32_t(ip[0] & 0x0f) * 4;
  if ((ip[0] >> 4) != 4 || ihl < 20 || avail < ihl) return 0;
  const uint32_t orig_src = load_be32(ip + 12), orig_dst = load_be32(ip + 16);
  if (!is_single_host4(orig_src) || core::is_multicast4(orig_dst)) return 0;
  if (load_be16(ip + 6) & 0x1fff) return 0;  // not the first fragment
  if (ip[9] == kProtoIcmp) {
    if (avail < ihl + 1) return 0;  // cannot tell whether it is an error: stay silent
    if (is_icmp4_error(ip[ihl])) return 0;
  }
  const uint32_t total = std::max<uint32_t>(load_be16(ip + 2), ihl);
  const uint32_t quote = std::min({total, avail, kIcmp4MaxDatagram - 28});
  const uint32_t bytes = 28 + quote;
  std::memset(o, 0, 28);
  o[0] = 0x45;
  o[1] = 0xc0;  // precedence 6, internetwork control (RFC 1812 4.3.2.5; as Linux does)
  packet::core::store_be16(o + 2, bytes);
  o[8] = 64;  // TTL
  o[9] = kProtoIcmp;
  packet::core::store_be32(o + 12, src4);
  packet::core::store_be32(o + 16, orig_src);
  packet::core::store_be16(o + 10, fold_checksum(ones_sum(o, 20)));
  uint8_t* icmp = o + 20;
  icmp[0]       = e.type4;
  icmp[1]       = e.code4;
  packet::core::store_be32(icmp + 4, e.rest);
  std::memcpy(icmp + 8, ip, quote);
  packet::core::store_be16(icmp + 2, fold_checksum(ones_sum(icmp, 8 + quote)));
  return bytes;
}

uint32_t build6(const uint8_t* ip, uint32_t avail, const packet::PacketInfo& info,
                const std::array<uint8_t, 16>& src6, const IcmpError& e, uint8_t* o) {
  if (avail < 40 || (ip[0] >> 4) != 6) return 0;
  const uint8_t* orig_src            = ip + 8;
  const uint8_t* orig_dst            = ip + 24;
  static constexpr uint8_t kZero[16] = {};
  // RFC 4443 2.4(e): not about multicast destinations, unspecified or multicast sources, or
  // ICMPv6 error messages (types 0-127); an ICMPv6 packet whose type was not captured counts as
  // an error, to stay silent when unsure.
  if (orig_dst[0] == 0xff || orig_src[0] == 0xff || std::memcmp(orig_src, kZero, 16) == 0) return 0;
  if (info.proto == kProtoIcmpv6 && (!(info.flags & packet::kHasIcmp) || info.icmp_type < 128))
    return 0;
  const uint32_t datagram = 40 + uint32_t(load_be16(ip + 4));
  const uint32_t quote    = std::min({datagram, avail, kIcmp6MaxDatagram - 48});
  const uint32_t payload  = 8 + quote;
  std::memset(o, 0, 48);
  o[0] = 0x60;
  packet::core::store_be16(o + 4, payload);
  o[6] = kProtoIcmpv6;
  o[7] = 64;  // hop limit
  std::memcpy(o + 8, src6.data(), 16);
  std::memcpy(o + 24, orig_src, 16);
  uint8_t* icmp = o + 40;
  icmp[0]       = e.type6;
  icmp[1]       = e.code6;
  packet::core::store_be32(icmp + 4, e.rest6);
  std::memcpy(icmp + 8, ip, quote);
  // Pseudo-header (RFC 8200 8.1): source, destination, upper-layer length, next header.
  uint32_t sum = ones_sum(o + 8, 32);
  sum += payload >> 16;
  sum += payload & 0xffffu;
  sum += kProtoIcmpv6;
  packet::core::store_be16(icmp + 2, fold_checksum(ones_sum(icmp, payload, sum)));
  return 40 + payload;
}

}  // namespace

uint32_t build_time_exceeded(const uint8_t* frame, uint32_t caplen, const packet::PacketInfo& info,
                             const Mac& src_mac, uint32_t src4, const std::array<uint8_t, 16>& src6,
                             uint8_t* out) {
  // ICMP type 11 code 0 (TTL exceeded in transit), ICMPv6 type 3 code 0.
  return build_icmp_error(frame, caplen, info, src_mac, src4, src6, IcmpError{11, 0, 3, 0, 0, 0}, out);
}

uint32_t build_icmp_error(const uint8_t* frame, uint32_t caplen, const packet::PacketInfo& info,
                          const Mac& src_mac, uint32_t src4, const std::array<uint8_t, 16>& src6,
                          const IcmpError& e, uint8_t* out) {
  const uint32_t l3 = info.l3_offset;
  if (caplen < core::kEthHeaderBytes || l3 < core::kEthHeaderBytes || l3 > 22 || l3 >= caplen)
    return 0;
  if (frame[0] & 1) return 0;  // link-layer multicast or broadcast destination
  uint32_t bytes = 0;
  if (info.l3 == packet::L3::kIpv4)
    bytes = build4(frame + l3, caplen - l3, src4, e, out + l3);
  else if (info.l3 == packet::L3::kIpv6)
    bytes = build6(frame + l3, caplen - l3, info, src6, e, out + l3);
  if (bytes == 0) return 0;  // nothing was written
  // Back to the previous hop: its MAC becomes the destination; VLAN tags and ethertype stay.
  std::memcpy(out, frame + 6, 6);
  std::memcpy(out + 6, src_mac.data(), 6);
  std::memcpy(out + 12, frame + 12, l3 - 12);
  return l3 + bytes;
}

}  // namespace warpath::forward
