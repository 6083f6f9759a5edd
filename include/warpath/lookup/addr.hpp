// include/warpath/lookup/addr.hpp
//
// Address and next-hop types shared by host and device code (no STL): NextHop, kNoRoute, Ip6
// and prefix masking. route.hpp explains the conventions (host-order addresses, next-hop ids).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::lookup {

using NextHop                          = uint32_t;
inline constexpr NextHop kNoRoute      = 0xFFFF'FFFFu;
inline constexpr NextHop kMaxNextHop   = 0x7FFF'FFFEu;
inline constexpr unsigned kAssignedNhs = 256;  ///< next hops assigned to tables without them

/// An IPv6 address or prefix in host order (see route.hpp).
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

}  // namespace warpath::lookup
