// src/ipsec/core/esp_core.hpp: the per-packet ESP layout of tunnel mode (RFC 4303 section 2,
// RFC 4301 section 5.1.2), written once for host and device: sizes, the trailer and its
// check, the outer IPv4/IPv6 header. No crypto here (the engines), no state (SaState).
#pragma once
#include <cstdint>

#include "packet/core/bytes.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/net/protocols.hpp"

namespace warpath::ipsec::core {

using packet::core::load_be16;
using packet::core::load_be32;
using packet::core::store_be16;
using packet::core::store_be32;

inline constexpr uint32_t kEspHeaderBytes = 8;   ///< SPI + sequence number
inline constexpr uint32_t kIvBytes        = 8;   ///< CTR and GCM: the 64-bit sequence number
inline constexpr uint32_t kEspHead        = kEspHeaderBytes + kIvBytes;
using net::kProtoEsp;  // 50 (net/protocols.hpp)
inline constexpr uint8_t kNextIpv4        = 4;
inline constexpr uint8_t kNextIpv6        = 41;
inline constexpr uint8_t kNextNone        = 59;  ///< a TFC dummy packet: discarded
inline constexpr uint8_t kOuterTtl        = 64;

/// Padding so that the text (inner + pad + 2) is a multiple of 4: CTR and GCM have block
/// size 1, so only the ICV's 4-byte alignment asks for any (RFC 4303 2.4).
WARPATH_HD uint32_t pad_bytes(uint32_t inner_len) { return (4 - (inner_len + 2) % 4) % 4; }
WARPATH_HD uint32_t text_bytes(uint32_t inner_len) { return inner_len + pad_bytes(inner_len) + 2; }
/// Bytes tunnel mode adds to an inner packet of `inner_len` bytes.
WARPATH_HD uint32_t overhead(uint32_t outer_ip_bytes, uint32_t inner_len, uint32_t icv) {
  return outer_ip_bytes + kEspHead + pad_bytes(inner_len) + 2 + icv;
}

/// Writes the padding (1, 2, 3, ...), pad length and next header after `inner_len` bytes of
/// `text`.
WARPATH_HD void write_trailer(uint8_t* text, uint32_t inner_len, uint8_t next_header) {
  const uint32_t pad = pad_bytes(inner_len);
  for (uint32_t k = 0; k < pad; ++k) text[inner_len + k] = uint8_t(k + 1);
  text[inner_len + pad]     = uint8_t(pad);
  text[inner_len + pad + 1] = next_header;
}

/// Checks a decrypted trailer: the pad length fits and the padding is 1, 2, 3, ... (RFC 4303
/// 2.4: "the receiver SHOULD inspect the Padding field"). Sets the payload length (what
/// precedes the padding) and the next header.
WARPATH_HD bool read_trailer(const uint8_t* text, uint32_t text_len, uint32_t& payload_len,
                             uint8_t& next_header) {
  if (text_len < 2) return false;
  const uint32_t pad = text[text_len - 2];
  if (pad + 2 > text_len) return false;
  payload_len = text_len - 2 - pad;
  for (uint32_t k = 0; k < pad; ++k)
    if (text[payload_len + k] != uint8_t(k + 1)) return false;
  next_header = text[text_len - 1];
  return true;
}

/// Writes SPI, the low sequence number and the IV (the whole 64-bit sequence number).
/// On a little-endian host, as two 8-byte stores of byte-swapped words: written byte by byte,
/// g++ assembles the 16 bytes on the stack and reloads them as one vector, a load that store
/// forwarding cannot serve (a stall of about 15 ns per packet in esp-out, measured).
WARPATH_HD void write_esp_header(uint8_t* esp, uint32_t spi, uint64_t seq) {
#if !defined(__CUDA_ARCH__) && defined(__BYTE_ORDER__) && __BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__
  const uint64_t lo = __builtin_bswap32(uint32_t(seq));
  const uint64_t w0 = uint64_t(__builtin_bswap32(spi)) | lo << 32;
  const uint64_t w1 = uint64_t(__builtin_bswap32(uint32_t(seq >> 32))) | lo << 32;
  __builtin_memcpy(esp, &w0, 8);
  __builtin_memcpy(esp + 8, &w1, 8);
#else
  store_be32(esp, spi);
  store_be32(esp + 4, uint32_t(seq));
  store_be32(esp + 8, uint32_t(seq >> 32));
  store_be32(esp + 12, uint32_t(seq));
#endif
}

/// The outer IPv4 header (20 bytes) of a tunnel packet: DSCP and ECN copied from the inner
/// header (RFC 4301 5.1.2.1, RFC 6040's normal mode), DF copied from an inner IPv4 header (as
/// the Linux kernel does), the ID given (esp-out: a counter per pair of tunnel endpoints), TTL
/// 64, protocol ESP.
WARPATH_HD void write_outer_ipv4(uint8_t* ip, uint32_t total_len, uint8_t tos, bool df,
                                 uint16_t id, const uint8_t* src, const uint8_t* dst) {
  ip[0] = 0x45;
  ip[1] = tos;
  store_be16(ip + 2, total_len);
  store_be16(ip + 4, id);
  store_be16(ip + 6, df ? 0x4000 : 0);
  ip[8] = kOuterTtl;
  ip[9] = kProtoEsp;
  for (int k = 0; k < 4; ++k) ip[12 + k] = src[k], ip[16 + k] = dst[k];
  // The checksum from the values, not read back from the bytes just written (reading them
  // back stalls on store forwarding).
  uint32_t sum = 0x4500u + tos + total_len + id + (df ? 0x4000u : 0u) + (uint32_t(kOuterTtl) << 8 | kProtoEsp);
  sum += load_be16(src) + load_be16(src + 2) + load_be16(dst) + load_be16(dst + 2);
  store_be16(ip + 10, packet::core::fold_checksum(sum));
}

/// The outer IPv6 header (40 bytes): traffic class copied, flow label 0, hop limit 64.
WARPATH_HD void write_outer_ipv6(uint8_t* ip, uint32_t payload_len, uint8_t tclass,
                                 const uint8_t* src, const uint8_t* dst) {
  store_be32(ip, 0x60000000u | uint32_t(tclass) << 20);
  store_be16(ip + 4, payload_len);
  ip[6] = kProtoEsp;
  ip[7] = kOuterTtl;
  for (int k = 0; k < 16; ++k) ip[8 + k] = src[k], ip[24 + k] = dst[k];
}

/// An SA's outer header with its per-packet fields (TOS, lengths, ID, DF, checksum) zero,
/// built once (as Open vSwitch's tunnel push keeps a header template): a packet's header is a
/// copy with those fields set, its IPv4 checksum from the constant words' sum kept here.
struct OuterHeader {
  uint8_t bytes[40];
  uint32_t sum;  ///< IPv4: the one's-complement sum of the constant words, unfolded
  bool v4;
};

// N bytes, as wide stores on the host (g++ keeps a byte loop into a uint8_t* as bytes).
template <int N>
WARPATH_HD void copy_bytes(uint8_t* to, const uint8_t* from) {
#ifdef __CUDA_ARCH__
  for (int k = 0; k < N; ++k) to[k] = from[k];
#else
  __builtin_memcpy(to, from, N);
#endif
}

WARPATH_HD OuterHeader outer_header(bool v4, const uint8_t* src, const uint8_t* dst) {
  OuterHeader h{};
  h.v4 = v4;
  if (v4) {
    write_outer_ipv4(h.bytes, 0, 0, false, 0, src, dst);
    h.sum = 0x4500u + (uint32_t(kOuterTtl) << 8 | kProtoEsp) + load_be16(src) + load_be16(src + 2) +
            load_be16(dst) + load_be16(dst + 2);
  } else {
    write_outer_ipv6(h.bytes, 0, 0, src, dst);
  }
  return h;
}

/// What write_outer_ipv4 / write_outer_ipv6 write, from the SA's template: `outer_len` is
/// the whole tunnel packet's IP length.
WARPATH_HD void write_outer(uint8_t* ip, const OuterHeader& h, uint32_t outer_len, uint8_t tos,
                            bool df, uint16_t id) {
  if (h.v4) {
    copy_bytes<20>(ip, h.bytes);
    ip[1] = tos;
    store_be16(ip + 2, outer_len);
    store_be16(ip + 4, id);
    ip[6] = df ? 0x40 : 0;
    store_be16(ip + 10,
               packet::core::fold_checksum(h.sum + tos + outer_len + id + (df ? 0x4000u : 0u)));
  } else {
    copy_bytes<40>(ip, h.bytes);
    store_be32(ip, 0x60000000u | uint32_t(tos) << 20);
    store_be16(ip + 4, outer_len - 40);
  }
}

}  // namespace warpath::ipsec::core
