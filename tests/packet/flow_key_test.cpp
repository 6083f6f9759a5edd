// tests/packet/flow_key_test.cpp: key extraction (FiveTuple4/6, OfTuple and its SoA layout),
// summarize(), and PacketBatch.
#include "warpath/packet/flow_key.hpp"

#include <gtest/gtest.h>

#include <cstring>
#include <random>
#include <vector>

#include "packet/frame_builder.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/packet/summary.hpp"

namespace warpath::packet {
namespace {

using testing::Frame;
using testing::FrameBuilder;
using testing::Ipv4Spec;
using testing::Ipv6Spec;

// A batch of frames (each frame's own wire length) and its reference parse.
struct Parsed {
  PacketBatch batch;
  std::vector<PacketInfo> infos;
};

Parsed parse_frames(const std::vector<Frame>& frames, uint16_t port = 0) {
  Parsed p;
  auto batch = PacketBatch::create(uint32_t(frames.size()));
  EXPECT_TRUE(batch.is_ok());
  p.batch = std::move(batch.value());
  for (const Frame& f : frames)
    EXPECT_TRUE(p.batch.append(f.bytes.data(), f.caplen(), f.len, 0, port));
  auto infos = parse_batch(p.batch, "ref.parse");
  EXPECT_TRUE(infos.is_ok());
  p.infos = std::move(infos.value());
  return p;
}

Ipv4Spec v4(uint8_t proto, uint8_t tos = 0) {
  Ipv4Spec s;
  s.proto = proto;
  s.tos   = tos;
  return s;
}

TEST(FiveTuple, Sizes) {
  EXPECT_EQ(sizeof(FiveTuple4), 16u);
  EXPECT_EQ(sizeof(FiveTuple6), 40u);
  EXPECT_EQ(sizeof(OfTuple), 36u);
}

TEST(FiveTuple, Extract4And6) {
  Ipv4Spec later = v4(17);
  later.frag     = 0x0020;
  Ipv6Spec s6;
  s6.next                         = 17;
  const std::vector<Frame> frames = {
      FrameBuilder().eth().ethertype(0x0800).ipv4(v4(6)).tcp(40000, 443).build(),  // 0
      FrameBuilder().eth().ethertype(0x0800).ipv4(v4(1)).icmp(8, 0).build(),       // 1
      FrameBuilder().eth().ethertype(0x86dd).ipv6(s6).udp(5353, 53).build(),       // 2
      FrameBuilder().eth().ethertype(0x88cc).payload(46).build(),                  // 3
      testing::cut_frame(FrameBuilder().eth().ethertype(0x0800).ipv4().tcp(1, 2).build(),
                         14 + 19),                                             // 4
      FrameBuilder().eth().ethertype(0x0800).ipv4(later).payload(30).build(),  // 5
  };
  const Parsed p   = parse_frames(frames);
  const uint32_t n = uint32_t(p.infos.size());
  std::vector<FiveTuple4> k4(n);
  std::vector<FiveTuple6> k6(n);
  std::memset(k4.data(), 0xab, n * sizeof(FiveTuple4));
  std::memset(k6.data(), 0xab, n * sizeof(FiveTuple6));
  std::vector<uint8_t> has4(n, 7), has6(n, 7);
  extract_five_tuple4({p.infos.data(), n}, k4.data(), has4.data());
  extract_five_tuple6({p.infos.data(), n}, k6.data(), has6.data());
  EXPECT_EQ(has4, (std::vector<uint8_t>{1, 1, 0, 0, 0, 1}));
  EXPECT_EQ(has6, (std::vector<uint8_t>{0, 0, 1, 0, 0, 0}));

  EXPECT_EQ(k4[0].src, 0x0a000001u);  // host order
  EXPECT_EQ(k4[0].dst, 0x0a000002u);
  EXPECT_EQ(k4[0].sport, 40000);
  EXPECT_EQ(k4[0].dport, 443);
  EXPECT_EQ(k4[0].proto, 6);
  EXPECT_EQ(k4[1].proto, 1);
  EXPECT_EQ(k4[1].sport, 0);  // no ports for ICMP
  EXPECT_EQ(k4[1].dport, 0);
  EXPECT_EQ(k4[5].proto, 17);  // later fragment: addresses, no ports
  EXPECT_EQ(k4[5].sport | k4[5].dport, 0);
  const FiveTuple4 zero4{};
  const FiveTuple6 zero6{};
  for (uint32_t i = 0; i < n; ++i) {
    EXPECT_EQ(k4[i].pad[0] | k4[i].pad[1] | k4[i].pad[2], 0) << i;
    EXPECT_EQ(k6[i].pad[0] | k6[i].pad[1] | k6[i].pad[2], 0) << i;
    if (!has4[i]) {
      EXPECT_EQ(std::memcmp(&k4[i], &zero4, sizeof zero4), 0) << i;
    }
    if (!has6[i]) {
      EXPECT_EQ(std::memcmp(&k6[i], &zero6, sizeof zero6), 0) << i;
    }
  }
  EXPECT_EQ(std::vector<uint8_t>(k6[2].src, k6[2].src + 16),
            std::vector<uint8_t>(s6.src, s6.src + 16));  // network order
  EXPECT_EQ(std::vector<uint8_t>(k6[2].dst, k6[2].dst + 16),
            std::vector<uint8_t>(s6.dst, s6.dst + 16));
  EXPECT_EQ(k6[2].sport, 5353);
  EXPECT_EQ(k6[2].dport, 53);
  EXPECT_EQ(k6[2].proto, 17);
  // `present` is optional.
  extract_five_tuple4({p.infos.data(), n}, k4.data(), nullptr);
  EXPECT_EQ(k4[0].dport, 443);
}

TEST(OfTuple, PackUnpackRoundTrip) {
  std::mt19937_64 rng(2024);
  for (int round = 0; round < 1000; ++round) {
    OfFields f;
    f.in_port = uint16_t(rng());
    f.dl_vlan = uint16_t(rng());
    f.dl_type = uint16_t(rng());
    f.tp_src  = uint16_t(rng());
    f.tp_dst  = uint16_t(rng());
    for (int i = 0; i < 6; ++i) f.dl_src[i] = uint8_t(rng()), f.dl_dst[i] = uint8_t(rng());
    f.dl_vlan_pcp   = uint8_t(rng());
    f.nw_tos        = uint8_t(rng());
    f.nw_proto      = uint8_t(rng());
    f.nw_src        = uint32_t(rng());
    f.nw_dst        = uint32_t(rng());
    const OfTuple t = of_pack(f);
    EXPECT_EQ(t.w[5] & 0xffffffu, 0u);
    const OfFields g = of_unpack(t);
    ASSERT_EQ(g.in_port, f.in_port);
    ASSERT_EQ(g.dl_vlan, f.dl_vlan);
    ASSERT_EQ(g.dl_type, f.dl_type);
    ASSERT_EQ(g.tp_src, f.tp_src);
    ASSERT_EQ(g.tp_dst, f.tp_dst);
    ASSERT_EQ(0, std::memcmp(g.dl_src, f.dl_src, 6));
    ASSERT_EQ(0, std::memcmp(g.dl_dst, f.dl_dst, 6));
    ASSERT_EQ(g.dl_vlan_pcp, f.dl_vlan_pcp);
    ASSERT_EQ(g.nw_tos, f.nw_tos);
    ASSERT_EQ(g.nw_proto, f.nw_proto);
    ASSERT_EQ(g.nw_src, f.nw_src);
    ASSERT_EQ(g.nw_dst, f.nw_dst);
    const OfTuple again = of_pack(g);
    ASSERT_EQ(0, std::memcmp(&again, &t, sizeof t));
  }
}

TEST(OfTuple, SoAStride) {
  std::vector<uint32_t> words(kOfWords * 40, 0xdeadbeef);
  const OfTupleSoA soa{words.data(), 40, 3};
  for (uint32_t i = 0; i < 3; ++i) {
    OfTuple t;
    for (int k = 0; k < kOfWords; ++k) t.w[k] = 1000 * i + uint32_t(k);
    soa.write(i, t);
  }
  for (uint32_t i = 0; i < 40; ++i)
    for (int k = 0; k < kOfWords; ++k)
      EXPECT_EQ(words[k * 40 + i], i < 3 ? 1000 * i + uint32_t(k) : 0xdeadbeefu) << i << "," << k;
  const OfTuple back = soa.read(2);
  for (int k = 0; k < kOfWords; ++k) EXPECT_EQ(back.w[k], 2000u + uint32_t(k));
}

TEST(OfTuple, WordLayoutOfKnownPackets) {
  const uint8_t spa[4] = {192, 168, 0, 1}, tpa[4] = {192, 168, 0, 254};
  const std::vector<Frame> frames = {
      FrameBuilder()
          .eth()
          .vlan(0x8100, 5 << 13 | 100)
          .ethertype(0x0800)
          .ipv4(v4(6, 0xbb))
          .tcp(1234, 80)
          .build(),                                                                             // 0
      FrameBuilder().eth().ethertype(0x0800).ipv4(v4(1, 0x03)).icmp(11, 1).build(),             // 1
      FrameBuilder().eth().vlan(0x8100, 7).ethertype(0x0806).arp(2, spa, tpa).build(),          // 2
      FrameBuilder().eth().ethertype(0x86dd).ipv6().tcp(1, 2).build(),                          // 3
      testing::cut_frame(FrameBuilder().eth().ethertype(0x0800).ipv4().tcp(1, 2).build(), 30),  // 4
      FrameBuilder()
          .eth()
          .vlan(0x88a8, 2 << 13 | 300)
          .vlan(0x8100, 400)
          .ethertype(0x0800)
          .ipv4(v4(17))
          .udp(9, 10)
          .build(),  // 5
  };
  const Parsed p   = parse_frames(frames, 7);
  const uint32_t n = uint32_t(frames.size()), stride = 32;
  std::vector<uint32_t> words(kOfWords * stride, 0x12345678);
  extract_of_tuples(p.batch.view(), {p.infos.data(), n}, OfTupleSoA{words.data(), stride, n});
  auto word = [&](uint32_t i, int k) { return words[k * stride + i]; };
  for (uint32_t i = 0; i < n; ++i) {
    SCOPED_TRACE(i);
    EXPECT_EQ(word(i, 0) >> 16, 7u);     // in_port
    EXPECT_EQ(word(i, 1), 0x66778899u);  // dl_src 66:77:88:99:aa:bb
    EXPECT_EQ(word(i, 2), 0xaabb0011u);  // dl_dst 00:11:22:33:44:55
    EXPECT_EQ(word(i, 3), 0x22334455u);
    EXPECT_EQ(word(i, 5) & 0xffffffu, 0u);
  }
  for (uint32_t i = n; i < stride; ++i) EXPECT_EQ(word(i, 0), 0x12345678u);  // untouched
  // 0: VLAN 100, PCP 5, IPv4 TCP, TOS 0xbb -> nw_tos 0xb8 (ECN bits masked).
  EXPECT_EQ(word(0, 0), 7u << 16 | 100);
  EXPECT_EQ(word(0, 4), 0x0800u << 16 | 5u << 8 | 0xb8);
  EXPECT_EQ(word(0, 5), 6u << 24);
  EXPECT_EQ(word(0, 6), 0x0a000001u);
  EXPECT_EQ(word(0, 7), 0x0a000002u);
  EXPECT_EQ(word(0, 8), 1234u << 16 | 80);
  // 1: untagged ICMP time exceeded: dl_vlan 0xffff, type/code in tp_src/tp_dst, TOS ECN only.
  EXPECT_EQ(word(1, 0), 7u << 16 | 0xffff);
  EXPECT_EQ(word(1, 4), 0x0800u << 16);
  EXPECT_EQ(word(1, 5), 1u << 24);
  EXPECT_EQ(word(1, 8), 11u << 16 | 1);
  // 2: ARP reply behind a tag: opcode in nw_proto, sender and target addresses.
  EXPECT_EQ(word(2, 0), 7u << 16 | 7);
  EXPECT_EQ(word(2, 4), 0x0806u << 16);
  EXPECT_EQ(word(2, 5), 2u << 24);
  EXPECT_EQ(word(2, 6), 0xc0a80001u);
  EXPECT_EQ(word(2, 7), 0xc0a800feu);
  EXPECT_EQ(word(2, 8), 0u);
  // 3: IPv6 has no OpenFlow 1.0 network fields.
  EXPECT_EQ(word(3, 4), 0x86ddu << 16);
  for (int k = 5; k < 9; ++k) EXPECT_EQ(word(3, k), 0u) << k;
  // 4: IPv4 cut before the destination address: no network fields.
  EXPECT_EQ(word(4, 4), 0x0800u << 16);
  for (int k = 5; k < 9; ++k) EXPECT_EQ(word(4, k), 0u) << k;
  // 5: QinQ: the outer tag is dl_vlan.
  EXPECT_EQ(word(5, 0), 7u << 16 | 300);
  EXPECT_EQ(word(5, 4), 0x0800u << 16 | 2u << 8);
  EXPECT_EQ(word(5, 8), 9u << 16 | 10);
}

TEST(Summary, KnownBatch) {
  Ipv4Spec frag = v4(17), opts = v4(1), badsum = v4(132);
  frag.frag           = 0x2000;
  opts.options        = {1, 1, 1, 0};
  badsum.bad_checksum = true;
  Ipv6Spec hbh, later;
  hbh.next                        = 0;
  later.next                      = 44;
  const uint8_t a[4]              = {1, 1, 1, 1};
  const std::vector<Frame> frames = {
      FrameBuilder().eth().vlan(0x8100, 1).ethertype(0x0800).ipv4().tcp(1, 2).build(),
      FrameBuilder()
          .eth()
          .vlan(0x88a8, 1)
          .vlan(0x8100, 2)
          .ethertype(0x0800)
          .ipv4(v4(17))
          .udp(1, 4789)
          .vxlan(1)
          .build(),
      FrameBuilder().eth().ethertype(0x86dd).ipv6(hbh).ext(0, 58).icmp(128, 0).build(),
      FrameBuilder().eth().ethertype(0x0806).arp(1, a, a).build(),
      FrameBuilder().eth().ethertype(0x88cc).payload(46).build(),
      FrameBuilder().eth().ethertype(0x0800).ipv4(frag).udp(1, 2).build(),
      FrameBuilder().eth().ethertype(0x0800).ipv4(opts).icmp(8, 0).build(),
      FrameBuilder().eth().ethertype(0x0800).ipv4(v4(47)).gre(0x0800).build(),
      FrameBuilder().eth().ethertype(0x0800).ipv4(badsum).sctp(1, 2).build(),
      testing::cut_frame(FrameBuilder().eth().ethertype(0x0800).ipv4().tcp(1, 2).build(), 30),
      FrameBuilder().eth().ethertype(0x86dd).ipv6(later).frag6(6, 8, true).payload(8).build(),
      FrameBuilder().eth().ethertype(0x0800).ipv4(v4(89)).payload(20).build(),
  };
  uint64_t bytes = 0;
  for (const Frame& f : frames) bytes += f.len;
  const Parsed p       = parse_frames(frames);
  const ParseSummary s = summarize(p.batch.view(), {p.infos.data(), uint32_t(p.infos.size())});
  EXPECT_EQ(s.packets, 12u);
  EXPECT_EQ(s.bytes, bytes);
  EXPECT_EQ(s.ipv4, 8u);
  EXPECT_EQ(s.ipv6, 2u);
  EXPECT_EQ(s.arp, 1u);
  EXPECT_EQ(s.other_l3, 1u);
  EXPECT_EQ(s.tcp, 3u);  // 0, the cut packet (proto captured), the IPv6 later fragment
  EXPECT_EQ(s.udp, 2u);
  EXPECT_EQ(s.sctp, 1u);
  EXPECT_EQ(s.icmp, 1u);
  EXPECT_EQ(s.icmpv6, 1u);
  EXPECT_EQ(s.other_l4, 2u);  // GRE, OSPF
  EXPECT_EQ(s.vlan_tagged, 2u);
  EXPECT_EQ(s.qinq, 1u);
  EXPECT_EQ(s.fragments, 2u);
  EXPECT_EQ(s.ip_options, 1u);
  EXPECT_EQ(s.ipv6_ext, 2u);
  EXPECT_EQ(s.tunnels, 2u);  // VXLAN, GRE
  EXPECT_EQ(s.by_status[size_t(ParseStatus::kOk)], 10u);
  EXPECT_EQ(s.by_status[size_t(ParseStatus::kTruncated)], 1u);
  EXPECT_EQ(s.by_status[size_t(ParseStatus::kBadIpv4Checksum)], 1u);
  // Fewer infos than packets: only those are counted.
  const ParseSummary two = summarize(p.batch.view(), {p.infos.data(), 2});
  EXPECT_EQ(two.packets, 2u);
  EXPECT_EQ(two.qinq, 1u);
}

// --- PacketBatch ----------------------------------------------------------------------------

TEST(PacketBatch, AppendUntilFull) {
  auto b = PacketBatch::create(3, 64);
  ASSERT_TRUE(b.is_ok());
  EXPECT_EQ(b->buffer_bytes(), 3u * 64);
  const std::vector<uint8_t> bytes(60, 0x42);
  for (uint32_t i = 0; i < 3; ++i)
    ASSERT_TRUE(b->append(bytes.data(), 60, 64, 100 + i, uint16_t(i)));
  const PacketMeta last = b->meta(2);
  EXPECT_FALSE(b->append(bytes.data(), 60, 64, 999, 9));  // count full
  EXPECT_EQ(b->append_uninitialized(10, 10, 0), nullptr);
  EXPECT_EQ(b->size(), 3u);
  EXPECT_EQ(std::memcmp(&b->meta(2), &last, sizeof last), 0);
  EXPECT_EQ(b->meta(1).offset, 64u);
  EXPECT_EQ(b->meta(1).timestamp_ns, 101u);
  EXPECT_EQ(b->meta(1).port, 1);
  EXPECT_EQ(b->meta(1).flags, 0);
  EXPECT_EQ(b->meta(1).len, 64u);

  auto small = PacketBatch::create(10, 64, 256);  // buffer full before the count
  ASSERT_TRUE(small.is_ok());
  const std::vector<uint8_t> big(100, 1);
  EXPECT_TRUE(small->append(big.data(), 100, 100, 0));  // two cells
  EXPECT_TRUE(small->append(big.data(), 100, 100, 0));
  EXPECT_FALSE(small->append(big.data(), 1, 1, 0));
  EXPECT_EQ(small->size(), 2u);
}

TEST(PacketBatch, CellsAndJumboFrames) {
  auto b = PacketBatch::create(6, 64, 64 * 20);
  ASSERT_TRUE(b.is_ok());
  std::vector<uint8_t> jumbo(700);
  for (size_t i = 0; i < jumbo.size(); ++i) jumbo[i] = uint8_t(i * 7);
  const uint32_t sizes[]   = {64, 65, 128, 0, 700};
  const uint32_t offsets[] = {0, 64, 192, 320, 384};
  for (int i = 0; i < 5; ++i) ASSERT_TRUE(b->append(jumbo.data(), sizes[i], 9000, 0)) << i;
  for (int i = 0; i < 5; ++i) {
    EXPECT_EQ(b->meta(i).offset, offsets[i]) << i;
    EXPECT_EQ(b->meta(i).offset % 64, 0u);
    EXPECT_EQ(b->meta(i).caplen, sizes[i]);
    EXPECT_EQ(b->meta(i).len, 9000u);
    EXPECT_EQ(std::memcmp(b->data(i), jumbo.data(), sizes[i]), 0) << i;
  }
  // 700 bytes took 11 cells: 384 + 704 = 1088; 192 bytes are left, 3 cells.
  EXPECT_FALSE(b->append(jumbo.data(), 193, 193, 0));
  EXPECT_TRUE(b->append(jumbo.data(), 192, 100, 0));  // len raised to caplen
  EXPECT_EQ(b->meta(5).offset, 1088u);
  EXPECT_EQ(b->meta(5).len, 192u);
  const BatchView v = b->view();
  EXPECT_EQ(v.count, 6u);
  EXPECT_EQ(v.data(4), b->data(4));
  b->clear();
  EXPECT_EQ(b->size(), 0u);
  ASSERT_TRUE(b->append(jumbo.data(), 10, 10, 0));
  EXPECT_EQ(b->meta(0).offset, 0u);

  // A 9000-byte jumbo frame in default 2 KiB cells takes five of them.
  auto j = PacketBatch::create(3, PacketBatch::kDefaultCellBytes, 6 * 2048);
  ASSERT_TRUE(j.is_ok());
  std::vector<uint8_t> frame(9000);
  for (size_t i = 0; i < frame.size(); ++i) frame[i] = uint8_t(i ^ (i >> 8));
  ASSERT_TRUE(j->append(frame.data(), 9000, 9000, 1));
  ASSERT_TRUE(j->append(frame.data(), 2048, 9000, 2));
  EXPECT_FALSE(j->append(frame.data(), 1, 1, 3));  // 6 cells used
  EXPECT_EQ(j->meta(1).offset, 5u * 2048);
  EXPECT_EQ(std::memcmp(j->data(0), frame.data(), 9000), 0);
  EXPECT_EQ(std::memcmp(j->data(1), frame.data(), 2048), 0);
}

TEST(PacketBatch, CreateErrors) {
  for (uint32_t cell : {0u, 1u, 63u, 100u, 2047u}) {
    auto b = PacketBatch::create(4, cell);
    ASSERT_FALSE(b.is_ok()) << cell;
    EXPECT_EQ(b.status().code(), Errc::kInvalidArgument);
  }
  EXPECT_TRUE(PacketBatch::create(4, 64).is_ok());
  EXPECT_TRUE(PacketBatch::create(4, 4096).is_ok());
  auto huge = PacketBatch::create(1, 64, size_t(5) << 30);
  ASSERT_FALSE(huge.is_ok());
  EXPECT_EQ(huge.status().code(), Errc::kInvalidArgument);
  auto empty = PacketBatch::create(0);
  ASSERT_TRUE(empty.is_ok());
  EXPECT_FALSE(empty->append(nullptr, 0, 0, 0));
}

TEST(PacketBatch, ZeroCaplenPacket) {
  auto b = PacketBatch::create(2, 64);
  ASSERT_TRUE(b.is_ok());
  ASSERT_TRUE(b->append(nullptr, 0, 60, 5));
  const uint8_t one = 1;
  ASSERT_TRUE(b->append(&one, 1, 1, 6));
  EXPECT_EQ(b->meta(0).caplen, 0u);
  EXPECT_EQ(b->meta(0).len, 60u);
  EXPECT_EQ(b->meta(1).offset, 64u);  // an empty packet still takes a cell
  for (const std::string& id : testing::parser_engine_ids()) {
    auto infos = parse_batch(*b, id);
    if (!infos.is_ok()) continue;
    PacketInfo want{};
    want.status = ParseStatus::kTruncated;
    testing::expect_info((*infos)[0], want);
    testing::expect_info((*infos)[1], want);
  }
}

}  // namespace
}  // namespace warpath::packet

namespace warpath::packet {
// A TCP packet cut inside its ports has no usable 5-tuple: port 0 would be a lie.
TEST(FlowKeys, PortsCutOffMeansNoKey) {
  PacketInfo info{};
  info.ip_version = 4;
  info.proto      = 6;
  info.fields     = kFieldSrc | kFieldDst | kFieldProto | kFieldFrag;
  info.status     = ParseStatus::kTruncated;
  FiveTuple4 key{};
  uint8_t present = 1;
  extract_five_tuple4({&info, 1}, &key, &present);
  EXPECT_EQ(present, 0);
  // A later fragment has no ports by nature and still gets its key (ports 0).
  info.flags  = kFragment | kLaterFragment;
  info.status = ParseStatus::kOk;
  extract_five_tuple4({&info, 1}, &key, &present);
  EXPECT_EQ(present, 1);
  // ICMP needs no ports.
  info.flags = 0;
  info.proto = 1;
  extract_five_tuple4({&info, 1}, &key, &present);
  EXPECT_EQ(present, 1);
}
}  // namespace warpath::packet
