// tests/openflow/action_test.cpp: OpenFlow 1.0 header rewrites (src/openflow/core/
// action_core.hpp): incremental checksums against full recomputation, the parse result kept
// true (the packet parsed again gives the same PacketInfo), VLAN push / replace / strip as Open
// vSwitch does them, and no-ops where the header is missing or not captured.
#include <gtest/gtest.h>

#include <random>

#include "openflow/core/action_core.hpp"
#include "packet/core/parse_core.hpp"
#include "packet/frame_builder.hpp"

namespace warpath::openflow {
namespace {

using testing::FrameBuilder;
using testing::Ipv4Spec;
using testing::ones_complement_checksum;

constexpr uint32_t kRoom = 64;  // headroom the tests leave before each packet

struct Buf {
  std::vector<uint8_t> bytes;
  core::PacketRef ref{};
  packet::PacketInfo info{};
  explicit Buf(const std::vector<uint8_t>& frame, uint32_t cut = 0) {
    bytes.assign(kRoom, 0);
    bytes.insert(bytes.end(), frame.begin(), frame.end());
    const uint32_t caplen = cut ? cut : uint32_t(frame.size());
    ref  = {bytes.data() + kRoom, caplen, uint32_t(frame.size()), kRoom};
    info = packet::core::parse_packet(ref.data, ref.caplen, ref.len);
  }
  std::vector<uint8_t> packet() const { return {ref.data, ref.data + ref.caplen}; }
};

// The TCP/UDP checksum a receiver computes (pseudo header + segment), 0 when right.
uint16_t l4_verify(const std::vector<uint8_t>& p, const packet::PacketInfo& in) {
  const uint32_t ip = in.l3_offset, l4 = in.l4_offset;
  const uint32_t seg = uint32_t(p[ip + 2] << 8 | p[ip + 3]) - (l4 - ip);
  std::vector<uint8_t> pseudo(p.begin() + ip + 12, p.begin() + ip + 20);
  pseudo.push_back(0);
  pseudo.push_back(in.proto);
  pseudo.push_back(uint8_t(seg >> 8));
  pseudo.push_back(uint8_t(seg));
  pseudo.insert(pseudo.end(), p.begin() + l4, p.begin() + l4 + seg);
  return ones_complement_checksum(pseudo.data(), pseudo.size());
}

// Fills in a correct TCP/UDP checksum (the builder leaves it 0).
void set_l4_checksum(std::vector<uint8_t>& p) {
  const packet::PacketInfo in = packet::core::parse_packet(p.data(), uint32_t(p.size()), uint32_t(p.size()));
  const uint32_t at = core::l4_csum_at(in);
  ASSERT_NE(at, 0u);
  p[at] = p[at + 1] = 0;
  const uint16_t c  = l4_verify(p, in);
  p[at]             = uint8_t(c >> 8);
  p[at + 1]         = uint8_t(c);
  ASSERT_EQ(l4_verify(p, in), 0);
}

bool ipv4_header_ok(const std::vector<uint8_t>& p, const packet::PacketInfo& in) {
  return ones_complement_checksum(p.data() + in.l3_offset, 20) == 0;
}

Action act(ActionType t, uint32_t value = 0) {
  Action a;
  a.type  = t;
  a.value = value;
  return a;
}

std::vector<uint8_t> tcp_frame(uint8_t proto = 6, uint16_t frag = 0x4000, uint8_t tos = 0x21) {
  Ipv4Spec s;
  s.proto = proto;
  s.frag  = frag;
  s.tos   = tos;
  FrameBuilder b;
  b.eth().ethertype(0x0800).ipv4(s);
  if (proto == 6) b.tcp(1234, 80);
  if (proto == 17) b.udp(5353, 53);
  if (proto == 1) b.icmp(8, 0);
  return b.payload(37).build().bytes;
}

TEST(OpenflowActions, IncrementalChecksumsMatchFullRecomputation) {
  for (uint8_t proto : {uint8_t(6), uint8_t(17)}) {
    std::vector<uint8_t> f = tcp_frame(proto);
    set_l4_checksum(f);
    const Action rewrites[] = {act(ActionType::kSetNwSrc, 0xc0a80101), act(ActionType::kSetNwDst, 0x08080808),
                               act(ActionType::kSetNwTos, 0xb8), act(ActionType::kSetTpSrc, 65535),
                               act(ActionType::kSetTpDst, 0)};
    for (const Action& a : rewrites) {
      Buf b(f);
      ASSERT_TRUE(core::apply_rewrite(b.ref, b.info, a));
      const std::vector<uint8_t> p = b.packet();
      EXPECT_NE(p, f) << "changed";
      EXPECT_TRUE(ipv4_header_ok(p, b.info)) << int(a.type);
      EXPECT_EQ(l4_verify(p, b.info), 0) << "proto " << int(proto) << " action " << int(a.type);
      EXPECT_EQ(packet::core::parse_packet(p.data(), uint32_t(p.size()), uint32_t(p.size())), b.info)
          << "the parse result is kept true";
    }
  }
  // mod_nw_tos keeps the ECN bits.
  Buf b(tcp_frame(6, 0x4000, 0x03));
  core::apply_rewrite(b.ref, b.info, act(ActionType::kSetNwTos, 0x20));
  EXPECT_EQ(b.packet()[15], 0x23);
}

TEST(OpenflowActions, UdpWithoutChecksumStaysWithout) {
  std::vector<uint8_t> f = tcp_frame(17);  // the builder leaves the UDP checksum 0: none
  Buf b(f);
  core::apply_rewrite(b.ref, b.info, act(ActionType::kSetNwSrc, 0x01020304));
  core::apply_rewrite(b.ref, b.info, act(ActionType::kSetTpDst, 99));
  const std::vector<uint8_t> p = b.packet();
  EXPECT_EQ(p[b.info.l4_offset + 6], 0);
  EXPECT_EQ(p[b.info.l4_offset + 7], 0);
  EXPECT_TRUE(ipv4_header_ok(p, b.info));
}

TEST(OpenflowActions, NoOpsWhereTheHeaderIsMissing) {
  // ICMP: addresses rewritten (IP checksum only), ports untouched.
  Buf icmp(tcp_frame(1));
  const std::vector<uint8_t> before = icmp.packet();
  core::apply_rewrite(icmp.ref, icmp.info, act(ActionType::kSetTpSrc, 7));
  EXPECT_EQ(icmp.packet(), before);
  core::apply_rewrite(icmp.ref, icmp.info, act(ActionType::kSetNwDst, 0x0a0a0a0a));
  EXPECT_TRUE(ipv4_header_ok(icmp.packet(), icmp.info));
  // ARP: mod_nw_* and mod_nw_tos do nothing (Open vSwitch: "Final flow: unchanged").
  const uint8_t spa[4] = {10, 0, 0, 1}, tpa[4] = {10, 0, 0, 2};
  const std::vector<uint8_t> arp = FrameBuilder().eth().ethertype(0x0806).arp(1, spa, tpa).build().bytes;
  Buf a(arp);
  for (ActionType t : {ActionType::kSetNwSrc, ActionType::kSetNwTos, ActionType::kSetTpDst})
    core::apply_rewrite(a.ref, a.info, act(t, 0x01010101));
  EXPECT_EQ(a.packet(), arp);
  // A later fragment: no transport header, only the IP checksum moves.
  std::vector<uint8_t> frag = tcp_frame(6, 0x0010);
  Buf fr(frag);
  core::apply_rewrite(fr.ref, fr.info, act(ActionType::kSetNwSrc, 0x01020304));
  core::apply_rewrite(fr.ref, fr.info, act(ActionType::kSetTpDst, 1));
  const std::vector<uint8_t> p = fr.packet();
  EXPECT_TRUE(ipv4_header_ok(p, fr.info));
  EXPECT_TRUE(std::equal(p.begin() + 34, p.end(), frag.begin() + 34)) << "payload untouched";
  // A capture cut inside the TCP header: the port is not written past the capture.
  std::vector<uint8_t> f = tcp_frame(6);
  Buf cut(f, 14 + 20 + 10);
  core::apply_rewrite(cut.ref, cut.info, act(ActionType::kSetTpDst, 1));
  EXPECT_TRUE(std::equal(cut.bytes.begin() + kRoom, cut.bytes.end(), f.begin()));
}

TEST(OpenflowActions, VlanPushReplaceStripAsOpenVswitch) {
  const std::vector<uint8_t> plain = tcp_frame(6);
  Buf b(plain);
  // Untagged: mod_vlan_vid pushes a tag with PCP 0.
  ASSERT_TRUE(core::apply_rewrite(b.ref, b.info, act(ActionType::kSetVlanVid, 5)));
  std::vector<uint8_t> p = b.packet();
  ASSERT_EQ(p.size(), plain.size() + 4);
  EXPECT_EQ(core::rd16(&p[12]), 0x8100);
  EXPECT_EQ(core::rd16(&p[14]), 5);
  EXPECT_EQ(packet::core::parse_packet(p.data(), uint32_t(p.size()), uint32_t(p.size())), b.info);
  // Tagged (vid 7, pcp 3): the VID replaced, the PCP kept.
  const std::vector<uint8_t> tagged =
      FrameBuilder().eth().vlan(0x8100, 3 << 13 | 7).ethertype(0x0800).ipv4().tcp(1, 2).build().bytes;
  Buf t(tagged);
  core::apply_rewrite(t.ref, t.info, act(ActionType::kSetVlanVid, 5));
  EXPECT_EQ(core::rd16(&t.packet()[14]), 3 << 13 | 5);
  core::apply_rewrite(t.ref, t.info, act(ActionType::kSetVlanPcp, 6));
  EXPECT_EQ(core::rd16(&t.packet()[14]), 6 << 13 | 5);
  // Strip gives back the untagged frame, and the parse result follows.
  core::apply_rewrite(t.ref, t.info, act(ActionType::kStripVlan));
  p = t.packet();
  EXPECT_EQ(p.size(), tagged.size() - 4);
  EXPECT_EQ(core::rd16(&p[12]), 0x0800);
  EXPECT_EQ(packet::core::parse_packet(p.data(), uint32_t(p.size()), uint32_t(p.size())), t.info);
  core::apply_rewrite(t.ref, t.info, act(ActionType::kStripVlan));
  EXPECT_EQ(t.packet(), p) << "nothing to strip";
  // mod_vlan_pcp on an untagged packet pushes VID 0.
  Buf u(plain);
  core::apply_rewrite(u.ref, u.info, act(ActionType::kSetVlanPcp, 2));
  EXPECT_EQ(core::rd16(&u.packet()[14]), 2 << 13);
  // No headroom: the push is refused and nothing changes.
  Buf n(plain);
  n.ref.headroom = 3;
  EXPECT_FALSE(core::apply_rewrite(n.ref, n.info, act(ActionType::kSetVlanVid, 5)));
  EXPECT_EQ(n.packet(), plain);
}

TEST(OpenflowActions, RandomRewriteSequencesKeepChecksumsAndParse) {
  std::mt19937_64 rng(5);
  const ActionType types[] = {ActionType::kSetNwSrc, ActionType::kSetNwDst, ActionType::kSetNwTos,
                              ActionType::kSetTpSrc, ActionType::kSetTpDst, ActionType::kSetVlanVid,
                              ActionType::kSetVlanPcp, ActionType::kStripVlan, ActionType::kSetDlSrc};
  for (int round = 0; round < 500; ++round) {
    Ipv4Spec s;
    s.proto = rng() % 2 ? 6 : 17;
    s.tos   = uint8_t(rng());
    for (auto& x : s.src) x = uint8_t(rng());
    FrameBuilder fb;
    fb.eth();
    if (rng() % 2) fb.vlan(0x8100, uint16_t(rng() & 0xefff));
    fb.ethertype(0x0800).ipv4(s);
    if (s.proto == 6)
      fb.tcp(uint16_t(rng()), uint16_t(rng()));
    else
      fb.udp(uint16_t(rng()), uint16_t(rng()));
    std::vector<uint8_t> f = fb.payload(rng() % 200, uint8_t(rng())).build().bytes;
    set_l4_checksum(f);
    Buf b(f);
    b.ref.headroom = 16;  // enough for 4 pushes
    for (int k = 0; k < 4; ++k) {
      Action a = act(types[rng() % std::size(types)]);
      a.value  = a.type == ActionType::kSetVlanVid   ? uint32_t(rng() % 4096)
                 : a.type == ActionType::kSetVlanPcp ? uint32_t(rng() % 8)
                 : a.type == ActionType::kSetNwTos   ? uint32_t(rng() & 0xfc)
                 : a.type == ActionType::kSetTpSrc || a.type == ActionType::kSetTpDst ? uint32_t(rng() & 0xffff)
                                                                                      : uint32_t(rng());
      a.mac[0] = 2;
      core::apply_rewrite(b.ref, b.info, a);
    }
    const std::vector<uint8_t> p = b.packet();
    const packet::PacketInfo again = packet::core::parse_packet(p.data(), uint32_t(p.size()), uint32_t(p.size()));
    ASSERT_EQ(again, b.info) << "round " << round;
    ASSERT_TRUE(ipv4_header_ok(p, b.info)) << "round " << round;
    ASSERT_EQ(l4_verify(p, b.info), 0) << "round " << round;
  }
}

}  // namespace
}  // namespace warpath::openflow
