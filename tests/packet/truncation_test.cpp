// tests/packet/truncation_test.cpp: valid frames cut at every captured length.
//
// Each frame is described by its layout (tags, where the IP header, each IPv6 extension header
// and the transport header start). For every cut 0..full the frame is copied into a heap buffer
// of exactly `cut` bytes (caplen = cut, len = the full length; AddressSanitizer reports any
// overread) and parsed by every engine. The expected PacketInfo is derived from the layout and
// the full frame's result: fields whose bytes were captured are kept, the status is kTruncated
// while the cut falls inside a header the parser needs and kOk once all of them are present.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <ostream>
#include <string>
#include <vector>

#include "packet/frame_builder.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::packet {
namespace {

using testing::Frame;
using testing::FrameBuilder;
using testing::Ipv4Spec;
using testing::Ipv6Spec;

enum class L4 { kNone, kTcp, kUdp, kSctp, kIcmp };

struct Ext {
  uint32_t at;
  uint8_t type, next;
};

struct Layout {
  std::string name;
  Frame frame;
  uint32_t tags = 0;
  uint32_t l3   = 0;          ///< 0: no IP
  int ipv       = 0;          ///< 4 or 6
  uint32_t ihl  = 20;         ///< IPv4 header bytes
  std::vector<Ext> ext;       ///< IPv6 extension headers
  bool later        = false;  ///< later fragment: no transport header
  uint32_t l4       = 0;
  L4 kind           = L4::kNone;
  uint32_t l4_bytes = 0;  ///< TCP data offset * 4
};

void PrintTo(const Layout& k, std::ostream* os) { *os << k.name; }

bool is_ext(uint8_t nh) { return nh == 0 || nh == 43 || nh == 44 || nh == 60; }

// What a parser must report for `layout` cut to `c` bytes; `full` is the result for the whole
// frame (checked separately to be kOk).
PacketInfo expected_at(const Layout& k, const PacketInfo& full, uint32_t c) {
  PacketInfo w{};
  auto cut = [&] {
    w.status = ParseStatus::kTruncated;
    return w;
  };
  if (c < 14) return cut();
  for (uint32_t t = 0; t < k.tags; ++t) {
    if (c < 18 + 4 * t) return cut();  // the tag and the type after it
    w.vlan_tci[t] = full.vlan_tci[t];
    w.vlan_count  = uint8_t(t + 1);
  }
  w.ethertype = full.ethertype;
  w.l3        = full.l3;
  if (!k.l3) return full;
  w.l3_offset       = uint16_t(k.l3);
  const uint32_t l3 = k.l3;
  if (c < l3 + 1) return cut();
  w.ip_version = uint8_t(k.ipv);
  if (k.ipv == 4) {
    if (c >= l3 + 2) w.tos = full.tos;
    if (c >= l3 + 8) {
      w.fields |= kFieldFrag;
      w.flags |= full.flags & (kFragment | kLaterFragment);
    }
    if (c >= l3 + 10) {
      w.ttl   = full.ttl;
      w.proto = full.proto;
      w.fields |= kFieldProto;
    }
    if (c >= l3 + 16) {
      std::memcpy(w.src, full.src, 4);
      w.fields |= kFieldSrc;
    }
    if (c < l3 + 20) return cut();
    std::memcpy(w.dst, full.dst, 4);
    w.fields |= kFieldDst;
    w.flags |= full.flags & kIpOptions;
    if (c < l3 + k.ihl) return cut();
  } else {
    w.fields |= kFieldFrag;
    if (c >= l3 + 2) w.tos = full.tos;
    const uint8_t first = k.ext.empty() ? full.proto : k.ext[0].type;
    if (c >= l3 + 8) {
      w.ttl   = full.ttl;
      w.proto = first;
      if (first == 44) w.flags |= kFragment;
      if (!is_ext(first)) w.fields |= kFieldProto;
    }
    if (c >= l3 + 24) {
      std::memcpy(w.src, full.src, 16);
      w.fields |= kFieldSrc;
    }
    if (c < l3 + 40) return cut();
    std::memcpy(w.dst, full.dst, 16);
    w.fields = uint8_t((w.fields | kFieldDst) & ~kFieldProto);
    for (const Ext& e : k.ext) {
      w.flags |= kIpv6ExtHeaders;
      if (e.type == 44) w.flags |= kFragment;
      if (c < e.at + 8) return cut();  // only the first 8 bytes are read
      if (e.type == 44) w.flags |= full.flags & kLaterFragment;
      w.proto = e.next;
    }
    w.fields |= kFieldProto;
  }
  if (k.later) return w;
  w.l4_offset = uint16_t(k.l4);
  w.tunnel    = full.tunnel;
  switch (k.kind) {
    case L4::kTcp:
    case L4::kUdp:
    case L4::kSctp:
      w.tunnel = Tunnel::kNone;
      if (c < k.l4 + 4) return cut();
      w.sport = full.sport;
      w.dport = full.dport;
      w.flags |= kHasPorts;
      w.tunnel = full.tunnel;  // VXLAN/Geneve: known from the destination port
      if (c < k.l4 + (k.kind == L4::kTcp ? 20u : k.kind == L4::kUdp ? 8u : 12u)) return cut();
      if (k.kind == L4::kTcp) {
        w.tcp_flags = full.tcp_flags;
        w.tcp_seq   = full.tcp_seq;
        if (c < k.l4 + k.l4_bytes) return cut();  // TCP options
      }
      break;
    case L4::kIcmp:
      if (c < k.l4 + 2) return cut();
      w.icmp_type = full.icmp_type;
      w.icmp_code = full.icmp_code;
      w.flags |= kHasIcmp;
      break;
    case L4::kNone:
      break;
  }
  return w;
}

// The frames: every header type, each cut at every length.
std::vector<Layout> layouts() {
  std::vector<Layout> out;
  auto add = [&](Layout k, const FrameBuilder& b) {
    k.frame = b.build();
    out.push_back(std::move(k));
  };
  {  // 802.1Q + IPv4 + TCP with 12 bytes of options
    Layout k{"vlan_ipv4_tcp_options"};
    FrameBuilder b;
    b.eth().vlan(0x8100, 0xa064).ethertype(0x0800);
    k.tags = 1, k.l3 = uint32_t(b.size()), k.ipv = 4;
    b.ipv4(Ipv4Spec{.tos = 0x28, .ttl = 7, .proto = 6});
    k.l4 = uint32_t(b.size()), k.kind = L4::kTcp, k.l4_bytes = 32;
    b.tcp(443, 50000, 0x12, {2, 4, 5, 0xb4, 1, 3, 3, 7, 4, 2, 1, 1}).payload(10);
    add(k, b);
  }
  {  // QinQ + IPv4 + UDP, then Ethernet padding
    Layout k{"qinq_ipv4_udp_padding"};
    FrameBuilder b;
    b.eth().vlan(0x88a8, 0x2010).vlan(0x8100, 0x0020).ethertype(0x0800);
    k.tags = 2, k.l3 = uint32_t(b.size()), k.ipv = 4;
    b.ipv4(Ipv4Spec{.proto = 17});
    k.l4 = uint32_t(b.size()), k.kind = L4::kUdp;
    b.udp(53, 5353).payload(2).trailer(12);
    add(k, b);
  }
  {  // 0x9100 tag + IPv4 with options + SCTP
    Layout k{"tag9100_ipv4_options_sctp"};
    FrameBuilder b;
    b.eth().vlan(0x9100, 0x0fff).ethertype(0x0800);
    k.tags = 1, k.l3 = uint32_t(b.size()), k.ipv = 4, k.ihl = 32;
    b.ipv4(Ipv4Spec{.proto = 132, .options = {0x94, 4, 0, 0, 7, 7, 4, 1, 2, 3, 4}});
    k.l4 = uint32_t(b.size()), k.kind = L4::kSctp;
    b.sctp(36412, 36412).payload(4);
    add(k, b);
  }
  {  // IPv4 + ICMP
    Layout k{"ipv4_icmp", {}, 0, 14, 4};
    FrameBuilder b;
    b.eth().ethertype(0x0800).ipv4(Ipv4Spec{.proto = 1});
    k.l4 = 34, k.kind = L4::kIcmp;
    b.icmp(0, 0).payload(4);
    add(k, b);
  }
  {  // IPv4 later fragment: nothing after the IP header is needed
    Layout k{"ipv4_later_fragment", {}, 0, 14, 4};
    k.later = true;
    FrameBuilder b;
    b.eth().ethertype(0x0800).ipv4(Ipv4Spec{.proto = 6, .frag = 0x2000 | 3}).payload(24);
    add(k, b);
  }
  {  // IPv4 + GRE: the tunnel is known from the protocol alone
    Layout k{"ipv4_gre", {}, 0, 14, 4};
    k.l4 = 34;
    FrameBuilder b;
    b.eth().ethertype(0x0800).ipv4(Ipv4Spec{.proto = 47}).gre(0x0800).payload(8);
    add(k, b);
  }
  {  // IPv6 + hop-by-hop + TCP
    Layout k{"ipv6_hbh_tcp", {}, 0, 14, 6};
    k.ext = {{54, 0, 6}};
    k.l4 = 62, k.kind = L4::kTcp, k.l4_bytes = 20;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.traffic_class = 0x12, .next = 0}).ext(0, 6);
    b.tcp(1, 2, 0x04).payload(6);
    add(k, b);
  }
  {  // IPv6 + 24-byte routing header + UDP
    Layout k{"ipv6_routing_udp", {}, 0, 14, 6};
    k.ext = {{54, 43, 17}};
    k.l4 = 78, k.kind = L4::kUdp;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 43}).ext(43, 17, 24).udp(3, 4).payload(4);
    add(k, b);
  }
  {  // IPv6 + fragment header (first fragment) + TCP
    Layout k{"ipv6_fragment_tcp", {}, 0, 14, 6};
    k.ext = {{54, 44, 6}};
    k.l4 = 62, k.kind = L4::kTcp, k.l4_bytes = 24;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 44}).frag6(6, 0, true);
    b.tcp(5, 6, 0x10, {1, 1, 1, 0}).payload(8);
    add(k, b);
  }
  {  // IPv6 + later fragment
    Layout k{"ipv6_later_fragment", {}, 0, 14, 6};
    k.ext   = {{54, 44, 17}};
    k.later = true;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 44}).frag6(17, 181, false).payload(16);
    add(k, b);
  }
  {  // IPv6 + 16-byte destination options + ICMPv6
    Layout k{"ipv6_dstopts_icmpv6", {}, 0, 14, 6};
    k.ext = {{54, 60, 58}};
    k.l4 = 70, k.kind = L4::kIcmp;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 60}).ext(60, 58, 16).icmp(129, 0).payload(4);
    add(k, b);
  }
  {  // IPv6 + all four extension headers + UDP to the VXLAN port
    Layout k{"ipv6_chain_udp_vxlan", {}, 0, 14, 6};
    k.ext = {{54, 0, 43}, {62, 43, 44}, {86, 44, 60}, {94, 60, 17}};
    k.l4 = 102, k.kind = L4::kUdp;
    FrameBuilder b;
    b.eth().ethertype(0x86dd).ipv6(Ipv6Spec{.next = 0}).ext(0, 43).ext(43, 44, 24);
    b.frag6(60, 0, true).ext(60, 17).udp(40000, 4789).vxlan(7).payload(14);
    add(k, b);
  }
  {  // 802.1Q + IPv6 + ICMPv6
    Layout k{"vlan_ipv6_icmpv6"};
    FrameBuilder b;
    b.eth().vlan(0x8100, 0x6005).ethertype(0x86dd);
    k.tags = 1, k.l3 = 18, k.ipv = 6, k.l4 = 58, k.kind = L4::kIcmp;
    b.ipv6(Ipv6Spec{.traffic_class = 0xff, .next = 58, .hop_limit = 1}).icmp(135, 0).payload(16);
    add(k, b);
  }
  {  // QinQ + ARP
    Layout k{"qinq_arp"};
    k.tags               = 2;
    const uint8_t spa[4] = {10, 1, 1, 1}, tpa[4] = {10, 1, 1, 2};
    FrameBuilder b;
    b.eth().vlan(0x88a8, 5).vlan(0x8100, 6).ethertype(0x0806).arp(1, spa, tpa);
    add(k, b);
  }
  return out;
}

class Truncation : public ::testing::TestWithParam<Layout> {};

TEST_P(Truncation, EveryCut) {
  const Layout& k = GetParam();
  std::vector<std::unique_ptr<Parser>> engines;
  std::vector<std::string> names;
  for (const std::string& id : testing::parser_engine_ids()) {
    auto made = make_parser(id);
    if (!made.is_ok()) {
      std::printf("[  INFO    ] %s skipped: %s\n", id.c_str(), made.status().message().c_str());
      continue;
    }
    names.push_back(id);
    engines.push_back(std::move(made.value()));
  }
  ASSERT_GE(engines.size(), 2u) << "ref.parse and cpu.parse are always available";
  const Frame& f        = k.frame;
  const PacketInfo full = testing::parse_exact(*engines[0], f);
  ASSERT_EQ(full.status, ParseStatus::kOk) << parse_status_name(full.status);
  uint32_t first_ok = f.caplen() + 1;
  for (uint32_t c = 0; c <= f.caplen(); ++c) {
    SCOPED_TRACE("cut at " + std::to_string(c) + " of " + std::to_string(f.caplen()));
    const PacketInfo want = expected_at(k, full, c);
    for (size_t e = 0; e < engines.size(); ++e) {
      SCOPED_TRACE(names[e]);
      const PacketInfo got = testing::parse_exact(*engines[e], f.bytes, c, f.len);
      testing::expect_info(got, want);
    }
    if (want.status == ParseStatus::kOk && first_ok > c) first_ok = c;
    if (c >= first_ok) {
      EXPECT_EQ(want.status, ParseStatus::kOk) << "truncated again after being complete";
      EXPECT_TRUE(want == full);  // a snaplen cut after the headers loses nothing
    }
    if (::testing::Test::HasFailure()) break;  // one cut's report is enough
  }
  EXPECT_LE(first_ok, f.caplen());
}

INSTANTIATE_TEST_SUITE_P(Frames, Truncation, ::testing::ValuesIn(layouts()),
                         [](const auto& p) { return p.param.name; });

// The truncated statuses in numbers, for one frame, so the model above is not the only
// statement of them.
TEST(TruncationSpot, Ipv4TcpWithOptions) {
  auto made = make_parser("ref.parse");
  ASSERT_TRUE(made.is_ok());
  const Frame f = FrameBuilder()
                      .eth()
                      .ethertype(0x0800)
                      .ipv4()
                      .tcp(80, 81, 0x18, {1, 1, 1, 1})
                      .payload(3)
                      .build();
  auto at = [&](uint32_t c) { return testing::parse_exact(**made, f.bytes, c, f.len); };
  EXPECT_EQ(at(13).status, ParseStatus::kTruncated);
  EXPECT_EQ(at(13).l3, L3::kNone);
  EXPECT_EQ(at(14).l3, L3::kIpv4);  // ethertype read, no IP byte
  EXPECT_EQ(at(14).ip_version, 0);
  EXPECT_EQ(at(33).status, ParseStatus::kTruncated);  // one byte short of the IPv4 header
  EXPECT_EQ(at(33).fields, kFieldSrc | kFieldProto | kFieldFrag);
  EXPECT_EQ(at(34).l4_offset, 34);  // IPv4 complete, no TCP byte
  EXPECT_EQ(at(34).flags & kHasPorts, 0);
  EXPECT_EQ(at(38).status, ParseStatus::kTruncated);  // ports, rest of TCP cut
  EXPECT_EQ(at(38).flags & kHasPorts, kHasPorts);
  EXPECT_EQ(at(38).dport, 81);
  EXPECT_EQ(at(54).status, ParseStatus::kTruncated);  // fixed TCP header, options cut
  EXPECT_EQ(at(54).tcp_flags, 0x18);
  EXPECT_EQ(at(54).tcp_seq, 0x01020304u);
  EXPECT_EQ(at(53).tcp_seq, 0u);  // the fixed header cut: no flags, no sequence number
  EXPECT_EQ(at(57).status, ParseStatus::kTruncated);
  EXPECT_EQ(at(58).status, ParseStatus::kOk);  // options complete, no payload
  EXPECT_EQ(at(58).flags, kHasPorts);
}

}  // namespace
}  // namespace warpath::packet
