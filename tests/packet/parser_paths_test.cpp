// tests/packet/parser_paths_test.cpp: every parser path on hand-built frames, through every
// parser engine of this build. Each case states the complete PacketInfo it expects; engines
// that are not available here are skipped with the reason.
#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "packet/frame_builder.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::packet {
namespace {

using testing::expect_info;
using testing::Frame;
using testing::FrameBuilder;
using testing::Ipv4Spec;
using testing::Ipv6Spec;

// The expected result of a well-formed IP header at `l3` (every field captured).
PacketInfo ip(uint16_t l3, uint8_t version, uint8_t proto, uint8_t tos, uint8_t ttl,
              const uint8_t* src, const uint8_t* dst) {
  PacketInfo w{};
  w.l3         = version == 4 ? L3::kIpv4 : L3::kIpv6;
  w.ethertype  = version == 4 ? 0x0800 : 0x86dd;
  w.l3_offset  = l3;
  w.ip_version = version;
  w.proto      = proto;
  w.tos        = tos;
  w.ttl        = ttl;
  std::memcpy(w.src, src, version == 4 ? 4 : 16);
  std::memcpy(w.dst, dst, version == 4 ? 4 : 16);
  w.fields = kFieldsAll;
  return w;
}
PacketInfo v4(uint16_t l3, const Ipv4Spec& s) {
  return ip(l3, 4, s.proto, s.tos, s.ttl, s.src, s.dst);
}
PacketInfo v6(uint16_t l3, const Ipv6Spec& s) {
  return ip(l3, 6, s.next, s.traffic_class, s.hop_limit, s.src, s.dst);
}

PacketInfo ports(PacketInfo w, uint16_t l4, uint16_t sport, uint16_t dport, uint8_t tcp_flags = 0) {
  w.l4_offset = l4;
  w.sport     = sport;
  w.dport     = dport;
  w.tcp_flags = tcp_flags;
  w.tcp_seq   = tcp_flags ? 0x01020304u : 0;  // FrameBuilder::tcp's sequence number
  w.flags |= kHasPorts;
  return w;
}
PacketInfo bad(PacketInfo w, ParseStatus s) {
  w.status = s;
  return w;
}
Ipv4Spec spec4(uint8_t proto) { return Ipv4Spec{.proto = proto}; }
Ipv6Spec spec6(uint8_t next) { return Ipv6Spec{.next = next}; }

class ParserPaths : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    auto made = make_parser(GetParam());
    if (!made.is_ok())
      GTEST_SKIP() << GetParam() << " is not available here: " << made.status().message();
    parser_ = std::move(made.value());
  }
  void check(const Frame& f, const PacketInfo& want) { expect_info(parse(f), want); }
  PacketInfo parse(const Frame& f) { return testing::parse_exact(*parser_, f); }
  std::unique_ptr<Parser> parser_;
};

// --- Ethernet, VLAN, ARP, other ------------------------------------------------------------

TEST_P(ParserPaths, Ipv4Tcp) {
  const Ipv4Spec s{.tos = 0xb8, .ttl = 33, .proto = 6};
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(40000, 443, 0x12).payload(10).build(),
        ports(v4(14, s), 34, 40000, 443, 0x12));
}

TEST_P(ParserPaths, Ipv4Udp) {
  Ipv4Spec s = spec4(17);
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(5353, 53).payload(20).build(),
        ports(v4(14, s), 34, 5353, 53));
}

TEST_P(ParserPaths, Ipv4Sctp) {
  Ipv4Spec s = spec4(132);
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).sctp(2905, 3868).payload(16).build(),
        ports(v4(14, s), 34, 2905, 3868));
}

TEST_P(ParserPaths, Ipv4Icmp) {
  Ipv4Spec s   = spec4(1);
  PacketInfo w = v4(14, s);
  w.l4_offset = 34, w.icmp_type = 3, w.icmp_code = 4;
  w.flags |= kHasIcmp;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).icmp(3, 4).payload(28).build(), w);
}

TEST_P(ParserPaths, Vlan8021Q) {
  Ipv4Spec s    = spec4(6);
  PacketInfo w  = ports(v4(18, s), 38, 1000, 80, 0x10);
  w.vlan_count  = 1;
  w.vlan_tci[0] = 5 << 13 | 100;  // PCP 5, VLAN 100
  check(FrameBuilder()
            .eth()
            .vlan(0x8100, 5 << 13 | 100)
            .ethertype(0x0800)
            .ipv4(s)
            .tcp(1000, 80, 0x10)
            .build(),
        w);
}

TEST_P(ParserPaths, QinQ88a8Then8100) {
  Ipv4Spec s    = spec4(17);
  PacketInfo w  = ports(v4(22, s), 42, 7, 9);
  w.vlan_count  = 2;
  w.vlan_tci[0] = 3 << 13 | 200;  // outer S-tag first
  w.vlan_tci[1] = 1 << 12 | 100;  // inner C-tag, DEI set
  check(FrameBuilder()
            .eth()
            .vlan(0x88a8, 3 << 13 | 200)
            .vlan(0x8100, 1 << 12 | 100)
            .ethertype(0x0800)
            .ipv4(s)
            .udp(7, 9)
            .payload(4)
            .build(),
        w);
}

TEST_P(ParserPaths, Tag9100) {
  Ipv4Spec s    = spec4(17);
  PacketInfo w  = ports(v4(18, s), 38, 1, 2);
  w.vlan_count  = 1;
  w.vlan_tci[0] = 300;
  check(FrameBuilder().eth().vlan(0x9100, 300).ethertype(0x0800).ipv4(s).udp(1, 2).build(), w);
}

TEST_P(ParserPaths, ThirdTagLeftAsEthertype) {
  PacketInfo w{};
  w.vlan_count  = 2;
  w.vlan_tci[0] = 10;
  w.vlan_tci[1] = 20;
  w.ethertype   = 0x8100;
  w.l3          = L3::kOther;
  check(FrameBuilder()
            .eth()
            .vlan(0x88a8, 10)
            .vlan(0x8100, 20)
            .vlan(0x8100, 30)
            .ethertype(0x0800)
            .ipv4()
            .tcp(1, 2)
            .build(),
        w);
}

TEST_P(ParserPaths, Arp) {
  const uint8_t spa[4] = {192, 168, 1, 1}, tpa[4] = {192, 168, 1, 2};
  PacketInfo w{};
  w.l3        = L3::kArp;
  w.ethertype = 0x0806;
  check(FrameBuilder().eth().ethertype(0x0806).arp(1, spa, tpa).trailer(18).build(), w);
}

TEST_P(ParserPaths, UnknownEthertype) {
  PacketInfo w{};
  w.l3        = L3::kOther;
  w.ethertype = 0x88cc;
  check(FrameBuilder().eth().ethertype(0x88cc).payload(46).build(), w);
  w.ethertype = 0x0600;  // an 802.3 length field is just another ethertype here
  check(FrameBuilder().eth().ethertype(0x0600).payload(46).build(), w);
}

// --- IPv4 ------------------------------------------------------------------------------------

TEST_P(ParserPaths, Ipv4Options) {
  Ipv4Spec s   = spec4(6);
  s.options    = {0x07, 0x07, 0x04, 10, 0, 0, 9, 0x00};  // record route + EOL: IHL 7
  PacketInfo w = ports(v4(14, s), 42, 22, 2222, 0x18);
  w.flags |= kIpOptions;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(22, 2222).payload(3).build(), w);
}

TEST_P(ParserPaths, BadChecksumKeepsFields) {
  Ipv4Spec s     = spec4(6);
  s.bad_checksum = true;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1234, 80, 0x02).build(),
        bad(ports(v4(14, s), 34, 1234, 80, 0x02), ParseStatus::kBadIpv4Checksum));
  // A transport problem of its own wins over the checksum.
  s.proto = 17;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1234, 80, 4).build(),
        bad(ports(v4(14, s), 34, 1234, 80), ParseStatus::kBadUdpHeader));
}

TEST_P(ParserPaths, BadIpv4Header) {
  PacketInfo w{};
  w.l3        = L3::kIpv4;
  w.ethertype = 0x0800;
  w.l3_offset = 14;
  w.status    = ParseStatus::kBadIpv4Header;
  Ipv4Spec s;
  s.version_ihl = 0x65;  // version 6 inside ethertype 0x0800
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2).build(), w);
  s.version_ihl = 0x44;  // IHL 4 < 5
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2).build(), w);
}

TEST_P(ParserPaths, BadIpv4Length) {
  Ipv4Spec s     = spec4(6);
  s.total_length = 19;  // below the 20-byte header
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2).build(),
        bad(v4(14, s), ParseStatus::kBadIpv4Length));
  s.options      = {1, 1, 1, 1};  // IHL 6 (24 bytes), total 23
  s.total_length = 23;
  PacketInfo w   = bad(v4(14, s), ParseStatus::kBadIpv4Length);
  w.flags |= kIpOptions;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2).build(), w);
  s.options.clear();
  // One byte more than the frame holds: the status says so, but the transport header is still
  // read within the frame (info.hpp, Statuses).
  s.total_length = 20 + 20 + 6 + 1;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2).payload(6).build(),
        bad(ports(v4(14, s), 34, 1, 2, 0x18), ParseStatus::kBadIpv4Length));
  // ... and a later fragment that claims too much has no transport header at all.
  s.frag = 0x0010;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).payload(26).build(), [&] {
    PacketInfo w2 = bad(v4(14, s), ParseStatus::kBadIpv4Length);
    w2.flags |= kFragment | kLaterFragment;
    return w2;
  }());
}

TEST_P(ParserPaths, EthernetPaddingIgnored) {
  Ipv4Spec s = spec4(17);
  // 28-byte datagram (UDP with 0 bytes of data) padded to a 60-byte frame.
  Frame f = FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(68, 67).trailer(18).build();
  ASSERT_EQ(f.caplen(), 60u);
  check(f, ports(v4(14, s), 34, 68, 67));
  // TCP: the header ends exactly at the datagram end; padding is not TCP data.
  s.proto = 6;
  f       = FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(5, 6, 0x11).trailer(6).build();
  check(f, ports(v4(14, s), 34, 5, 6, 0x11));
}

TEST_P(ParserPaths, Ipv4Fragments) {
  Ipv4Spec s   = spec4(6);
  s.frag       = 0x2000;  // MF, offset 0
  PacketInfo w = ports(v4(14, s), 34, 1111, 2222, 0x18);
  w.flags |= kFragment;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1111, 2222).payload(100).build(), w);
  s.frag = 0x2000 | 185;  // MF, offset 1480: no transport header here
  w      = v4(14, s);
  w.flags |= kFragment | kLaterFragment;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).payload(100).build(), w);
  s.frag = 370;  // last fragment: offset only
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).payload(7).build(), w);
}

TEST_P(ParserPaths, Tunnels) {
  Ipv4Spec s   = spec4(17);
  PacketInfo w = ports(v4(14, s), 34, 50000, 4789);
  w.tunnel     = Tunnel::kVxlan;
  check(FrameBuilder()
            .eth()
            .ethertype(0x0800)
            .ipv4(s)
            .udp(50000, 4789)
            .vxlan(42)
            .eth()
            .ethertype(0x0800)
            .ipv4()
            .tcp(1, 2)
            .build(),
        w);
  w        = ports(v4(14, s), 34, 50000, 6081);
  w.tunnel = Tunnel::kGeneve;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(50000, 6081).payload(30).build(), w);
  // The source port does not make a tunnel.
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(4789, 53).payload(8).build(),
        ports(v4(14, s), 34, 4789, 53));
  s.proto     = 47;
  w           = v4(14, s);
  w.l4_offset = 34;
  w.tunnel    = Tunnel::kGre;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).gre(0x0800).ipv4().udp(1, 2).build(), w);
  s.proto        = 4;
  w              = v4(14, s);
  w.l4_offset    = 34;
  w.tunnel       = Tunnel::kIpInIp;
  Ipv4Spec inner = spec4(6);
  inner.src[0]   = 172;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).ipv4(inner).tcp(1, 2).build(), w);
  s.proto     = 41;
  w           = v4(14, s);
  w.l4_offset = 34;
  w.tunnel    = Tunnel::kIpv6InIp;
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).ipv6().tcp(1, 2).build(), w);
  // GRE over IPv6.
  Ipv6Spec s6 = spec6(47);
  w           = v6(14, s6);
  w.l4_offset = 54;
  w.tunnel    = Tunnel::kGre;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s6).gre(0x6558).payload(14).build(), w);
}

TEST_P(ParserPaths, SnaplenCutWithCompleteHeaders) {
  Ipv4Spec s = spec4(6);
  Frame f   = FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(9, 10, 0x10).payload(1400).build();
  Frame cut = testing::cut_frame(f, 54);  // exactly Ethernet + IPv4 + TCP
  ASSERT_LT(cut.caplen(), cut.len);
  check(cut, ports(v4(14, s), 34, 9, 10, 0x10));
  Ipv6Spec s6 = spec6(17);
  f           = FrameBuilder().eth().ethertype(0x86dd).ipv6(s6).udp(1, 2).payload(1400).build();
  check(testing::cut_frame(f, 62), ports(v6(14, s6), 54, 1, 2));
}

// --- IPv6 ------------------------------------------------------------------------------------

TEST_P(ParserPaths, Ipv6Tcp) {
  Ipv6Spec s      = spec6(6);
  s.traffic_class = 0xb9;
  s.flow_label    = 0xfedcb;
  s.hop_limit     = 255;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).tcp(1234, 80, 0x02).build(),
        ports(v6(14, s), 54, 1234, 80, 0x02));
}

TEST_P(ParserPaths, Ipv6ExtensionHeaders) {
  Ipv6Spec s   = spec6(0);  // hop-by-hop
  PacketInfo w = ports(v6(14, s), 62, 1, 2, 0x18);
  w.proto      = 6;
  w.flags |= kIpv6ExtHeaders;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(0, 6).tcp(1, 2).build(), w);

  s       = spec6(43);  // routing, 24 bytes
  w       = ports(v6(14, s), 78, 3, 4);
  w.proto = 17;
  w.flags |= kIpv6ExtHeaders;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(43, 17, 24).udp(3, 4).build(), w);

  s           = spec6(60);  // destination options, 16 bytes, then ICMPv6 echo request
  w           = v6(14, s);
  w.proto     = 58;
  w.l4_offset = 70;
  w.icmp_type = 128;
  w.flags |= kIpv6ExtHeaders | kHasIcmp;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(60, 58, 16).icmp(128, 0).build(), w);

  s       = spec6(44);  // fragment header, first fragment: ports
  w       = ports(v6(14, s), 62, 5, 6, 0x18);
  w.proto = 6;
  w.flags |= kIpv6ExtHeaders | kFragment;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).frag6(6, 0, true).tcp(5, 6).build(), w);

  w       = v6(14, s);  // later fragment: no ports
  w.proto = 6;
  w.flags |= kIpv6ExtHeaders | kFragment | kLaterFragment;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).frag6(6, 100, false).payload(40).build(), w);

  s       = spec6(0);  // all four: hop-by-hop, routing, fragment, destination options
  w       = ports(v6(14, s), 54 + 8 + 24 + 8 + 8, 7, 8);
  w.proto = 17;
  w.flags |= kIpv6ExtHeaders | kFragment;
  check(FrameBuilder()
            .eth()
            .ethertype(0x86dd)
            .ipv6(s)
            .ext(0, 43)
            .ext(43, 44, 24)
            .frag6(60, 0, true)
            .ext(60, 17)
            .udp(7, 8)
            .build(),
        w);
}

TEST_P(ParserPaths, Ipv6NoNextHeader) {
  Ipv6Spec s   = spec6(59);
  PacketInfo w = v6(14, s);
  w.l4_offset  = 54;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).build(), w);
  s           = spec6(60);
  w           = v6(14, s);
  w.proto     = 59;
  w.l4_offset = 62;
  w.flags |= kIpv6ExtHeaders;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(60, 59).payload(5).build(), w);
}

TEST_P(ParserPaths, Ipv6ExtChainLimit) {
  Ipv6Spec s = spec6(60);
  FrameBuilder eight;
  eight.eth().ethertype(0x86dd).ipv6(s);
  for (int i = 0; i < 7; ++i) eight.ext(60, 60);
  FrameBuilder nine = eight;
  eight.ext(60, 6).tcp(1, 2);
  PacketInfo w = ports(v6(14, s), 54 + 64, 1, 2, 0x18);  // eight headers are allowed
  w.proto      = 6;
  w.flags |= kIpv6ExtHeaders;
  check(eight.build(), w);
  nine.ext(60, 60).ext(60, 6).tcp(1, 2);  // a ninth is not
  w = bad(v6(14, s), ParseStatus::kBadIpv6ExtHeader);
  w.flags |= kIpv6ExtHeaders;
  w.fields = kFieldSrc | kFieldDst | kFieldFrag;  // the chain was not walked: proto unknown
  check(nine.build(), w);
}

TEST_P(ParserPaths, Ipv6BadExtAndLength) {
  Ipv6Spec s       = spec6(43);
  s.payload_length = 16;  // the 24-byte routing header runs past the payload
  PacketInfo w     = bad(v6(14, s), ParseStatus::kBadIpv6ExtHeader);
  w.flags |= kIpv6ExtHeaders;
  w.fields = kFieldSrc | kFieldDst | kFieldFrag;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(43, 17, 24).udp(3, 4).build(), w);
  s.payload_length = 4;  // not even the first 8 bytes of it
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).ext(43, 17, 24).udp(3, 4).build(), w);
  s                = spec6(17);
  s.payload_length = 8 + 10 + 1;  // one byte more than the frame: ports still read
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).udp(3, 4).payload(10).build(),
        bad(ports(v6(14, s), 54, 3, 4), ParseStatus::kBadIpv6Length));
  s.version = 4;
  s.payload_length.reset();
  PacketInfo h{};
  h.l3        = L3::kIpv6;
  h.ethertype = 0x86dd;
  h.l3_offset = 14;
  h.status    = ParseStatus::kBadIpv6Header;
  check(FrameBuilder().eth().ethertype(0x86dd).ipv6(s).udp(3, 4).build(), h);
}

TEST_P(ParserPaths, Ipv6Jumbogram) {
  Ipv6Spec s          = spec6(0);
  s.payload_length    = 0;
  const uint32_t data = 70000;
  Frame f             = FrameBuilder()
                .eth()
                .ethertype(0x86dd)
                .ipv6(s)
                .hbh_jumbo(17, 8 + 8 + data)
                .udp(1000, 2000, 0)
                .payload(data)
                .build();
  ASSERT_GT(f.len, 65535u);
  PacketInfo w = ports(v6(14, s), 62, 1000, 2000);
  w.proto      = 17;
  w.flags |= kIpv6ExtHeaders;
  check(f, w);
}

// --- Transport -------------------------------------------------------------------------------

TEST_P(ParserPaths, TcpHeaders) {
  Ipv4Spec s                      = spec4(6);
  const std::vector<uint8_t> opts = {2, 4, 5, 0xb4, 4, 2, 1, 1, 1, 3, 3, 7};  // MSS, SACK, WS
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2, 0x02, opts).payload(5).build(),
        ports(v4(14, s), 34, 1, 2, 0x02));
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2, 0x02, {}, 4).payload(5).build(),
        bad(ports(v4(14, s), 34, 1, 2, 0x02), ParseStatus::kBadTcpHeader));
  // Data offset 15 (60 bytes) but only 20 + 10 bytes in the datagram.
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).tcp(1, 2, 0x02, {}, 15).payload(10).build(),
        bad(ports(v4(14, s), 34, 1, 2, 0x02), ParseStatus::kBadTcpHeader));
}

TEST_P(ParserPaths, UdpLength) {
  Ipv4Spec s = spec4(17);
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1, 2, 4).payload(10).build(),
        bad(ports(v4(14, s), 34, 1, 2), ParseStatus::kBadUdpHeader));
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1, 2, 8 + 10 + 1).payload(10).build(),
        bad(ports(v4(14, s), 34, 1, 2), ParseStatus::kBadUdpHeader));
  // Shorter than the datagram is fine (the rest is IP-level padding).
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1, 2, 8 + 5).payload(10).build(),
        ports(v4(14, s), 34, 1, 2));
  // Length 0 means "jumbogram" only over IPv6 (RFC 2675); over IPv4 it is malformed.
  check(FrameBuilder().eth().ethertype(0x0800).ipv4(s).udp(1, 2, 0).payload(10).build(),
        bad(ports(v4(14, s), 34, 1, 2), ParseStatus::kBadUdpHeader));
}

// --- Text forms ------------------------------------------------------------------------------

TEST_P(ParserPaths, CsvRows) {
  EXPECT_STREQ(kParseCsvHeader, "frame,status,vlan,ip_version,src,dst,proto,sport,dport,frag");
  Ipv4Spec s = spec4(6);
  EXPECT_EQ(parse_csv_row(1, parse(FrameBuilder()
                                       .eth()
                                       .vlan(0x8100, 0xe000 | 100)
                                       .ethertype(0x0800)
                                       .ipv4(s)
                                       .tcp(40000, 443)
                                       .build())),
            "1,ok,100,4,10.0.0.1,10.0.0.2,6,40000,443,0");
  const uint8_t spa[4] = {1, 2, 3, 4};
  EXPECT_EQ(
      parse_csv_row(2, parse(FrameBuilder().eth().ethertype(0x0806).arp(2, spa, spa).build())),
      "2,ok,,,,,,,,");
  s.frag = 0x2000 | 10;
  EXPECT_EQ(
      parse_csv_row(3, parse(FrameBuilder().eth().ethertype(0x0800).ipv4(s).payload(8).build())),
      "3,ok,,4,10.0.0.1,10.0.0.2,6,,,1");
  s.frag         = 0;
  s.bad_checksum = true;
  s.proto        = 17;
  EXPECT_EQ(parse_csv_row(4, parse(FrameBuilder()
                                       .eth()
                                       .vlan(0x88a8, 7)
                                       .vlan(0x8100, 8)
                                       .ethertype(0x0800)
                                       .ipv4(s)
                                       .udp(53, 1024)
                                       .build())),
            "4,bad_ipv4_checksum,7,4,10.0.0.1,10.0.0.2,17,53,1024,0");
  EXPECT_EQ(parse_csv_row(5, parse(FrameBuilder()
                                       .eth()
                                       .ethertype(0x86dd)
                                       .ipv6(spec6(44))
                                       .frag6(17, 0, true)
                                       .udp(5353, 5353)
                                       .build())),
            "5,ok,,6,2001:db8::1,2001:db8::2,17,5353,5353,1");
  Frame cut =
      testing::cut_frame(FrameBuilder().eth().ethertype(0x0800).ipv4().tcp(1, 2).build(), 30);
  // Cut after 16 bytes of the IPv4 header: version, fragment flags, proto and src are known.
  EXPECT_EQ(parse_csv_row(6, parse(cut)), "6,truncated,,4,10.0.0.1,,6,,,0");
  cut.bytes.resize(14 + 9);  // before the protocol byte
  EXPECT_EQ(parse_csv_row(7, parse(cut)), "7,truncated,,4,,,,,,0");
  cut.bytes.resize(14 + 1);  // only the version
  EXPECT_EQ(parse_csv_row(8, parse(cut)), "8,truncated,,4,,,,,,");
  EXPECT_EQ(parse_csv_row(
                12345678901ull,
                parse(FrameBuilder().eth().ethertype(0x86dd).ipv6(spec6(58)).icmp(135, 0).build())),
            "12345678901,ok,,6,2001:db8::1,2001:db8::2,58,,,0");
}

INSTANTIATE_TEST_SUITE_P(Engines, ParserPaths, ::testing::ValuesIn(testing::parser_engine_ids()),
                         [](const auto& p) { return testing::param_name(p.param); });

std::string v6str(std::vector<uint16_t> g) {
  uint8_t b[16];
  for (int i = 0; i < 8; ++i) b[2 * i] = uint8_t(g[i] >> 8), b[2 * i + 1] = uint8_t(g[i]);
  return ipv6_to_string(b);
}

TEST(Ipv6ToString, Rfc5952) {
  EXPECT_EQ(v6str({0, 0, 0, 0, 0, 0, 0, 0}), "::");
  EXPECT_EQ(v6str({0, 0, 0, 0, 0, 0, 0, 1}), "::1");
  EXPECT_EQ(v6str({0x2001, 0xdb8, 0, 0, 0, 0, 0, 1}), "2001:db8::1");
  EXPECT_EQ(v6str({0x2001, 0xdb8, 0, 1, 1, 1, 1, 1}), "2001:db8:0:1:1:1:1:1");  // one zero group
  EXPECT_EQ(v6str({0x2001, 0, 0, 1, 0, 0, 0, 1}), "2001:0:0:1::1");             // longest run
  EXPECT_EQ(v6str({0x2001, 0xdb8, 0, 0, 1, 0, 0, 1}), "2001:db8::1:0:0:1");     // first of equal
  EXPECT_EQ(v6str({0, 0, 0, 0, 0, 0xffff, 0xc000, 0x0201}), "::ffff:192.0.2.1");
  EXPECT_EQ(v6str({0x2001, 0xDB8, 0xABCD, 0x0012, 0, 0, 0, 0}), "2001:db8:abcd:12::");
  EXPECT_EQ(v6str({0xfe80, 0, 0, 0, 0x0200, 0x5eff, 0xfe00, 0x5301}), "fe80::200:5eff:fe00:5301");
  EXPECT_EQ(v6str({1, 0, 2, 0, 3, 0, 4, 0}), "1:0:2:0:3:0:4:0");
  EXPECT_EQ(v6str({0, 0, 1, 0, 0, 0, 0, 0}), "0:0:1::");
  EXPECT_EQ(v6str({0xffff, 0, 0, 0, 0, 0, 0, 0xffff}), "ffff::ffff");
  const uint8_t v4[4] = {255, 0, 10, 1};
  EXPECT_EQ(ipv4_to_string(v4), "255.0.10.1");
}

// The text forms against libc's inet_ntop, the peer: every IPv4 byte value in every position,
// and IPv6 addresses with zero groups in random runs (glibc writes RFC 5952's forms too, except
// the deprecated IPv4-compatible ::a.b.c.d, which RFC 5952 section 5 leaves hexadecimal).
TEST(AddressText, MatchesInetNtop) {
  char text[INET6_ADDRSTRLEN];
  for (unsigned v = 0; v < 256; ++v) {
    const uint8_t b[4] = {uint8_t(v), uint8_t(255 - v), uint8_t(v * 7), uint8_t(v / 3)};
    ASSERT_NE(inet_ntop(AF_INET, b, text, sizeof text), nullptr);
    ASSERT_EQ(ipv4_to_string(b), text) << v;
  }
  std::mt19937 rng(7);
  for (int n = 0; n < 20000; ++n) {
    uint8_t b[16];
    for (int g = 0; g < 8; ++g) {
      const uint32_t kind = rng() % 4;  // a zero group, one byte, two bytes, a mapped-like word
      const uint16_t w    = kind == 0 ? 0 : kind == 1 ? uint16_t(rng() % 256) : uint16_t(rng());
      b[2 * g] = uint8_t(w >> 8), b[2 * g + 1] = uint8_t(w);
    }
    if (n % 5 == 0) std::memset(b, 0, 10), b[10] = b[11] = 0xff;  // ::ffff:a.b.c.d
    bool compatible = true;  // ::a.b.c.d (glibc's dotted form for ::/96 but ::, ::1)
    for (int i = 0; i < 12; ++i) compatible &= b[i] == 0;
    if (compatible && (b[12] | b[13] | b[14] || b[15] > 1)) continue;
    ASSERT_NE(inet_ntop(AF_INET6, b, text, sizeof text), nullptr);
    ASSERT_EQ(ipv6_to_string(b), text) << n;
  }
}

}  // namespace
}  // namespace warpath::packet
