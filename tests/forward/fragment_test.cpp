// tests/forward/fragment_test.cpp: IP fragmentation on output (forward/fragment.hpp). Every
// fragment is checked on its own (size within the MTU, 8-byte offsets, MF, a valid header
// checksum, options copied as RFC 791 says) and the fragments are put back together by
// ref.defrag, which must give back the original packet byte for byte; at MTUs from the
// smallest (68, 1280) up and packet sizes from one byte past the MTU to 65,535.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "packet/core/bytes.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/forward/fragment.hpp"

namespace warpath::forward {
namespace {

using namespace packet::core;  // the byte and checksum helpers

// Router Alert (copied), Record Route (not copied), End of Option List: 12 bytes.
const std::vector<uint8_t> kOptions = {0x94, 4, 0, 0, 0x07, 7, 4, 0, 0, 0, 0, 0};

// An Ethernet frame with an IPv4 (with `options`) or IPv6 UDP packet of `ip_len` bytes.
std::vector<uint8_t> packet_of(bool v6, uint32_t ip_len, bool df = false,
                               const std::vector<uint8_t>& options = {}) {
  std::vector<uint8_t> f(14 + ip_len);
  for (size_t k = 0; k < f.size(); ++k) f[k] = uint8_t(k * 13 + 5);
  std::memset(f.data(), 0x02, 12);
  store_be16(f.data() + 12, v6 ? 0x86dd : 0x0800);
  uint8_t* ip = f.data() + 14;
  if (v6) {
    ip[0] = 0x60, ip[1] = 0, ip[2] = 0, ip[3] = 0;
    store_be16(ip + 4, ip_len - 40);
    ip[6] = 17, ip[7] = 64;
    store_be16(ip + 40 + 4, ip_len - 40);  // the UDP length
  } else {
    const uint32_t ihl = 20 + uint32_t(options.size());
    ip[0]              = uint8_t(0x40 | ihl / 4);
    ip[1]              = 0;
    store_be16(ip + 2, ip_len);
    store_be16(ip + 4, 0x1234);
    store_be16(ip + 6, df ? 0x4000 : 0);
    ip[8] = 64, ip[9] = 17;
    std::memcpy(ip + 20, options.data(), options.size());
    store_be16(ip + 10, 0);
    store_be16(ip + 10, fold_checksum(ones_sum(ip, ihl)));
    store_be16(ip + ihl + 4, ip_len - ihl);
  }
  return f;
}

packet::PacketInfo parse(const uint8_t* f, uint32_t n) { return packet::core::parse_packet(f, n, n); }

FragmentResult cut(const std::vector<uint8_t>& f, uint32_t mtu, packet::PacketBatch& out,
                   uint32_t ident = 77) {
  return fragment_packet(f.data(), uint32_t(f.size()), parse(f.data(), uint32_t(f.size())), mtu,
                         ident, 1000, 3, out);
}

// The fragments of `out`, checked one by one, then reassembled by ref.defrag.
std::vector<uint8_t> check_and_reassemble(const packet::PacketBatch& out, bool v6, uint32_t mtu,
                                          uint32_t first_ihl, uint32_t later_ihl) {
  defrag::DefragConfig c;
  c.max_fragments = 8192;
  auto d = defrag::make_defragmenter("ref.defrag", c).value();
  std::vector<uint8_t> whole;
  uint32_t expect_offset = 0;
  for (uint32_t k = 0; k < out.size(); ++k) {
    const uint8_t* p            = out.data(k);
    const packet::PacketMeta& m = out.meta(k);
    const uint8_t* ip           = p + 14;
    EXPECT_EQ(m.port, 3u);
    EXPECT_EQ(m.timestamp_ns, 1000u);
    EXPECT_EQ(m.caplen, m.len);
    EXPECT_LE(m.caplen - 14, mtu) << "fragment " << k;
    const packet::PacketInfo info = parse(p, m.caplen);
    // The first fragment's UDP length is the datagram's: longer than the fragment.
    EXPECT_EQ(info.status, k == 0 ? packet::ParseStatus::kBadUdpHeader : packet::ParseStatus::kOk)
        << "fragment " << k;
    EXPECT_TRUE(info.flags & packet::kFragment) << "fragment " << k;
    const bool last = k + 1 == out.size();
    if (v6) {
      EXPECT_EQ(ip[6], 44);
      const uint16_t off = load_be16(ip + 42);
      EXPECT_EQ(off & ~7u, expect_offset) << "fragment " << k;
      EXPECT_EQ(bool(off & 1), !last) << "fragment " << k;
      EXPECT_EQ(load_be16(ip + 44), 0u);
      EXPECT_EQ(load_be16(ip + 46), 77u) << "the identification";
      expect_offset += m.caplen - 14 - 48;
    } else {
      const uint32_t ihl = (ip[0] & 15) * 4u;
      EXPECT_EQ(ihl, k == 0 ? first_ihl : later_ihl) << "fragment " << k;
      if (k > 0 && ihl == 24) EXPECT_EQ(ip[20], 0x94) << "the copied option alone";
      EXPECT_EQ(fold_checksum(ones_sum(ip, ihl)), 0) << "fragment " << k;
      const uint16_t frag = load_be16(ip + 6);
      EXPECT_EQ((frag & 0x1fffu) * 8u, expect_offset) << "fragment " << k;
      EXPECT_EQ(bool(frag & 0x2000), !last) << "fragment " << k;
      EXPECT_EQ(load_be16(ip + 4), 0x1234u);
      if (!last) EXPECT_EQ((m.caplen - 14 - ihl) % 8, 0u);
      expect_offset += m.caplen - 14 - ihl;
    }
    whole.clear();
    const defrag::FragResult r = d->add(info, p, m.caplen, 1000, whole);
    EXPECT_EQ(r, last ? defrag::FragResult::kCompleted : defrag::FragResult::kHeld) << k;
  }
  return whole;
}

TEST(Fragment, Ipv4AtEveryMtuComesBackWhole) {
  for (const uint32_t mtu : {68u, 576u, 1280u, 1500u, 9000u})
    for (const bool opts : {false, true})
      for (const uint32_t len : {mtu + 1, mtu + 7, mtu + 8, mtu * 2, mtu * 3 + 5, 9001u, 65535u}) {
        if (len <= mtu || len > 65535) continue;
        SCOPED_TRACE("mtu " + std::to_string(mtu) + " length " + std::to_string(len) +
                     (opts ? " with options" : ""));
        const std::vector<uint8_t> f = packet_of(false, len, false, opts ? kOptions : std::vector<uint8_t>{});
        auto out = packet::PacketBatch::create(2048, 2048, size_t(4) << 20).value();
        const FragmentResult r = cut(f, mtu, out);
        ASSERT_EQ(r.outcome, FragmentOutcome::kFragmented);
        ASSERT_EQ(r.fragments, out.size());
        ASSERT_GE(out.size(), 2u);
        const std::vector<uint8_t> whole = check_and_reassemble(out, false, mtu, opts ? 32 : 20, opts ? 24 : 20);
        EXPECT_EQ(whole, f);
      }
}

TEST(Fragment, Ipv6AtEveryMtuComesBackWhole) {
  for (const uint32_t mtu : {1280u, 1500u, 9000u})
    for (const uint32_t len : {mtu + 1, mtu + 8, mtu * 2 + 3, 65535u + 40}) {
      SCOPED_TRACE("mtu " + std::to_string(mtu) + " length " + std::to_string(len));
      const std::vector<uint8_t> f = packet_of(true, len);
      auto out = packet::PacketBatch::create(2048, 2048, size_t(4) << 20).value();
      const FragmentResult r = cut(f, mtu, out);
      ASSERT_EQ(r.outcome, FragmentOutcome::kFragmented);
      ASSERT_EQ(r.fragments, out.size());
      EXPECT_EQ(check_and_reassemble(out, true, mtu, 0, 0), f);
    }
}

TEST(Fragment, WhatIsNotFragmented) {
  auto out = packet::PacketBatch::create(64, 2048).value();
  EXPECT_EQ(cut(packet_of(false, 1500), 1500, out).outcome, FragmentOutcome::kFits);
  EXPECT_EQ(cut(packet_of(true, 1500), 1500, out).outcome, FragmentOutcome::kFits);
  EXPECT_EQ(cut(packet_of(false, 1501, true), 1500, out).outcome, FragmentOutcome::kRefused)
      << "DF";
  EXPECT_EQ(cut(packet_of(false, 1501), 67, out).outcome, FragmentOutcome::kRefused)
      << "below IPv4's least MTU";
  EXPECT_EQ(cut(packet_of(true, 1501), 1279, out).outcome, FragmentOutcome::kRefused)
      << "below IPv6's least MTU";
  std::vector<uint8_t> hbh = packet_of(true, 3000);
  hbh[14 + 6] = 0;  // a hop-by-hop header belongs to the unfragmentable part
  EXPECT_EQ(cut(hbh, 1500, out).outcome, FragmentOutcome::kRefused);
  std::vector<uint8_t> truncated = packet_of(false, 3000);
  truncated.resize(2000);
  EXPECT_EQ(cut(truncated, 1500, out).outcome, FragmentOutcome::kRefused)
      << "an IP length past the capture";
  std::vector<uint8_t> late = packet_of(false, 1500);  // a fragment near the datagram's end:
  store_be16(late.data() + 14 + 6, 0x2000 | 8100);    // cut again, its pieces would pass 65,535
  store_be16(late.data() + 14 + 10, 0);
  store_be16(late.data() + 14 + 10, fold_checksum(ones_sum(late.data() + 14, 20)));
  EXPECT_EQ(cut(late, 576, out).outcome, FragmentOutcome::kRefused);
  const std::vector<uint8_t> arp(60, 0);
  EXPECT_EQ(cut(arp, 1500, out).outcome, FragmentOutcome::kRefused);
  EXPECT_EQ(out.size(), 0u) << "nothing appended";
}

TEST(Fragment, NoRoomAppendsNothing) {
  // 9,000 bytes at a 1,500-byte MTU: 7 fragments; a batch of 6 packets (or too few bytes)
  // takes none of them.
  const std::vector<uint8_t> f = packet_of(false, 9000);
  auto few = packet::PacketBatch::create(6, 2048).value();
  EXPECT_EQ(cut(f, 1500, few).outcome, FragmentOutcome::kNoRoom);
  EXPECT_EQ(few.size(), 0u);
  auto small = packet::PacketBatch::create(64, 2048, 6 * 2048).value();
  EXPECT_EQ(cut(f, 1500, small).outcome, FragmentOutcome::kNoRoom);
  EXPECT_EQ(small.size(), 0u);
  auto enough = packet::PacketBatch::create(7, 2048).value();
  const FragmentResult r = cut(f, 1500, enough);
  EXPECT_EQ(r.outcome, FragmentOutcome::kFragmented);
  EXPECT_EQ(r.fragments, 7u);
}

TEST(Fragment, AFragmentIsCutAgainInPlace) {
  // A middle fragment (offset 1,480, MF) larger than the MTU: its pieces keep their place in
  // the datagram and MF stays set on the last of them.
  std::vector<uint8_t> f = packet_of(false, 3000);
  uint8_t* ip = f.data() + 14;
  store_be16(ip + 6, 0x2000 | 185);
  store_be16(ip + 10, 0);
  store_be16(ip + 10, fold_checksum(ones_sum(ip, 20)));
  auto out = packet::PacketBatch::create(64, 2048).value();
  ASSERT_EQ(cut(f, 1500, out).outcome, FragmentOutcome::kFragmented);
  ASSERT_EQ(out.size(), 3u);
  for (uint32_t k = 0; k < 3; ++k) {
    const uint16_t frag = load_be16(out.data(k) + 14 + 6);
    EXPECT_TRUE(frag & 0x2000) << k;
    EXPECT_EQ((frag & 0x1fffu) * 8u, 1480u + 1480u * k) << k;
  }
}

}  // namespace
}  // namespace warpath::forward
