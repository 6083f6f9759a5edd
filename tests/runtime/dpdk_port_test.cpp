// tests/runtime/dpdk_port_test.cpp: DPDK ports (dpdk:VDEV[,ARGS],
// src/runtime/system/dpdk_port.cpp).
//
// Spec parsing always runs (bad dpdk: specs are in port_test.cpp's table). The rest opens DPDK
// virtual devices and skips (with the reason) when the build has no DPDK ports (kNotBuilt) or
// DPDK's EAL cannot start here (kNotSupported). EAL starts once per process and stays: every DPDK test lives in this one
// test binary (warpath_runtime_tests), the first one to open a port starts it for all.
//   net_pcap: a file read through rx_pcap comes out of tx_pcap byte for byte (odd burst sizes,
//     a batch that fills, two workers), and the queue ends; frames longer than frame_bytes are
//     cut on RX and sent whole (as mbuf chains) on TX; concurrent workers lose nothing; a
//     device without rx_pcap is send-only.
//   net_ring: a single device's TX feeds its RX (a loopback), TX queue w into RX queue w.
//   Zero copy (over net_ring): an arena batch holds received mbufs where they are, sends them
//     as they are (a start moved into the headroom and a new length included) unless a packet
//     is shared (then copied, its mbuf still held), and every mbuf comes back: many more
//     packets than the pool has mbufs go round without a loss; --copy's batches copy.
//   EAL's start leaves the calling thread's CPU affinity as it was.
//   Errors name the port; a device name serves one port at a time and is free again after it.
#include <gtest/gtest.h>
#include <sched.h>

#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "runtime/port_test_util.hpp"
#include "support/test_support.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::runtime {
namespace {

namespace support = warpath::testing;
using namespace warpath::runtime::test;
using Clock = std::chrono::steady_clock;

void write_capture(const std::string& path, const PacketBatch& b) {
  auto w = io::PcapWriter::create(path);
  ASSERT_TRUE(w.is_ok()) << w.status().to_string();
  ASSERT_TRUE(w->write(b).is_ok());
  ASSERT_TRUE(w->close().is_ok());
}

std::vector<Bytes> frames_of(const PacketBatch& b) {
  std::vector<Bytes> v;
  for (uint32_t i = 0; i < b.size(); ++i) v.push_back(bytes_of(b, i));
  return v;
}

std::vector<Bytes> frames_in(const std::string& path) {
  auto r = io::read_capture(path);
  EXPECT_TRUE(r.is_ok()) << path << ": " << r.status().to_string();
  return r.is_ok() ? frames_of(*r) : std::vector<Bytes>();
}

// Opens a dpdk port; nullptr with `skip` set when DPDK ports cannot run here (not built, EAL
// refused), nullptr with a test failure for any other error.
std::unique_ptr<Port> open_dpdk(const std::string& spec, const PortOptions& o, std::string& skip) {
  auto p = open_port("p", spec, o);
  if (p.is_ok()) return std::move(p).value();
  if (p.status().code() == Errc::kNotBuilt || p.status().code() == Errc::kNotSupported)
    skip = p.status().message();
  else
    ADD_FAILURE() << spec << ": " << p.status().to_string();
  return nullptr;
}

#define OPEN_DPDK_OR_SKIP(var, spec, options)          \
  std::string var##_skip;                              \
  auto var = open_dpdk(spec, options, var##_skip);     \
  if (!var##_skip.empty()) GTEST_SKIP() << var##_skip; \
  ASSERT_TRUE(var)

// Receives from queue 0 until rx_done (or `want` packets when want > 0) or 10 s pass, in
// bursts of `bursts` sizes into a batch of `cap` packets; calls `each` with every non-empty
// batch.
template <typename F>
uint32_t drain(Port& port, uint32_t want, uint32_t cap, std::vector<uint32_t> bursts, F each) {
  PacketBatch b       = make_batch(cap);
  uint32_t got        = 0;
  size_t turn         = 0;
  const auto deadline = Clock::now() + std::chrono::seconds(10);
  while (!port.rx_done(0) && (want == 0 || got < want) && Clock::now() < deadline) {
    b.clear();
    auto r = port.rx_burst(0, b, bursts[turn++ % bursts.size()]);
    EXPECT_TRUE(r.is_ok()) << r.status().to_string();
    if (!r.is_ok()) break;
    EXPECT_EQ(*r, b.size());
    if (b.size() == 0) {
      std::this_thread::sleep_for(std::chrono::microseconds(100));
      continue;
    }
    each(b, got);
    got += b.size();
  }
  return got;
}

// --- spec --------------------------------------------------------------------------------------

TEST(DpdkPortSpec, KeepsTheVdevArgumentsVerbatim) {
  for (const char* args :
       {"net_pcap0,rx_pcap=/tmp/a b.pcap,tx_pcap=out.pcap", "net_ring0",
        "net_af_packet0,iface=veth0,qpairs=2", "net_af_xdp0,iface=veth0", "eth_pcap1,iface=lo"}) {
    SCOPED_TRACE(args);
    auto r = parse_port_spec("wan", std::string("dpdk:") + args);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r->kind, "dpdk");
    EXPECT_EQ(r->args, args);
    EXPECT_TRUE(r->iface.empty() && r->in.empty() && r->out.empty());
  }
}

// --- net_pcap ----------------------------------------------------------------------------------

TEST(DpdkPort, PcapRoundTripIsByteIdenticalAndEnds) {
  const std::string dir = support::temp_dir();
  const std::string in = dir + "/in.pcap", out = dir + "/out.pcap";
  PacketBatch src = traffic(1500, 11);
  write_capture(in, src);
  PortOptions o;
  o.index   = 5;
  o.workers = 2;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_pcap0,rx_pcap=" + in + ",tx_pcap=" + out, o);
  EXPECT_EQ(port->rx_queue_count(), 1u);
  EXPECT_NE(port->describe().find("net_pcap0"), std::string::npos) << port->describe();
  // Odd burst sizes and a batch of 64, so the batch fills before `max` runs out and received
  // mbufs wait for the next call.
  uint32_t turn = 0;
  const uint32_t n =
      drain(*port, 0, 64, {0, 1, 7, 300, 64, 1000, 3, 64}, [&](PacketBatch& b, uint32_t got) {
        for (uint32_t i = 0; i < b.size(); ++i) {
          ASSERT_EQ(bytes_of(b, i), bytes_of(src, got + i)) << got + i;
          ASSERT_EQ(b.meta(i).len, src.meta(got + i).len);
          ASSERT_EQ(b.meta(i).port, 5);
          ASSERT_GT(b.meta(i).timestamp_ns, 1'600'000'000'000'000'000ull);
        }
        const auto idx = all_indices(b);
        ASSERT_EQ(port->tx_burst(turn++ % 2, b, span_of(idx)), b.size());
      });
  EXPECT_EQ(n, 1500u);
  EXPECT_TRUE(port->rx_done(0)) << "the queue did not end after the file";
  ASSERT_TRUE(port->flush().is_ok());
  ASSERT_TRUE(port->flush().is_ok());  // idempotent
  EXPECT_EQ(frames_in(out), frames_of(src));
  PortStats s = port->stats();
  EXPECT_EQ(s.rx, 1500u);
  EXPECT_EQ(s.tx, 1500u);
  EXPECT_EQ(s.rx_bytes, s.tx_bytes);
  EXPECT_EQ(s.rx_dropped, 0u);
  EXPECT_EQ(s.tx_errors, 0u);
  // After flush() the device is gone: more packets are errors.
  const auto idx = all_indices(src);
  EXPECT_EQ(port->tx_burst(0, src, span_of(idx).subspan(0, 3)), 0u);
  EXPECT_EQ(port->stats().tx_errors, 3u);
}

TEST(DpdkPort, LongFramesAreCutOnRxAndChainedOnTx) {
  const std::string dir = support::temp_dir();
  const std::string in = dir + "/jumbo.pcap", out = dir + "/out.pcap";
  const std::vector<uint32_t> sizes = {64, 4000, 9000, 2048, 2049, 100};
  {
    io::CaptureInfo info;
    info.snaplen = 65535;
    auto w       = io::PcapWriter::create(in, info);
    ASSERT_TRUE(w.is_ok()) << w.status().to_string();
    for (size_t k = 0; k < sizes.size(); ++k) {
      Bytes f(sizes[k]);
      for (size_t i = 0; i < f.size(); ++i) f[i] = uint8_t(i * 7 + k);
      ASSERT_TRUE(w->write_packet(f.data(), uint32_t(f.size()), uint32_t(f.size()),
                                  1'700'000'000'000'000'000ull + k)
                      .is_ok());
    }
    ASSERT_TRUE(w->close().is_ok());
  }
  auto whole = io::read_capture(in);
  ASSERT_TRUE(whole.is_ok()) << whole.status().to_string();
  ASSERT_EQ(whole->size(), sizes.size());
  PortOptions o;  // frame_bytes 2048: mbufs of 2048 bytes (and headroom)
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_pcap0,rx_pcap=" + in + ",tx_pcap=" + out, o);
  std::vector<Bytes> got;
  drain(*port, 0, 64, {64}, [&](const PacketBatch& b, uint32_t at) {
    for (uint32_t i = 0; i < b.size(); ++i) {
      const uint32_t size = sizes[at + i];
      EXPECT_EQ(b.meta(i).caplen, std::min(size, o.frame_bytes));
      EXPECT_EQ(b.meta(i).len, size);
      got.push_back(bytes_of(b, i));
    }
  });
  ASSERT_EQ(got.size(), sizes.size());
  const auto want = frames_of(*whole);
  for (size_t k = 0; k < sizes.size(); ++k)
    EXPECT_EQ(got[k], Bytes(want[k].begin(), want[k].begin() + got[k].size())) << k;
  // TX takes the whole frames (chains of mbufs where they are longer than one).
  const auto idx = all_indices(*whole);
  EXPECT_EQ(port->tx_burst(0, *whole, span_of(idx)), whole->size());
  ASSERT_TRUE(port->flush().is_ok());
  EXPECT_EQ(frames_in(out), want);
}

TEST(DpdkPort, ConcurrentWorkersLoseNothing) {
  const std::string dir = support::temp_dir();
  const std::string out = dir + "/out.pcap";
  PortOptions o;
  o.workers = 4;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_pcap0,tx_pcap=" + out, o);
  // No rx source: send-only, as pcap::OUT is.
  EXPECT_EQ(port->rx_queue_count(), 0u);
  EXPECT_TRUE(port->rx_done(0));
  PacketBatch src = traffic(200, 3);
  std::vector<std::thread> workers;
  for (uint32_t w = 0; w < 4; ++w)
    workers.emplace_back([&, w] {
      const auto idx = all_indices(src);
      for (int i = 0; i < 10; ++i) EXPECT_EQ(port->tx_burst(w, src, span_of(idx)), 200u);
    });
  for (auto& t : workers) t.join();
  ASSERT_TRUE(port->flush().is_ok());
  EXPECT_EQ(frames_in(out).size(), 8000u);
  EXPECT_EQ(port->stats().tx, 8000u);
  EXPECT_EQ(port->stats().tx_errors, 0u);
}

// --- net_ring ----------------------------------------------------------------------------------

TEST(DpdkPort, RingTxFeedsItsRx) {
  PortOptions o;
  o.index = 2;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_ring0", o);
  ASSERT_EQ(port->rx_queue_count(), 1u);
  PacketBatch src = traffic(700, 5);
  // Sent in three parts from another thread (not an EAL lcore, as the pipeline's workers).
  std::thread sender([&] {
    const auto idx = all_indices(src);
    for (uint32_t at = 0; at < 700; at += 300) {
      const uint32_t k = std::min<uint32_t>(300, 700 - at);
      EXPECT_EQ(port->tx_burst(0, src, span_of(idx).subspan(at, k)), k);
    }
  });
  const uint32_t n = drain(*port, 700, 128, {128, 5, 77}, [&](const PacketBatch& b, uint32_t at) {
    for (uint32_t i = 0; i < b.size(); ++i) {
      ASSERT_EQ(bytes_of(b, i), bytes_of(src, at + i)) << at + i;
      ASSERT_EQ(b.meta(i).port, 2);
    }
  });
  sender.join();
  EXPECT_EQ(n, 700u);
  EXPECT_FALSE(port->rx_done(0));  // a live device never ends
  const PortStats s = port->stats();
  EXPECT_EQ(s.rx, 700u);
  EXPECT_EQ(s.tx, 700u);
  EXPECT_EQ(s.rx_bytes, s.tx_bytes);
  ASSERT_TRUE(port->flush().is_ok());
  EXPECT_TRUE(port->rx_done(0));
}

TEST(DpdkPort, ZeroCopyHoldsSendsAndGivesBackEveryMbuf) {
  PortOptions o;
  o.held_packets = 256;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_ring3", o);
  PacketBatch src = traffic(300, 11);
  auto arena      = PacketBatch::create_in_arena(128);
  ASSERT_TRUE(arena.is_ok()) << arena.status().to_string();
  PacketBatch& b = *arena;
  auto receive   = [&](uint32_t want) {
    b.clear();
    const auto deadline = Clock::now() + std::chrono::seconds(5);
    while (b.size() < want && Clock::now() < deadline) {
      auto r = port->rx_burst(0, b, want - b.size());
      ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    }
    ASSERT_EQ(b.size(), want);
  };
  const auto idx = all_indices(src);
  ASSERT_EQ(port->tx_burst(0, src, span_of(idx).subspan(0, 100)), 100u);  // copies in
  receive(100);
  for (uint32_t i = 0; i < 100; ++i) {
    ASSERT_NE(b.handle(i), nullptr) << i;  // held where the ring's mbuf has it
    ASSERT_EQ(bytes_of(b, i), bytes_of(src, i)) << i;
  }
  // A module prepends 4 bytes to packet 0 (into the mbuf's headroom) and cuts packet 2;
  // packet 1 leaves by two ways (shared): copied, its mbuf still held.
  ASSERT_GE(b.headroom(0), 4u);
  b.meta(0).offset -= 4;
  b.meta(0).caplen += 4;
  b.meta(0).len += 4;
  std::memcpy(b.data(0), "\x01\x02\x03\x04", 4);
  b.meta(2).caplen = b.meta(2).len = 20;
  b.meta(1).flags |= packet::kMetaShared;
  std::vector<Bytes> want;
  for (uint32_t i = 0; i < 100; ++i) want.push_back(bytes_of(b, i));
  const auto all = all_indices(b);
  ASSERT_EQ(port->tx_burst(0, b, span_of(all)), 100u);
  EXPECT_EQ(b.handle(0), nullptr);  // lent: the port sent the mbuf itself
  EXPECT_NE(b.handle(1), nullptr);  // shared: copied
  b.clear();                        // packet 1's mbuf goes back here
  receive(100);
  for (uint32_t i = 0; i < 100; ++i) ASSERT_EQ(bytes_of(b, i), want[i]) << i;
  // Round and round: 40 x 300 packets through a pool of a few thousand mbufs.
  for (int round = 0; round < 40; ++round) {
    b.clear();
    ASSERT_EQ(port->tx_burst(0, src, span_of(idx)), 300u) << round;
    for (uint32_t got = 0; got < 300;) {
      receive(std::min<uint32_t>(128, 300 - got));
      for (uint32_t i = 0; i < b.size(); ++i)
        ASSERT_EQ(bytes_of(b, i), bytes_of(src, got + i)) << round << " " << got + i;
      const auto sent = all_indices(b);  // lent: not read after this
      if (round % 2) ASSERT_EQ(port->tx_burst(0, b, span_of(sent)), b.size());  // back in
      got += b.size();
    }
    if (round % 2) {  // what went back in comes out again
      for (uint32_t got = 0; got < 300;) {
        receive(std::min<uint32_t>(128, 300 - got));
        got += b.size();
      }
    }
  }
  b.clear();
  const PortStats s = port->stats();
  EXPECT_EQ(s.tx_errors, 0u);
  EXPECT_EQ(s.rx_dropped, 0u);
  EXPECT_EQ(s.rx, s.tx);
  ASSERT_TRUE(port->flush().is_ok());
}

TEST(DpdkPort, CopyModeBatchesHoldNothing) {
  PortOptions o;
  o.zero_copy = false;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_ring4", o);
  PacketBatch src = traffic(50, 12);
  const auto idx  = all_indices(src);
  ASSERT_EQ(port->tx_burst(0, src, span_of(idx)), 50u);
  auto b = PacketBatch::create_in_arena(64);
  ASSERT_TRUE(b.is_ok());
  auto r = port->rx_burst(0, *b, 64);
  ASSERT_TRUE(r.is_ok());
  ASSERT_EQ(*r, 50u);
  for (uint32_t i = 0; i < 50; ++i) {
    EXPECT_EQ(b->handle(i), nullptr);
    EXPECT_EQ(bytes_of(*b, i), bytes_of(src, i));
  }
}

TEST(DpdkPort, RingQueuesPairUp) {
  // Two RX and two TX queues (net_ring has 16 ring pairs, no RSS): worker w's frames come back
  // on RX queue w.
  PortOptions o;
  o.rx_queues = 2;
  o.workers   = 2;
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_ring1", o);
  ASSERT_EQ(port->rx_queue_count(), 2u);
  PacketBatch src = traffic(20, 9);
  const auto idx  = all_indices(src);
  ASSERT_EQ(port->tx_burst(0, src, span_of(idx).subspan(0, 5)), 5u);
  ASSERT_EQ(port->tx_burst(1, src, span_of(idx).subspan(5, 15)), 15u);
  PacketBatch b = make_batch(64);
  for (uint32_t q = 0; q < 2; ++q) {
    b.clear();
    auto r = port->rx_burst(q, b, 64);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    ASSERT_EQ(*r, q == 0 ? 5u : 15u);
    for (uint32_t i = 0; i < b.size(); ++i) EXPECT_EQ(bytes_of(b, i), bytes_of(src, q * 5 + i));
  }
  EXPECT_FALSE(port->rx_burst(2, b, 1).is_ok());  // no such queue
}

TEST(DpdkPort, EalLeavesTheThreadAffinityAlone) {
  // rte_eal_init() pins its caller to the main lcore's CPUs; the pipeline's threads (started
  // later from this one) must not inherit that.
  cpu_set_t before, after;
  ASSERT_EQ(sched_getaffinity(0, sizeof before, &before), 0);
  OPEN_DPDK_OR_SKIP(port, "dpdk:net_ring2", PortOptions{});
  ASSERT_EQ(sched_getaffinity(0, sizeof after, &after), 0);
  EXPECT_TRUE(CPU_EQUAL(&before, &after))
      << CPU_COUNT(&before) << " CPUs before, " << CPU_COUNT(&after) << " after";
}

// --- errors ------------------------------------------------------------------------------------

TEST(DpdkPort, ErrorsNameThePortAndNamesAreReusable) {
  const std::string dir = support::temp_dir();
  const std::string out = "dpdk:net_pcap3,tx_pcap=" + dir + "/out.pcap";
  OPEN_DPDK_OR_SKIP(first, out, PortOptions{});
  auto again = open_port("lan", out, {});
  ASSERT_FALSE(again.is_ok());
  EXPECT_EQ(again.status().message().rfind("port lan: dpdk: ", 0), 0u) << again.status().message();
  EXPECT_NE(again.status().message().find("net_pcap3"), std::string::npos);
  first.reset();  // closing removes the device: the name is free again
  auto reopened = open_port("lan", out, {});
  EXPECT_TRUE(reopened.is_ok()) << reopened.status().to_string();

  auto unknown = open_port("lan", "dpdk:net_nosuchdriver0", {});
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().message().rfind("port lan: dpdk: ", 0), 0u)
      << unknown.status().message();
  auto missing = open_port("lan", "dpdk:net_pcap0,rx_pcap=/nonexistent/in.pcap", {});
  ASSERT_FALSE(missing.is_ok());
  EXPECT_NE(missing.status().message().find("net_pcap0"), std::string::npos)
      << missing.status().message();
  // A failed open leaves nothing behind.
  PacketBatch src = traffic(3, 1);
  write_capture(dir + "/in.pcap", src);
  auto fine = open_port("lan", "dpdk:net_pcap0,rx_pcap=" + dir + "/in.pcap", {});
  EXPECT_TRUE(fine.is_ok()) << fine.status().to_string();
}

}  // namespace
}  // namespace warpath::runtime
