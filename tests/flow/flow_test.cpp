// Flow tracking: keys, the TCP state machine, timeouts on a fake clock, a full table (evict,
// drop, pass, emergency mode), a SYN flood, and every engine against ref.flow.
#include "warpath/flow/flow.hpp"

#include <gtest/gtest.h>

#include <cstring>

#include "flow/core/flow_core.hpp"
#include "flow/cpu/cpu_table.hpp"
#include "flow/table_tracker.hpp"
#include "support/test_support.hpp"
#include "warpath/flow/conversations.hpp"

namespace warpath::flow {
namespace {

constexpr uint64_t kSec = 1000000000ull;
constexpr uint64_t kT0  = 1700000000ull * kSec;

packet::PacketInfo ip4(uint32_t src, uint32_t dst, uint8_t proto, uint16_t sport = 0,
                       uint16_t dport = 0, uint8_t tcp_flags = 0) {
  packet::PacketInfo p{};
  p.status     = packet::ParseStatus::kOk;
  p.l3         = packet::L3::kIpv4;
  p.ip_version = 4;
  p.proto      = proto;
  p.fields     = packet::kFieldsAll;
  for (int i = 0; i < 4; ++i) {
    p.src[i] = uint8_t(src >> (24 - 8 * i));
    p.dst[i] = uint8_t(dst >> (24 - 8 * i));
  }
  if (proto == 6 || proto == 17) {
    p.flags |= packet::kHasPorts;
    p.sport = sport;
    p.dport = dport;
  }
  p.tcp_flags = tcp_flags;
  return p;
}

packet::PacketInfo tcp(bool from_client, uint8_t flags, uint16_t cport = 40000) {
  return from_client ? ip4(0x0a000001, 0xc0000201, 6, cport, 80, flags)
                     : ip4(0xc0000201, 0x0a000001, 6, 80, cport, flags);
}

// Feeds packets one at a time at the given times; keeps answers and ended flows.
struct Feed {
  explicit Feed(const FlowConfig& c = {}, std::string_view engine = "validate:cpu.flow") {
    auto t = make_flow_tracker(engine, c);
    EXPECT_TRUE(t.is_ok()) << t.status().message();
    tracker = std::move(*t);
  }
  PacketFlow send(const packet::PacketInfo& p, uint64_t at, uint32_t len = 100) {
    packet::PacketMeta m{};
    m.len = m.caplen = len;
    m.timestamp_ns   = at;
    PacketFlow out;
    Status st = tracker->track({&p, 1}, {&m, 1}, {&out, 1}, ended);
    EXPECT_TRUE(st.is_ok()) << st.message();
    return out;
  }
  std::unique_ptr<FlowTracker> tracker;
  std::vector<FlowRecord> ended;
};

TEST(FlowKey, BothDirectionsAreOneFlow) {
  Feed f;
  const PacketFlow a = f.send(tcp(true, 0x02), kT0);
  const PacketFlow b = f.send(tcp(false, 0x12), kT0 + 1);
  EXPECT_EQ(a.track, Track::kTracked);
  EXPECT_EQ(a.serial, 1u);
  EXPECT_EQ(a.created, 1);
  EXPECT_EQ(a.dir, 0);
  EXPECT_EQ(b.serial, 1u);
  EXPECT_EQ(b.dir, 1);
  EXPECT_EQ(b.created, 0);
  EXPECT_EQ(b.handle, a.handle);
}

TEST(FlowKey, VlanProtocolAndVersionSeparateFlows) {
  Feed f;
  packet::PacketInfo p = tcp(true, 0x02);
  EXPECT_EQ(f.send(p, kT0).serial, 1u);
  p.vlan_count  = 1;
  p.vlan_tci[0] = 0x2005;  // priority bits do not count, the id does
  EXPECT_EQ(f.send(p, kT0).serial, 2u);
  p.vlan_tci[0] = 0x0005;
  EXPECT_EQ(f.send(p, kT0).serial, 2u);
  EXPECT_EQ(f.send(ip4(0x0a000001, 0xc0000201, 17, 40000, 80), kT0).serial, 3u);
  packet::PacketInfo v6 = tcp(true, 0x02);
  v6.l3 = packet::L3::kIpv6;
  v6.ip_version = 6;
  EXPECT_EQ(f.send(v6, kT0).serial, 4u);
}

TEST(FlowKey, IcmpIsKeyedByAddressesAlone) {
  Feed f;
  packet::PacketInfo req = ip4(0x0a000001, 0x0a000002, 1);
  req.icmp_type          = 8;
  packet::PacketInfo rep = ip4(0x0a000002, 0x0a000001, 1);
  rep.icmp_type          = 0;
  EXPECT_EQ(f.send(req, kT0).serial, 1u);
  const PacketFlow r = f.send(rep, kT0);
  EXPECT_EQ(r.serial, 1u);
  EXPECT_EQ(r.dir, 1);
}

TEST(FlowKey, UntrackablePacketsSayWhy) {
  Feed f;
  packet::PacketInfo arp{};
  arp.l3 = packet::L3::kArp;
  EXPECT_EQ(f.send(arp, kT0).track, Track::kNotIp);
  packet::PacketInfo frag = ip4(1, 2, 17);
  frag.flags              = packet::kFragment | packet::kLaterFragment;
  EXPECT_EQ(f.send(frag, kT0).track, Track::kFragment);
  packet::PacketInfo cut = ip4(1, 2, 6, 1, 2);
  cut.status             = packet::ParseStatus::kTruncated;
  cut.flags              = 0;
  EXPECT_EQ(f.send(cut, kT0).track, Track::kMalformed);
  packet::PacketInfo no_ports = ip4(1, 2, 17);
  no_ports.flags              = 0;
  EXPECT_EQ(f.send(no_ports, kT0).track, Track::kMalformed);
  const FlowCounters c = f.tracker->counters();
  EXPECT_EQ(c.packets, 4u);
  EXPECT_EQ(c.created, 0u);
  EXPECT_EQ(c.track[size_t(Track::kNotIp)], 1u);
  EXPECT_EQ(c.track[size_t(Track::kFragment)], 1u);
  EXPECT_EQ(c.track[size_t(Track::kMalformed)], 2u);
}

TEST(FlowTcp, HandshakeDataAndCloseWithFins) {
  Feed f;
  f.send(tcp(true, 0x02), kT0);
  f.send(tcp(false, 0x12), kT0 + 1);
  f.send(tcp(true, 0x10), kT0 + 2);
  f.send(tcp(true, 0x18), kT0 + 3, 500);
  f.send(tcp(false, 0x11), kT0 + 4);
  f.send(tcp(true, 0x11), kT0 + 5);
  f.send(tcp(false, 0x10), kT0 + 6);
  ASSERT_TRUE(f.tracker->flush(f.ended).is_ok());
  ASSERT_EQ(f.ended.size(), 1u);
  const FlowRecord& r = f.ended[0];
  EXPECT_EQ(r.tcp, TcpState::kClosed);
  EXPECT_EQ(r.state, FlowState::kClosed);
  EXPECT_EQ(r.end, FlowEnd::kShutdown);
  EXPECT_EQ(r.packets[0], 4u);
  EXPECT_EQ(r.packets[1], 3u);
  EXPECT_EQ(r.bytes[0], 800u);
  EXPECT_EQ(r.tcp_flags[0], 0x1b);
  EXPECT_EQ(r.sport, 40000);
  EXPECT_EQ(r.dport, 80);
  EXPECT_EQ(r.src[0], 10);
  EXPECT_EQ(r.first_ns, kT0);
  EXPECT_EQ(r.last_ns, kT0 + 6);
}

TEST(FlowTcp, StatesAlongTheWay) {
  using core::tcp_next;
  uint8_t seen[2] = {0x02, 0x12};
  EXPECT_EQ(tcp_next(TcpState::kSynSent, 1, 0x12, seen), TcpState::kSynReceived);
  EXPECT_EQ(tcp_next(TcpState::kSynSent, 0, 0x02, seen), TcpState::kSynSent);  // retransmit
  EXPECT_EQ(tcp_next(TcpState::kSynReceived, 0, 0x10, seen), TcpState::kEstablished);
  EXPECT_EQ(tcp_next(TcpState::kMidstream, 0, 0x10, seen), TcpState::kMidstream);
  EXPECT_EQ(tcp_next(TcpState::kMidstream, 1, 0x10, seen), TcpState::kEstablished);
  EXPECT_EQ(tcp_next(TcpState::kEstablished, 0, 0x04, seen), TcpState::kReset);
  EXPECT_EQ(tcp_next(TcpState::kReset, 0, 0x02, seen), TcpState::kReset);
  uint8_t one_fin[2] = {0x11, 0x10};
  EXPECT_EQ(tcp_next(TcpState::kEstablished, 0, 0x11, one_fin), TcpState::kFinWait);
  uint8_t both[2] = {0x11, 0x11};
  EXPECT_EQ(tcp_next(TcpState::kFinWait, 1, 0x11, both), TcpState::kClosed);
  // A split handshake: the responder's own SYN, the initiator's SYN+ACK, the responder's ACK.
  uint8_t split[2] = {0x02, 0x02};
  EXPECT_EQ(tcp_next(TcpState::kSynSent, 1, 0x02, split), TcpState::kSynReceived);
  split[0] = 0x12;
  EXPECT_EQ(tcp_next(TcpState::kSynReceived, 0, 0x12, split), TcpState::kSynReceived);
  split[1] = 0x12;
  EXPECT_EQ(tcp_next(TcpState::kSynReceived, 1, 0x10, split), TcpState::kEstablished);
  // ... but the responder's ACK alone, before the initiator acknowledged anything, is none.
  uint8_t early[2] = {0x02, 0x12};
  EXPECT_EQ(tcp_next(TcpState::kSynReceived, 1, 0x10, early), TcpState::kSynReceived);
}

TEST(FlowTcp, MidstreamPickupIsCounted) {
  Feed f;
  f.send(tcp(true, 0x10), kT0);
  f.send(tcp(false, 0x10), kT0);
  EXPECT_EQ(f.tracker->counters().midstream, 1u);
  ASSERT_TRUE(f.tracker->flush(f.ended).is_ok());
  EXPECT_EQ(f.ended.at(0).tcp, TcpState::kEstablished);
}

TEST(FlowTcp, SynAfterCloseOrResetOpensANewFlow) {
  Feed f;
  f.send(tcp(true, 0x02), kT0);
  f.send(tcp(false, 0x14), kT0 + 1);  // refused: RST+ACK
  const PacketFlow again = f.send(tcp(true, 0x02), kT0 + 2);
  EXPECT_EQ(again.serial, 2u);
  EXPECT_EQ(again.created, 1);
  ASSERT_EQ(f.ended.size(), 1u);
  EXPECT_EQ(f.ended[0].end, FlowEnd::kReused);
  EXPECT_EQ(f.ended[0].tcp, TcpState::kReset);
  // A SYN retransmitted on an open connection does not.
  EXPECT_EQ(f.send(tcp(true, 0x02), kT0 + 3).serial, 2u);
}

TEST(FlowTimeouts, EachStateHasItsOwn) {
  Feed f;
  f.send(tcp(true, 0x02, 1), kT0);  // new: 60 s
  f.send(ip4(1, 2, 17, 5, 6), kT0);  // udp new: 30 s
  f.send(tcp(true, 0x02, 2), kT0);  // will be established: 600 s
  f.send(tcp(false, 0x12, 2), kT0);
  f.send(tcp(true, 0x10, 2), kT0);
  ASSERT_TRUE(f.tracker->advance(kT0 + 30 * kSec - 1, f.ended).is_ok());
  EXPECT_TRUE(f.ended.empty());
  ASSERT_TRUE(f.tracker->advance(kT0 + 30 * kSec, f.ended).is_ok());  // due at exactly 30 s
  ASSERT_EQ(f.ended.size(), 1u);
  EXPECT_EQ(f.ended[0].proto, 17);
  EXPECT_EQ(f.ended[0].end, FlowEnd::kTimeout);
  ASSERT_TRUE(f.tracker->advance(kT0 + 60 * kSec, f.ended).is_ok());
  ASSERT_EQ(f.ended.size(), 2u);
  EXPECT_EQ(f.ended[1].sport, 1);
  ASSERT_TRUE(f.tracker->advance(kT0 + 599 * kSec, f.ended).is_ok());
  EXPECT_EQ(f.ended.size(), 2u);
  // A packet's own time moves the clock too: the established flow ends before it is keyed.
  f.send(tcp(true, 0x10, 2), kT0 + 600 * kSec);
  ASSERT_EQ(f.ended.size(), 3u);
  EXPECT_EQ(f.ended[2].serial, 3u);
  EXPECT_EQ(f.tracker->counters().created, 4u);  // the late packet picked up midstream
}

TEST(FlowTimeouts, ClockNeverGoesBack) {
  Feed f;
  f.send(ip4(1, 2, 17, 5, 6), kT0 + 100 * kSec);
  const PacketFlow late = f.send(ip4(2, 1, 17, 6, 5), kT0);  // older timestamp
  EXPECT_EQ(late.serial, 1u);
  ASSERT_TRUE(f.tracker->flush(f.ended).is_ok());
  EXPECT_EQ(f.ended.at(0).last_ns, kT0 + 100 * kSec);
  EXPECT_EQ(f.ended.at(0).state, FlowState::kEstablished);
}

TEST(FlowFull, EvictsTheLeastRecentlySeen) {
  FlowConfig c;
  c.capacity = 2;
  Feed f(c);
  f.send(ip4(1, 9, 17, 1, 1), kT0);
  f.send(ip4(2, 9, 17, 1, 1), kT0 + 1);
  f.send(ip4(1, 9, 17, 1, 1), kT0 + 2);  // flow 1 seen again: flow 2 is now the oldest
  const PacketFlow third = f.send(ip4(3, 9, 17, 1, 1), kT0 + 3);
  EXPECT_EQ(third.serial, 3u);
  ASSERT_EQ(f.ended.size(), 1u);
  EXPECT_EQ(f.ended[0].serial, 2u);
  EXPECT_EQ(f.ended[0].end, FlowEnd::kEvicted);
  const FlowCounters k = f.tracker->counters();
  EXPECT_EQ(k.emergency_entered, 1u);
  EXPECT_TRUE(k.emergency);
  EXPECT_EQ(k.active, 2u);
}

TEST(FlowFull, DropOrPassRefusesNewFlows) {
  for (OnFull policy : {OnFull::kDrop, OnFull::kPass}) {
    FlowConfig c;
    c.capacity = 1;
    c.on_full  = policy;
    Feed f(c);
    f.send(ip4(1, 9, 17, 1, 1), kT0);
    const PacketFlow refused = f.send(ip4(2, 9, 17, 1, 1), kT0);
    EXPECT_EQ(refused.track, policy == OnFull::kDrop ? Track::kFullDropped : Track::kFullPassed);
    EXPECT_EQ(refused.serial, 0u);
    EXPECT_EQ(f.send(ip4(9, 1, 17, 1, 1), kT0).serial, 1u);  // the tracked flow goes on
    EXPECT_TRUE(f.ended.empty());
  }
}

TEST(FlowFull, EmergencyShortensTimeoutsUntilRecovery) {
  FlowConfig c;
  c.capacity = 10;
  Feed f(c);
  for (uint32_t i = 0; i < 10; ++i) f.send(ip4(i + 1, 99, 17, 1, 1), kT0);
  // 11 s later the table is full: emergency mode, UDP new flows time out after 10 s, so all
  // ten expire instead of one being evicted.
  const PacketFlow p = f.send(ip4(50, 99, 17, 1, 1), kT0 + 11 * kSec);
  EXPECT_EQ(p.serial, 11u);
  EXPECT_EQ(f.ended.size(), 10u);
  for (const FlowRecord& r : f.ended) EXPECT_EQ(r.end, FlowEnd::kTimeout);
  const FlowCounters k = f.tracker->counters();
  EXPECT_EQ(k.emergency_entered, 1u);
  EXPECT_FALSE(k.emergency);  // 1 of 10: recovered
}

TEST(FlowFull, SynFloodStaysWithinTheTable) {
  FlowConfig c;
  c.capacity = 4096;
  auto t     = make_flow_tracker("cpu.flow", c);
  ASSERT_TRUE(t.is_ok());
  std::vector<packet::PacketInfo> infos(1024);
  std::vector<packet::PacketMeta> metas(1024);
  std::vector<PacketFlow> out(1024);
  std::vector<FlowRecord> ended;
  uint64_t sent = 0;
  for (uint32_t round = 0; round < 1000; ++round) {  // about a million spoofed SYNs
    for (uint32_t i = 0; i < 1024; ++i) {
      infos[i] = ip4(0x0b000000 + round * 1024 + i, 0xc0000201, 6, uint16_t(i), 80, 0x02);
      metas[i].len = 60;
      metas[i].timestamp_ns = kT0 + sent++ * 1000;  // 1 Mpps
    }
    ASSERT_TRUE((*t)->track({infos.data(), 1024}, {metas.data(), 1024}, {out.data(), 1024}, ended)
                    .is_ok());
    ASSERT_LE((*t)->counters().active, c.capacity);
    ended.clear();
  }
  const FlowCounters k = (*t)->counters();
  EXPECT_EQ(k.created, sent);
  uint64_t ends = 0;
  for (uint64_t e : k.ended) ends += e;
  EXPECT_EQ(k.created, ends + k.active);
  EXPECT_GT(k.ended[size_t(FlowEnd::kEvicted)], 0u);
  EXPECT_TRUE(k.emergency);
}

TEST(FlowConfigCheck, ErrorsNameTheField) {
  FlowConfig c;
  c.capacity = 0;
  EXPECT_NE(c.validate().message().find("capacity 0"), std::string::npos);
  c = FlowConfig{};
  c.emergency_timeout_s[1][0] = 40;
  EXPECT_NE(c.validate().message().find("emergency udp new timeout 40 s"), std::string::npos);
  c = FlowConfig{};
  c.emergency_recovery_percent = 100;
  EXPECT_FALSE(c.validate().is_ok());
  EXPECT_FALSE(make_flow_tracker("cpu.nope").is_ok());
  EXPECT_TRUE(parse_on_full("pass").is_ok());
  EXPECT_NE(parse_on_full("keep").status().message().find("evict, drop or pass"),
            std::string::npos);
}

packet::PacketInfo seq(packet::PacketInfo p, uint32_t n) {
  p.tcp_seq = n;
  return p;
}

// A connection whose both sides sent data: client at 1000 + 500, server at 0x80000000 + 300.
void opened(Feed& f) {
  f.send(seq(tcp(true, 0x02), 999), kT0);
  f.send(seq(tcp(false, 0x12), 0x7fffffff), kT0 + 1);
  f.send(seq(tcp(true, 0x10), 1000), kT0 + 2);
  f.send(seq(tcp(true, 0x18), 1000), kT0 + 3, 554);
  f.send(seq(tcp(false, 0x18), 0x80000000u), kT0 + 4, 354);
}

TEST(FlowTcp, ARstFarFromItsSendersSequenceNumbersIsIgnored) {
  for (std::string_view engine : {"validate:cpu.flow", "ref.flow"}) {
    Feed f({}, engine);
    opened(f);
    // Forged: a RST from each side far from that side's numbers, then a SYN on the same ports.
    EXPECT_EQ(f.send(seq(tcp(true, 0x04), 1000 + 0x00020000), kT0 + 5).serial, 1u);
    EXPECT_EQ(f.send(seq(tcp(false, 0x14), 0x7ffe0000u), kT0 + 6).serial, 1u);
    EXPECT_EQ(f.send(seq(tcp(true, 0x02), 12345), kT0 + 7).serial, 1u) << engine;
    EXPECT_EQ(f.tracker->counters().ignored_rst, 2u);
    EXPECT_TRUE(f.ended.empty());
    // The connection goes on; its own RST (the client's next number) ends it, and a SYN then
    // opens a new flow (port reuse).
    f.send(seq(tcp(true, 0x18), 1500), kT0 + 8, 154);
    EXPECT_EQ(f.send(seq(tcp(true, 0x04), 1600), kT0 + 9).serial, 1u);
    EXPECT_EQ(f.tracker->counters().ignored_rst, 2u);
    EXPECT_EQ(f.send(seq(tcp(true, 0x02), 99999), kT0 + 10).serial, 2u) << engine;
    ASSERT_EQ(f.ended.size(), 1u);
    EXPECT_EQ(f.ended[0].tcp, TcpState::kReset);
    EXPECT_EQ(f.ended[0].end, FlowEnd::kReused);
    EXPECT_EQ(f.ended[0].tcp_flags[0] & 0x04, 0x04);
    EXPECT_EQ(f.ended[0].tcp_flags[1] & 0x04, 0) << "an ignored RST is not in the history";
  }
}

TEST(FlowTcp, FinsFarFromTheirSendersNumbersAreIgnored) {
  for (std::string_view engine : {"validate:cpu.flow", "ref.flow"}) {
    Feed f({}, engine);
    opened(f);
    // Forged FINs from both sides, then a SYN: the flow goes on.
    f.send(seq(tcp(true, 0x11), 0x40000000u), kT0 + 5);
    f.send(seq(tcp(false, 0x11), 0x10000000u), kT0 + 6);
    EXPECT_EQ(f.send(seq(tcp(true, 0x02), 12345), kT0 + 7).serial, 1u) << engine;
    EXPECT_EQ(f.tracker->counters().ignored_fin, 2u);
    // Its own FINs close it (the server's next number is 0x80000000 + 300), and a SYN then
    // opens a new flow.
    f.send(seq(tcp(true, 0x11), 1500), kT0 + 8);
    f.send(seq(tcp(false, 0x11), 0x8000012cu), kT0 + 9);
    EXPECT_EQ(f.tracker->counters().ignored_fin, 2u);
    EXPECT_EQ(f.send(seq(tcp(true, 0x02), 99999), kT0 + 10).serial, 2u) << engine;
    ASSERT_EQ(f.ended.size(), 1u);
    EXPECT_EQ(f.ended[0].tcp, TcpState::kClosed);
  }
}

TEST(FlowTcp, ASilentSidesRstCountsOnlyAsARefusal) {
  // A refused SYN: the responder's RST+ACK (at any number: it sent nothing before) ends it.
  Feed f;
  f.send(seq(tcp(true, 0x02), 999), kT0);
  f.send(seq(tcp(false, 0x14), 0x12345678u), kT0 + 1);
  EXPECT_EQ(f.tracker->counters().ignored_rst, 0u);
  EXPECT_EQ(f.send(seq(tcp(true, 0x02), 5000), kT0 + 2).serial, 2u);
  // A forged "refusal" while the real SYN+ACK is on its way: the SYN+ACK takes the handshake
  // back, the server's tag is its ISN, and a forged SYN and RST later split nothing.
  Feed g;
  g.send(seq(tcp(true, 0x02), 999), kT0);
  g.send(seq(tcp(false, 0x14), 0x12345678u), kT0 + 1);
  g.send(seq(tcp(false, 0x12), 0x7fffffff), kT0 + 2);
  g.send(seq(tcp(true, 0x10), 1000), kT0 + 3);
  EXPECT_EQ(g.send(seq(tcp(true, 0x02), 777), kT0 + 4).serial, 1u);
  g.send(seq(tcp(false, 0x14), 0x12345678u), kT0 + 5);
  g.send(seq(tcp(false, 0x04), 0x00000000u), kT0 + 5);  // where an unset tag would be
  EXPECT_EQ(g.tracker->counters().ignored_rst, 2u);
  EXPECT_EQ(g.send(seq(tcp(true, 0x02), 778), kT0 + 6).serial, 1u);
  g.send(seq(tcp(false, 0x04), 0x80000000u), kT0 + 7);  // the server's own, at its ISN + 1
  EXPECT_EQ(g.tracker->counters().ignored_rst, 2u);
  ASSERT_TRUE(g.tracker->flush(g.ended).is_ok());
  EXPECT_EQ(g.ended.at(0).tcp, TcpState::kReset);
  // An ECN SYN (ECE and CWR set) refused, and an ACK scan's probe answered with a RST.
  Feed e;
  e.send(seq(tcp(true, 0xc2), 999), kT0);
  e.send(seq(tcp(false, 0x14), 0), kT0 + 1);
  e.send(seq(ip4(0x0a000007, 0xc0000207, 6, 2345, 443, 0x10), 4242), kT0 + 2);
  e.send(seq(ip4(0xc0000207, 0x0a000007, 6, 443, 2345, 0x04), 9), kT0 + 3);
  EXPECT_EQ(e.tracker->counters().ignored_rst, 0u);
  ASSERT_TRUE(e.tracker->flush(e.ended).is_ok());
  ASSERT_EQ(e.ended.size(), 2u);
  EXPECT_EQ(e.ended[0].tcp, TcpState::kReset);
  EXPECT_EQ(e.ended[1].tcp, TcpState::kReset);
  // One-sided: the client's data after its SYN, the server never seen: a RST "from the server"
  // is no refusal any more, and a lone RST (backscatter) still is a flow of its own, reset.
  Feed h;
  h.send(seq(tcp(true, 0x02), 999), kT0);
  h.send(seq(tcp(true, 0x18), 1000), kT0 + 1, 154);
  h.send(seq(tcp(false, 0x04), 0x55555555u), kT0 + 2);
  EXPECT_EQ(h.tracker->counters().ignored_rst, 1u);
  h.send(seq(ip4(0x0a000009, 0xc0000209, 6, 1234, 80, 0x04), 42), kT0 + 3);
  EXPECT_EQ(h.tracker->counters().ignored_rst, 1u);
  ASSERT_TRUE(h.tracker->flush(h.ended).is_ok());
  EXPECT_EQ(h.ended.at(1).tcp, TcpState::kReset);
}

TEST(FlowTcp, AForgedSynOrASweepCannotMoveATag) {
  // A forged SYN from the client during the handshake leaves its tag, so a RST at the forged
  // SYN's number is ignored.
  Feed f;
  f.send(seq(tcp(true, 0x02), 999), kT0);
  f.send(seq(tcp(true, 0x02), 0x40000000u), kT0 + 1);
  f.send(seq(tcp(true, 0x04), 0x40000000u), kT0 + 2);
  EXPECT_EQ(f.tracker->counters().ignored_rst, 1u);
  // A sweep of packets three blocks apart (more than a tag follows at once) never catches it.
  Feed g;
  opened(g);
  // (A tag that followed them, as one following 64 blocks did, would end in block 0xfffc.)
  for (uint32_t k = 0; k < 21845; ++k)
    g.send(seq(tcp(true, 0x10), k * 0x30000u), kT0 + 5 + k);
  g.send(seq(tcp(true, 0x04), 0xfffc0000u), kT0 + 30000);
  EXPECT_EQ(g.tracker->counters().ignored_rst, 1u);
  EXPECT_EQ(g.send(seq(tcp(true, 0x02), 5), kT0 + 30001).serial, 1u);
}

TEST(FlowTcp, ARstNearItsSendersNumbersCountsAcrossWrapAndBlocks) {
  for (uint32_t at : {0x80000000u + 300, 0x8001ffffu, 0x7fff0000u, 0x7fffffffu, 0x80010000u}) {
    Feed f;
    opened(f);
    f.send(seq(tcp(false, 0x04), at), kT0 + 5);
    EXPECT_EQ(f.tracker->counters().ignored_rst, 0u) << at;
    EXPECT_EQ(f.send(seq(tcp(true, 0x02), 7), kT0 + 6).serial, 2u) << at;
  }
  for (uint32_t at : {0x80020000u, 0x7ffe0000u, 300u}) {
    Feed f;
    opened(f);
    f.send(seq(tcp(false, 0x04), at), kT0 + 5);
    EXPECT_EQ(f.tracker->counters().ignored_rst, 1u) << at;
  }
  // A client whose numbers wrap past 2^32.
  Feed f;
  f.send(seq(tcp(true, 0x02), 0xffffff00u), kT0);
  f.send(seq(tcp(false, 0x12), 5), kT0 + 1);
  f.send(seq(tcp(true, 0x18), 0xffffff01u), kT0 + 2, 1054);
  f.send(seq(tcp(true, 0x04), 0x000002e9u), kT0 + 3);
  EXPECT_EQ(f.tracker->counters().ignored_rst, 0u);
  EXPECT_EQ(f.send(seq(tcp(true, 0x02), 1), kT0 + 4).serial, 2u);
}

TEST(FlowTcp, APacketForgedBeforeTheSynDoesNotTurnTheConnectionAround) {
  for (std::string_view engine : {"validate:cpu.flow", "ref.flow"}) {
    Feed f({}, engine);
    // A SYN+ACK from the client first: the flow is oriented from the server ...
    EXPECT_EQ(f.send(seq(tcp(true, 0x12), 5), kT0).dir, 1);
    // ... until the client's SYN, which starts a new flow from the client.
    const PacketFlow syn = f.send(seq(tcp(true, 0x02), 999), kT0 + 1);
    EXPECT_EQ(syn.serial, 2u) << engine;
    EXPECT_EQ(syn.dir, 0);
    EXPECT_EQ(f.send(seq(tcp(false, 0x12), 77), kT0 + 2).dir, 1);
    EXPECT_EQ(f.send(seq(tcp(true, 0x10), 1000), kT0 + 3).serial, 2u);
    EXPECT_EQ(f.tracker->counters().reoriented, 1u);
    ASSERT_TRUE(f.tracker->flush(f.ended).is_ok());
    ASSERT_EQ(f.ended.size(), 2u);
    EXPECT_EQ(f.ended[0].end, FlowEnd::kReused);
    EXPECT_EQ(f.ended[0].sport, 80) << "the first flow was the guess";
    EXPECT_EQ(f.ended[1].sport, 40000);
    EXPECT_EQ(f.ended[1].src[0], 10);
    EXPECT_EQ(f.ended[1].tcp, TcpState::kEstablished);
  }
  // A one-sided capture of a server's data (a flow oriented from the client, who is never
  // seen): a forged SYN from the server's side turns nothing around.
  Feed one;
  for (uint32_t i = 0; i < 3; ++i) one.send(seq(tcp(false, 0x18), 5000u + 100u * i), kT0 + i);
  EXPECT_EQ(one.send(seq(tcp(false, 0x02), 1), kT0 + 5).serial, 1u);
  EXPECT_EQ(one.tracker->counters().reoriented, 0u);
  // The same from the client's port turned well-known (a midstream packet from port 443 to
  // 8080 orients from 8080).
  Feed f;
  f.send(ip4(0x0a000001, 0xc0000201, 6, 443, 8080, 0x10), kT0);
  EXPECT_EQ(f.send(ip4(0x0a000001, 0xc0000201, 6, 443, 8080, 0x02), kT0 + 1).serial, 2u);
  EXPECT_EQ(f.tracker->counters().reoriented, 1u);
}

TEST(FlowTcp, AGuessOnceAnsweredOrAnInitiatorsSynStays) {
  // Picked up from the server's SYN+ACK and answered by the client: a later SYN from the
  // server is no reason to turn it around.
  Feed f;
  f.send(tcp(false, 0x12), kT0);
  f.send(tcp(true, 0x10), kT0 + 1);
  EXPECT_EQ(f.send(tcp(false, 0x02), kT0 + 2).serial, 1u);
  // A split handshake: the initiator sent its SYN, so the responder's SYN is part of it.
  Feed g;
  g.send(tcp(true, 0x02), kT0);
  EXPECT_EQ(g.send(tcp(false, 0x02), kT0 + 1).serial, 1u);
  EXPECT_EQ(g.tracker->counters().reoriented, 0u);
  EXPECT_EQ(f.tracker->counters().reoriented, 0u);
}

TEST(FlowEngines, EveryEngineMatchesTheReference) {
  for (const EngineInfo& e : flow_engines())
    for (uint64_t seed : {1, 2, 3}) {
      const CheckReport r = check_flow_engine(e.id, seed, 40000);
      if (r.skipped) continue;  // cuda.flow without a GPU
      EXPECT_TRUE(r.passed()) << e.id << " seed " << seed << ": " << r.detail;
      EXPECT_GE(r.items, 40000u);
    }
}

// 20,000 packets of 300 concurrent conversations, for a table of 128 flows (full: evictions).
Conversations busy_conversations() {
  ConversationParams p;
  p.packets     = 20000;
  p.concurrent  = 300;
  p.mean_gap_ns = 50000000;
  return generate_conversations(p);
}

TEST(FlowEngines, BatchSizesDoNotChangeAnything) {
  const Conversations conv = busy_conversations();
  FlowConfig c;
  c.capacity = 128;
  for (std::string_view id : {"ref.flow", "cpu.flow"}) {
    std::vector<std::vector<PacketFlow>> answers;
    std::vector<std::vector<FlowRecord>> records;
    for (uint32_t burst : warpath::testing::burst_sizes()) {
      if (burst == 0) continue;
      auto t = make_flow_tracker(id, c);
      ASSERT_TRUE(t.is_ok());
      std::vector<PacketFlow> out(conv.infos.size());
      std::vector<FlowRecord> ended;
      for (uint32_t done = 0; done < conv.infos.size(); done += burst) {
        const uint32_t n = std::min<uint32_t>(burst, uint32_t(conv.infos.size()) - done);
        ASSERT_TRUE((*t)->track({conv.infos.data() + done, n}, {conv.metas.data() + done, n},
                                {out.data() + done, n}, ended)
                        .is_ok());
      }
      ASSERT_TRUE((*t)->flush(ended).is_ok());
      for (PacketFlow& a : out) a.handle = 0;
      answers.push_back(out);
      records.push_back(ended);
    }
    for (size_t i = 1; i < answers.size(); ++i) {
      EXPECT_EQ(records[i], records[0]) << id << " burst #" << i;
      EXPECT_EQ(0, std::memcmp(answers[i].data(), answers[0].data(),
                               answers[0].size() * sizeof(PacketFlow)))
          << id << " burst #" << i;
    }
  }
}

// cuda.flow keys a batch on the GPU and hands the keys to TableTracker::track_keyed; the same
// keys made on the host must give cpu.flow's answers and records, at every burst size (the
// one pipelined loop both paths share, run here without a GPU).
TEST(FlowEngines, KeysMadeElsewhereGiveTheSameAnswers) {
  const Conversations conv = busy_conversations();
  FlowConfig c;
  c.capacity           = 128;  // full: evictions too
  const uint32_t total = uint32_t(conv.infos.size());
  for (uint32_t burst : warpath::testing::burst_sizes()) {
    if (burst == 0) continue;
    auto want_t = make_flow_tracker("cpu.flow", c);
    ASSERT_TRUE(want_t.is_ok());
    detail::TableTracker<detail::CpuTable> keyed_t("cpu.flow", c);
    std::vector<PacketFlow> want(total), got(total);
    std::vector<FlowRecord> want_ended, got_ended;
    std::vector<core::FlowKey> keys(total);
    std::vector<uint64_t> hashes(total);
    std::vector<Track> keyed(total);
    std::vector<uint8_t> from_b(total);
    for (uint32_t i = 0; i < total; ++i) {
      keyed[i]  = core::make_key(conv.infos[i], keys[i], from_b[i], c.ignore_ipv4_checksum);
      hashes[i] = keyed[i] == Track::kTracked ? core::key_hash(keys[i], keyed_t.hash_seed()) : 0;
    }
    for (uint32_t done = 0; done < total; done += burst) {
      const uint32_t n = std::min(burst, total - done);
      ASSERT_TRUE((*want_t)
                      ->track({conv.infos.data() + done, n}, {conv.metas.data() + done, n},
                              {want.data() + done, n}, want_ended)
                      .is_ok());
      ASSERT_TRUE(keyed_t
                      .track_keyed({conv.infos.data() + done, n}, {conv.metas.data() + done, n},
                                   {got.data() + done, n}, got_ended, keys.data() + done,
                                   hashes.data() + done, keyed.data() + done, from_b.data() + done)
                      .is_ok());
    }
    EXPECT_EQ(got_ended, want_ended) << "burst " << burst;
    EXPECT_EQ(0, std::memcmp(got.data(), want.data(), total * sizeof(PacketFlow)))
        << "burst " << burst;
  }
}

TEST(FlowEngines, SpanSizesAreChecked) {
  auto t = make_flow_tracker("cpu.flow");
  ASSERT_TRUE(t.is_ok());
  packet::PacketInfo p{};
  packet::PacketMeta m{};
  PacketFlow out[2];
  std::vector<FlowRecord> ended;
  EXPECT_EQ((*t)->track({&p, 1}, {&m, 1}, {out, 2}, ended).code(), Errc::kInvalidArgument);
}

}  // namespace
}  // namespace warpath::flow
