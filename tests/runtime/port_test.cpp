// tests/runtime/port_test.cpp: packet ports (include/warpath/runtime/port.hpp).
//
// Spec parsing (good and bad specs); the generator port (the bytes it replays, COUNT, the rate
// model's RX ring overflow, burst sizes 0, 1 and larger than the batch); the null port; the
// pcap port (a byte-identical round trip through RX, TX and flush); and, as root, the live
// ports on a veth pair inside a network namespace made for the test: frames sent through one
// port's TX must arrive byte for byte through another port's RX, flows must stay on one
// queue of a fanout group, and frames the RX ring cannot hold must be counted as rx_dropped.
// Live tests skip (with the reason) when not root, when network namespaces are unavailable, or
// (AF_XDP) when the kernel or the build refuses.
#include "warpath/runtime/port.hpp"

#include <fcntl.h>
#include <gtest/gtest.h>
#include <sched.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <map>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include "runtime/port_test_util.hpp"
#include "support/test_support.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::runtime {
namespace {

namespace support = warpath::testing;
using namespace warpath::runtime::test;
using Clock = std::chrono::steady_clock;

// rx_burst() that must succeed; its count.
uint32_t burst(Port& port, uint32_t q, PacketBatch& b, uint32_t max) {
  auto r = port.rx_burst(q, b, max);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  return r.is_ok() ? r.value() : 0;
}

std::unique_ptr<Port> open_ok(std::string_view spec, const PortOptions& options = {}) {
  auto p = open_port("p", spec, options);
  EXPECT_TRUE(p.is_ok()) << spec << ": " << p.status().to_string();
  return p.is_ok() ? std::move(p).value() : nullptr;
}

// --- spec parsing ------------------------------------------------------------------------------

TEST(PortSpec, GoodSpecs) {
  struct Case {
    const char* spec;
    const char* kind;
    double rate;
    uint64_t count;
    const char *in, *out, *iface;
  };
  const Case cases[] = {
      {"null", "null", 0, 0, "", "", ""},
      {"gen", "gen", 0, 0, "", "", ""},
      {"gen:max", "gen", 0, 0, "", "", ""},
      {"gen:0", "gen", 0, 0, "", "", ""},
      {"gen:1000", "gen", 1000, 0, "", "", ""},
      {"gen:10k", "gen", 10e3, 0, "", "", ""},
      {"gen:2.5M", "gen", 2.5e6, 0, "", "", ""},
      {"gen:1Mpps", "gen", 1e6, 0, "", "", ""},
      {"gen:1.5Gpps:10", "gen", 1.5e9, 10, "", "", ""},
      {"gen:max:2M", "gen", 0, 2'000'000, "", "", ""},
      {"gen:100:12345", "gen", 100, 12345, "", "", ""},
      {"pcap:in.pcap:out.pcap", "pcap", 0, 0, "in.pcap", "out.pcap", ""},
      {"pcap:in.pcap:", "pcap", 0, 0, "in.pcap", "", ""},
      {"pcap:in.pcap", "pcap", 0, 0, "in.pcap", "", ""},
      {"pcap::out.pcap", "pcap", 0, 0, "", "out.pcap", ""},
      {"pcap:/a:b/in.pcap:out.pcap", "pcap", 0, 0, "/a:b/in.pcap", "out.pcap", ""},
      {"afpacket:eth0", "afpacket", 0, 0, "", "", "eth0"},
      {"afxdp:enp1s0f0np0", "afxdp", 0, 0, "", "", "enp1s0f0np0"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = parse_port_spec("p", c.spec);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->kind, c.kind);
    EXPECT_DOUBLE_EQ(r->rate_pps, c.rate);
    EXPECT_EQ(r->count, c.count);
    EXPECT_EQ(r->in, c.in);
    EXPECT_EQ(r->out, c.out);
    EXPECT_EQ(r->iface, c.iface);
  }
}

TEST(PortSpec, BadSpecs) {
  struct Case {
    const char* spec;
    const char* says;
  };
  const Case cases[] = {
      {"", "empty spec"},
      {"eth0", "unknown port kind 'eth0'"},
      {"dpdk", "dpdk: missing virtual device"},
      {"dpdk:", "dpdk: missing virtual device"},
      {"dpdk:,rx_pcap=a", "dpdk: missing virtual device"},
      {"dpdk:0", "dpdk: bad virtual device name '0'"},
      {"dpdk:net-pcap0", "dpdk: bad virtual device name"},
      {"dpdk:net pcap0", "dpdk: bad virtual device"},
      {"null:x", "null takes no arguments"},
      {"gen:fast", "bad rate 'fast'"},
      {"gen:-5", "bad rate '-5'"},
      {"gen:1X", "bad rate '1X'"},
      {"gen:", "bad rate ''"},
      {"gen:inf", "bad rate 'inf'"},
      {"gen:nan", "bad rate 'nan'"},
      {"gen:1M:", "bad count ''"},
      {"gen:1M:1.5", "bad count '1.5'"},
      {"gen:1M:0", "count must be positive"},
      {"gen:1M:-3", "bad count '-3'"},
      {"gen:1M:10:5", "too many fields"},
      {"pcap", "needs an input or an output"},
      {"pcap::", "needs an input or an output"},
      {"pcap:a.pcap:a.pcap", "the same file"},
      {"afpacket", "missing interface"},
      {"afpacket:", "missing interface"},
      {"afxdp:", "missing interface"},
      {"afpacket:averyveryverylongname", "longer than 15"},
      {"afpacket:eth0:1", "bad interface name"},
      {"afxdp:a/b", "bad interface name"},
      {"afpacket:a b", "bad interface name"},
  };
  for (const Case& c : cases) {
    SCOPED_TRACE(c.spec);
    auto r = parse_port_spec("wan", c.spec);
    ASSERT_FALSE(r.is_ok());
    EXPECT_EQ(r.status().code(), Errc::kInvalidArgument);
    EXPECT_EQ(r.status().message().rfind("port wan: ", 0), 0u) << r.status().message();
    EXPECT_NE(r.status().message().find(c.says), std::string::npos) << r.status().message();
    // open_port() reports the same.
    auto p = open_port("wan", c.spec, {});
    ASSERT_FALSE(p.is_ok());
    EXPECT_EQ(p.status().message(), r.status().message());
  }
}

TEST(PortSpec, BuiltinRefusesSystemKinds) {
  PortSpec spec;
  spec.kind = "pcap";
  spec.in   = "x.pcap";
  auto p    = open_builtin_port("p", spec, {});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), Errc::kNotSupported);
}

// --- generator ---------------------------------------------------------------------------------

// Reads `total` packets from queue q in bursts of `burst`.
std::vector<Bytes> read_n(Port& port, uint32_t q, uint32_t total, uint32_t burst) {
  std::vector<Bytes> out;
  PacketBatch b = make_batch(burst);
  while (out.size() < total) {
    b.clear();
    auto r = port.rx_burst(q, b, std::min<uint32_t>(burst, total - uint32_t(out.size())));
    EXPECT_TRUE(r.is_ok());
    if (!r.is_ok() || *r == 0) break;
    EXPECT_EQ(*r, b.size());
    for (uint32_t i = 0; i < b.size(); ++i) out.push_back(bytes_of(b, i));
  }
  return out;
}

TEST(GenPort, ReplaysTheSeededPoolCyclically) {
  PortOptions o;
  o.seed      = 7;
  o.rx_queues = 2;
  o.index     = 3;
  auto port   = open_ok("gen:max", o);
  ASSERT_TRUE(port);
  EXPECT_EQ(port->rx_queue_count(), 2u);
  EXPECT_NE(port->describe().find("gen"), std::string::npos);

  // Queue q replays generate_traffic(seed + q, 4096 frames, 1024 flows, default mix).
  for (uint32_t q = 0; q < 2; ++q) {
    gen::TrafficParams params;
    params.seed  = o.seed + q;
    params.count = 4096;
    params.flows = 1024;
    auto want    = gen::batch_for(params.count);
    ASSERT_TRUE(want.is_ok());
    ASSERT_TRUE(gen::generate_traffic(params, *want).is_ok());
    const std::vector<Bytes> got = read_n(*port, q, 4096 + 1000, 333);
    ASSERT_EQ(got.size(), 4096u + 1000u);
    for (uint32_t i = 0; i < got.size(); ++i)
      ASSERT_EQ(got[i], bytes_of(*want, i % 4096)) << "queue " << q << " packet " << i;
  }
  // Metadata: the port's index, the time of reception.
  PacketBatch b         = make_batch(16);
  const uint64_t before = uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  ASSERT_EQ(burst(*port, 0, b, 16), 16u);
  for (uint32_t i = 0; i < 16; ++i) {
    EXPECT_EQ(b.meta(i).port, 3);
    EXPECT_GE(b.meta(i).timestamp_ns, before);
    EXPECT_LT(b.meta(i).timestamp_ns, before + 10'000'000'000ull);
  }
  // The same seed gives the same bytes; another seed others.
  auto again = open_ok("gen:max", o);
  o.seed     = 8;
  auto other = open_ok("gen:max", o);
  ASSERT_TRUE(again && other);
  const auto a = read_n(*again, 0, 100, 100);
  const auto c = read_n(*other, 0, 100, 100);
  std::vector<Bytes> first;
  {
    auto fresh = open_port("p", "gen", [] {
      PortOptions x;
      x.seed = 7;
      return x;
    }());
    ASSERT_TRUE(fresh.is_ok());
    first = read_n(**fresh, 0, 100, 7);
  }
  EXPECT_EQ(a, first);
  EXPECT_NE(a, c);
}

TEST(GenPort, BurstSizes) {
  auto port = open_ok("gen");
  ASSERT_TRUE(port);
  PacketBatch b = make_batch(512);
  auto r        = port->rx_burst(0, b, 0);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(*r, 0u);
  EXPECT_EQ(b.size(), 0u);
  EXPECT_EQ(burst(*port, 0, b, 1), 1u);
  EXPECT_EQ(b.size(), 1u);
  // More than the batch holds: the batch is filled, nothing more.
  EXPECT_EQ(burst(*port, 0, b, 100000), 511u);
  EXPECT_EQ(b.size(), 512u);
  EXPECT_EQ(burst(*port, 0, b, 10), 0u);
  EXPECT_EQ(port->stats().rx, 512u);
  EXPECT_FALSE(port->rx_done(0));
  EXPECT_FALSE(port->rx_burst(1, b, 1).is_ok());  // no such queue
}

TEST(GenPort, CountEndsTheQueues) {
  PortOptions o;
  o.rx_queues = 3;
  auto port   = open_ok("gen:max:1000", o);
  ASSERT_TRUE(port);
  // 1000 over 3 queues: 334, 333, 333.
  const uint32_t want[3] = {334, 333, 333};
  uint64_t bytes         = 0;
  for (uint32_t q = 0; q < 3; ++q) {
    EXPECT_FALSE(port->rx_done(q));
    PacketBatch b = make_batch(100);
    uint32_t got  = 0;
    for (int i = 0; i < 100 && !port->rx_done(q); ++i) {
      b.clear();
      auto r = port->rx_burst(q, b, 64);
      ASSERT_TRUE(r.is_ok());
      got += *r;
      for (uint32_t k = 0; k < b.size(); ++k) bytes += b.meta(k).len;
    }
    EXPECT_EQ(got, want[q]);
    EXPECT_TRUE(port->rx_done(q));
    b.clear();
    EXPECT_EQ(burst(*port, q, b, 64), 0u);
  }
  const PortStats s = port->stats();
  EXPECT_EQ(s.rx, 1000u);
  EXPECT_EQ(s.rx_bytes, bytes);
  EXPECT_EQ(s.rx_dropped, 0u);

  // Fewer packets than queues: all go to queue 0 (the remainder); the others are done at once.
  o.rx_queues = 4;
  auto few    = open_ok("gen:max:2", o);
  ASSERT_TRUE(few);
  EXPECT_FALSE(few->rx_done(0));
  EXPECT_TRUE(few->rx_done(1));
  EXPECT_TRUE(few->rx_done(2));
  EXPECT_TRUE(few->rx_done(3));
}

TEST(GenPort, RateModelDropsWhatTheRingCannotHold) {
  PortOptions o;
  o.ring_frames = 16;
  auto port     = open_ok("gen:1M", o);  // one packet per microsecond
  ASSERT_TRUE(port);
  PacketBatch b = make_batch(1024);
  ASSERT_TRUE(port->rx_burst(0, b, 1024).is_ok());  // starts the clock
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  b.clear();
  auto r = port->rx_burst(0, b, 1024);
  ASSERT_TRUE(r.is_ok());
  EXPECT_EQ(*r, 16u);  // what the ring held
  const PortStats s = port->stats();
  EXPECT_GT(s.rx_dropped, 10'000u);  // ~30,000 arrived in 30 ms
  EXPECT_LT(s.rx_dropped, 10'000'000u);

  // With COUNT, what arrived (delivered + dropped) reaches COUNT and the queue ends.
  o.ring_frames = 64;
  auto counted  = open_ok("gen:1M:5000", o);
  ASSERT_TRUE(counted);
  b.clear();
  ASSERT_TRUE(counted->rx_burst(0, b, 1).is_ok());
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  for (int i = 0; i < 10 && !counted->rx_done(0); ++i) {
    b.clear();
    ASSERT_TRUE(counted->rx_burst(0, b, 1024).is_ok());
  }
  EXPECT_TRUE(counted->rx_done(0));
  const PortStats c = counted->stats();
  EXPECT_EQ(c.rx + c.rx_dropped, 5000u);
  EXPECT_LE(c.rx, 1u + 64u + 64u);
}

TEST(GenPort, RatePacesAndStampsArrivalTimes) {
  PortOptions o;
  o.rx_queues = 2;
  auto port   = open_ok("gen:200k:4000", o);  // 100 kpps per queue, 2,000 packets each
  ASSERT_TRUE(port);
  PacketBatch b[2] = {make_batch(2048), make_batch(2048)};
  const auto start = Clock::now();
  uint32_t got     = 0;
  while (!(port->rx_done(0) && port->rx_done(1)) && Clock::now() - start < std::chrono::seconds(5))
    for (uint32_t q = 0; q < 2; ++q) got += burst(*port, q, b[q], 256);
  const double seconds = std::chrono::duration<double>(Clock::now() - start).count();
  EXPECT_EQ(got, 4000u);
  EXPECT_EQ(port->stats().rx_dropped, 0u);
  EXPECT_GE(seconds, 0.015);  // 2,000 packets at 100 kpps take 20 ms
  // Each queue's packets are stamped 10 us apart.
  for (uint32_t q = 0; q < 2; ++q) {
    ASSERT_EQ(b[q].size(), 2000u);
    for (uint32_t i = 1; i < b[q].size(); ++i) {
      const uint64_t gap = b[q].meta(i).timestamp_ns - b[q].meta(i - 1).timestamp_ns;
      ASSERT_GE(gap, 9'999u) << "queue " << q << " packet " << i;
      ASSERT_LE(gap, 10'001u) << "queue " << q << " packet " << i;
    }
  }
}

TEST(GenPort, ProfilesAndFrameBytes) {
  PortOptions o;
  o.gen_profile = "ipv4+novlan+min";
  auto small    = open_ok("gen", o);
  ASSERT_TRUE(small);
  PacketBatch b = make_batch(1000);
  ASSERT_EQ(burst(*small, 0, b, 1000), 1000u);
  for (uint32_t i = 0; i < b.size(); ++i) {
    ASSERT_EQ(b.meta(i).caplen, 60u);
    ASSERT_EQ(b.data(i)[12], 0x08);
    ASSERT_EQ(b.data(i)[13], 0x00);
  }
  // frame_bytes cuts long frames (caplen) but keeps their wire length.
  o.gen_profile = "max";
  o.frame_bytes = 128;
  auto cut      = open_ok("gen", o);
  ASSERT_TRUE(cut);
  b.clear();
  ASSERT_EQ(burst(*cut, 0, b, 10), 10u);
  for (uint32_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b.meta(i).caplen, 128u);
    EXPECT_EQ(b.meta(i).len, 1514u);
  }
  o.gen_profile = "ipv4+jumbo";
  auto bad      = open_port("g", "gen", o);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("port g: gen: unknown traffic profile 'jumbo'"),
            std::string::npos)
      << bad.status().message();
}

TEST(GenPort, TxDiscardsAndCounts) {
  PortOptions o;
  o.workers = 2;
  auto port = open_ok("gen:max", o);
  ASSERT_TRUE(port);
  PacketBatch b  = traffic(10, 1);
  const auto idx = all_indices(b);
  EXPECT_EQ(port->tx_burst(0, b, span_of(idx)), 10u);
  EXPECT_EQ(port->tx_burst(1, b, span_of(idx).subspan(0, 4)), 4u);
  EXPECT_EQ(port->tx_burst(7, b, span_of(idx).subspan(0, 1)), 1u);  // unknown worker: still ok
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < 10; ++i) bytes += b.meta(i).len * (i < 1 ? 3u : i < 4 ? 2u : 1u);
  const PortStats s = port->stats();
  EXPECT_EQ(s.tx, 15u);
  EXPECT_EQ(s.tx_bytes, bytes);
  EXPECT_EQ(s.tx_errors, 0u);
  EXPECT_TRUE(port->flush().is_ok());
}

// --- null --------------------------------------------------------------------------------------

TEST(NullPort, DiscardsAndCounts) {
  auto port = open_ok("null");
  ASSERT_TRUE(port);
  EXPECT_EQ(port->rx_queue_count(), 0u);
  EXPECT_TRUE(port->rx_done(0));
  PacketBatch b  = traffic(5, 2);
  const auto idx = all_indices(b);
  EXPECT_EQ(port->tx_burst(0, b, span_of(idx)), 5u);
  EXPECT_EQ(port->tx_burst(0, b, {}), 0u);
  const PortStats s = port->stats();
  EXPECT_EQ(s.tx, 5u);
  EXPECT_EQ(s.rx, 0u);
  EXPECT_TRUE(port->flush().is_ok());
}

// --- pcap --------------------------------------------------------------------------------------

TEST(PcapPort, ByteIdenticalRoundTrip) {
  const std::string dir = support::temp_dir();
  const std::string in = dir + "/in.pcap", out = dir + "/out.pcap";
  PacketBatch src = traffic(1500, 11);
  {
    auto w = io::PcapWriter::create(in);
    ASSERT_TRUE(w.is_ok()) << w.status().to_string();
    ASSERT_TRUE(w->write(src).is_ok());
    ASSERT_TRUE(w->close().is_ok());
  }
  PortOptions o;
  o.index   = 5;
  o.workers = 2;
  auto port = open_ok("pcap:" + in + ":" + out, o);
  ASSERT_TRUE(port);
  EXPECT_EQ(port->rx_queue_count(), 1u);
  EXPECT_NE(port->describe().find(in), std::string::npos);
  // Odd burst sizes, so some calls read through the staging batch and some straight into the
  // caller's; a batch of 64 packets, so it fills before `max` runs out.
  const uint32_t bursts[] = {0, 1, 7, 300, 64, 1000, 3, 64};
  PacketBatch b           = make_batch(64);
  uint32_t got = 0, turn = 0;
  while (!port->rx_done(0)) {
    b.clear();
    auto r = port->rx_burst(0, b, bursts[turn++ % 8]);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(*r, b.size());
    for (uint32_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(bytes_of(b, i), bytes_of(src, got + i));
      ASSERT_EQ(b.meta(i).timestamp_ns, src.meta(got + i).timestamp_ns);
      ASSERT_EQ(b.meta(i).port, 5);
    }
    const auto idx = all_indices(b);
    ASSERT_EQ(port->tx_burst(turn % 2, b, span_of(idx)), b.size());
    got += b.size();
    ASSERT_LT(turn, 10000u);
  }
  EXPECT_EQ(got, 1500u);
  b.clear();
  EXPECT_EQ(burst(*port, 0, b, 10), 0u);
  ASSERT_TRUE(port->flush().is_ok());
  EXPECT_EQ(support::read_bytes(out), support::read_bytes(in));
  const PortStats s = port->stats();
  EXPECT_EQ(s.rx, 1500u);
  EXPECT_EQ(s.tx, 1500u);
  EXPECT_EQ(s.rx_bytes, s.tx_bytes);
  // After flush() the file is closed: more packets are errors.
  const auto idx = all_indices(src);
  EXPECT_EQ(port->tx_burst(0, src, span_of(idx).subspan(0, 3)), 0u);
  EXPECT_EQ(port->stats().tx_errors, 3u);
}

TEST(PcapPort, ConcurrentWritersKeepEveryPacket) {
  const std::string dir = support::temp_dir();
  const std::string out = dir + "/out.pcap";
  PortOptions o;
  o.workers = 4;
  auto port = open_ok("pcap::" + out, o);
  ASSERT_TRUE(port);
  EXPECT_EQ(port->rx_queue_count(), 0u);
  EXPECT_TRUE(port->rx_done(0));
  PacketBatch src = traffic(200, 3);
  std::vector<std::thread> workers;
  for (uint32_t w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      const auto idx = all_indices(src);
      for (int i = 0; i < 10; ++i) port->tx_burst(w, src, span_of(idx));
    });
  for (auto& t : workers) t.join();
  ASSERT_TRUE(port->flush().is_ok());
  auto back = io::read_capture(out);
  ASSERT_TRUE(back.is_ok()) << back.status().to_string();
  EXPECT_EQ(back->size(), 8000u);
  EXPECT_EQ(port->stats().tx, 8000u);
}

TEST(PcapPort, ErrorsNameThePortAndFile) {
  const std::string dir = support::temp_dir();
  auto missing          = open_port("lan", "pcap:" + dir + "/nope.pcap:", {});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_EQ(missing.status().message().rfind("port lan: pcap: ", 0), 0u)
      << missing.status().message();
  EXPECT_NE(missing.status().message().find("nope.pcap"), std::string::npos);
  auto unwritable = open_port("lan", "pcap::" + dir + "/no/such/dir/out.pcap", {});
  ASSERT_FALSE(unwritable.is_ok());
  EXPECT_NE(unwritable.status().message().find("port lan: pcap: "), std::string::npos);
  EXPECT_NE(unwritable.status().message().find("out.pcap"), std::string::npos);

  // A capture whose last record is cut short: the packets before it, then the end of the
  // queue, with the damage as a warning naming the port, file and record.
  const std::string in = dir + "/cut.pcap";
  PacketBatch src      = traffic(10, 4);
  {
    auto w = io::PcapWriter::create(in);
    ASSERT_TRUE(w.is_ok());
    ASSERT_TRUE(w->write(src).is_ok());
    ASSERT_TRUE(w->close().is_ok());
  }
  Bytes file = support::read_bytes(in);
  file.resize(file.size() - 10);
  support::write_bytes(in, file);
  auto port = open_ok("pcap:" + in + ":");
  ASSERT_TRUE(port);
  PacketBatch b = make_batch(64);
  auto r        = port->rx_burst(0, b, 64);
  ASSERT_TRUE(r.is_ok()) << r.status().to_string();
  EXPECT_EQ(*r, 9u);
  EXPECT_TRUE(port->rx_done(0));
  auto e = port->rx_burst(0, b, 64);
  ASSERT_TRUE(e.is_ok());
  EXPECT_EQ(*e, 0u);
  const auto warnings = port->warnings();
  ASSERT_EQ(warnings.size(), 1u);
  EXPECT_NE(warnings[0].find("port p: pcap: "), std::string::npos) << warnings[0];
  EXPECT_NE(warnings[0].find("cut.pcap: record 10"), std::string::npos) << warnings[0];
  EXPECT_EQ(port->stats().rx, 9u);
}

// --- live ports: a veth pair in a network namespace of our own ---------------------------------

int sh(const std::string& cmd) { return std::system((cmd + " >/dev/null 2>&1").c_str()); }

std::string output_of(const std::string& cmd) {
  std::string out;
  if (FILE* f = popen((cmd + " 2>&1").c_str(), "r")) {
    char buf[512];
    while (size_t n = fread(buf, 1, sizeof buf, f)) out.append(buf, n);
    pclose(f);
  }
  return out;
}

// A network namespace holding a veth pair wpa <-> wpb, both up, IPv6 off (so the kernel sends
// nothing of its own on them). Deleted by the destructor, whatever the test did.
class VethNamespace {
 public:
  explicit VethNamespace(int mtu = 1500, int queues = 1) {
    if (geteuid() != 0) {
      reason_ = "needs root (network namespaces, raw sockets)";
      return;
    }
    static std::atomic<int> serial{0};
    ns_ = "wp-port-" + std::to_string(getpid()) + "-" + std::to_string(serial++);
    sh("ip netns del " + ns_);
    if (sh("ip netns add " + ns_) != 0) {
      reason_ = "cannot create a network namespace (ip netns add)";
      ns_.clear();
      return;
    }
    sh("ip netns exec " + ns_ +
       " sysctl -qw net.ipv6.conf.all.disable_ipv6=1 net.ipv6.conf.default.disable_ipv6=1");
    const std::string m = " mtu " + std::to_string(mtu) + " numrxqueues " + std::to_string(queues) +
                          " numtxqueues " + std::to_string(queues);
    if (sh("ip -n " + ns_ + " link add wpa" + m + " type veth peer name wpb" + m) != 0 ||
        sh("ip -n " + ns_ + " link set wpa up") != 0 ||
        sh("ip -n " + ns_ + " link set wpb up") != 0) {
      reason_ = "cannot create a veth pair in a network namespace";
      return;
    }
    ready_ = true;
  }
  ~VethNamespace() {
    if (!ns_.empty()) sh("ip netns del " + ns_);
  }
  bool ready() const { return ready_; }
  const std::string& reason() const { return reason_; }
  const std::string& name() const { return ns_; }

  // Runs `body` on a thread that has entered the namespace (setns affects only that thread).
  void run_inside(const std::function<void()>& body) {
    std::thread t([&] {
      const int fd = ::open(("/var/run/netns/" + ns_).c_str(), O_RDONLY | O_CLOEXEC);
      ASSERT_GE(fd, 0) << "open netns " << ns_;
      const int rc = setns(fd, CLONE_NEWNET);
      ::close(fd);
      ASSERT_EQ(rc, 0) << "setns " << ns_;
      body();
    });
    t.join();
  }

 private:
  std::string ns_, reason_;
  bool ready_ = false;
};

#define SKIP_UNLESS_READY(ns) \
  if (!(ns).ready()) GTEST_SKIP() << (ns).reason()

// Receives from every queue of `port` until `want` frames of `sent` arrived or `seconds`
// passed. Returns the frames per queue (frames not in `sent` are left out and counted).
struct Received {
  std::vector<std::vector<Bytes>> by_queue;
  size_t matched = 0, foreign = 0;
  std::vector<uint64_t> timestamps;
};

Received receive(Port& port, const std::set<Bytes>& sent, size_t want, double seconds) {
  Received r;
  r.by_queue.resize(port.rx_queue_count());
  PacketBatch b    = make_batch(256);
  const auto until = Clock::now() + std::chrono::duration<double>(seconds);
  while (r.matched < want && Clock::now() < until) {
    for (uint32_t q = 0; q < port.rx_queue_count(); ++q) {
      b.clear();
      auto n = port.rx_burst(q, b, 256);
      EXPECT_TRUE(n.is_ok()) << n.status().to_string();
      if (!n.is_ok()) return r;
      for (uint32_t i = 0; i < b.size(); ++i) {
        Bytes f = bytes_of(b, i);
        if (sent.count(f)) {
          r.by_queue[q].push_back(std::move(f));
          r.timestamps.push_back(b.meta(i).timestamp_ns);
          ++r.matched;
        } else {
          ++r.foreign;
        }
      }
    }
  }
  return r;
}

uint64_t now_real_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::system_clock::now().time_since_epoch())
                      .count());
}

// Sends all of `frames` out of `from` (worker 0), waits `settle_ms` (to let a ring overflow
// before anyone reads it), then reads `to` until every frame arrived or `seconds` passed.
struct Exchange {
  uint32_t tx;  // frames tx_burst took
  Received got;
};
Exchange exchange(Port& from, Port& to, PacketBatch& frames, double seconds,
                  int settle_ms = 0) {
  std::set<Bytes> sent;
  for (uint32_t i = 0; i < frames.size(); ++i) sent.insert(bytes_of(frames, i));
  const auto idx    = all_indices(frames);
  const uint32_t tx = from.tx_burst(0, frames, span_of(idx));
  if (settle_ms > 0) std::this_thread::sleep_for(std::chrono::milliseconds(settle_ms));
  return {tx, receive(to, sent, frames.size(), seconds)};
}

// Sends all of `frames` through `tx` (worker 0) and checks they arrive, in order and byte for
// byte, through `rx` (one queue).
void send_and_expect(Port& tx, Port& rx, PacketBatch& frames) {
  std::set<Bytes> sent;
  std::vector<Bytes> order;
  for (uint32_t i = 0; i < frames.size(); ++i) {
    order.push_back(bytes_of(frames, i));
    sent.insert(order.back());
  }
  const PortStats tx0 = tx.stats(), rx0 = rx.stats();
  const uint64_t before = now_real_ns();
  const auto idx        = all_indices(frames);
  EXPECT_EQ(tx.tx_burst(0, frames, span_of(idx)), frames.size());
  EXPECT_TRUE(tx.flush().is_ok());
  const Received r = receive(rx, sent, frames.size(), 3.0);
  ASSERT_EQ(r.by_queue.size(), 1u);
  EXPECT_EQ(r.foreign, 0u);
  ASSERT_EQ(r.by_queue[0].size(), order.size());
  for (size_t i = 0; i < order.size(); ++i) ASSERT_EQ(r.by_queue[0][i], order[i]) << "frame " << i;
  for (uint64_t ts : r.timestamps) {
    EXPECT_GE(ts + 1'000'000, before);  // kernel clocks may read a hair behind ours
    EXPECT_LE(ts, now_real_ns());
  }
  uint64_t wire = 0;
  for (uint32_t i = 0; i < frames.size(); ++i) wire += frames.meta(i).len;
  const PortStats tx1 = tx.stats(), rx1 = rx.stats();
  EXPECT_EQ(tx1.tx - tx0.tx, frames.size());
  EXPECT_EQ(tx1.tx_bytes - tx0.tx_bytes, wire);
  EXPECT_EQ(tx1.tx_errors, tx0.tx_errors);
  EXPECT_EQ(rx1.rx - rx0.rx, frames.size());
  EXPECT_EQ(rx1.rx_bytes - rx0.rx_bytes, wire);
  EXPECT_EQ(rx1.rx_dropped, rx0.rx_dropped);
}

TEST(AfPacketPort, MissingInterface) {
  auto p = open_port("wan", "afpacket:wp-nosuch0", {});
  ASSERT_FALSE(p.is_ok());
  EXPECT_EQ(p.status().code(), Errc::kNotFound);
  EXPECT_EQ(p.status().message(), "port wan: afpacket: interface 'wp-nosuch0' not found");
}

TEST(AfPacketPort, PermissionDenied) {
  if (geteuid() != 0) GTEST_SKIP() << "needs root to drop to an unprivileged user";
  // In a child process that gives up root: opening a packet socket must fail clearly.
  const pid_t pid = fork();
  ASSERT_GE(pid, 0);
  if (pid == 0) {
    if (setresgid(65534, 65534, 65534) != 0 || setresuid(65534, 65534, 65534) != 0) _exit(2);
    auto p = open_port("wan", "afpacket:lo", {});
    if (p.is_ok()) _exit(3);
    const bool clear = p.status().message().find("permission denied (needs CAP_NET_RAW / root)") !=
                       std::string::npos;
    if (!clear) std::fprintf(stderr, "%s\n", p.status().message().c_str());
    _exit(clear ? 0 : 4);
  }
  int status = 0;
  ASSERT_EQ(waitpid(pid, &status, 0), pid);
  ASSERT_TRUE(WIFEXITED(status));
  EXPECT_EQ(WEXITSTATUS(status), 0) << "2: cannot drop root, 3: opened, 4: unclear message";
}

TEST(AfPacketPort, VethRoundTrip) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  ns.run_inside([&] {
    PortOptions o;
    o.index = 1;
    auto a  = open_ok("afpacket:wpa", o);
    auto bp = open_ok("afpacket:wpb", o);
    ASSERT_TRUE(a && bp);
    EXPECT_EQ(bp->rx_queue_count(), 1u);
    EXPECT_NE(bp->describe().find("afpacket wpb"), std::string::npos) << bp->describe();
    // IMIX over IPv4, IPv6 and 802.1Q (the tag the kernel strips must come back).
    PacketBatch frames = traffic(600, 21);
    send_and_expect(*a, *bp, frames);
    // And back, the other way; `a` never sees its own transmissions.
    PacketBatch back = traffic(300, 22);
    send_and_expect(*bp, *a, back);
    std::set<Bytes> own;
    for (uint32_t i = 0; i < frames.size(); ++i) own.insert(bytes_of(frames, i));
    EXPECT_EQ(receive(*a, own, 1, 0.05).matched, 0u);
    PacketBatch b = make_batch(8);
    auto r        = bp->rx_burst(0, b, 8);
    ASSERT_TRUE(r.is_ok());
    EXPECT_EQ(*r, 0u);
    b.clear();
    EXPECT_EQ(burst(*bp, 0, b, 0), 0u);
  });
}

// A delay bound under 1 ms (PortOptions::rx_wait_us) gets per-packet TPACKET_V2 slots; 1 ms or
// more TPACKET_V3 blocks. Both deliver every frame in order, byte for byte, VLAN tags restored.
TEST(AfPacketPort, RingKindFollowsTheDelayBound) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  ns.run_inside([&] {
    for (const uint32_t wait_us : {10u, 999u, 1000u}) {
      SCOPED_TRACE("rx_wait_us " + std::to_string(wait_us));
      PortOptions o;
      o.rx_wait_us  = wait_us;
      o.ring_frames = 1024;
      auto a        = open_ok("afpacket:wpa", o);
      auto bp       = open_ok("afpacket:wpb", o);
      ASSERT_TRUE(a && bp);
      const char* ring = wait_us < 1000 ? "TPACKET_V2" : "TPACKET_V3";
      EXPECT_NE(bp->describe().find(ring), std::string::npos) << bp->describe();
      // More frames than the V2 ring has slots, so the reader wraps around it.
      PacketBatch first = traffic(600, 23), second = traffic(600, 24);
      send_and_expect(*a, *bp, first);
      send_and_expect(*a, *bp, second);
    }
  });
}

TEST(AfPacketPort, FanoutKeepsFlowsOnOneQueue) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  ns.run_inside([&] {
    PortOptions o;
    auto a      = open_ok("afpacket:wpa", o);
    o.rx_queues = 3;
    auto bp     = open_ok("afpacket:wpb", o);
    ASSERT_TRUE(a && bp);
    EXPECT_EQ(bp->rx_queue_count(), 3u);
    // 64 flows, each sending the same frame (bytes identify the flow) several times.
    gen::TrafficParams params;
    params.count      = 64;
    params.flows      = 64;
    params.vlan_share = 0;
    params.seed       = 5;
    PacketBatch one   = std::move(gen::batch_for(64)).value();
    ASSERT_TRUE(gen::generate_traffic(params, one).is_ok());
    PacketBatch frames = make_batch(64 * 4);
    for (int rep = 0; rep < 4; ++rep)
      for (uint32_t i = 0; i < one.size(); ++i)
        frames.append(one.data(i), one.meta(i).caplen, one.meta(i).len, 0);
    const auto [tx, r] = exchange(*a, *bp, frames, 3.0);
    EXPECT_EQ(tx, frames.size());
    EXPECT_EQ(r.matched, frames.size());
    std::map<Bytes, std::set<uint32_t>> queues_of;
    uint32_t used = 0;
    for (uint32_t q = 0; q < 3; ++q) {
      used += !r.by_queue[q].empty();
      for (const Bytes& f : r.by_queue[q]) queues_of[f].insert(q);
    }
    EXPECT_GE(used, 2u) << "64 flows should spread over more than one queue";
    for (const auto& [frame, qs] : queues_of) EXPECT_EQ(qs.size(), 1u);
  });
}

TEST(AfPacketPort, FullRingCountsDrops) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  ns.run_inside([&] {
    PortOptions o;
    auto a        = open_ok("afpacket:wpa", o);
    o.ring_frames = 16;  // the smallest ring: 2 blocks of 32 KiB, ~30 full-size frames
    auto bp       = open_ok("afpacket:wpb", o);
    ASSERT_TRUE(a && bp);
    PacketBatch frames = traffic(1000, 9, gen::SizeMix::kFixed);
    const auto [tx, r] = exchange(*a, *bp, frames, 0.3, 20);
    EXPECT_EQ(tx, frames.size());
    const PortStats s = bp->stats();
    EXPECT_GT(s.rx_dropped, 0u);
    EXPECT_LT(r.matched, frames.size());
    EXPECT_EQ(s.rx, r.matched + r.foreign);
    EXPECT_EQ(s.rx + s.rx_dropped, tx);
  });
}

// --- AF_XDP ------------------------------------------------------------------------------------

// Opens an AF_XDP port, or says why the test must skip (not built, kernel refuses).
std::unique_ptr<Port> open_xdp(const std::string& spec, const PortOptions& o, std::string& skip) {
  auto p = open_port("x", spec, o);
  if (p.is_ok()) return std::move(p).value();
  if (p.status().code() == Errc::kNotBuilt || p.status().code() == Errc::kNotSupported)
    skip = p.status().message();
  else
    ADD_FAILURE() << p.status().to_string();
  return nullptr;
}

TEST(AfXdpPort, MissingInterface) {
  auto p = open_port("wan", "afxdp:wp-nosuch0", {});
  ASSERT_FALSE(p.is_ok());
  if (p.status().code() == Errc::kNotBuilt) GTEST_SKIP() << p.status().message();
  EXPECT_EQ(p.status().code(), Errc::kNotFound);
  EXPECT_EQ(p.status().message(), "port wan: afxdp: interface 'wp-nosuch0' not found");
}

TEST(AfXdpPort, VethRoundTrip) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  std::string skip;
  ns.run_inside([&] {
    PortOptions o;
    o.ring_frames = 1024;
    auto xb       = open_xdp("afxdp:wpb", o, skip);
    if (!xb) return;
    EXPECT_EQ(xb->rx_queue_count(), 1u);
    auto a = open_ok("afpacket:wpa", o);
    ASSERT_TRUE(a);
    // afpacket -> AF_XDP RX.
    PacketBatch frames = traffic(500, 31);
    send_and_expect(*a, *xb, frames);
    // AF_XDP TX -> afpacket.
    PacketBatch back = traffic(500, 32);
    send_and_expect(*xb, *a, back);
    // AF_XDP -> AF_XDP.
    auto xa = open_xdp("afxdp:wpa", o, skip);
    if (!xa) return;
    a.reset();
    PacketBatch more = traffic(300, 33);
    send_and_expect(*xa, *xb, more);
  });
  if (!skip.empty()) GTEST_SKIP() << skip;
  // The XDP programs went with the sockets.
  const std::string links = output_of("ip -n " + ns.name() + " -d link show");
  EXPECT_EQ(links.find("xdp"), std::string::npos) << links;
}

// Zero copy: an arena batch holds the UMEM frames the kernel filled, and clearing it gives them
// back to the fill ring: 1,000 frames pass through a UMEM of 64 + 128 RX frames (in rounds of
// 50, which the RX ring of 64 takes while nobody reads).
TEST(AfXdpPort, FramesHoldUmemFramesAndGiveThemBack) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  std::string skip;
  ns.run_inside([&] {
    PortOptions o;
    o.ring_frames  = 64;
    o.held_packets = 128;
    auto xb        = open_xdp("afxdp:wpb", o, skip);
    if (!xb) return;
    EXPECT_NE(xb->describe().find("frames held (zero copy)"), std::string::npos) << xb->describe();
    auto a = open_ok("afpacket:wpa", {});
    ASSERT_TRUE(a);
    auto arena = PacketBatch::create_in_arena(128);
    ASSERT_TRUE(arena.is_ok()) << arena.status().to_string();
    PacketBatch& b = *arena;
    for (uint32_t round = 0; round < 20; ++round) {
      PacketBatch frames = traffic(50, 70 + round);
      std::set<Bytes> sent;
      for (uint32_t i = 0; i < frames.size(); ++i) sent.insert(bytes_of(frames, i));
      const auto idx = all_indices(frames);
      ASSERT_EQ(a->tx_burst(0, frames, span_of(idx)), 50u);
      uint32_t matched = 0;
      const auto until = Clock::now() + std::chrono::seconds(3);
      while (matched < 50 && Clock::now() < until) {
        b.clear();  // the frames held go back to the fill ring
        auto n = xb->rx_burst(0, b, 128);
        ASSERT_TRUE(n.is_ok()) << n.status().to_string();
        for (uint32_t i = 0; i < b.size(); ++i) {
          ASSERT_NE(b.handle(i), nullptr) << "round " << round << " packet " << i;
          matched += uint32_t(sent.count(bytes_of(b, i)));
        }
      }
      ASSERT_EQ(matched, 50u) << "round " << round;
    }
    b.clear();
    EXPECT_EQ(xb->stats().rx_dropped, 0u);
  });
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// One socket per RX queue of the interface (2 here, though 4 are asked for); every frame
// arrives on one of them; every worker can send.
TEST(AfXdpPort, OneSocketPerQueue) {
  VethNamespace ns(1500, 2);
  SKIP_UNLESS_READY(ns);
  std::string skip;
  ns.run_inside([&] {
    PortOptions o;
    o.rx_queues = 4;
    o.workers   = 3;
    auto xb     = open_xdp("afxdp:wpb", o, skip);
    if (!xb) return;
    EXPECT_EQ(xb->rx_queue_count(), 2u) << xb->describe();
    auto a = open_ok("afpacket:wpa", {});
    ASSERT_TRUE(a);
    PacketBatch frames = traffic(400, 61);
    const auto [tx, r] = exchange(*a, *xb, frames, 3.0);
    EXPECT_EQ(tx, frames.size());
    EXPECT_EQ(r.matched, frames.size());
    // veth picks the RX queue by flow hash: 400 frames of 256 flows reach both.
    EXPECT_GT(r.by_queue[0].size(), 0u);
    EXPECT_GT(r.by_queue[1].size(), 0u);
    // Workers 0..2 send on sockets 0, 1, 0.
    std::set<Bytes> back_sent;
    PacketBatch back = traffic(300, 62);
    for (uint32_t i = 0; i < back.size(); ++i) back_sent.insert(bytes_of(back, i));
    const auto all = all_indices(back);
    for (uint32_t w = 0; w < 3; ++w)
      EXPECT_EQ(xb->tx_burst(w, back, span_of(all).subspan(w * 100, 100)), 100u);
    EXPECT_EQ(receive(*a, back_sent, back.size(), 3.0).matched, back.size());
  });
  if (!skip.empty()) GTEST_SKIP() << skip;
}

// veth refuses native XDP when the peer's MTU exceeds a page: the port must fall back to
// generic (SKB) XDP and work.
TEST(AfXdpPort, FallsBackToGenericXdp) {
  VethNamespace ns(9000);
  SKIP_UNLESS_READY(ns);
  std::string skip;
  ns.run_inside([&] {
    auto xb = open_xdp("afxdp:wpb", {}, skip);
    if (!xb) return;
    if (xb->describe().find("generic/SKB") == std::string::npos)
      std::printf("note: this kernel attached native XDP at MTU 9000: %s\n",
                  xb->describe().c_str());
    auto a = open_ok("afpacket:wpa", {});
    ASSERT_TRUE(a);
    PacketBatch frames = traffic(200, 51);
    send_and_expect(*a, *xb, frames);
    PacketBatch back = traffic(200, 52);
    send_and_expect(*xb, *a, back);
  });
  if (!skip.empty()) GTEST_SKIP() << skip;
}

TEST(AfXdpPort, FullRingCountsDrops) {
  VethNamespace ns;
  SKIP_UNLESS_READY(ns);
  std::string skip;
  ns.run_inside([&] {
    PortOptions o;
    o.ring_frames = 64;
    auto xb       = open_xdp("afxdp:wpb", o, skip);
    if (!xb) return;
    auto a = open_ok("afpacket:wpa", {});
    ASSERT_TRUE(a);
    PacketBatch frames = traffic(1000, 41);
    const auto [tx, r] = exchange(*a, *xb, frames, 0.3, 20);
    EXPECT_EQ(tx, frames.size());
    const PortStats s = xb->stats();
    EXPECT_GT(s.rx_dropped, 0u);
    EXPECT_LE(r.matched, 64u);
    EXPECT_EQ(s.rx + s.rx_dropped, tx);
  });
  if (!skip.empty()) GTEST_SKIP() << skip;
}

}  // namespace
}  // namespace warpath::runtime
