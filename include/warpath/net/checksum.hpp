// include/warpath/net/checksum.hpp: the Internet checksum (RFC 1071) and its incremental
// update (RFC 1624), for host and device: the parser's IPv4 header check, the router's TTL
// rewrite, the switch's header actions, ESP's outer headers, the generator.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/net/byte_order.hpp"

namespace warpath::net {

/// One's-complement sum of 16-bit big-endian words (RFC 1071), not yet folded or inverted:
/// `sum` plus a value that folds (fold_checksum, after any further additions) as the words' sum
/// does. The device adds the words one by one. A little-endian host adds native 32-bit words
/// into 64 bits, folds to 16 and swaps the bytes (RFC 1071's byte-order independence): a
/// 20-byte IPv4 header in five loads instead of ten swapped 16-bit ones, which took half the
/// parser's IPv4 time. The result differs from the word-by-word sum only by multiples of
/// 0xFFFF and is zero exactly when it is (all bytes zero), so every fold is the same; a test
/// holds the two equal.
WARPATH_HD uint32_t ones_sum_words(const uint8_t* p, uint32_t bytes, uint32_t sum = 0) {
  uint32_t i = 0;
  for (; i + 1 < bytes; i += 2) sum += load_be16(p + i);
  if (i < bytes) sum += uint32_t(p[i]) << 8;
  return sum;
}
WARPATH_HD uint32_t ones_sum(const uint8_t* p, uint32_t bytes, uint32_t sum = 0) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t acc = 0;
  uint32_t i   = 0;
  for (; i + 4 <= bytes; i += 4) {
    uint32_t w;
    __builtin_memcpy(&w, p + i, 4);
    acc += w;
  }
  if (i + 2 <= bytes) {
    uint16_t w;
    __builtin_memcpy(&w, p + i, 2);
    acc += w;
    i += 2;
  }
  if (i < bytes) acc += p[i];  // the low byte of a native word: the high byte once swapped
  acc = (acc & 0xffffffffu) + (acc >> 32);
  acc = (acc & 0xffffffffu) + (acc >> 32);
  acc = (acc & 0xffffu) + (acc >> 16);
  acc = (acc & 0xffffu) + (acc >> 16);
  acc = (acc & 0xffffu) + (acc >> 16);
  return sum + __builtin_bswap16(uint16_t(acc));
#else
  return ones_sum_words(p, bytes, sum);
#endif
}

/// ones_sum of a 20-byte header (an IPv4 header without options), without the loop.
WARPATH_HD uint32_t ones_sum20(const uint8_t* p) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  uint64_t a, b;
  uint32_t c;
  __builtin_memcpy(&a, p, 8);
  __builtin_memcpy(&b, p + 8, 8);
  __builtin_memcpy(&c, p + 16, 4);
  uint64_t acc = (a & 0xffffffffu) + (a >> 32) + (b & 0xffffffffu) + (b >> 32) + c;
  acc          = (acc & 0xffffffffu) + (acc >> 32);
  acc          = (acc & 0xffffu) + (acc >> 16);
  acc          = (acc & 0xffffu) + (acc >> 16);
  acc          = (acc & 0xffffu) + (acc >> 16);
  return __builtin_bswap16(uint16_t(acc));
#else
  return ones_sum_words(p, 20);
#endif
}

WARPATH_HD uint16_t fold_checksum(uint32_t sum) {
  while (sum >> 16) sum = (sum & 0xffffu) + (sum >> 16);
  return uint16_t(~sum & 0xffffu);
}

/// Whether the IPv4 header at `ip`, `ihl` bytes long, verifies (the parser's check and the
/// router's): the loop-free sum for the 20 bytes of nearly every header.
WARPATH_HD bool ipv4_header_checksum_ok(const uint8_t* ip, uint32_t ihl) {
  return fold_checksum(ihl == 20 ? ones_sum20(ip) : ones_sum(ip, ihl)) == 0;
}

/// RFC 1624 equation 3: the checksum after one 16-bit word of the covered data changes from
/// `m_old` to `m_new`, HC' = ~(~HC + ~m + m') in one's-complement arithmetic. Unlike RFC 1141's
/// HC' = HC + m - m', it never yields 0xFFFF (-0) where a full recomputation yields 0x0000, and
/// it is exact for a received checksum of 0xFFFF (the other zero) as well.
WARPATH_HD uint16_t checksum_update16(uint16_t hc, uint16_t m_old, uint16_t m_new) {
  uint32_t sum = uint32_t(uint16_t(~hc)) + uint16_t(~m_old) + m_new;
  sum          = (sum & 0xffffu) + (sum >> 16);
  sum          = (sum & 0xffffu) + (sum >> 16);
  return uint16_t(~sum & 0xffffu);
}

}  // namespace warpath::net
