// include/warpath/net/addr.hpp
//
// IP addresses as numbers, shared by host and device code (no STL): an IPv4 address is a
// uint32_t in host order (10.0.0.1 is 0x0A000001), an IPv6 address an Ip6 of two host-order
// halves (hi holds the first 8 bytes). Prefix masking for both. The text forms are in
// addr_text.hpp. Every module that names addresses (lookup, classification, OpenFlow, streams)
// takes them from here, so none of them depends on another for its addresses.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::net {

/// An IPv6 address or prefix in host order.
struct Ip6 {
  uint64_t hi = 0, lo = 0;
  friend WARPATH_HD bool operator==(const Ip6& a, const Ip6& b) {
    return a.hi == b.hi && a.lo == b.lo;
  }
  friend WARPATH_HD bool operator!=(const Ip6& a, const Ip6& b) { return !(a == b); }
};

/// The first `len` bits of a (len 0..32 / 0..128).
WARPATH_HD uint32_t mask4(uint32_t a, unsigned len) {
  return len == 0 ? 0u : a & (0xFFFF'FFFFu << (32 - len));
}
WARPATH_HD Ip6 mask6(Ip6 a, unsigned len) {
  if (len == 0) return Ip6{0, 0};
  if (len <= 64) return Ip6{a.hi & (~0ull << (64 - len)), 0};
  if (len == 128) return a;
  return Ip6{a.hi, a.lo & (~0ull << (128 - len))};
}

/// 16 bytes in network order <-> Ip6.
WARPATH_HD Ip6 ip6_from_bytes(const uint8_t* b) {
  Ip6 a;
  for (int i = 0; i < 8; ++i) a.hi = (a.hi << 8) | b[i];
  for (int i = 8; i < 16; ++i) a.lo = (a.lo << 8) | b[i];
  return a;
}
WARPATH_HD void ip6_to_bytes(Ip6 a, uint8_t* b) {
  for (int i = 0; i < 8; ++i) b[i] = uint8_t(a.hi >> (56 - 8 * i));
  for (int i = 0; i < 8; ++i) b[8 + i] = uint8_t(a.lo >> (56 - 8 * i));
}

}  // namespace warpath::net
