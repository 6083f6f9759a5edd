// bench/ipsec/esp_yardstick.hpp: warpath-esp-bench's yardsticks of the outbound and inbound
// paths' floors (issue 62: "show the floor with a yardstick"): the least work a tunnel-mode ESP
// gateway does outside the crypto for a packet a zero-copy port hands it, written plainly for
// one SA and one policy, with none of the framework: no frame, no parser, no policy database,
// no counters, no lifetime, no checks beyond the ones every gateway must make (IPv4, TTL, the
// policy's destination; inbound: the outer header, the SPI, the sequence number, the ICV, the
// padding, the inner header, the policy's selectors). Included by esp_bench.cpp only.
//
// Outbound (OutYardstick), a pass: the packets written into mbuf-like buffers (128 bytes of headroom, untimed: the
// device's write, as ChainRun's zero-copy paths do); then, timed, for each packet: the checks,
// the Ethernet header moved down into the headroom, the outer IPv4 header from the SA's
// template (its length, identification and checksum), the ESP header (SPI, sequence number,
// the IV as the 64-bit sequence number), the inner TTL decremented with its checksum updated,
// the trailer (padding 1, 2, ..., its length, next header 4), each written by the same
// esp_core / forward_core functions esp-out calls; then the seal
// (`seal`: the anchor's burst over these packets, the same jobs imb.burst.nocheck submits).
// The pass's time less imb.burst.nocheck's is the floor outside the crypto. With `encap` off
// the pass only seals, in place: what the same crypto costs on packets where a frame holds
// them, against the anchor's packed buffers.
//
// Inbound (InYardstick), a pass: the sealed packets written into mbuf-like buffers (untimed);
// then, timed: for each packet the outer checks (Ethernet type, IPv4, its header length, not a
// fragment, protocol ESP, the lengths, the SA's SPI and destination, a sequence number the
// window takes: the bench's SAs have no anti-replay window, as esp-in's path there); the
// anchor's open (`open`: its decrypt jobs, the tags into scratch); then for each packet the ICV
// compared, the window's top moved, the trailer checked (padding 1, 2, ..., next header 4),
// the inner IPv4 header checked, the Ethernet header moved up to the inner packet, and the
// inner addresses checked against the inbound policy's selectors. With `decap` off the pass
// only opens, in place.
#pragma once
#include <immintrin.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <functional>
#include <vector>

#include "ipsec/core/crypto_core.hpp"
#include "forward/core/forward_core.hpp"
#include "ipsec/core/esp_core.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::bench::esp {

// The device's write of the packets into their buffers (each at `headroom` in its `buf_bytes`),
// flushed from the caches under --cold as ChainRun's zero-copy paths are: untimed, its time
// added to `untimed_ns` (best_rate leaves it out).
inline void device_write(const std::vector<std::vector<uint8_t>>& input,
                         std::vector<uint8_t>& buffers, size_t buf_bytes, uint32_t headroom,
                         bool cold, uint64_t& untimed_ns) {
  const auto t0 = std::chrono::steady_clock::now();
  for (size_t p = 0; p < input.size(); ++p)
    std::memcpy(buffers.data() + p * buf_bytes + headroom, input[p].data(), input[p].size());
  if (cold) {
    for (size_t off = 0; off < buffers.size(); off += 64) _mm_clflush(buffers.data() + off);
    _mm_mfence();
  }
  untimed_ns += uint64_t(
      std::chrono::duration_cast<std::chrono::nanoseconds>(std::chrono::steady_clock::now() - t0)
          .count());
}

struct OutYardstick {
  static constexpr uint32_t kHeadroom = 128, kPrepend = 20 + ipsec::core::kEspHead;

  const std::vector<std::vector<uint8_t>>& input;  // Ethernet frames of IPv4 packets, one size
  /// Each packet's buffer: an mbuf's 2,304 bytes, or more for packets it would not hold.
  const size_t buf_bytes;
  std::vector<uint8_t> buffers;
  std::vector<ipsec::CryptoOp> ops;  // where each packet's ESP header will be, for `seal`
  std::function<uint64_t()> seal;
  ipsec::core::OuterHeader outer;  // the SA's outer header template (esp_core.hpp)
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
        outer(ipsec::core::outer_header(true, src, dst)),
        spi(spi_),
        icv(icv_bytes) {
    policy_mask         = prefix_len ? ~uint32_t(0) << (32 - prefix_len) : 0;
    policy_dst          = dst_prefix & policy_mask;
    const uint32_t text = ipsec::core::text_bytes(uint32_t(in[0].size() - 14));
    for (size_t p = 0; p < in.size(); ++p)
      ops[p] = {buffers.data() + p * buf_bytes + kHeadroom + 14 - ipsec::core::kEspHead, text, 0,
                0};
  }

  // The least outbound work for the packet at p (its Ethernet header), with the primitives
  // esp-out itself uses; false: not sent.
  bool encapsulate(uint8_t* p) {
    namespace ec = ipsec::core;
    uint8_t* ip  = p + 14;
    if (ec::load_be16(p + 12) != 0x0800 || (ip[0] >> 4) != 4 || ip[8] <= 1) return false;
    if ((ec::load_be32(ip + 16) & policy_mask) != policy_dst) return false;
    const uint32_t inner = ec::load_be16(ip + 2);
    const uint32_t text  = ec::text_bytes(inner);
    std::memmove(p - kPrepend, p, 14);
    forward::core::decrement_ttl4(ip);
    ec::write_trailer(ip, inner, ec::kNextIpv4);
    uint8_t* esp = ip - ec::kEspHead;
    ec::write_esp_header(esp, spi, ++seq);
    ec::write_outer(esp - 20, outer, 20 + ec::kEspHead + text + icv, 0, true, ++id);
    return true;
  }

  uint64_t pass() {
    device_write(input, buffers, buf_bytes, kHeadroom, cold, untimed_ns);
    if (encap)
      for (size_t p = 0; p < input.size(); ++p)
        dropped += !encapsulate(buffers.data() + p * buf_bytes + kHeadroom);
    return seal();
  }
};

struct InYardstick {
  static constexpr uint32_t kHeadroom = 128;

  const std::vector<std::vector<uint8_t>>& input;  // Ethernet frames of IPv4 ESP, one size
  const size_t buf_bytes;
  std::vector<uint8_t> buffers;
  std::vector<ipsec::CryptoOp> ops;  // each packet's ESP header, for `open`
  /// The anchor's open over `ops` (decrypt jobs, each tag into tag(p)); returns the packets.
  std::function<uint64_t()> open;
  const uint8_t (*tags)[16] = nullptr;  // where `open` writes packet p's tag: tags[p]
  uint32_t spi = 0, sa_dst = 0, sel_src = 0, sel_dst = 0, sel_mask = 0;
  uint64_t top = 0, untimed_ns = 0;
  uint32_t icv = 0, dropped = 0;
  bool decap = true;  ///< false: the open alone, over the packets where a frame has them
  bool cold  = false;

  InYardstick(const std::vector<std::vector<uint8_t>>& in, uint32_t spi_, const uint8_t dst[4],
              uint32_t icv_bytes, uint32_t selector, uint32_t prefix_len)
      : input(in),
        buf_bytes(std::max<size_t>(2304, (kHeadroom + in[0].size() + 63) / 64 * 64)),
        buffers(in.size() * buf_bytes),
        ops(in.size()),
        spi(spi_),
        sa_dst(ipsec::core::load_be32(dst)),
        icv(icv_bytes) {
    sel_mask = prefix_len ? ~uint32_t(0) << (32 - prefix_len) : 0;
    sel_src = sel_dst       = selector & sel_mask;
    const uint32_t esp_len  = uint32_t(in[0].size()) - 14 - 20;
    const uint32_t text_len = esp_len - ipsec::core::kEspHead - icv_bytes;
    for (size_t p = 0; p < in.size(); ++p)
      ops[p] = {buffers.data() + p * buf_bytes + kHeadroom + 14 + 20, text_len, 0, 0};
  }

  // The checks before the crypto for the packet at p (its Ethernet header); false: dropped.
  bool check(const uint8_t* p, uint32_t caplen) {
    namespace ec      = ipsec::core;
    const uint8_t* ip = p + 14;
    if (ec::load_be16(p + 12) != 0x0800 || (ip[0] >> 4) != 4 || ip[9] != ec::kProtoEsp)
      return false;
    const uint32_t ihl = (ip[0] & 15u) * 4, len = ec::load_be16(ip + 2);
    if (ihl < 20 || (ec::load_be16(ip + 6) & 0x3fff) != 0 || 14 + len > caplen) return false;
    const uint8_t* e = ip + ihl;
    if (len < ihl + ec::kEspHead + 4 + icv || (len - ihl - ec::kEspHead - icv) % 4 != 0)
      return false;
    if (ec::load_be32(e) != spi || ec::load_be32(ip + 16) != sa_dst) return false;
    return ec::load_be32(e + 4) != 0;  // no window: any number but 0 (RFC 4303 3.4.3)
  }

  // After the crypto, for the packet at p whose op is `op`; false: dropped.
  bool finish(uint8_t* p, const ipsec::CryptoOp& op, const uint8_t* computed) {
    namespace ec            = ipsec::core;
    uint8_t* text           = op.esp + ec::kEspHead;
    const uint8_t* received = text + op.text_len;
    uint8_t diff            = 0;  // the ICV compared in constant time
    for (uint32_t k = 0; k < icv; ++k) diff |= uint8_t(computed[k] ^ received[k]);
    if (diff) return false;
    top            = std::max<uint64_t>(top, ec::load_be32(op.esp + 4));
    uint32_t inner = 0;
    uint8_t next   = 0;
    if (!ec::read_trailer(text, op.text_len, inner, next) || next != ec::kNextIpv4) return false;
    if (inner < 20 || (text[0] >> 4) != 4 || ec::load_be16(text + 2) > inner ||
        ec::load_be16(text + 2) < 20)
      return false;
    uint8_t eth[14];  // the Ethernet header, 14 bytes up (inline moves, not a call)
    std::memcpy(eth, p, 14);
    std::memcpy(text - 14, eth, 14);
    if ((ec::load_be32(text + 12) & sel_mask) != sel_src ||
        (ec::load_be32(text + 16) & sel_mask) != sel_dst)
      return false;
    return true;
  }

  uint64_t pass() {
    device_write(input, buffers, buf_bytes, kHeadroom, cold, untimed_ns);
    if (decap)
      for (size_t p = 0; p < input.size(); ++p)
        dropped += !check(buffers.data() + p * buf_bytes + kHeadroom, uint32_t(input[p].size()));
    const uint64_t n = open();
    if (decap)
      for (uint32_t p = 0; p < input.size(); ++p)
        dropped += !finish(buffers.data() + p * buf_bytes + kHeadroom, ops[p], tags[p]);
    return n;
  }

  /// The inner packet of packet p after a pass (its Ethernet header included).
  const uint8_t* inner(size_t p) const { return ops[p].esp + ipsec::core::kEspHead - 14; }
};

}  // namespace warpath::bench::esp
