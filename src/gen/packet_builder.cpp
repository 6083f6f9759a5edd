// src/gen/packet_builder.cpp: in-place frame construction and the Internet checksum.
#include "gen/packet_builder.hpp"

#include <cstring>

#include "packet/core/bytes.hpp"
#include "warpath/gen/traffic.hpp"

namespace warpath::gen {

uint16_t internet_checksum(const uint8_t* data, size_t bytes, uint32_t initial) noexcept {
  // RFC 1071: sum the data as big-endian 16-bit words (a trailing odd byte is the high half of
  // a last word), fold the carries back in, and complement.
  uint64_t sum = initial;
  size_t i     = 0;
  for (; i + 1 < bytes; i += 2) sum += uint32_t{data[i]} << 8 | data[i + 1];
  if (i < bytes) sum += uint32_t{data[i]} << 8;
  while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint16_t>(~sum & 0xffff);
}

namespace detail {
namespace {

uint32_t transport_header_bytes(const FrameSpec& spec) noexcept {
  if (spec.proto == kProtoTcp) return kTcpHeaderBytes;
  if (spec.proto == kProtoUdp) return kUdpHeaderBytes;
  if (is_icmp_echo(spec)) return kIcmpHeaderBytes;
  return 0;
}

/// The one's-complement partial sum of the IPv4 or IPv6 pseudo-header (RFC 793, RFC 8200 8.1)
/// for `length` bytes of transport data. The caller's checksum adds it as `initial`.
uint32_t pseudo_header_sum(const FrameSpec& spec, uint32_t length) noexcept {
  uint32_t sum = spec.proto + (length >> 16) + (length & 0xffff);
  if (spec.ipv6) {
    for (int i = 0; i < 16; i += 2) {
      sum += uint32_t{spec.src6[i]} << 8 | spec.src6[i + 1];
      sum += uint32_t{spec.dst6[i]} << 8 | spec.dst6[i + 1];
    }
  } else {
    sum += (spec.src4 >> 16) + (spec.src4 & 0xffff) + (spec.dst4 >> 16) + (spec.dst4 & 0xffff);
  }
  return sum;
}

void fill_payload(Rng* payload, uint8_t* p, uint32_t bytes) noexcept {
  if (payload == nullptr) {
    std::memset(p, 0, bytes);
    return;
  }
  // Eight bytes per draw, most significant byte first, so the bytes do not depend on the
  // host's endianness.
  uint32_t i = 0;
  while (i < bytes) {
    uint64_t word = payload->next();
    for (int k = 0; k < 8 && i < bytes; ++k, ++i) p[i] = static_cast<uint8_t>(word >> (56 - 8 * k));
  }
}

}  // namespace

uint32_t frame_header_bytes(const FrameSpec& spec) noexcept {
  return kEthHeaderBytes + (spec.vlan ? kVlanTagBytes : 0) +
         (spec.ipv6 ? kIpv6HeaderBytes : kIpv4HeaderBytes) + transport_header_bytes(spec);
}

void derived_mac(const uint8_t address_tail[4], uint8_t mac[6]) noexcept {
  mac[0] = 0x02;  // Locally administered, unicast.
  mac[1] = 0x00;
  std::memcpy(mac + 2, address_tail, 4);
}

void build_frame(const FrameSpec& spec, const PacketFields& fields, uint32_t caplen, Rng* payload,
                 uint8_t* out) noexcept {
  // Ethernet II and the optional 802.1Q tag.
  std::memcpy(out, spec.dst_mac, 6);
  std::memcpy(out + 6, spec.src_mac, 6);
  uint32_t l3 = 12;
  if (spec.vlan) {
    packet::core::store_be16(out + l3, 0x8100);
    packet::core::store_be16(out + l3 + 2, spec.vlan_tci);
    l3 += kVlanTagBytes;
  }
  packet::core::store_be16(out + l3, spec.ipv6 ? 0x86dd : 0x0800);
  l3 += 2;

  // The network header, without the IPv4 checksum yet.
  const uint32_t l4       = l3 + (spec.ipv6 ? kIpv6HeaderBytes : kIpv4HeaderBytes);
  const uint32_t l4_bytes = caplen - l4;
  uint8_t* ip             = out + l3;
  if (spec.ipv6) {
    packet::core::store_be32(ip, 6u << 28 | (spec.flow_label & 0xfffff));
    packet::core::store_be16(ip + 4, l4_bytes);
    ip[6] = spec.proto;
    ip[7] = 64;  // Hop limit.
    std::memcpy(ip + 8, spec.src6, 16);
    std::memcpy(ip + 24, spec.dst6, 16);
  } else {
    ip[0] = 0x45;  // Version 4, IHL 5.
    ip[1] = 0;
    packet::core::store_be16(ip + 2, caplen - l3);
    packet::core::store_be16(ip + 4, fields.ip_id);
    packet::core::store_be16(ip + 6, 0x4000);  // DF, fragment offset 0.
    ip[8] = 64;             // TTL.
    ip[9] = spec.proto;
    packet::core::store_be16(ip + 10, 0);
    packet::core::store_be32(ip + 12, spec.src4);
    packet::core::store_be32(ip + 16, spec.dst4);
    packet::core::store_be16(ip + 10, internet_checksum(ip, kIpv4HeaderBytes));
  }

  // The transport header, then the payload, then the transport checksum over both.
  uint8_t* tp           = out + l4;
  const uint32_t header = transport_header_bytes(spec);
  fill_payload(payload, tp + header, l4_bytes - header);
  if (spec.proto == kProtoTcp) {
    packet::core::store_be16(tp, spec.sport);
    packet::core::store_be16(tp + 2, spec.dport);
    packet::core::store_be32(tp + 4, fields.seq);
    packet::core::store_be32(tp + 8, fields.ack);
    tp[12] = 5 << 4;  // Data offset: 20 bytes, no options.
    tp[13] = fields.tcp_flags;
    packet::core::store_be16(tp + 14, fields.window);
    packet::core::store_be16(tp + 16, 0);
    packet::core::store_be16(tp + 18, 0);  // Urgent pointer.
    packet::core::store_be16(tp + 16, internet_checksum(tp, l4_bytes, pseudo_header_sum(spec, l4_bytes)));
  } else if (spec.proto == kProtoUdp) {
    packet::core::store_be16(tp, spec.sport);
    packet::core::store_be16(tp + 2, spec.dport);
    packet::core::store_be16(tp + 4, l4_bytes);
    packet::core::store_be16(tp + 6, 0);
    uint16_t sum = internet_checksum(tp, l4_bytes, pseudo_header_sum(spec, l4_bytes));
    packet::core::store_be16(tp + 6, sum == 0 ? 0xffff : sum);  // 0 means "no checksum" (RFC 768).
  } else if (is_icmp_echo(spec)) {
    tp[0] = spec.ipv6 ? 128 : 8;  // Echo request.
    tp[1] = 0;
    packet::core::store_be16(tp + 2, 0);
    packet::core::store_be16(tp + 4, fields.icmp_id);
    packet::core::store_be16(tp + 6, fields.icmp_seq);
    // ICMPv6 covers the pseudo-header (RFC 4443 2.3); ICMP covers the message only.
    uint32_t initial = spec.ipv6 ? pseudo_header_sum(spec, l4_bytes) : 0;
    packet::core::store_be16(tp + 2, internet_checksum(tp, l4_bytes, initial));
  }
}

}  // namespace detail
}  // namespace warpath::gen
