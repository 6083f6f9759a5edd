// include/warpath/packet/info.hpp
//
// The result of parsing one packet: PacketInfo.
//
// What
//   Parsers (packet/parser.hpp) turn the bytes of each packet into one fixed-layout PacketInfo:
//   a status, the layers found, and the fields later stages need (VLAN tags, addresses, the
//   transport protocol and ports, fragment flags, header offsets). Keys for classification and
//   lookup are then extracted from PacketInfo (flow_key.hpp) without touching the packet again,
//   except for the Ethernet addresses of the OpenFlow key.
//
// Layers recognised
//   Ethernet II; 802.1Q and 802.1ad (up to two tags, outermost first); ARP (recognised, not
//   parsed); IPv4 (options skipped, header checksum verified, fragments); IPv6 (hop-by-hop,
//   routing, fragment and destination-options extension headers); TCP, UDP, SCTP (ports),
//   ICMP and ICMPv6 (type and code). Tunnels (GRE, VXLAN, IP-in-IP, IPv6-in-IP) are reported
//   by their outer header: `tunnel` says which, and the inner packet is not parsed.
//
// Bounds
//   A parser never reads past the captured length. An IPv4 or IPv6 datagram must fit in the
//   frame's wire length (len); bytes after the datagram (Ethernet padding or trailers) are
//   ignored, and transport headers are looked for only inside the datagram. A packet whose
//   capture was cut by a snap length (caplen < len) parses normally as long as the headers it
//   needs were captured; one cut inside a header gets kTruncated.
//
// Statuses
//   kOk, or the first problem found. Fields parsed before the problem are kept (`fields` says
//   which IP-header fields were captured). Two problems do not stop the parse: a bad IPv4
//   header checksum, and an IP datagram longer than the frame (bad_ipv4_length /
//   bad_ipv6_length), whose transport header is still read within the frame; such packets
//   report their addresses, protocol and ports with the problem as their status.
#pragma once
#include <cstddef>
#include <cstdint>

namespace warpath::packet {

enum class ParseStatus : uint8_t {
  kOk = 0,
  kTruncated,         ///< the capture ends inside a header the parser needed
  kBadIpv4Header,     ///< version != 4 or IHL < 5
  kBadIpv4Checksum,   ///< header checksum does not verify
  kBadIpv4Length,     ///< total length < header length, or larger than the frame
  kBadIpv6Header,     ///< version != 6
  kBadIpv6Length,     ///< payload length larger than the frame
  kBadIpv6ExtHeader,  ///< an extension header runs past the datagram
  kBadTcpHeader,      ///< data offset < 5, or the header runs past the datagram
  kBadUdpHeader,      ///< UDP length < 8 or larger than the datagram
  kCount
};

/// Stable lower-case name: "ok", "truncated", "bad_ipv4_checksum", ...
const char* parse_status_name(ParseStatus status) noexcept;

enum class L3 : uint8_t { kNone = 0, kArp, kIpv4, kIpv6, kOther };
enum class Tunnel : uint8_t { kNone = 0, kGre, kVxlan, kIpInIp, kIpv6InIp, kGeneve };

/// PacketInfo::flags bits.
enum InfoFlags : uint8_t {
  kFragment       = 1u << 0,  ///< any IPv4 fragment (MF or offset) or IPv6 with a fragment header
  kLaterFragment  = 1u << 1,  ///< fragment offset != 0: no transport header here
  kHasPorts       = 1u << 2,  ///< sport/dport are valid (TCP, UDP or SCTP, first fragment)
  kHasIcmp        = 1u << 3,  ///< icmp_type/icmp_code are valid
  kIpOptions      = 1u << 4,  ///< IPv4 header longer than 20 bytes
  kIpv6ExtHeaders = 1u << 5,  ///< at least one IPv6 extension header
};

/// PacketInfo::tcp_flags bits (RFC 9293), for every module that reads them.
enum TcpFlagBits : uint8_t {
  kTcpFin = 0x01,
  kTcpSyn = 0x02,
  kTcpRst = 0x04,
  kTcpPsh = 0x08,
  kTcpAck = 0x10,
};

/// PacketInfo::fields bits: which IP-header fields were captured. A packet cut inside its IP
/// header reports the fields that precede the cut (status kTruncated).
enum FieldBits : uint8_t {
  kFieldSrc   = 1u << 0,  ///< src valid
  kFieldDst   = 1u << 1,  ///< dst valid
  kFieldProto = 1u << 2,  ///< proto is the final transport protocol (IPv6: the chain was walked)
  kFieldFrag  = 1u << 3,  ///< fragment flags were read (IPv4 bytes 6-7; always for IPv6)
  kFieldsAll  = kFieldSrc | kFieldDst | kFieldProto | kFieldFrag,
};

/// Parse result for one packet: 64 bytes, POD, identical on host and device.
struct PacketInfo {
  ParseStatus status;
  L3 l3;
  uint8_t ip_version;  ///< 4, 6, or 0
  uint8_t proto;       ///< transport protocol number (after IPv6 extension headers)
  uint8_t vlan_count;  ///< 0, 1 or 2
  uint8_t flags;       ///< InfoFlags
  Tunnel tunnel;
  uint8_t tcp_flags;     ///< TcpFlagBits; valid when proto == 6 and kHasPorts
  uint16_t vlan_tci[2];  ///< outermost first; VLAN id = tci & 0xfff
  uint16_t ethertype;    ///< after VLAN tags
  uint16_t l3_offset;    ///< start of the IP header (0 when none)
  uint16_t l4_offset;    ///< start of the transport header (0 when none)
  uint16_t sport, dport;
  uint8_t icmp_type, icmp_code;
  uint8_t tos;      ///< IPv4 TOS / IPv6 traffic class
  uint8_t ttl;      ///< IPv4 TTL / IPv6 hop limit
  uint8_t fields;   ///< FieldBits
  uint8_t pad;      ///< zero
  uint32_t tcp_seq; ///< the TCP sequence number (host order) when tcp_flags is valid, else 0
  uint8_t src[16];  ///< IPv4: first 4 bytes, network order; IPv6: all 16
  uint8_t dst[16];
};
static_assert(sizeof(PacketInfo) == 64, "PacketInfo layout is part of the GPU contract");
static_assert(offsetof(PacketInfo, tcp_seq) == 28, "tcp_seq fills the old padding");

inline bool operator==(const PacketInfo& a, const PacketInfo& b) noexcept {
  const auto* x = reinterpret_cast<const uint8_t*>(&a);
  const auto* y = reinterpret_cast<const uint8_t*>(&b);
  for (unsigned i = 0; i < sizeof(PacketInfo); ++i)
    if (x[i] != y[i]) return false;
  return true;
}

}  // namespace warpath::packet
