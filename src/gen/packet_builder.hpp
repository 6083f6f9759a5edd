// src/gen/packet_builder.hpp
//
// Internal helpers of the traffic generator: a portable PRNG and an in-place frame builder.
//
// Rng
//   xoshiro256** seeded through splitmix64. Every draw is defined by integer arithmetic only,
//   so a seed gives the same sequence with every compiler and standard library (unlike the
//   <random> distributions, whose algorithms are implementation-defined).
//
// Frame builder
//   build_frame() writes one complete frame of `caplen` bytes (no FCS): Ethernet II, an
//   optional 802.1Q tag, IPv4 or IPv6, then TCP, UDP, ICMP echo (IPv4, protocol 1) or ICMPv6
//   echo request (IPv6, next header 58), or nothing for any other protocol. All the bytes
//   after the headers are payload, covered by the IP lengths and the checksums. caplen must be
//   at least frame_header_bytes(spec).
#pragma once
#include <cstdint>

#include "warpath/net/protocols.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::gen::detail {

inline constexpr uint32_t kEthHeaderBytes  = 14;
inline constexpr uint32_t kVlanTagBytes    = 4;
using net::kIcmpHeaderBytes, net::kIpv4HeaderBytes, net::kIpv6HeaderBytes, net::kTcpHeaderBytes,
    net::kUdpHeaderBytes;
inline constexpr uint32_t kFcsBytes = 4;

using net::kProtoIcmp, net::kProtoIcmpv6, net::kProtoTcp, net::kProtoUdp;

using packet::kTcpAck;
using packet::kTcpFin;
using packet::kTcpPsh;
using packet::kTcpSyn;

/// splitmix64 step: advances `state` and returns the next output.
inline uint64_t splitmix64(uint64_t& state) noexcept {
  uint64_t z = (state += 0x9e3779b97f4a7c15ull);
  z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

/// xoshiro256**; `stream` selects an independent sequence for the same seed.
class Rng {
 public:
  Rng(uint64_t seed, uint64_t stream) noexcept {
    uint64_t state = seed ^ (stream * 0xd1b54a32d192ed03ull);
    for (uint64_t& word : s_) word = splitmix64(state);
  }

  uint64_t next() noexcept {
    const uint64_t result = rotl(s_[1] * 5, 7) * 9;
    const uint64_t t      = s_[1] << 17;
    s_[2] ^= s_[0];
    s_[3] ^= s_[1];
    s_[1] ^= s_[2];
    s_[0] ^= s_[3];
    s_[2] ^= t;
    s_[3] = rotl(s_[3], 45);
    return result;
  }

  /// Uniform in [0, n) for n >= 1 (multiply-shift on the high 32 bits; the bias is below
  /// n / 2^32, irrelevant for test traffic, and the mapping is the same on every platform).
  uint32_t below(uint32_t n) noexcept {
    return static_cast<uint32_t>(((next() >> 32) * uint64_t{n}) >> 32);
  }

  uint16_t next16() noexcept { return static_cast<uint16_t>(next() >> 48); }
  uint32_t next32() noexcept { return static_cast<uint32_t>(next() >> 32); }

 private:
  static uint64_t rotl(uint64_t x, int k) noexcept { return (x << k) | (x >> (64 - k)); }
  uint64_t s_[4];
};

/// Everything about a frame that stays the same for all packets of one flow.
struct FrameSpec {
  bool ipv6         = false;
  bool vlan         = false;
  uint16_t vlan_tci = 0;          ///< PCP << 13 | VLAN id
  uint8_t proto     = kProtoTcp;  ///< IP protocol / next header
  uint32_t src4 = 0, dst4 = 0;    ///< IPv4 addresses, host order
  uint8_t src6[16] = {}, dst6[16] = {};
  uint32_t flow_label = 0;  ///< IPv6, 20 bits
  uint16_t sport = 0, dport = 0;
  uint8_t src_mac[6] = {}, dst_mac[6] = {};
};

/// The fields that change from packet to packet.
struct PacketFields {
  uint16_t ip_id    = 0;
  uint8_t tcp_flags = kTcpAck;
  uint32_t seq = 0, ack = 0;
  uint16_t window  = 65535;
  uint16_t icmp_id = 0, icmp_seq = 0;
};

/// True when the frame carries an ICMP (IPv4) or ICMPv6 (IPv6) echo header.
inline bool is_icmp_echo(const FrameSpec& spec) noexcept {
  return spec.ipv6 ? spec.proto == kProtoIcmpv6 : spec.proto == kProtoIcmp;
}

/// Bytes of Ethernet, VLAN, IP and transport headers (the smallest possible caplen).
uint32_t frame_header_bytes(const FrameSpec& spec) noexcept;

/// A locally administered unicast MAC derived from four address bytes: 02:00:a:b:c:d.
void derived_mac(const uint8_t address_tail[4], uint8_t mac[6]) noexcept;

/// Writes the frame into out[0, caplen). The payload comes from `payload` (zeros if null).
void build_frame(const FrameSpec& spec, const PacketFields& fields, uint32_t caplen, Rng* payload,
                 uint8_t* out) noexcept;

}  // namespace warpath::gen::detail
