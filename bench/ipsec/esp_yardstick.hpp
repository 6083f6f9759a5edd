// bench/ipsec/esp_yardstick.hpp: warpath-esp-bench's yardstick of the outbound path's floor
// (issue 62: "show the floor with a yardstick"): the least work a tunnel-mode ESP gateway does
// outside the crypto for a packet a zero-copy port hands it, written plainly for one SA and
// one policy, with none of the framework: no frame, no parser, no policy database, no counters,
// no lifetime, no checks beyond the ones every gateway must make (IPv4, TTL, the policy's
// destination). Included by esp_bench.cpp only.
//
// A pass: the packets written into mbuf-like buffers (128 bytes of headroom, untimed: the
// device's write, as ChainRun's zero-copy paths do); then, timed, for each packet: the checks,
// the Ethernet header moved down into the headroom, the outer IPv4 header from a template (its
// length, identification and checksum), the ESP header (SPI, sequence number, the IV as the
// 64-bit sequence number, as cpu.esp writes it), the inner TTL decremented with its checksum
// updated (RFC 1624), the trailer (padding 1, 2, ..., its length, next header 4); then the seal
// (`seal`: the anchor's burst over these packets, the same jobs imb.burst.nocheck submits).
// The pass's time less imb.burst.nocheck's is the floor outside the crypto. With `encap` off
// the pass only seals, in place: what the same crypto costs on packets where a frame holds
// them, against the anchor's packed buffers.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "ipsec/core/crypto_core.hpp"
#include "ipsec/core/esp_core.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::bench::esp {

struct OutYardstick {
  static constexpr uint32_t kHeadroom = 128, kPrepend = 20 + ipsec::core::kEspHead;

  const std::vector<std::vector<uint8_t>>& input;  // Ethernet frames of IPv4 packets, one size
  /// Each packet's buffer: an mbuf's 2,304 bytes, or more for packets it would not hold.
  const size_t buf_bytes;
  std::vector<uint8_t> buffers;
  std::vector<ipsec::CryptoOp> ops;  // where each packet's ESP header will be, for `seal`
  std::function<uint64_t()> seal;
  uint8_t outer[20];       // the outer header's template (length, id, checksum 0)
  uint32_t outer_sum = 0;  // its ones' complement sum
  uint32_t spi = 0, policy_dst = 0, policy_mask = 0;
  uint64_t seq = 0, untimed_ns = 0;
  uint16_t id  = 0;
  uint32_t icv = 0, dropped = 0;
  /// false: the seal alone, over the packets where a frame has them (the anchor's jobs at the
  /// offsets of an mbuf: the text at byte 142 of a 2,304-byte buffer, where the anchor's are
  /// packed one after another)
  bool encap = true;
  bool cold  = false;  ///< --cold: the written packets flushed from the caches (untimed)

  OutYardstick(const std::vector<std::vector<uint8_t>>& in, uint32_t spi_, const uint8_t src[4],
               const uint8_t dst[4], uint32_t icv_bytes, uint32_t dst_prefix, uint32_t prefix_len)
      : input(in),
        buf_bytes(
            std::max<size_t>(2304, (kHeadroom + in[0].size() + 8 + icv_bytes + 63) / 64 * 64)),
        buffers(in.size() * buf_bytes),
        ops(in.size()),
        spi(spi_),
        icv(icv_bytes) {
    policy_mask         = prefix_len ? ~uint32_t(0) << (32 - prefix_len) : 0;
    policy_dst          = dst_prefix & policy_mask;
    const uint8_t t[20] = {0x45, 0, 0, 0, 0, 0, 0x40, 0, 64, 50, 0, 0};
    std::memcpy(outer, t, 12);
    std::memcpy(outer + 12, src, 4);
    std::memcpy(outer + 16, dst, 4);
    for (int i = 0; i < 20; i += 2) outer_sum += uint32_t(outer[i] << 8 | outer[i + 1]);
    const uint32_t text = ipsec::core::text_bytes(uint32_t(in[0].size() - 14));
    for (size_t p = 0; p < in.size(); ++p)
      ops[p] = {buffers.data() + p * buf_bytes + kHeadroom + 14 - ipsec::core::kEspHead, text, 0,
                0};
  }

  static uint16_t fold(uint32_t s) {
    while (s >> 16) s = (s & 0xffff) + (s >> 16);
    return uint16_t(~s);
  }
  static uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }
  static void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v >> 8), p[1] = uint8_t(v); }
  static void put32(uint8_t* p, uint32_t v) {
    put16(p, uint16_t(v >> 16)), put16(p + 2, uint16_t(v));
  }

  // The least outbound work for the packet at p (its Ethernet header); false: not sent.
  bool encapsulate(uint8_t* p) {
    uint8_t* ip = p + 14;
    if (be16(p + 12) != 0x0800 || (ip[0] >> 4) != 4 || ip[8] <= 1) return false;
    const uint32_t dst =
        uint32_t(ip[16]) << 24 | uint32_t(ip[17]) << 16 | uint32_t(ip[18]) << 8 | ip[19];
    if ((dst & policy_mask) != policy_dst) return false;
    const uint32_t inner = be16(ip + 2);
    const uint32_t text  = ipsec::core::text_bytes(inner);
    std::memmove(p - kPrepend, p, 14);
    // The inner TTL, less one (RFC 1624: the checksum follows the 16-bit word it is in).
    const uint16_t old_word = be16(ip + 8);
    --ip[8];
    put16(ip + 10, fold(uint32_t(uint16_t(~be16(ip + 10))) + uint16_t(~old_word) + be16(ip + 8)));
    // The trailer: padding 1, 2, ..., its length, next header.
    const uint32_t pad = text - inner - 2;
    for (uint32_t i = 0; i < pad; ++i) ip[inner + i] = uint8_t(i + 1);
    ip[inner + pad]     = uint8_t(pad);
    ip[inner + pad + 1] = 4;
    uint8_t* esp        = ip - ipsec::core::kEspHead;
    ++seq;
    put32(esp, spi);
    put32(esp + 4, uint32_t(seq));
    put32(esp + 8, uint32_t(seq >> 32));
    put32(esp + 12, uint32_t(seq));
    uint8_t* o = esp - 20;
    std::memcpy(o, outer, 20);
    const uint16_t len = uint16_t(20 + ipsec::core::kEspHead + text + icv);
    put16(o + 2, len);
    put16(o + 4, ++id);
    put16(o + 10, fold(outer_sum + len + id));
    return true;
  }

  uint64_t pass() {
    const auto t0 = std::chrono::steady_clock::now();
    for (size_t p = 0; p < input.size(); ++p)  // the device's write (untimed)
      std::memcpy(buffers.data() + p * buf_bytes + kHeadroom, input[p].data(), input[p].size());
    if (cold) {  // as ChainRun's zero-copy paths under --cold
      for (size_t off = 0; off < buffers.size(); off += 64) _mm_clflush(buffers.data() + off);
      _mm_mfence();
    }
    untimed_ns += uint64_t(
        std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
            .count());
    if (encap)
      for (size_t p = 0; p < input.size(); ++p)
        dropped += !encapsulate(buffers.data() + p * buf_bytes + kHeadroom);
    return seal();
  }
};

}  // namespace warpath::bench::esp
