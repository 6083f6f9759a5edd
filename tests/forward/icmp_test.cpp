// tests/forward/icmp_test.cpp: ICMP and ICMPv6 Time Exceeded frames, byte by byte, and when
// no error may be sent.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "forward/forward_test_util.hpp"

namespace warpath::forward {
namespace {

using testing::be16_at;
using testing::Frame;
using testing::FrameBuilder;
using testing::ipv4_checksum_ok;
using testing::Ipv4Spec;
using testing::Ipv6Spec;
using testing::ones_complement_checksum;

const Mac kPortMac                  = {0x02, 0, 0, 0, 0, 0x05};
constexpr uint32_t kSrc4            = 0xC6336401u;  // 198.51.100.1
const std::array<uint8_t, 16> kSrc6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0,    0,
                                       0,    0,    0,    0,    0, 0, 0xfe, 0x01};

packet::PacketInfo parse(const Frame& f) {
  auto parser = packet::make_parser("auto");
  return testing::parse_exact(**parser, f);
}

std::vector<uint8_t> build(const Frame& f) {
  std::vector<uint8_t> out(kMaxIcmpFrameBytes + 64, 0xee);
  const uint32_t n =
      build_time_exceeded(f.bytes.data(), f.caplen(), parse(f), kPortMac, kSrc4, kSrc6, out.data());
  EXPECT_LE(n, kMaxIcmpFrameBytes);
  for (size_t i = n; i < out.size(); ++i)
    if (out[i] != 0xee) {
      ADD_FAILURE() << "wrote past the returned length at " << i;
      break;
    }
  out.resize(n);
  return out;
}

Frame expired4(size_t payload, const Ipv4Spec& base = {}) {
  Ipv4Spec s = base;
  s.ttl      = 1;
  s.proto    = 17;
  return FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(4000, 33434).payload(payload).build();
}

Frame expired6(size_t payload, const Ipv6Spec& base = {}) {
  Ipv6Spec s  = base;
  s.hop_limit = 1;
  s.next      = 17;
  return FrameBuilder().eth().ethertype(0x86dd).ipv6(s).udp(4000, 33434).payload(payload).build();
}

uint16_t icmp6_checksum_of(const std::vector<uint8_t>& frame, size_t l3) {
  // Independent pseudo-header computation: src, dst, 32-bit length, 3 zero bytes, next header.
  const size_t len = be16_at(frame, l3 + 4);
  std::vector<uint8_t> pseudo(frame.begin() + long(l3) + 8, frame.begin() + long(l3) + 40);
  pseudo.insert(pseudo.end(), {0, 0, uint8_t(len >> 8), uint8_t(len), 0, 0, 0, 58});
  pseudo.insert(pseudo.end(), frame.begin() + long(l3) + 40, frame.begin() + long(l3 + 40 + len));
  return ones_complement_checksum(pseudo.data(), pseudo.size());
}

TEST(TimeExceeded, Ipv4Bytes) {
  const Frame f = expired4(100);
  const auto o  = build(f);
  ASSERT_EQ(o.size(), 14u + 20 + 8 + (20 + 8 + 100));
  // Ethernet: back to the previous hop, from the ingress port.
  EXPECT_TRUE(std::equal(f.bytes.begin() + 6, f.bytes.begin() + 12, o.begin()));
  EXPECT_TRUE(std::equal(kPortMac.begin(), kPortMac.end(), o.begin() + 6));
  EXPECT_EQ(be16_at(o, 12), 0x0800);
  // IPv4 header.
  EXPECT_EQ(o[14], 0x45);
  EXPECT_EQ(be16_at(o, 16), o.size() - 14);
  EXPECT_EQ(o[14 + 8], 64);
  EXPECT_EQ(o[14 + 9], 1);
  EXPECT_TRUE(ipv4_checksum_ok(o, 14));
  EXPECT_EQ(std::vector<uint8_t>(o.begin() + 26, o.begin() + 30),
            (std::vector<uint8_t>{198, 51, 100, 1}));
  EXPECT_EQ(std::vector<uint8_t>(o.begin() + 30, o.begin() + 34),
            std::vector<uint8_t>(f.bytes.begin() + 26, f.bytes.begin() + 30))
      << "destination = the original source";
  // ICMP: type 11 code 0, unused zero, then the original datagram.
  EXPECT_EQ(o[34], 11);
  EXPECT_EQ(o[35], 0);
  EXPECT_EQ(be16_at(o, 38), 0);
  EXPECT_EQ(be16_at(o, 40), 0);
  EXPECT_EQ(ones_complement_checksum(o.data() + 34, o.size() - 34), 0);
  EXPECT_TRUE(std::equal(f.bytes.begin() + 14, f.bytes.end(), o.begin() + 42));
  // The parser agrees.
  const auto info = parse(Frame{o, uint32_t(o.size())});
  EXPECT_EQ(info.status, packet::ParseStatus::kOk);
  EXPECT_EQ(info.icmp_type, 11);
}

TEST(TimeExceeded, Ipv4QuoteIsCappedAt576Bytes) {
  const Frame f = expired4(1400);
  const auto o  = build(f);
  ASSERT_EQ(o.size(), 14u + 576);
  EXPECT_EQ(be16_at(o, 16), 576);
  EXPECT_TRUE(ipv4_checksum_ok(o, 14));
  EXPECT_EQ(ones_complement_checksum(o.data() + 34, o.size() - 34), 0);
  EXPECT_TRUE(std::equal(o.begin() + 42, o.end(), f.bytes.begin() + 14));
}

TEST(TimeExceeded, Ipv4SnaplenCutQuotesWhatWasCaptured) {
  const Frame f = testing::cut_frame(expired4(600), 14 + 20 + 8 + 10);
  const auto o  = build(f);
  ASSERT_EQ(o.size(), 14u + 28 + 38);
  EXPECT_TRUE(std::equal(f.bytes.begin() + 14, f.bytes.end(), o.begin() + 42));
  EXPECT_EQ(ones_complement_checksum(o.data() + 34, o.size() - 34), 0);
}

TEST(TimeExceeded, Ipv4KeepsVlanTags) {
  Ipv4Spec s{.ttl = 1};
  const Frame f =
      FrameBuilder().eth().vlan(0x8100, 0x0123).ethertype(0x0800).ipv4(s).tcp(1, 2).build();
  const auto o = build(f);
  ASSERT_EQ(o.size(), 18u + 28 + 40);
  EXPECT_EQ(be16_at(o, 12), 0x8100);
  EXPECT_EQ(be16_at(o, 14), 0x0123);
  EXPECT_EQ(be16_at(o, 16), 0x0800);
  EXPECT_TRUE(ipv4_checksum_ok(o, 18));
  EXPECT_EQ(o[38], 11);
}

TEST(TimeExceeded, Ipv6Bytes) {
  const Frame f = expired6(100);
  const auto o  = build(f);
  ASSERT_EQ(o.size(), 14u + 40 + 8 + (40 + 8 + 100));
  EXPECT_EQ(be16_at(o, 12), 0x86dd);
  EXPECT_EQ(o[14] >> 4, 6);
  EXPECT_EQ(be16_at(o, 18), 8 + 148);
  EXPECT_EQ(o[20], 58);
  EXPECT_EQ(o[21], 64);
  EXPECT_TRUE(std::equal(kSrc6.begin(), kSrc6.end(), o.begin() + 22));
  EXPECT_TRUE(std::equal(f.bytes.begin() + 22, f.bytes.begin() + 38, o.begin() + 38));
  EXPECT_EQ(o[54], 3);
  EXPECT_EQ(o[55], 0);
  EXPECT_EQ(icmp6_checksum_of(o, 14), 0);
  EXPECT_TRUE(std::equal(f.bytes.begin() + 14, f.bytes.end(), o.begin() + 62));
  const auto info = parse(Frame{o, uint32_t(o.size())});
  EXPECT_EQ(info.status, packet::ParseStatus::kOk);
  EXPECT_EQ(info.icmp_type, 3);
}

TEST(TimeExceeded, Ipv6FitsIn1280Bytes) {
  const Frame f = expired6(1400);
  const auto o  = build(f);
  ASSERT_EQ(o.size(), 14u + 1280);
  EXPECT_EQ(be16_at(o, 18), 1240);
  EXPECT_EQ(icmp6_checksum_of(o, 14), 0);
  EXPECT_TRUE(std::equal(o.begin() + 62, o.end(), f.bytes.begin() + 14));
}

TEST(TimeExceeded, Suppressed) {
  // About an ICMP error.
  Ipv4Spec icmp{.ttl = 1, .proto = 1};
  EXPECT_TRUE(build(FrameBuilder().eth().ethertype(0x0800).ipv4(icmp).icmp(3, 1).build()).empty());
  EXPECT_TRUE(build(FrameBuilder().eth().ethertype(0x0800).ipv4(icmp).icmp(11, 0).build()).empty());
  // ... but an echo request gets one.
  EXPECT_FALSE(build(FrameBuilder().eth().ethertype(0x0800).ipv4(icmp).icmp(8, 0).build()).empty());
  // A non-first fragment.
  EXPECT_TRUE(build(expired4(64, Ipv4Spec{.frag = 0x0010})).empty());
  EXPECT_FALSE(build(expired4(64, Ipv4Spec{.frag = 0x2000})).empty()) << "first fragment";
  // Sources that are not a single host.
  EXPECT_TRUE(build(expired4(8, Ipv4Spec{.src = {0, 0, 0, 0}})).empty());
  EXPECT_TRUE(build(expired4(8, Ipv4Spec{.src = {127, 0, 0, 1}})).empty());
  EXPECT_TRUE(build(expired4(8, Ipv4Spec{.src = {224, 0, 0, 1}})).empty());
  EXPECT_TRUE(build(expired4(8, Ipv4Spec{.src = {255, 255, 255, 255}})).empty());
  // Multicast destination, link-layer broadcast.
  EXPECT_TRUE(build(expired4(8, Ipv4Spec{.dst = {224, 0, 0, 9}})).empty());
  Frame bcast = expired4(8);
  std::memset(bcast.bytes.data(), 0xff, 6);
  EXPECT_TRUE(build(bcast).empty());

  Ipv6Spec icmp6{.next = 58, .hop_limit = 1};
  EXPECT_TRUE(build(FrameBuilder().eth().ethertype(0x86dd).ipv6(icmp6).icmp(1, 0).build()).empty());
  EXPECT_FALSE(
      build(FrameBuilder().eth().ethertype(0x86dd).ipv6(icmp6).icmp(128, 0).build()).empty());
  Ipv6Spec unspecified;
  std::memset(unspecified.src, 0, 16);
  EXPECT_TRUE(build(expired6(8, unspecified)).empty());
  Ipv6Spec mc;
  mc.dst[0] = 0xff;
  EXPECT_TRUE(build(expired6(8, mc)).empty());
  // Not IP at all.
  EXPECT_TRUE(build(FrameBuilder().eth().ethertype(0x88cc).payload(46).build()).empty());
}

}  // namespace
}  // namespace warpath::forward
