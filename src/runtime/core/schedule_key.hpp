// src/runtime/core/schedule_key.hpp: the key packets are grouped by before the modules run
// (GASPP section 5.3, packet scheduling): packets that take the same code path in a module
// sit next to each other, so a GPU warp diverges less and a CPU loop predicts its branches.
// One body for the CPU's counting sort (chain.cpp) and a GPU radix sort.
//
//   bits 5..3  traffic class: IPv4 TCP, IPv4 UDP, IPv4 other, IPv6 TCP, IPv6 UDP, IPv6 other,
//              not IP, malformed
//   bit  2     the packet is in a context other than the default one
//   bits 1..0  length: < 128, < 512, < 1024, >= 1024 bytes
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::runtime::core {

inline constexpr unsigned kScheduleKeys = 64;

WARPATH_HD uint8_t schedule_key(const packet::PacketInfo& p, uint16_t context,
                                       uint32_t length) {
  unsigned cls;
  if (p.status != packet::ParseStatus::kOk) {
    cls = 7;
  } else if (p.l3 == packet::L3::kIpv4 || p.l3 == packet::L3::kIpv6) {
    const unsigned base = p.l3 == packet::L3::kIpv4 ? 0 : 3;
    cls                 = base + (p.proto == 6 ? 0 : p.proto == 17 ? 1 : 2);
  } else {
    cls = 6;
  }
  const unsigned len = length < 128 ? 0 : length < 512 ? 1 : length < 1024 ? 2 : 3;
  return uint8_t(cls << 3 | (context != 0 ? 4u : 0u) | len);
}

/// The key the offload master sorts a packet job's rows by on the GPU (master.hpp): the
/// length of the row's bytes in 16-byte steps (an AES block), 2,032 bytes and up together.
/// Rows of a packet job are one module's selected packets already, so their length is what
/// makes a warp's threads diverge (the crypto's loop trip counts).
inline constexpr unsigned kLengthKeyBits = 7;
WARPATH_HD uint16_t length_key(uint32_t bytes) {
  return uint16_t(bytes >= (127u << 4) ? 127u : bytes >> 4);
}

}  // namespace warpath::runtime::core
