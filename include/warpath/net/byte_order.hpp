// include/warpath/net/byte_order.hpp: big-endian (network order) loads and stores for code
// shared by host and device (the parsers, the rewriting actions, checksums).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::net {

WARPATH_HD uint16_t load_be16(const uint8_t* p) { return uint16_t(uint16_t(p[0]) << 8 | p[1]); }
WARPATH_HD uint32_t load_be32(const uint8_t* p) {
  return uint32_t(p[0]) << 24 | uint32_t(p[1]) << 16 | uint32_t(p[2]) << 8 | p[3];
}

/// Big-endian stores, the loads' counterparts (frames built or rewritten in place). On a
/// little-endian host one store of the swapped value: g++ leaves byte stores as bytes, and a
/// wider load of them soon after (a parse of a header just rewritten) cannot be served by
/// store forwarding; it waits for both stores to reach the cache.
WARPATH_HD void store_be16(uint8_t* p, uint32_t v) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint16_t w = __builtin_bswap16(uint16_t(v));
  __builtin_memcpy(p, &w, 2);
#else
  p[0] = uint8_t(v >> 8);
  p[1] = uint8_t(v);
#endif
}
WARPATH_HD void store_be32(uint8_t* p, uint32_t v) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint32_t w = __builtin_bswap32(v);
  __builtin_memcpy(p, &w, 4);
#else
  p[0] = uint8_t(v >> 24);
  p[1] = uint8_t(v >> 16);
  p[2] = uint8_t(v >> 8);
  p[3] = uint8_t(v);
#endif
}

}  // namespace warpath::net
