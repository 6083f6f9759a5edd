// src/lookup/core/dir24_8_core.hpp
//
// DIR-24-8-BASIC IPv4 longest-prefix match: the one lookup body of cpu.lpm.scalar, cpu.lpm
// and cuda.lpm (PacketShader 6.2.1; Gupta, Lin and McKeown 1998). No STL, no CUDA includes.
//
// Layout (built by src/lookup/dir24_8_image.cpp)
//   tbl24[a >> 8]   one entry per /24. Without kGroup: the value of the longest route of
//                   length <= 24 covering that /24. With kGroup: the index g of a tbl8 group.
//   tbl8[g*256 + (a & 255)]
//                   the value of the longest route covering the address.
//   value           kEmpty: no route. Otherwise 16-bit tables store an index into nh[] (the
//                   table's distinct next hops, at most 32,767; nh[kEmpty] holds kNoRoute, so
//                   resolving a value is one load and no branch on it: about half of uniform
//                   addresses have no route, a branch that would mispredict often), 32-bit
//                   tables store the next hop itself (nh == nullptr).
//   Entry type E is uint16_t (32 MiB tbl24, PacketShader's layout) or uint32_t (64 MiB).
//
// Concurrency
//   The control plane rewrites entries in place while lookups run (fib.hpp). Each entry is one
//   aligned load; on the host it is an acquire load so that a tbl8 group published by a tbl24
//   store is seen filled. Device images are only written between kernels.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/lookup/addr.hpp"

namespace warpath::lookup::core {

template <class E>
struct Dir24_8Traits;
template <>
struct Dir24_8Traits<uint16_t> {
  static constexpr uint16_t kGroup = 0x8000u, kEmpty = 0x7FFFu;
  static constexpr uint32_t kMaxValues = 0x7FFFu;  ///< distinct next hops (indices 0..32766)
  static constexpr uint32_t kMaxGroups = 0x8000u;
  /// Slots of nh[]: the values, then nh[kEmpty], which holds kNoRoute.
  static constexpr uint32_t kNhSlots = kMaxValues + 1;
};
template <>
struct Dir24_8Traits<uint32_t> {
  static constexpr uint32_t kGroup = 0x8000'0000u, kEmpty = 0x7FFF'FFFFu;
  static constexpr uint32_t kMaxValues = 0x7FFF'FFFFu;  ///< next hops 0..kMaxNextHop
  static constexpr uint32_t kMaxGroups = 0x0080'0000u;  ///< tbl8 index fits in 31 bits
};

template <class E>
struct Dir24_8View {
  const E* tbl24    = nullptr;  ///< 2^24 entries
  const E* tbl8     = nullptr;  ///< groups * 256 entries
  const NextHop* nh = nullptr;  ///< 16-bit tables: value -> next hop; 32-bit: nullptr
};

template <class E>
WARPATH_HD E dir24_8_load(const E* p) {
#if WARPATH_DEVICE_PASS
  return *p;
#else
  return __atomic_load_n(p, __ATOMIC_ACQUIRE);
#endif
}

/// Index of the tbl24 entry of `addr` (the first memory access of a lookup).
WARPATH_HD uint32_t dir24_8_slot(uint32_t addr) { return addr >> 8; }

/// The final table entry of `addr`: tbl24, then tbl8 when the slot has a group.
template <class E>
WARPATH_HD E dir24_8_entry(const Dir24_8View<E>& v, uint32_t addr, E e24) {
  if (e24 & Dir24_8Traits<E>::kGroup)
    return dir24_8_load(&v.tbl8[(uint64_t(e24 & ~Dir24_8Traits<E>::kGroup) << 8) | (addr & 0xffu)]);
  return e24;
}

/// Entry value -> next hop.
template <class E>
WARPATH_HD NextHop dir24_8_resolve(const Dir24_8View<E>& v, E e) {
  if (v.nh) return v.nh[e];  // a table-wide, predictable branch; nh[kEmpty] == kNoRoute
  return e == Dir24_8Traits<E>::kEmpty ? kNoRoute : NextHop(e);
}

/// The whole lookup.
template <class E>
WARPATH_HD NextHop dir24_8_lookup(const Dir24_8View<E>& v, uint32_t addr) {
  const E e24 = dir24_8_load(&v.tbl24[dir24_8_slot(addr)]);
  return dir24_8_resolve(v, dir24_8_entry(v, addr, e24));
}

}  // namespace warpath::lookup::core
