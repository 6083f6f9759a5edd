// tests/forward/verdict_test.cpp: every verdict and reason of the data path on hand-built
// frames, the order of the checks, and what a forwarded packet looks like afterwards.
#include <gtest/gtest.h>

#include <array>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "forward/core/forward_core.hpp"
#include "forward/forward_test_util.hpp"

namespace warpath::forward {
namespace {

using testing::be16_at;
using testing::Frame;
using testing::FrameBuilder;
using testing::ipv4_checksum_ok;
using testing::Ipv4Spec;
using testing::Ipv6Spec;
using testing::route_one;
using testing::test_tables;

constexpr lookup::NextHop kNh = 7;  // port 2 in test_tables()

Frame udp4(const Ipv4Spec& s = {}, size_t payload = 32) {
  return FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1000, 53).payload(payload).build();
}
Frame udp6(const Ipv6Spec& s = {}, size_t payload = 32) {
  Ipv6Spec x = s;
  x.next     = 17;
  return FrameBuilder().eth().ethertype(0x86dd).ipv6(x).udp(1000, 53).payload(payload).build();
}

void expect_reason(const Frame& f, Reason want, lookup::NextHop nh = kNh) {
  const auto tables = test_tables();
  const auto r      = route_one(f, nh, tables);
  EXPECT_STREQ(reason_name(r.result.reason), reason_name(want));
  EXPECT_EQ(r.result.verdict, reason_verdict(want));
  if (want != Reason::kForwarded) {
    EXPECT_EQ(r.bytes, f.bytes) << "a packet that is not forwarded keeps its bytes";
    EXPECT_EQ(r.result.port, 0);
  }
  EXPECT_EQ(r.result.nexthop, nh);
}

TEST(Verdict, ReasonTable) {
  EXPECT_EQ(reason_verdict(Reason::kForwarded), Verdict::kForward);
  for (Reason r : {Reason::kToRouter, Reason::kMulticast, Reason::kTtlExpired,
                   Reason::kHopLimitExpired, Reason::kIpv4Options, Reason::kIpv6HopByHop,
                   Reason::kArp, Reason::kBadIpv4Header, Reason::kBadIpv4Checksum,
                   Reason::kBadIpv4Length, Reason::kBadIpv6Header, Reason::kBadIpv6Length})
    EXPECT_EQ(reason_verdict(r), Verdict::kSlowPath) << reason_name(r);
  for (Reason r : {Reason::kTruncated, Reason::kNotIp, Reason::kNoRoute, Reason::kNoNeighbor})
    EXPECT_EQ(reason_verdict(r), Verdict::kDrop) << reason_name(r);
  EXPECT_STREQ(reason_name(Reason::kNoNeighbor), "no_neighbor");
  EXPECT_STREQ(reason_name(Reason::kCount), "unknown");
  EXPECT_STREQ(verdict_name(Verdict::kSlowPath), "slow_path");
}

TEST(Verdict, Ipv4ForwardedRewritesTtlChecksumAndMacs) {
  const Frame f = udp4(Ipv4Spec{.ttl = 64});
  const auto t  = test_tables();
  const auto r  = route_one(f, kNh, t);
  EXPECT_EQ(r.result.verdict, Verdict::kForward);
  EXPECT_EQ(r.result.reason, Reason::kForwarded);
  EXPECT_EQ(r.result.port, 2);
  EXPECT_EQ(r.result.nexthop, kNh);
  const std::vector<uint8_t> dst(r.bytes.begin(), r.bytes.begin() + 6);
  const std::vector<uint8_t> src(r.bytes.begin() + 6, r.bytes.begin() + 12);
  EXPECT_EQ(dst, (std::vector<uint8_t>{0x0a, 0, 0, 0, 0, 0x07}));
  EXPECT_EQ(src, (std::vector<uint8_t>{0x02, 0, 0, 0, 0, 0x02})) << "default MAC of port 2";
  EXPECT_EQ(r.bytes[14 + 8], 63);
  EXPECT_TRUE(ipv4_checksum_ok(r.bytes, 14));
  // Nothing else changed.
  std::vector<uint8_t> a = f.bytes, b = r.bytes;
  for (size_t i : {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 14 + 8, 14 + 10, 14 + 11}) a[i] = b[i] = 0;
  EXPECT_EQ(a, b);
}

TEST(Verdict, Ipv4TtlTwoIsForwardedWithTtlOne) {
  const auto t = test_tables();
  const auto r = route_one(udp4(Ipv4Spec{.ttl = 2}), kNh, t);
  EXPECT_EQ(r.result.reason, Reason::kForwarded);
  EXPECT_EQ(r.bytes[14 + 8], 1);
  EXPECT_TRUE(ipv4_checksum_ok(r.bytes, 14));
}

TEST(Verdict, Ipv6ForwardedDecrementsHopLimit) {
  const Frame f = udp6(Ipv6Spec{.hop_limit = 2});
  const auto t  = test_tables();
  const auto r  = route_one(f, 9, t);
  EXPECT_EQ(r.result.reason, Reason::kForwarded);
  EXPECT_EQ(r.result.port, 3);
  EXPECT_EQ(r.bytes[14 + 7], 1);
  EXPECT_EQ(r.bytes[5], 0x09);
  EXPECT_EQ(r.bytes[11], 0x03);
  EXPECT_TRUE(std::equal(f.bytes.begin() + 12, f.bytes.begin() + 14 + 7, r.bytes.begin() + 12));
  EXPECT_TRUE(std::equal(f.bytes.begin() + 14 + 8, f.bytes.end(), r.bytes.begin() + 14 + 8));
}

TEST(Verdict, VlanTagsAreKept) {
  const Frame f = FrameBuilder()
                      .eth()
                      .vlan(0x8100, 0x2064)
                      .ethertype(0x0800)
                      .ipv4(Ipv4Spec{.ttl = 9})
                      .tcp(1, 2)
                      .build();
  const auto t = test_tables();
  const auto r = route_one(f, kNh, t);
  EXPECT_EQ(r.result.reason, Reason::kForwarded);
  EXPECT_EQ(be16_at(r.bytes, 12), 0x8100);
  EXPECT_EQ(be16_at(r.bytes, 14), 0x2064);
  EXPECT_EQ(r.bytes[18 + 8], 8);
  EXPECT_TRUE(ipv4_checksum_ok(r.bytes, 18));
}

TEST(Verdict, SnaplenCutFrameIsForwardedAsCaptured) {
  Frame f      = udp4(Ipv4Spec{.ttl = 30}, 400);
  f            = testing::cut_frame(f, 60);  // IP header complete, payload cut
  const auto t = test_tables();
  const auto r = route_one(f, kNh, t);
  EXPECT_EQ(r.result.reason, Reason::kForwarded);
  EXPECT_EQ(r.bytes.size(), 60u);
  EXPECT_EQ(r.bytes[14 + 8], 29);
  EXPECT_TRUE(ipv4_checksum_ok(r.bytes, 14));
}

TEST(Verdict, TransportProblemsAreNotTheRoutersBusiness) {
  // TCP data offset 2: the parser says bad_tcp_header; the router forwards it.
  expect_reason(FrameBuilder().eth().ethertype(0x0800).ipv4().tcp(1, 2, 0x18, {}, 2).build(),
                Reason::kForwarded);
  // UDP length 3.
  expect_reason(
      FrameBuilder().eth().ethertype(0x0800).ipv4(Ipv4Spec{.proto = 17}).udp(1, 2, 3).build(),
      Reason::kForwarded);
  // An IPv6 destination-options header running past the datagram.
  expect_reason(FrameBuilder()
                    .eth()
                    .ethertype(0x86dd)
                    .ipv6(Ipv6Spec{.next = 60})
                    .ext(60, 6, 8, 9)
                    .payload(8)
                    .build(),
                Reason::kForwarded);
}

TEST(Verdict, Expiry) {
  expect_reason(udp4(Ipv4Spec{.ttl = 1}), Reason::kTtlExpired);
  expect_reason(udp4(Ipv4Spec{.ttl = 0}), Reason::kTtlExpired);
  expect_reason(udp6(Ipv6Spec{.hop_limit = 1}), Reason::kHopLimitExpired);
  expect_reason(udp6(Ipv6Spec{.hop_limit = 0}), Reason::kHopLimitExpired);
  // Expiry comes before the route: an expired packet without a route still goes to the host.
  expect_reason(udp4(Ipv4Spec{.ttl = 1}), Reason::kTtlExpired, lookup::kNoRoute);
}

TEST(Verdict, ToRouter) {
  expect_reason(udp4(Ipv4Spec{.dst = {192, 0, 2, 1}}), Reason::kToRouter);
  Ipv6Spec s6;
  std::memcpy(s6.dst, kDefaultRouterAddr6.data(), 16);
  expect_reason(udp6(s6), Reason::kToRouter);
  // Local delivery does not care about the TTL.
  expect_reason(udp4(Ipv4Spec{.ttl = 1, .dst = {192, 0, 2, 1}}), Reason::kToRouter);

  RouterConfig c;
  c.addresses.push_back(RouterAddress{1, false, 0x0a000001u, {}});
  const auto t = RouterTables::build(c).value();
  auto r       = route_one(udp4(Ipv4Spec{.dst = {10, 0, 0, 1}}), kNh, t);
  EXPECT_EQ(r.result.reason, Reason::kToRouter);
  r = route_one(udp4(Ipv4Spec{.dst = {192, 0, 2, 1}}), kNh, t);
  EXPECT_EQ(r.result.reason, Reason::kNoNeighbor) << "configured addresses replace the default";
}

TEST(Verdict, Multicast) {
  expect_reason(udp4(Ipv4Spec{.dst = {224, 0, 0, 5}}), Reason::kMulticast);
  expect_reason(udp4(Ipv4Spec{.dst = {239, 1, 2, 3}}), Reason::kMulticast);
  expect_reason(udp4(Ipv4Spec{.dst = {255, 255, 255, 255}}), Reason::kMulticast);
  Ipv6Spec s6;
  s6.dst[0] = 0xff;
  s6.dst[1] = 0x02;
  expect_reason(udp6(s6), Reason::kMulticast);
  expect_reason(udp4(Ipv4Spec{.ttl = 1, .dst = {224, 0, 0, 5}}), Reason::kMulticast);
}

// Regression: what a router must not forward.
TEST(Verdict, MartiansAreDropped) {
  for (auto src : {std::array<uint8_t, 4>{127, 0, 0, 1}, {0, 1, 2, 3}, {224, 0, 0, 1},
                   {240, 0, 0, 1}, {255, 255, 255, 255}}) {
    Ipv4Spec s;
    std::memcpy(s.src, src.data(), 4);
    expect_reason(udp4(s), Reason::kMartianSource);
  }
  for (auto dst : {std::array<uint8_t, 4>{127, 0, 0, 1}, {0, 0, 0, 0}, {0, 9, 9, 9},
                   {240, 0, 0, 1}, {254, 255, 255, 255}}) {
    Ipv4Spec s;
    std::memcpy(s.dst, dst.data(), 4);
    expect_reason(udp4(s), Reason::kMartianDestination);
  }
  // The host still gets what is its own, even from a martian source (it drops it itself).
  expect_reason(udp4(Ipv4Spec{.src = {127, 0, 0, 1}, .dst = {192, 0, 2, 1}}), Reason::kToRouter);
  // DHCP discover: 0.0.0.0 -> 255.255.255.255 is the host's business, not a martian.
  expect_reason(udp4(Ipv4Spec{.src = {0, 0, 0, 0}, .dst = {255, 255, 255, 255}}),
                Reason::kMulticast);
  // A martian is dropped before its TTL is looked at (no ICMP error about it).
  expect_reason(udp4(Ipv4Spec{.ttl = 1, .src = {127, 0, 0, 1}}), Reason::kMartianSource);

  Ipv6Spec loop_src, ll_src, mc_src, unspec_dst, loop_dst, ll_dst;
  std::memset(loop_src.src, 0, 16), loop_src.src[15] = 1;
  std::memset(ll_src.src, 0, 16), ll_src.src[0] = 0xfe, ll_src.src[1] = 0x80, ll_src.src[15] = 5;
  std::memset(mc_src.src, 0, 16), mc_src.src[0] = 0xff, mc_src.src[1] = 0x02;
  std::memset(unspec_dst.dst, 0, 16);
  std::memset(loop_dst.dst, 0, 16), loop_dst.dst[15] = 1;
  std::memset(ll_dst.dst, 0, 16), ll_dst.dst[0] = 0xfe, ll_dst.dst[1] = 0x80, ll_dst.dst[15] = 9;
  expect_reason(udp6(loop_src), Reason::kMartianSource);
  expect_reason(udp6(ll_src), Reason::kMartianSource);
  expect_reason(udp6(mc_src), Reason::kMartianSource);
  expect_reason(udp6(unspec_dst), Reason::kMartianDestination);
  expect_reason(udp6(loop_dst), Reason::kMartianDestination);
  expect_reason(udp6(ll_dst), Reason::kLinkLocal);  // the host's (unicast ND), never forwarded
  // Hardening round 2: IPv4-mapped addresses (::ffff:127.0.0.1 and any other) never on the wire.
  Ipv6Spec mapped_src, mapped_dst;
  std::memset(mapped_src.src, 0, 16), mapped_src.src[10] = mapped_src.src[11] = 0xff;
  mapped_src.src[12] = 127, mapped_src.src[15] = 1;
  std::memset(mapped_dst.dst, 0, 16), mapped_dst.dst[10] = mapped_dst.dst[11] = 0xff;
  mapped_dst.dst[12] = 10, mapped_dst.dst[15] = 1;
  expect_reason(udp6(mapped_src), Reason::kMartianSource);
  expect_reason(udp6(mapped_dst), Reason::kMartianDestination);
  EXPECT_EQ(reason_verdict(Reason::kLinkLocal), Verdict::kSlowPath);
  expect_reason(udp6(), Reason::kForwarded);
}

TEST(Verdict, LinkBroadcastWithUnicastIpIsDropped) {
  const std::vector<uint8_t> bcast(6, 0xff), mcast = {0x01, 0x00, 0x5e, 0, 0, 1};
  for (const auto& dst : {bcast, mcast}) {
    expect_reason(FrameBuilder().eth(dst).ethertype(0x0800).ipv4(Ipv4Spec{}).udp(1, 53).build(),
                  Reason::kL2BroadcastUnicastIp);
    Ipv6Spec s6;
    s6.next = 17;
    expect_reason(FrameBuilder().eth(dst).ethertype(0x86dd).ipv6(s6).udp(1, 53).build(),
                  Reason::kL2BroadcastUnicastIp);
  }
  // Broadcast to a broadcast / multicast IP destination is the host's, as before.
  expect_reason(FrameBuilder()
                    .eth(bcast)
                    .ethertype(0x0800)
                    .ipv4(Ipv4Spec{.dst = {255, 255, 255, 255}})
                    .udp(68, 67)
                    .build(),
                Reason::kMulticast);
}

TEST(Verdict, PortsThatCheckMacsDropFramesForOthers) {
  RouterConfig c;
  c.neighbors.push_back({kNh, 2, {0x0a, 0, 0, 0, 0, 0x07}});
  c.port_macs[0]      = {0x02, 0xaa, 0, 0, 0, 0x01};
  c.mac_check_ports   = {0};
  const auto checked  = RouterTables::build(c).value();
  const Frame other   = udp4();  // to 00:11:22:33:44:55
  EXPECT_EQ(route_one(other, kNh, checked).result.reason, Reason::kNotForUs);
  EXPECT_EQ(route_one(other, kNh, test_tables()).result.reason, Reason::kForwarded)
      << "ports that do not check (captures, the generator) forward it";
  const Frame mine = FrameBuilder()
                         .eth({0x02, 0xaa, 0, 0, 0, 0x01})
                         .ethertype(0x0800)
                         .ipv4(Ipv4Spec{})
                         .udp(1000, 53)
                         .payload(32)
                         .build();
  EXPECT_EQ(route_one(mine, kNh, checked).result.reason, Reason::kForwarded);
  const Frame arp = FrameBuilder().eth(std::vector<uint8_t>(6, 0xff)).ethertype(0x0806).payload(28).build();
  EXPECT_EQ(route_one(arp, kNh, checked).result.reason, Reason::kArp) << "broadcast ARP passes";
  const Frame arp_other = FrameBuilder().eth().ethertype(0x0806).payload(28).build();
  EXPECT_EQ(route_one(arp_other, kNh, checked).result.reason, Reason::kNotForUs);
}

TEST(Verdict, OptionsAndHopByHop) {
  expect_reason(udp4(Ipv4Spec{.options = {0x94, 0x04, 0, 0}}), Reason::kIpv4Options);
  // TTL expiry is reported before options: the ICMP error quotes the options.
  expect_reason(udp4(Ipv4Spec{.ttl = 1, .options = {0x94, 0x04, 0, 0}}), Reason::kTtlExpired);
  expect_reason(
      FrameBuilder().eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 0}).ext(0, 17).udp(1, 2).build(),
      Reason::kIpv6HopByHop);
  // A jumbogram (payload length 0, hop-by-hop) is not a length error.
  expect_reason(FrameBuilder()
                    .eth()
                    .ethertype(0x86dd)
                    .ipv6(Ipv6Spec{.next = 0, .payload_length = 0})
                    .hbh_jumbo(17, 70000)
                    .udp(1, 2)
                    .build(),
                Reason::kIpv6HopByHop);
}

TEST(Verdict, NonIp) {
  const uint8_t spa[4] = {10, 0, 0, 1}, tpa[4] = {10, 0, 0, 2};
  expect_reason(FrameBuilder().eth().ethertype(0x0806).arp(1, spa, tpa).build(), Reason::kArp);
  expect_reason(FrameBuilder().eth().ethertype(0x88cc).payload(46).build(), Reason::kNotIp);
  expect_reason(FrameBuilder().eth().vlan(0x8100, 5).ethertype(0x88cc).payload(46).build(),
                Reason::kNotIp);
}

TEST(Verdict, Truncated) {
  const Frame full = udp4();
  expect_reason(testing::cut_frame(full, 10), Reason::kTruncated);
  expect_reason(testing::cut_frame(full, 14), Reason::kTruncated);
  expect_reason(testing::cut_frame(full, 14 + 19), Reason::kTruncated);
  const Frame six = udp6();
  expect_reason(testing::cut_frame(six, 14 + 39), Reason::kTruncated);
  const Frame tagged =
      FrameBuilder().eth().vlan(0x8100, 5).ethertype(0x0800).ipv4().udp(1, 2).build();
  expect_reason(testing::cut_frame(tagged, 16), Reason::kTruncated);
}

TEST(Verdict, MalformedIpHeadersGoToTheHost) {
  expect_reason(udp4(Ipv4Spec{.version_ihl = 0x55}), Reason::kBadIpv4Header);
  expect_reason(udp4(Ipv4Spec{.version_ihl = 0x44}), Reason::kBadIpv4Header);
  expect_reason(udp4(Ipv4Spec{.bad_checksum = true}), Reason::kBadIpv4Checksum);
  expect_reason(udp4(Ipv4Spec{.total_length = 12}), Reason::kBadIpv4Length);
  expect_reason(udp4(Ipv4Spec{.total_length = 1400}), Reason::kBadIpv4Length);
  expect_reason(udp6(Ipv6Spec{.version = 4}), Reason::kBadIpv6Header);
  expect_reason(udp6(Ipv6Spec{.payload_length = 1000}), Reason::kBadIpv6Length);
  // A bad checksum hidden from the parser's status by a bad TCP header is still caught.
  const Frame f = FrameBuilder()
                      .eth()
                      .ethertype(0x0800)
                      .ipv4(Ipv4Spec{.bad_checksum = true})
                      .tcp(1, 2, 0x18, {}, 2)
                      .build();
  const auto t = test_tables();
  const auto r = route_one(f, kNh, t);
  EXPECT_EQ(r.info.status, packet::ParseStatus::kBadTcpHeader);
  EXPECT_EQ(r.result.reason, Reason::kBadIpv4Checksum);
  // Header problems come before to_router and expiry.
  expect_reason(udp4(Ipv4Spec{.ttl = 1, .dst = {192, 0, 2, 1}, .bad_checksum = true}),
                Reason::kBadIpv4Checksum);
}

// pre_route_reason skips check_ipv4_header when the parse ended kOk: that is sound only if a kOk
// parse implies every check passes. Random IPv4 frames (options, TCP or UDP, payloads), each
// with a header byte or the total length corrupted or the capture cut at random, parsed by the
// production parser: wherever the status is kOk, the full check says forwarded; and the
// router's verdict on every frame is the one the full check gives when it fails.
TEST(Verdict, ParsedOkMeansTheHeaderChecksPass) {
  std::mt19937 rng(20261128);
  const auto tables = test_tables();
  uint32_t ok = 0, not_ok = 0;
  for (int n = 0; n < 20000; ++n) {
    Ipv4Spec s;
    s.proto = rng() % 2 ? 6 : 17;
    if (rng() % 4 == 0) s.options.assign(4u * (1 + rng() % 3), 1);
    if (rng() % 8 == 0) s.total_length = uint16_t(rng() % 120);
    s.bad_checksum = rng() % 8 == 0;
    FrameBuilder b;
    b.eth().ethertype(0x0800).ipv4(s);
    if (s.proto == 6)
      b.tcp(1, 2, 0x18, {}, rng() % 6 == 0 ? 2 : 5);
    else
      b.udp(1000, 53);
    Frame f = b.payload(rng() % 64).build();
    if (rng() % 4 == 0) f.bytes[14 + rng() % 20] ^= uint8_t(1u << (rng() % 8));  // a header bit
    if (rng() % 6 == 0) f = testing::cut_frame(f, 14 + rng() % uint32_t(f.bytes.size() - 14));
    const auto r = testing::route_one(f, kNh, tables);
    if (r.info.l3 != packet::L3::kIpv4) continue;
    const uint32_t off = r.info.l3_offset, cap = f.caplen();
    const Reason full =
        off < cap ? core::check_ipv4_header(f.bytes.data() + off, cap - off,
                                            f.len > off ? f.len - off : 0)
                  : Reason::kTruncated;
    if (r.info.status == packet::ParseStatus::kOk) {
      ++ok;
      ASSERT_EQ(full, Reason::kForwarded) << "frame " << n << ": parsed ok, header check "
                                          << reason_name(full);
    } else {
      ++not_ok;
    }
    if (full != Reason::kForwarded)
      EXPECT_EQ(r.result.reason, full) << "frame " << n;
  }
  EXPECT_GT(ok, 5000u);
  EXPECT_GT(not_ok, 2000u);
}

// The IPv6 address classes on host-order halves, against their definitions byte by byte (RFC
// 4291), on the edges of each class and random addresses.
TEST(Verdict, Ipv6AddressClassesAsTheBytesSay) {
  auto bytes_unspec_loop = [](const uint8_t* a) {
    for (int i = 0; i < 15; ++i)
      if (a[i] != 0) return false;
    return a[15] <= 1;
  };
  auto bytes_mapped = [](const uint8_t* a) {
    for (int i = 0; i < 10; ++i)
      if (a[i] != 0) return false;
    return a[10] == 0xff && a[11] == 0xff;
  };
  auto bytes_link_local = [](const uint8_t* a) { return a[0] == 0xfe && (a[1] & 0xc0) == 0x80; };
  std::mt19937 rng(6);
  std::vector<std::array<uint8_t, 16>> addrs;
  for (int edge = 0; edge < 16 * 8; ++edge) {
    std::array<uint8_t, 16> a{};  // ::, then one bit set anywhere
    a[size_t(edge / 8)] = uint8_t(1u << (edge % 8));
    addrs.push_back(a);
    a[10] = a[11] = 0xff;  // around ::ffff:0:0/96
    addrs.push_back(a);
  }
  for (uint8_t b0 : {0xfe, 0xff, 0x00, 0x20})
    for (uint8_t b1 : {0x80, 0xbf, 0xc0, 0x7f, 0x00}) {
      std::array<uint8_t, 16> a{};
      a[0] = b0;
      a[1] = b1;
      addrs.push_back(a);
    }
  addrs.push_back({});
  for (int n = 0; n < 10000; ++n) {
    std::array<uint8_t, 16> a;
    for (auto& b : a) b = uint8_t(rng() % 4 == 0 ? rng() : 0);
    if (n % 3 == 0) a[10] = a[11] = 0xff;
    addrs.push_back(a);
  }
  for (const auto& a : addrs) {
    const uint64_t hi = core::ip6_half(a.data()), lo = core::ip6_half(a.data() + 8);
    ASSERT_EQ(core::is_unspecified_or_loopback6(hi, lo), bytes_unspec_loop(a.data()));
    ASSERT_EQ(core::is_ipv4_mapped6(hi, lo), bytes_mapped(a.data()));
    ASSERT_EQ(core::is_link_local6(hi), bytes_link_local(a.data()));
    ASSERT_EQ(core::is_multicast6(hi), a[0] == 0xff);
  }
}

TEST(Verdict, RouteAndNeighbor) {
  expect_reason(udp4(), Reason::kNoRoute, lookup::kNoRoute);
  expect_reason(udp6(), Reason::kNoRoute, lookup::kNoRoute);
  expect_reason(udp4(), Reason::kNoNeighbor, 8);
  expect_reason(udp6(), Reason::kNoNeighbor, 1000000);
}

TEST(Verdict, PortMacOverride) {
  RouterConfig c;
  c.neighbors.push_back({7, 2, {0x0a, 0, 0, 0, 0, 0x07}});
  c.port_macs[2] = {0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc};
  const auto t   = RouterTables::build(c).value();
  const auto r   = route_one(udp4(), kNh, t);
  EXPECT_EQ(std::vector<uint8_t>(r.bytes.begin() + 6, r.bytes.begin() + 12),
            (std::vector<uint8_t>{0x00, 0x1b, 0x21, 0xaa, 0xbb, 0xcc}));
}

}  // namespace
}  // namespace warpath::forward
