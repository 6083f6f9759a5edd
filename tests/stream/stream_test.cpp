// TCP stream reassembly: Novak's target-based overlap vector for every policy at the ISNs
// Suricata tests (0, 1, 2^32-1, 2^32-11), random streams reassembled to the original, losses
// declared as gaps, the handshake and midstream rules, and the bounds attackers aim at; every
// engine against ref.stream.
#include "warpath/stream/stream.hpp"

#include <gtest/gtest.h>

#include <map>
#include <string>

#include "warpath/stream/generate.hpp"

namespace warpath::stream {
namespace {

constexpr uint8_t kSyn = 0x02, kAck = 0x10, kFin = 0x01, kRst = 0x04, kPsh = 0x08;

const std::vector<std::string>& engines() {
  static const std::vector<std::string> ids = {"ref.stream", "cpu.stream", "validate:cpu.stream",
                                               "emu.stream", "validate:emu.stream"};
  return ids;
}

// Collects what a reassembler delivers, per (flow, dir): the bytes, with gaps as '#'.
struct Collector {
  std::map<std::pair<uint64_t, uint8_t>, std::string> text;
  std::map<std::pair<uint64_t, uint8_t>, std::vector<std::pair<uint64_t, uint64_t>>> gaps;
  ChunkSink sink() {
    return [this](const Chunk& c) {
      std::string& t = text[{c.flow, c.dir}];
      EXPECT_EQ(c.offset, t.size()) << "chunks must be in order";
      if (c.gap) {
        t.append(c.len, '#');
        gaps[{c.flow, c.dir}].push_back({c.offset, c.offset + c.len});
      } else {
        t.append(reinterpret_cast<const char*>(c.data), c.len);
      }
    };
  }
};

struct Conn {
  std::unique_ptr<Reassembler> r;
  Collector got;
  uint32_t isn[2];
  uint64_t flow = 1;
  uint8_t client_addr[16] = {172, 16, 0, 1}, server_addr[16] = {192, 0, 2, 1};
  Conn(std::string_view engine, const StreamConfig& c, uint32_t client_isn, uint32_t server_isn = 7777)
      : isn{client_isn, server_isn} {
    auto made = make_reassembler(engine, c);
    EXPECT_TRUE(made.is_ok()) << made.status().message();
    r = std::move(*made);
  }
  void send(uint8_t dir, uint8_t flags, uint32_t seq, uint32_t ack, std::string_view data = {},
            uint8_t tfo = 0) {
    Segment s;
    s.tfo   = tfo;
    s.flow  = flow;
    s.dir   = dir;
    s.flags = flags;
    s.seq   = seq;
    s.ack   = ack;
    s.data  = reinterpret_cast<const uint8_t*>(data.data());
    s.len   = uint32_t(data.size());
    s.ip_version = 4;
    s.src        = dir == 0 ? client_addr : server_addr;
    s.dst        = dir == 0 ? server_addr : client_addr;
    ASSERT_TRUE(r->segment(s, got.sink()).is_ok());
  }
  void handshake() {
    send(0, kSyn, isn[0], 0);
    send(1, kSyn | kAck, isn[1], isn[0] + 1);
    send(0, kAck, isn[0] + 1, isn[1] + 1);
  }
  // Client data at relative sequence `rel` (1 = the first byte), no ACK of server data moved.
  void data(uint32_t rel, std::string_view bytes) {
    send(0, kAck | kPsh, isn[0] + rel, isn[1] + 1, bytes);
  }
  // The server acknowledges the client's bytes before relative sequence `rel` (a bare ACK).
  void ack(uint32_t rel) { send(1, kAck, isn[1] + 1, isn[0] + rel); }
  void close() { ASSERT_TRUE(r->close(flow, got.sink()).is_ok()); }
  const std::string& client() { return got.text[{flow, 0}]; }
};

// ---- Novak and Sturges' target-based vector (as in Suricata's stream tests) ---------------

// (relative sequence number, bytes) in arrival order; relative 1 is the first byte.
constexpr std::pair<uint32_t, const char*> kSegments[] = {
    {2, "AAA"},  {6, "BB"}, {8, "CCC"}, {12, "D"}, {15, "EE"}, {17, "FFF"},
    {20, "GG"},  {22, "HH"}, {24, "I"}, {3, "JJJJ"}, {8, "KKK"}, {11, "LLL"},
    {14, "MMM"}, {18, "N"}, {21, "O"}, {22, "P"}, {24, "QQ"}, {1, "0"}};

struct NovakCase {
  Policy policy;
  const char* expect;
};

TEST(StreamNovak, EveryPolicyAtEveryIsn) {
  static constexpr NovakCase kCases[] = {
      {Policy::kBsd, "0AAAJJBCCCLLLMMMFFFGGHHIQ"},
      {Policy::kLinux, "0AAAJJBCCCLLLMMMFFFGGHHQQ"},
      {Policy::kOldLinux, "0AAAJJBKKKLLLMMMFFFGGHHQQ"},
      {Policy::kSolaris, "0AJJJBBKKKLLLMMMFFFGGHHQQ"},
      {Policy::kVista, "0AAAJBBCCCLDLMEEFFFGGHHIQ"},
      {Policy::kFirst, "0AAAJBBCCCLDLMEEFFFGGHHIQ"},
      {Policy::kWindows, "0AAAJBBCCCLDLMEEFFFGGHHIQ"},
      {Policy::kLast, "0AJJJJBKKKLLLMMMFNFGOPHQQ"},
  };
  for (const std::string& engine : engines())
    for (uint32_t isn : {0u, 1u, 0xffffffffu, 0xfffffff5u})
      for (const NovakCase& k : kCases) {
        SCOPED_TRACE(engine + " " + policy_name(k.policy) + " isn " + std::to_string(isn));
        StreamConfig c;
        c.policy = k.policy;
        Conn conn(engine, c, isn);
        conn.handshake();
        for (const auto& [rel, bytes] : kSegments) conn.data(rel, bytes);
        EXPECT_TRUE(conn.client().empty()) << "nothing is acknowledged yet";
        conn.close();
        EXPECT_EQ(conn.client(), k.expect);
        const StreamCounters n = conn.r->counters();
        EXPECT_EQ(n.overlaps, 8u);  // JJJJ KKK LLL MMM N O P QQ
        EXPECT_EQ(n.delivered_bytes, 25u);
        EXPECT_EQ(n.buffered_bytes, 0u);
      }
}

TEST(StreamNovak, EachReceivingHostGetsItsPrefixPolicy) {
  StreamConfig c;
  for (const char* h : {"10.0.0.0/8=linux", "10.1.0.0/16=solaris", "2001:db8::/32=last"}) {
    auto p = parse_host_policy(h);
    ASSERT_TRUE(p.is_ok()) << p.status().message();
    c.hosts.push_back(*p);
  }
  struct Server {
    uint8_t addr[4];
    const char* expect;
  } const kServers[] = {{{10, 2, 3, 4}, "0AAAJJBCCCLLLMMMFFFGGHHQQ"},   // linux
                        {{10, 1, 2, 3}, "0AJJJBBKKKLLLMMMFFFGGHHQQ"},   // solaris: longer prefix
                        {{192, 0, 2, 9}, "0AAAJJBCCCLLLMMMFFFGGHHIQ"}};  // the default, bsd
  for (const std::string& engine : engines())
    for (const Server& srv : kServers) {
      Conn conn(engine, c, 7);
      std::copy(srv.addr, srv.addr + 4, conn.server_addr);
      conn.handshake();
      for (const auto& [rel, bytes] : kSegments) conn.data(rel, bytes);
      conn.close();
      EXPECT_EQ(conn.client(), srv.expect) << engine << " " << int(srv.addr[0]) << "." << int(srv.addr[1]);
    }
  EXPECT_NE(parse_host_policy("10.0.0.0/33=linux").status().message().find("prefix length"),
            std::string::npos);
  EXPECT_NE(parse_host_policy("10.0.0.0/8").status().message().find("PREFIX=POLICY"),
            std::string::npos);
  EXPECT_FALSE(parse_host_policy("10.0.0.300=linux").is_ok());
  EXPECT_FALSE(parse_host_policy("10.0.0.0/8=hpux").is_ok());
}

TEST(StreamNovak, AcknowledgedBytesAreDeliveredAtOnce) {
  StreamConfig c;
  Conn conn("validate:cpu.stream", c, 1000);
  conn.handshake();
  conn.data(1, "hello ");
  conn.data(7, "world");
  EXPECT_EQ(conn.client(), "");
  conn.ack(1 + 6);  // the server has "hello "
  EXPECT_EQ(conn.client(), "hello ");
  conn.ack(1 + 11);
  EXPECT_EQ(conn.client(), "hello world");
  // An ACK past everything the client sent acknowledges nothing more: no phantom gap.
  conn.ack(1 + 5000);
  EXPECT_EQ(conn.client(), "hello world");
  EXPECT_EQ(conn.r->counters().gaps, 0u);
}

// ---- random streams -----------------------------------------------------------------------

void expect_original(const GeneratedStreams& g, Collector& got, uint32_t flows) {
  for (uint64_t f = 1; f <= flows; ++f)
    for (uint8_t dir = 0; dir < 2; ++dir) {
      const auto& truth = g.payload[2 * f + dir];
      EXPECT_EQ(got.text[std::make_pair(f, dir)], std::string(truth.begin(), truth.end()))
          << "flow " << f << " dir " << int(dir);
    }
}

TEST(StreamRandom, ReorderedDuplicatedOverlappedStreamsComeOutWhole) {
  for (const std::string& engine : engines())
    for (Policy policy : {Policy::kBsd, Policy::kLinux, Policy::kSolaris, Policy::kLast})
      for (Mode mode : {Mode::kIds, Mode::kInline})
        for (uint32_t isn : {0u, 1u, 0xffffffffu, 0xfffffff5u}) {
          SCOPED_TRACE(engine + " " + policy_name(policy) + " isn " + std::to_string(isn));
          StreamGenParams p;
          p.seed              = isn ^ uint32_t(policy);
          p.flows             = 6;
          p.bytes             = 6000;
          p.reorder_percent   = 30;
          p.duplicate_percent = 15;
          p.overlap_percent   = 25;
          p.random_isn        = false;
          p.isn               = isn - 3000;  // sequence numbers wrap mid-stream
          const GeneratedStreams g = generate_streams(p);
          StreamConfig c;
          c.policy = policy;
          c.mode   = mode;
          c.depth  = 0;
          auto r   = make_reassembler(engine, c);
          ASSERT_TRUE(r.is_ok());
          Collector got;
          for (const Segment& s : g.segments) ASSERT_TRUE((*r)->segment(s, got.sink()).is_ok());
          for (uint64_t f = 1; f <= p.flows; ++f) ASSERT_TRUE((*r)->close(f, got.sink()).is_ok());
          expect_original(g, got, p.flows);
          const StreamCounters n = (*r)->counters();
          EXPECT_GT(n.overlaps, 0u);
          EXPECT_EQ(n.overlap_diff, 0u);
          EXPECT_EQ(n.gaps, 0u);
          EXPECT_EQ(n.buffered_bytes, 0u);
          EXPECT_EQ((*r)->flows(), 0u);
        }
}

TEST(StreamRandom, LostSegmentsBecomeGapsAndNothingElseIsLost) {
  for (const std::string& engine : engines()) {
    StreamGenParams p;
    p.seed         = 9;
    p.flows        = 10;
    p.bytes        = 8000;
    p.loss_percent = 10;
    const GeneratedStreams g = generate_streams(p);
    StreamConfig c;
    c.depth = 0;
    auto r  = make_reassembler(engine, c);
    ASSERT_TRUE(r.is_ok());
    Collector got;
    for (const Segment& s : g.segments) ASSERT_TRUE((*r)->segment(s, got.sink()).is_ok());
    for (uint64_t f = 1; f <= p.flows; ++f) ASSERT_TRUE((*r)->close(f, got.sink()).is_ok());
    uint64_t lost_bytes = 0;
    for (uint64_t f = 1; f <= p.flows; ++f)
      for (uint8_t dir = 0; dir < 2; ++dir) {
        const auto& truth = g.payload[2 * f + dir];
        const auto& lost  = g.lost[2 * f + dir];
        const std::string& text = got.text[{f, dir}];
        auto is_lost = [&](uint64_t at) {
          for (const auto& [a, b] : lost)
            if (at >= a && at < b) return true;
          return false;
        };
        // Every byte delivered is the truth, every '#' is a lost byte, and every byte not lost
        // up to the last one delivered was delivered.
        for (uint64_t at = 0; at < text.size(); ++at) {
          if (text[at] == '#')
            ASSERT_TRUE(is_lost(at)) << "flow " << f << " dir " << int(dir) << " at " << at;
          else
            ASSERT_EQ(uint8_t(text[at]), truth[at]) << "flow " << f << " at " << at;
        }
        for (uint64_t at = text.size(); at < truth.size(); ++at)
          ASSERT_TRUE(is_lost(at)) << "flow " << f << " dir " << int(dir) << " missing " << at;
        for (const auto& [a, b] : lost) lost_bytes += b - a;
      }
    const StreamCounters n = (*r)->counters();
    EXPECT_GT(lost_bytes, 0u);
    EXPECT_GT(n.gaps, 0u);
    EXPECT_LE(n.gap_bytes, lost_bytes);
  }
}

TEST(StreamRandom, ConflictingBytesAreCountedAndEnginesAgree) {
  for (uint64_t seed : {1, 2, 3}) {
    const CheckReport r = check_stream_engine("cpu.stream", seed, 30000);
    EXPECT_TRUE(r.passed()) << r.detail;
    EXPECT_GE(r.items, 30000u);
  }
  StreamGenParams p;
  p.conflict_percent = 30;
  const GeneratedStreams g = generate_streams(p);
  auto r = make_reassembler("cpu.stream");
  ASSERT_TRUE(r.is_ok());
  for (const Segment& s : g.segments) ASSERT_TRUE((*r)->segment(s, nullptr).is_ok());
  EXPECT_GT((*r)->counters().overlap_diff, 0u);
}

// ---- the handshake, midstream, RST and FIN --------------------------------------------------

TEST(StreamHandshake, NothingIsBufferedBeforeItCompletes) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 500);
    conn.send(0, kSyn, 500, 0, "early");  // data on the SYN
    conn.send(0, kAck | kPsh, 501, 0, "before the SYN+ACK");
    conn.send(1, kSyn | kAck, conn.isn[1], 777);  // acknowledges the wrong ISN
    conn.send(1, kSyn | kAck, conn.isn[1], 501);
    conn.send(0, kAck, 501, conn.isn[1] + 1);
    conn.data(1, "now");
    conn.close();
    EXPECT_EQ(conn.client(), "now");
    const StreamCounters n = conn.r->counters();
    EXPECT_EQ(n.data_on_syn, 1u);
    EXPECT_EQ(n.before_handshake, 1u);
    EXPECT_EQ(n.streams, 2u);
  }
}

// TCP Fast Open (RFC 7413, as Suricata takes it): a SYN with the option carries the client's
// first bytes; the SYN+ACK opens the connection and may carry the server's.
TEST(StreamFastOpen, TheSynsDataIsTheClientsFirstBytes) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 1000);
    conn.send(0, kSyn, 1000, 0, "GET /", 1);
    conn.send(1, kSyn | kAck, 7777, 1006);  // acknowledges the SYN and its 5 bytes
    EXPECT_EQ((conn.got.text[{1, 0}]), "GET /") << engine << ": delivered at its acknowledgement";
    conn.send(0, kAck | kPsh, 1006, 7778, " HTTP/1.0");
    conn.send(1, kAck, 7778, 1015);
    EXPECT_EQ((conn.got.text[{1, 0}]), "GET / HTTP/1.0") << engine;
    const StreamCounters c = conn.r->counters();
    EXPECT_EQ(c.data_on_syn, 0u) << engine;
    EXPECT_EQ(c.streams, 2u) << engine;
    EXPECT_EQ(c.before_handshake, 0u) << engine;
  }
}

TEST(StreamFastOpen, TheSynAckMayCarryTheServersFirstBytes) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 1000);
    conn.send(0, kSyn, 1000, 0, "hi", 1);
    conn.send(1, kSyn | kAck, 7777, 1003, "hello", 1);
    conn.send(0, kAck, 1003, 7783);
    EXPECT_EQ((conn.got.text[{1, 0}]), "hi") << engine;
    EXPECT_EQ((conn.got.text[{1, 1}]), "hello") << engine;
  }
}

TEST(StreamFastOpen, DataTheServerDidNotTakeIsSentAgainAndDeliveredOnce) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 1000);
    conn.send(0, kSyn, 1000, 0, "early", 1);
    conn.send(0, kSyn, 1000, 0, "early", 1);  // the SYN sent again: its bytes replace the first's
    conn.send(1, kSyn | kAck, 7777, 1001);    // acknowledges only the SYN
    conn.send(0, kAck, 1001, 7778, "early");  // the client sends its data again
    conn.send(1, kAck, 7778, 1006);
    EXPECT_EQ((conn.got.text[{1, 0}]), "early") << engine;
    const StreamCounters c = conn.r->counters();
    EXPECT_EQ(c.fast_open_ignored, 1u) << engine << ": the SYN's data the server did not take";
    EXPECT_EQ(c.data_on_syn, 0u) << engine;
    EXPECT_EQ(c.buffered_bytes, 0u) << engine;
    ASSERT_TRUE(conn.r->close(1, conn.got.sink()).is_ok());
    EXPECT_EQ((conn.got.text[{1, 0}]), "early") << engine << ": nothing left behind";
  }
}

// What an attacker can do around a Fast Open SYN (a review's inputs): none of it hides bytes the
// server takes, nor ends the connection's stream.
TEST(StreamFastOpen, HostileSynsHideNothing) {
  for (const std::string& engine : engines()) {
    {  // a SYN with another ISN after one with data: its connection's bytes, not behind the old
      Conn conn(engine, {}, 1000);
      conn.send(0, kSyn, 1000, 0, "A", 1);
      conn.send(0, kSyn, 5000, 0, {}, 1);
      conn.send(1, kSyn | kAck, 7777, 5001);
      conn.send(0, kAck | kPsh, 5001, 7778, "EVIL");
      conn.send(1, kAck, 7778, 5005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
      EXPECT_EQ(conn.r->counters().streams, 2u) << engine;
    }
    {  // the same, then a plain three-way handshake: two streams, not three
      Conn conn(engine, {}, 1000);
      conn.send(0, kSyn, 1000, 0, "A", 1);
      conn.send(0, kSyn, 5000, 0);
      conn.send(1, kSyn | kAck, 7777, 5001);
      conn.send(0, kAck, 5001, 7778);
      conn.send(0, kAck | kPsh, 5001, 7778, "EVIL");
      conn.send(1, kAck, 7778, 5005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
      EXPECT_EQ(conn.r->counters().streams, 2u) << engine;
    }
    {  // a RST on the Fast Open SYN: no connection attempt a host takes, nothing reset
      Conn conn(engine, {}, 1000);
      conn.send(0, kSyn | kRst, 1000, 0, "X", 1);
      conn.handshake();
      conn.send(0, kAck | kPsh, 1001, 7778, "EVIL");
      conn.send(1, kAck, 7778, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
      EXPECT_EQ(conn.r->counters().after_close, 0u) << engine;
    }
    {  // the SYN sent again with other bytes: a retransmission under the overlap policy (bsd:
       // the first copy stays), the difference counted
      Conn conn(engine, {}, 1000);
      conn.send(0, kSyn, 1000, 0, "EVIL", 1);
      conn.send(0, kSyn, 1000, 0, "GOOD", 1);
      conn.send(1, kSyn | kAck, 7777, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
      EXPECT_EQ(conn.r->counters().overlap_diff, 1u) << engine;
    }
  }
  for (const std::string& engine : engines()) {
    // A long Fast Open SYN the server never got, then a short copy it took: what it took is
    // delivered, the rest of the long one is not the stream's, and the client's next bytes
    // take its place.
    Conn conn(engine, {}, 1000);
    conn.send(0, kSyn, 1000, 0, "benign benign benign", 1);
    conn.send(0, kSyn, 1000, 0, "E", 1);
    conn.send(1, kSyn | kAck, 7777, 1002);  // took one byte
    conn.send(0, kAck | kPsh, 1002, 7778, "VIL");
    conn.send(1, kAck, 7778, 1005);
    EXPECT_EQ((conn.got.text[{1, 0}]), "bVIL")
        << engine << ": the stored first copy's byte (no TCP checksum check), then the client's";
    EXPECT_EQ(conn.r->counters().fast_open_ignored, 1u) << engine;
  }
  for (const std::string& engine : engines()) {
    {  // a Fast Open SYN resent after the SYN+ACK: its bytes are none of the stream's
      Conn conn(engine, {}, 1000);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn | kAck, 7777, 1001);
      conn.send(0, kSyn, 1000, 0, "GET /decoy", 1);
      conn.send(0, kAck, 1001, 7778);
      conn.send(0, kAck | kPsh, 1001, 7778, "GET /evil");
      conn.send(1, kAck, 7778, 1010);
      EXPECT_EQ((conn.got.text[{1, 0}]), "GET /evil") << engine;
      EXPECT_EQ(conn.r->counters().data_on_syn, 1u) << engine;
    }
    {  // a split handshake after a Fast Open SYN: its last packet acknowledges the SYN alone
      Conn conn(engine, {}, 1000, 3000);
      conn.send(0, kSyn, 1000, 0, "decoy", 1);
      conn.send(1, kSyn, 3000, 0);
      conn.send(0, kSyn | kAck, 1000, 3001);
      conn.send(1, kAck, 3001, 1001);
      conn.send(0, kAck | kPsh, 1001, 3001, "EVIL!");
      conn.send(1, kAck, 3001, 1006);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL!") << engine;
      EXPECT_EQ(conn.r->counters().fast_open_ignored, 1u) << engine;
    }
    {  // a simultaneous open's SYN+ACK with data: no stream's (Linux takes it only without)
      Conn conn(engine, {}, 1000, 3000);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn, 3000, 0);
      conn.send(0, kSyn | kAck, 1000, 3001);
      conn.send(1, kSyn | kAck, 3000, 1001, "decoy");
      conn.send(1, kAck | kPsh, 3001, 1001, "evil!");
      conn.send(0, kAck, 1001, 3006);
      EXPECT_EQ((conn.got.text[{1, 1}]), "evil!") << engine;
      EXPECT_EQ(conn.r->counters().data_on_syn, 1u) << engine;
    }
    {  // a new SYN+ACK replacing one whose half-open state the server dropped
      Conn conn(engine, {}, 1000, 7777);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn | kAck, 7777, 1001);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn | kAck, 9999, 1001);
      conn.send(0, kAck, 1001, 10000);
      conn.send(0, kAck | kPsh, 1001, 10000, "EVIL");
      conn.send(1, kAck, 10000, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
    }
  }
  StreamConfig inline_mode;
  inline_mode.mode = Mode::kInline;
  for (const std::string& engine : engines()) {
    // Inline, the SYN's bytes went out at once; the server did not take them, and what the
    // client sends in their place follows them in the stream instead of passing as a
    // retransmission of bytes already delivered.
    Conn conn(engine, inline_mode, 1000);
    conn.send(0, kSyn, 1000, 0, "GET /", 1);
    conn.send(1, kSyn | kAck, 7777, 1001);
    conn.send(0, kAck | kPsh, 1001, 7778, "XXXXX/evil");
    EXPECT_EQ((conn.got.text[{1, 0}]), "GET /XXXXX/evil") << engine;
    EXPECT_EQ(conn.r->counters().fast_open_ignored, 1u) << engine;
  }
}

TEST(StreamFastOpen, WithoutTheOptionTheSynsDataIsNotTaken) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 1000);
    conn.send(0, kSyn, 1000, 0, "sneaky");   // no Fast Open option: a host ignores it
    conn.send(1, kSyn | kAck, 7777, 1007);   // a SYN+ACK acknowledging it is no handshake
    conn.send(0, kAck, 1007, 7778);
    EXPECT_TRUE(conn.got.text.empty()) << engine;
    EXPECT_EQ(conn.r->counters().data_on_syn, 1u) << engine;
    EXPECT_EQ(conn.r->counters().streams, 0u) << engine;
  }
}

TEST(StreamFastOpen, InlineModeDeliversTheSynsDataAtOnce) {
  StreamConfig c;
  c.mode = Mode::kInline;
  for (const std::string& engine : engines()) {
    Conn conn(engine, c, 1000);
    conn.send(0, kSyn, 1000, 0, "GET /", 1);
    EXPECT_EQ((conn.got.text[{1, 0}]), "GET /") << engine << ": at the first packet";
    conn.send(1, kSyn | kAck, 7777, 1006);  // took it
    conn.send(0, kAck, 1006, 7778, "x");
    EXPECT_EQ((conn.got.text[{1, 0}]), "GET /x") << engine;
  }
}

// A split handshake (the responder answers the SYN with its own SYN; Beardsley's evasion,
// Suricata's 4WHS): the connection opens at the responder's ACK and its bytes are a stream.
TEST(StreamHandshake, SplitHandshakesOpenTheConnection) {
  for (const std::string& engine : engines()) {
    for (bool five_way : {false, true}) {
      Conn conn(engine, {}, 1000, 3000);
      conn.send(0, kSyn, 1000, 0);
      if (five_way) conn.send(1, kAck, 2000, 1001);  // a stray ACK first (the 5-way variant)
      conn.send(1, kSyn, 3000, 0);
      conn.send(0, kSyn | kAck, 1000, 3001);
      conn.send(1, kAck, 3001, 1001);
      conn.send(0, kAck | kPsh, 1001, 3001, "EVIL");
      conn.send(1, kAck | kPsh, 3001, 1005, "ok");
      conn.send(0, kAck, 1005, 3003);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine << (five_way ? " 5-way" : " 4-way");
      EXPECT_EQ((conn.got.text[{1, 1}]), "ok") << engine;
      EXPECT_EQ(conn.r->counters().streams, 2u) << engine;
      EXPECT_EQ(conn.r->counters().before_handshake, 0u) << engine;
    }
    // The initiator's SYN+ACK must acknowledge the responder's SYN and repeat its own ISN.
    Conn wrong(engine, {}, 1000, 3000);
    wrong.send(0, kSyn, 1000, 0);
    wrong.send(1, kSyn, 3000, 0);
    wrong.send(0, kSyn | kAck, 1000, 4001);
    wrong.send(1, kAck, 3001, 1001);
    wrong.send(0, kAck | kPsh, 1001, 3001, "EVIL");
    EXPECT_TRUE(wrong.got.text.empty()) << engine;
    EXPECT_EQ(wrong.r->counters().before_handshake, 1u) << engine;
  }
}

// Handshakes that start as one shape and end as another (a second review's inputs): the
// connection opens whichever way it completes, and a SYN sent again leaves it where it is.
TEST(StreamHandshake, MixedHandshakesOpenTheConnection) {
  for (const std::string& engine : engines()) {
    {  // a bare SYN from the responder (a bad checksum, say), then its ordinary SYN+ACK
      Conn conn(engine, {}, 1000, 7777);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn, 3000, 0);
      conn.send(1, kSyn | kAck, 7777, 1001);
      conn.send(0, kAck, 1001, 7778);
      conn.send(0, kAck | kPsh, 1001, 7778, "EVIL");
      conn.send(1, kAck, 7778, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
      EXPECT_EQ(conn.r->counters().streams, 2u) << engine;
    }
    {  // a simultaneous open's ending: the responder answers the initiator's SYN+ACK with one
      Conn conn(engine, {}, 1000, 3000);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn, 3000, 0);
      conn.send(0, kSyn | kAck, 1000, 3001);
      conn.send(1, kSyn | kAck, 3000, 1001);
      conn.send(1, kAck | kPsh, 3001, 1001, "hi");
      conn.send(0, kAck | kPsh, 1001, 3003, "EVIL");
      conn.send(1, kAck, 3003, 1005);
      EXPECT_EQ((conn.got.text[{1, 1}]), "hi") << engine;
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
    }
    {  // the initiator's SYN again, crossing a split handshake: it goes on
      Conn conn(engine, {}, 1000, 3000);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn, 3000, 0);
      conn.send(0, kSyn, 1000, 0);
      conn.send(0, kSyn | kAck, 1000, 3001);
      conn.send(1, kAck, 3001, 1001);
      conn.send(0, kAck | kPsh, 1001, 3001, "EVIL");
      conn.send(1, kAck, 3001, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
    }
    {  // the SYN again after an ordinary SYN+ACK: the last ACK still opens it
      Conn conn(engine, {}, 1000, 7777);
      conn.send(0, kSyn, 1000, 0);
      conn.send(1, kSyn | kAck, 7777, 1001);
      conn.send(0, kSyn, 1000, 0);
      conn.send(0, kAck, 1001, 7778);
      conn.send(0, kAck | kPsh, 1001, 7778, "EVIL");
      conn.send(1, kAck, 7778, 1005);
      EXPECT_EQ((conn.got.text[{1, 0}]), "EVIL") << engine;
    }
  }
}

TEST(StreamHandshake, MidstreamPickupIsAPolicy) {
  for (bool midstream : {false, true}) {
    StreamConfig c;
    c.midstream = midstream;
    Conn conn("validate:cpu.stream", c, 100);
    conn.send(0, kAck | kPsh, 5000, 9000, "GET / ");
    conn.send(0, kAck | kPsh, 5006, 9000, "HTTP/1.1");
    conn.send(1, kAck | kPsh, 9000, 5014, "HTTP/1.1 200");
    conn.close();
    EXPECT_EQ(conn.client(), midstream ? "GET / HTTP/1.1" : "");
    EXPECT_EQ(conn.got.text[std::make_pair(uint64_t(1), uint8_t(1))], midstream ? "HTTP/1.1 200" : "");
    EXPECT_EQ(conn.r->counters().midstream, midstream ? 1u : 0u);
    EXPECT_EQ(conn.r->counters().before_handshake, midstream ? 0u : 3u);
  }
}

TEST(StreamHandshake, DataAfterRstOrPastTheFinIsNotStream) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 1);
    conn.handshake();
    conn.data(1, "abc");
    conn.send(0, kFin | kAck, conn.isn[0] + 4, conn.isn[1] + 1);
    conn.data(4, "xyz");  // past the FIN
    conn.close();
    EXPECT_EQ(conn.client(), "abc");
    EXPECT_EQ(conn.r->counters().after_close, 1u);

    Conn reset(engine, {}, 1);
    reset.handshake();
    reset.data(1, "abc");
    reset.send(1, kRst, reset.isn[1] + 1, 0);
    reset.data(4, "def");
    reset.close();
    EXPECT_EQ(reset.client(), "abc");
    EXPECT_EQ(reset.r->counters().after_close, 1u);
  }
}

// A connection that ended (both FINs delivered, or a RST) and holds nothing is kept as its
// scalars alone in ref.stream and cpu.stream (store_reassembler.hpp), in full in emu.stream:
// the late segments a closed connection still gets must count alike in all of them (the
// validate: engines compare each call's counters and chunks with ref.stream's: a segment's
// here, a batch's through reassemble_batch), the flow
// counts against max_flows until it is closed, and another connection on the same numbers
// after it is not confused with it.
TEST(StreamHandshake, LateSegmentsOfAFinishedConnectionCountAlike) {
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    StreamConfig one;
    one.max_flows = 1;
    Conn conn(engine, one, 1000, 5000);
    conn.handshake();
    conn.data(1, "hello");
    conn.send(1, kAck | kPsh, conn.isn[1] + 1, conn.isn[0] + 6, "world");
    conn.send(0, kFin | kAck, conn.isn[0] + 6, conn.isn[1] + 6);
    conn.send(1, kFin | kAck, conn.isn[1] + 6, conn.isn[0] + 7);  // both FINs delivered: finished
    conn.send(0, kAck, conn.isn[0] + 7, conn.isn[1] + 7);         // the final ACK, already late
    EXPECT_EQ(conn.client(), "hello");
    EXPECT_EQ(conn.got.text[std::make_pair(uint64_t(1), uint8_t(1))], "world");
    const StreamCounters before = conn.r->counters();
    EXPECT_EQ(before.after_close, 0u) << "the final ACK carries no data";
    conn.data(1, "hello");                                        // a retransmission
    conn.data(6, "more");                                         // data past the FIN
    conn.send(0, kFin | kAck, conn.isn[0] + 6, conn.isn[1] + 7);  // the FIN again
    conn.send(1, kRst, conn.isn[1] + 1 + 100000000, 0);           // a RST far out of the window
    EXPECT_EQ(conn.r->flows(), 1u);
    // Still one flow against max_flows: another connection's SYN is refused.
    conn.flow = 2;
    conn.send(0, kSyn, 1, 0);
    EXPECT_EQ(conn.r->counters().flows_refused, before.flows_refused + 1);
    conn.flow = 1;
    conn.send(1, kRst, conn.isn[1] + 7, 0);  // a RST in the window now
    conn.data(1, "late!");                   // after the RST
    const StreamCounters n = conn.r->counters();
    EXPECT_EQ(n.retransmitted_bytes, before.retransmitted_bytes + 5);
    EXPECT_EQ(n.after_close, before.after_close + 2);  // "more" past the FIN, "late!" after the RST
    EXPECT_EQ(n.bad_rst, before.bad_rst + 1);
    EXPECT_EQ(n.delivered_bytes, 10u);
    EXPECT_EQ(n.buffered_bytes, 0u);
    conn.close();
    EXPECT_EQ(conn.r->flows(), 0u);
    EXPECT_EQ(conn.client(), "hello");
    // Closed, the flow's number may open again (a tracker would not reuse it, but a caller may).
    conn.got = {};
    conn.handshake();
    conn.data(1, "again");
    conn.ack(6);
    EXPECT_EQ(conn.client(), "again");
    EXPECT_EQ(conn.r->flows(), 1u);
  }
}

// The same in inline mode, for a connection a RST ended before the server sent anything, and
// at the end of input (close_all): nothing more is delivered, every engine counts alike.
TEST(StreamHandshake, AResetConnectionEndsAlikeInEveryMode) {
  for (const Mode mode : {Mode::kIds, Mode::kInline})
    for (const std::string& engine : engines()) {
      SCOPED_TRACE(engine + (mode == Mode::kIds ? " ids" : " inline"));
      StreamConfig c;
      c.mode = mode;
      Conn conn(engine, c, 70, 900);
      conn.handshake();
      conn.data(1, "abc");
      conn.ack(4);
      conn.send(1, kRst, conn.isn[1] + 1, 0);  // nothing buffered: the flow ends here
      conn.data(4, "def");                     // after the RST
      conn.send(0, kAck, conn.isn[0] + 4, conn.isn[1] + 1);
      EXPECT_EQ(conn.r->flows(), 1u);
      ASSERT_TRUE(conn.r->close_all(conn.got.sink()).is_ok());
      EXPECT_EQ(conn.r->flows(), 0u);
      EXPECT_EQ(conn.client(), "abc");
      const StreamCounters n = conn.r->counters();
      EXPECT_EQ(n.after_close, 1u);
      EXPECT_EQ(n.delivered_bytes, 3u);
      EXPECT_EQ(n.buffered_bytes, 0u);
      EXPECT_EQ(n.unacked_holes, 0u);
    }
}

TEST(StreamHandshake, AHoleNobodyAcknowledgedIsNotCaptureLoss) {
  // Suricata's tcp-rst-unacked-stream-03-gap: data after a hole, then a RST before any ACK
  // passed the hole: the bytes are delivered at the end, the hole as a gap chunk, and no
  // reassembly gap (capture loss) is counted.
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 0);
    conn.handshake();
    conn.data(1, "abcdefg");
    conn.data(12, "xyz");
    conn.send(1, kRst | kAck, conn.isn[1] + 1, conn.isn[0] + 8);
    conn.close();
    EXPECT_EQ(conn.client(), "abcdefg####xyz");
    EXPECT_EQ(conn.r->counters().gaps, 0u);
    EXPECT_EQ(conn.r->counters().unacked_holes, 1u);
  }
}

TEST(StreamHandshake, StaleFinsAndRstsOutsideTheWindowEndNothing) {
  for (const std::string& engine : engines()) {
    Conn conn(engine, {}, 100);
    conn.handshake();
    conn.data(1, "0123456789");
    conn.ack(11);                                                   // delivered
    conn.send(0, kFin | kAck, conn.isn[0] + 3, conn.isn[1] + 1);    // a stale FIN
    conn.send(1, kRst, conn.isn[1] + 1 + 3000000, 0);                // a RST far off
    conn.data(11, "abcdef");
    conn.ack(17);
    EXPECT_EQ(conn.client(), "0123456789abcdef");
    EXPECT_EQ(conn.r->counters().bad_rst, 1u);
    EXPECT_EQ(conn.r->counters().after_close, 0u);
  }
}

// A SYN on an open connection (a handshake retransmission, or an evasion: its data would sit
// one byte off) carries nothing into the stream, with or without ACK.
TEST(StreamHandshake, ASynOnAnOpenConnectionCarriesNothing) {
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    Conn conn(engine, {}, 50);
    conn.handshake();
    conn.data(1, "abc");
    conn.send(0, kSyn, conn.isn[0] + 3, 0, "XYZ");
    conn.send(0, kSyn | kAck, conn.isn[0] + 4, conn.isn[1] + 1, "QQ");
    conn.data(4, "def");
    conn.ack(7);
    EXPECT_EQ(conn.client(), "abcdef");
    EXPECT_EQ(conn.r->counters().data_on_syn, 2u);
    EXPECT_EQ(conn.r->counters().overlaps, 0u);
  }
}

// A FIN before bytes already in sequence is stale and ends nothing, even before they were
// acknowledged, while a byte injected past the real FIN does not make that one stale; a FIN
// counts as sent, so its ACK declares the bytes before it that the capture never saw a gap,
// and the stream ends there.
TEST(StreamHandshake, AFinEndsTheStreamOnlyAfterBytesInSequence) {
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    Conn conn(engine, {}, 7);
    conn.handshake();
    conn.data(1, "0123456789");                                   // not yet acknowledged
    conn.send(0, kFin | kAck, conn.isn[0] + 3, conn.isn[1] + 1);  // stale
    conn.data(11, "abc");
    conn.ack(14);
    EXPECT_EQ(conn.client(), "0123456789abc");
    EXPECT_EQ(conn.r->counters().after_close, 0u);

    Conn lost(engine, {}, 7);
    lost.handshake();
    lost.data(1, "01234");  // 5..9 never seen, then the FIN at 10 and its ACK
    lost.send(0, kFin | kAck, lost.isn[0] + 11, lost.isn[1] + 1);
    lost.send(1, kAck, lost.isn[1] + 1, lost.isn[0] + 12);
    EXPECT_EQ(lost.client(), "01234#####");
    EXPECT_EQ(lost.r->counters().gaps, 1u);

    Conn inj(engine, {}, 7);
    inj.handshake();
    inj.data(1, "01234");
    inj.data(21, "X");                                         // injected, far past the end
    inj.send(0, kFin | kAck, inj.isn[0] + 6, inj.isn[1] + 1);  // the real FIN, after 01234
    inj.send(1, kAck, inj.isn[1] + 1, inj.isn[0] + 7);
    EXPECT_EQ(inj.client(), "01234");
    EXPECT_EQ(inj.r->counters().gaps, 0u);
  }
}

// A RST counts only where the receiver's next expected byte may be (RFC 5961 3.2): between
// what it acknowledged and what the sender sent, one past a FIN; elsewhere in the window it is
// counted and ends nothing.
TEST(StreamHandshake, ARstCountsOnlyWhereTheReceiversNextByteMayBe) {
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    Conn conn(engine, {}, 300);
    conn.handshake();
    conn.data(1, "0123456789");
    conn.ack(6);                                           // 5 acknowledged
    conn.send(0, kRst, conn.isn[0] + 3, 0);                // before that: stale
    conn.send(0, kRst, conn.isn[0] + 1 + 10 + 500, 0);     // past what was sent
    conn.data(11, "abc");
    conn.ack(14);
    EXPECT_EQ(conn.client(), "0123456789abc");
    EXPECT_EQ(conn.r->counters().bad_rst, 2u);
    EXPECT_EQ(conn.r->counters().after_close, 0u);
    conn.send(0, kFin | kAck, conn.isn[0] + 14, conn.isn[1] + 1);
    conn.send(0, kRst, conn.isn[0] + 15, 0);  // one past the FIN: taken
    conn.send(1, kAck, conn.isn[1] + 1, conn.isn[0] + 15, "late");
    EXPECT_EQ(conn.r->counters().bad_rst, 2u);
    EXPECT_EQ(conn.r->counters().after_close, 1u);  // the server's bytes after the RST
  }
}

TEST(StreamBounds, ALongTransferWithDataInFlightIsNotCapped) {
  // A bulk transfer whose receiver acknowledges 100 segments behind: the buffer is never empty,
  // yet only what is held counts against the caps.
  // emu.stream: the flow outgrows its slot (100 segments held) and moves to the host's stores.
  for (const std::string& engine :
       {std::string("cpu.stream"), std::string("validate:cpu.stream"), std::string("emu.stream")}) {
    StreamConfig c;
    c.depth = 0;
    Conn conn(engine, c, 0xfffff000u);
    conn.handshake();
    const std::string seg(100, 'x');
    for (uint32_t k = 0; k < 20000; ++k) {
      conn.data(1 + 100 * k, seg);
      if (k >= 100) conn.ack(1 + 100 * (k - 100));
    }
    conn.close();
    EXPECT_EQ(conn.client().size(), 2000000u);
    EXPECT_EQ(conn.r->counters().segment_cap + conn.r->counters().stream_cap, 0u);
    EXPECT_EQ(conn.r->counters().gaps, 0u);
  }
}

// ---- bounds ---------------------------------------------------------------------------------

TEST(StreamBounds, ACaptureLossLongerThanTheWindowBecomesAGap) {
  // The capture lost 2 MB of a transfer (max_ahead is 1 MiB): the first segment after the loss
  // lies past the window and is refused, but the receiver's ACK of it shows the bytes were
  // sent; the ACK declares the first max_ahead bytes of the loss a gap, the next segment fits
  // the window, and its ACK declares the rest (it had refused every later segment: the rest of
  // the connection uninspected). An ACK past every segment seen moves nothing.
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    StreamConfig c;
    c.depth = 0;
    Conn conn(engine, c, 0x7ffffff0u);
    conn.handshake();
    conn.data(1, "before");
    conn.ack(7);
    conn.ack(3000000);  // forged: nothing seen there
    EXPECT_EQ(conn.client(), "before");
    const uint32_t after = 7 + 2000000;  // relative sequence of the first byte after the loss
    conn.data(after, "first");           // refused: past base + max_ahead
    EXPECT_EQ(conn.r->counters().beyond_window, 1u);
    conn.ack(after + 5);
    conn.data(after + 5, "second");
    conn.ack(after + 11);
    const std::string& got = conn.client();
    ASSERT_EQ(got.size(), size_t(after + 10)) << "delivered up to the last ACK";
    EXPECT_EQ(got.substr(0, 6), "before");
    EXPECT_EQ(got.find_first_not_of('#', 6), size_t(after + 4));  // the loss and "first": a gap
    EXPECT_EQ(got.substr(after + 4), "second");
    EXPECT_EQ(conn.r->counters().gaps, 2u);
    conn.close();
  }
}

TEST(StreamBounds, ASegmentParkedFarAheadDoesNotPinTheOnesAfterIt) {
  // One byte parked 900,000 bytes ahead (inside max_ahead) that nobody acknowledges, then 6,000
  // small segments in order, each acknowledged: the acknowledged ones leave the count of held
  // segments, so the direction never reaches kMaxSegmentsPerStream (4,096) and nothing is
  // refused (a FIFO of ends kept them all behind the parked one, refused the rest: evasion).
  for (const std::string& engine : engines()) {
    SCOPED_TRACE(engine);
    StreamConfig c;
    c.depth      = 0;
    c.stream_cap = 64u << 20;
    c.memcap     = 256u << 20;
    Conn conn(engine, c, 0xffff0000u);
    conn.handshake();
    conn.data(900000, "z");
    const std::string seg(100, 'x');
    for (uint32_t k = 0; k < 6000; ++k) {
      conn.data(1 + 100 * k, seg);
      conn.ack(1 + 100 * (k + 1));
    }
    const StreamCounters n = conn.r->counters();
    EXPECT_EQ(n.segment_cap + n.stream_cap + n.memcap, 0u);
    EXPECT_TRUE(conn.client() == std::string(600000, 'x')) << conn.client().size() << " bytes";
    conn.close();
  }
}

TEST(StreamBounds, FarAheadSegmentsAndCapsAreRefusedAndCounted) {
  for (const std::string& engine : engines()) {
    StreamConfig c;
    c.max_ahead  = 10000;
    c.stream_cap = 4096;
    c.memcap     = 8192;
    Conn conn(engine, c, 42);
    conn.handshake();
    conn.data(2000000000u, "far");  // a sequence gap chosen by an attacker
    EXPECT_EQ(conn.r->counters().beyond_window, 1u);
    EXPECT_EQ(conn.r->counters().buffered_bytes, 0u);
    // Holes everywhere: 1-byte segments two bytes apart fill the per-stream cap, no more.
    for (uint32_t k = 0; k < 5000; ++k) conn.data(2 + 2 * k, "x");
    const StreamCounters n = conn.r->counters();
    EXPECT_LE(n.buffered_bytes, c.stream_cap);
    EXPECT_GT(n.stream_cap, 0u);
    conn.close();
    EXPECT_EQ(conn.r->counters().buffered_bytes, 0u);
  }
}

TEST(StreamBounds, MemcapHoldsAcrossFlowsAndDepthCutsStreams) {
  for (const char* engine : {"validate:cpu.stream", "validate:emu.stream"}) {
    SCOPED_TRACE(engine);
    StreamConfig c;
    c.stream_cap = 4096;
    c.memcap     = 10000;
    auto r       = make_reassembler(engine, c);
    ASSERT_TRUE(r.is_ok());
    std::string block(3000, 'z');
    for (uint64_t f = 1; f <= 10; ++f) {
      Segment s;
      s.flow = f;
      for (uint8_t step = 0; step < 3; ++step) {
        s.dir   = step == 1;
        s.flags = step == 0 ? kSyn : step == 1 ? (kSyn | kAck) : kAck;
        s.seq   = step == 1 ? 100 : 1000 + (step == 2);
        s.ack   = step == 1 ? 1001 : step == 2 ? 101 : 0;
        ASSERT_TRUE((*r)->segment(s, nullptr).is_ok());
      }
      s.dir   = 0;
      s.flags = kAck;
      s.seq   = 1002;  // one byte past the first: a hole keeps it buffered
      s.data  = reinterpret_cast<const uint8_t*>(block.data());
      s.len   = uint32_t(block.size());
      ASSERT_TRUE((*r)->segment(s, nullptr).is_ok());
    }
    StreamCounters n = (*r)->counters();
    EXPECT_LE(n.buffered_bytes, c.memcap);
    EXPECT_GT(n.memcap, 0u);

    StreamConfig d;
    d.depth = 5;
    Conn conn(engine, d, 9);
    conn.handshake();
    conn.data(1, "0123456789");
    conn.data(11, "abc");
    conn.close();
    EXPECT_EQ(conn.client(), "01234");
    EXPECT_EQ(conn.r->counters().depth_reached, 1u);
  }
}

// Past the depth nothing is stored or delivered, but the direction moves along with its
// acknowledgements: a stream far longer than depth + max_ahead raises no false drops and no
// gaps, and its FIN and a RST still count where the connection is.
TEST(StreamBounds, PastTheDepthAStreamStillMovesAndEnds) {
  for (const std::string& engine : engines()) {
    for (const Mode mode : {Mode::kIds, Mode::kInline}) {
      SCOPED_TRACE(engine + (mode == Mode::kIds ? " ids" : " inline"));
      StreamConfig c;
      c.depth     = 5;
      c.max_ahead = 100;
      c.mode      = mode;
      Conn conn(engine, c, 11);
      conn.handshake();
      const std::string seg(10, 'y');
      for (uint32_t k = 0; k < 100; ++k) {
        conn.data(1 + 10 * k, seg);
        conn.ack(1 + 10 * (k + 1));
      }
      conn.send(0, kFin | kAck, conn.isn[0] + 1001, conn.isn[1] + 1);
      conn.ack(1002);
      conn.send(0, kRst, conn.isn[0] + 1002, 0);  // one past the FIN
      conn.data(1002, "late");
      EXPECT_EQ(conn.client(), "yyyyy");
      const StreamCounters& n = conn.r->counters();
      EXPECT_EQ(n.beyond_window, 0u);
      EXPECT_EQ(n.gaps, 0u);
      EXPECT_EQ(n.depth_reached, 1u);
      EXPECT_EQ(n.bad_rst, 0u);
      EXPECT_EQ(n.after_close, 1u);
    }
  }
}

TEST(StreamBounds, MaxFlowsBoundsHalfOpenState) {
  for (const char* engine : {"cpu.stream", "emu.stream"}) {
    StreamConfig c;
    c.max_flows = 100;
    auto r      = make_reassembler(engine, c);
    ASSERT_TRUE(r.is_ok());
    for (uint64_t f = 1; f <= 100000; ++f) {  // a SYN flood
      Segment s;
      s.flow  = f;
      s.flags = kSyn;
      s.seq   = uint32_t(f);
      ASSERT_TRUE((*r)->segment(s, nullptr).is_ok());
    }
    EXPECT_EQ((*r)->flows(), 100u);
    EXPECT_EQ((*r)->counters().flows_refused, 100000u - 100u);
  }
}

// Finished connections' storage made at the start (prealloc_flows) changes where they are
// kept, never what is delivered or counted (the room itself is SerialMap's test's): 300 short
// connections, more than the 64 made, each finished, then late retransmissions and data past
// the FIN for some of them, through engines with and without the storage (validate:cpu.stream
// compares every call with ref.stream's).
TEST(StreamBounds, PreallocatedFinishedConnectionsAnswerAlike) {
  struct Run {
    StreamCounters c;
    std::map<std::pair<uint64_t, uint8_t>, std::string> text;
    size_t flows = 0;
  };
  auto run = [](const std::string& engine, uint32_t prealloc) {
    StreamConfig c;
    c.prealloc_flows = prealloc;
    Conn conn(engine, c, 4000, 9000);
    for (uint64_t f = 1; f <= 300; ++f) {
      conn.flow = f;
      conn.handshake();
      conn.data(1, "req" + std::to_string(f));
      const uint32_t n = uint32_t(3 + std::to_string(f).size());
      conn.send(1, kAck | kPsh, conn.isn[1] + 1, conn.isn[0] + 1 + n, "ok");
      conn.send(0, kFin | kAck, conn.isn[0] + 1 + n, conn.isn[1] + 3);
      conn.send(1, kFin | kAck, conn.isn[1] + 3, conn.isn[0] + 2 + n);
      conn.send(0, kAck, conn.isn[0] + 2 + n, conn.isn[1] + 4);
    }
    for (uint64_t f = 1; f <= 300; f += 7) {
      conn.flow = f;
      conn.data(1, "req");        // a retransmission
      conn.data(40, "too late");  // past the FIN
    }
    Run r{conn.r->counters(), conn.got.text, conn.r->flows()};
    EXPECT_TRUE(conn.r->close_all(conn.got.sink()).is_ok());
    EXPECT_EQ(conn.r->flows(), 0u);
    return r;
  };
  const Run want = run("ref.stream", 0);
  EXPECT_EQ(want.flows, 300u);
  EXPECT_EQ(want.text.size(), 600u);
  EXPECT_GT(want.c.retransmitted_bytes, 0u);
  EXPECT_GT(want.c.after_close, 0u);
  for (const std::string engine : {"cpu.stream", "validate:cpu.stream"})
    for (const uint32_t prealloc : {0u, 64u, 1000u}) {
      SCOPED_TRACE(engine + " prealloc " + std::to_string(prealloc));
      const Run got = run(engine, prealloc);
      EXPECT_EQ(got.flows, want.flows);
      EXPECT_EQ(got.text, want.text);
      EXPECT_EQ(got.c, want.c);
    }
}

TEST(StreamConfigCheck, ErrorsNameTheField) {
  StreamConfig c;
  c.memcap = 10;
  EXPECT_NE(c.validate().message().find("stream_cap"), std::string::npos);
  StreamConfig p;
  p.max_flows      = 10;
  p.prealloc_flows = 11;
  EXPECT_NE(p.validate().message().find("prealloc_flows"), std::string::npos);
  EXPECT_FALSE(make_reassembler("cpu.stream", p).is_ok());
  p.prealloc_flows = 10;
  EXPECT_TRUE(make_reassembler("cpu.stream", p).is_ok());
  EXPECT_FALSE(make_reassembler("cpu.nope").is_ok());
  auto old_linux = parse_policy("old-linux");
  ASSERT_TRUE(old_linux.is_ok());
  EXPECT_EQ(*old_linux, Policy::kOldLinux);
  EXPECT_NE(parse_policy("hpux").status().message().find("expected first, last"),
            std::string::npos);
}

}  // namespace
}  // namespace warpath::stream
