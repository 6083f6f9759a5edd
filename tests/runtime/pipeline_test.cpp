// tests/runtime/pipeline_test.cpp: the pipeline (runtime::run) against the data path's and the
// classifier's references, on in-memory ports, at batch sizes 1 .. large, with one and several
// workers, CPU and offload (master) shading, auto policy, delay-bound flushing and stop/drain.
#include "warpath/runtime/pipeline.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstring>
#include <map>
#include <mutex>
#include <thread>
#include <vector>

#include "modules/actions.hpp"
#include "runtime/latency_histogram.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/lookup/check.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::runtime {
namespace {

using Bytes = std::vector<uint8_t>;

// A port fed from a batch: packets are spread over `queues` RX queues by a hash of the frame's
// IP addresses (so a flow stays on one queue), delivered at most `burst` per call; `endless`
// replays the input forever. TX records every frame per worker, in order.
class MemoryPort final : public Port {
 public:
  MemoryPort(std::string name, uint16_t index, const packet::PacketBatch* in, uint32_t queues,
             uint32_t burst = 32, bool endless = false)
      : name_(std::move(name)), index_(index), in_(in), burst_(burst), endless_(endless) {
    order_.resize(in ? queues : 0);
    pos_.assign(order_.size(), 0);
    for (uint32_t i = 0; in && i < in->size(); ++i) {
      uint32_t h       = 0;
      const uint8_t* d = in->data(i);
      for (uint32_t b = 26; b < 34 && b < in->meta(i).caplen; ++b) h = h * 31 + d[b];
      order_[h % queues].push_back(i);
    }
  }
  const std::string& name() const noexcept override { return name_; }
  std::string describe() const override { return "memory"; }
  uint32_t rx_queue_count() const noexcept override { return uint32_t(order_.size()); }
  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& b, uint32_t max) override {
    uint32_t n = 0;
    while (n < max && n < burst_ && !rx_done(q)) {
      const uint32_t i = order_[q][pos_[q] % order_[q].size()];
      const auto& m    = in_->meta(i);
      if (!b.append(in_->data(i), m.caplen, m.len, m.timestamp_ns, index_)) break;
      ++pos_[q];
      ++n;
    }
    rx_ += n;
    return n;
  }
  bool rx_done(uint32_t q) const noexcept override {
    return order_[q].empty() || (!endless_ && pos_[q] >= order_[q].size());
  }
  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& b,
                    Span<const uint32_t> which) override {
    std::lock_guard<std::mutex> lock(mu_);
    const uint32_t n = std::min(which.size, tx_limit_);  // a full ring takes the first n
    for (uint32_t k = 0; k < n; ++k) {
      const uint8_t* d = b.data(which[k]);
      sent_[worker].push_back(Bytes(d, d + b.meta(which[k]).caplen));
    }
    tx_ += n;
    return n;
  }
  PortLink link() const override {
    PortLink l;
    l.mtu = mtu_;
    return l;
  }
  uint32_t mtu_      = 0;           ///< the link's MTU (0: none)
  uint32_t tx_limit_ = UINT32_MAX;  ///< frames a tx_burst takes at most
  PortStats stats() const override {
    PortStats s;
    s.rx = rx_.load();
    s.tx = tx_.load();
    return s;
  }
  std::vector<Bytes> all_sent() const {
    std::vector<Bytes> v;
    for (auto& [w, l] : sent_) v.insert(v.end(), l.begin(), l.end());
    return v;
  }
  std::map<uint32_t, std::vector<Bytes>> sent_;

 private:
  std::string name_;
  uint16_t index_;
  const packet::PacketBatch* in_;
  uint32_t burst_;
  bool endless_;
  std::vector<std::vector<uint32_t>> order_;
  std::vector<uint64_t> pos_;
  std::atomic<uint64_t> rx_{0}, tx_{0};
  std::mutex mu_;
};

packet::PacketBatch traffic(uint32_t count, uint64_t seed) {
  gen::TrafficParams p;
  p.count      = count;
  p.seed       = seed;
  p.flows      = 512;
  p.vlan_share = 0.1;
  auto b       = gen::batch_for(count);
  EXPECT_TRUE(b.is_ok());
  EXPECT_TRUE(gen::generate_traffic(p, *b).is_ok());
  // Some expired TTLs and broken header checksums, so the slow path is exercised too.
  auto infos = packet::parse_batch(*b, "ref.parse");
  EXPECT_TRUE(infos.is_ok());
  for (uint32_t i = 0; i < b->size(); ++i) {
    const packet::PacketInfo& info = (*infos)[i];
    if (info.l3 != packet::L3::kIpv4 || !info.l3_offset) continue;
    uint8_t* ip = b->data(i) + info.l3_offset;
    if (i % 37 == 0) {  // TTL 1 with a valid checksum: ttl_expired, and an ICMP error back
      ip[8]  = 1;
      ip[10] = ip[11]    = 0;
      const uint16_t sum = gen::internet_checksum(ip, size_t(ip[0] & 0xf) * 4);
      ip[10]             = uint8_t(sum >> 8);
      ip[11]             = uint8_t(sum);
    }
    if (i % 53 == 0) ip[10] ^= 0x5a;  // checksum no longer verifies
  }
  return std::move(*b);
}

struct Expected {
  std::map<uint16_t, std::vector<Bytes>> by_port;  // in input order
  std::vector<Bytes> icmp;                         // Time Exceeded errors, in input order
  uint64_t dropped = 0, slow = 0;
};

// The router's answer through the data path's own batch driver with the reference FIB.
Expected expect_router(const packet::PacketBatch& in, const lookup::RouteTable& table,
                       const forward::RouterConfig& nb, uint16_t ports) {
  Expected e;
  auto copy = packet::PacketBatch::create(in.size(), 2048);
  for (uint32_t i = 0; i < in.size(); ++i)
    copy->append(in.data(i), in.meta(i).caplen, in.meta(i).len, 0, in.meta(i).port);
  auto infos  = packet::parse_batch(*copy, "ref.parse");
  auto fib    = lookup::make_fib("ref.lpm", table);
  auto tables = forward::RouterTables::build(nb);
  forward::RouteKeys keys(copy->size());
  std::vector<lookup::NextHop> nh(copy->size());
  std::vector<forward::ForwardResult> res(copy->size());
  ExecContext ctx;
  EXPECT_TRUE(forward::route_batch(*copy, {infos->data(), copy->size()}, **fib, *tables, keys,
                                   {nh.data(), copy->size()}, {res.data(), copy->size()}, ctx)
                  .is_ok());
  std::vector<uint8_t> icmp(forward::kMaxIcmpFrameBytes);
  auto originals = packet::parse_batch(in, "ref.parse");
  for (uint32_t i = 0; i < copy->size(); ++i) {
    if (res[i].reason == forward::Reason::kTtlExpired ||
        res[i].reason == forward::Reason::kHopLimitExpired) {
      const uint16_t port = in.meta(i).port;
      const uint32_t n    = forward::build_time_exceeded(
             in.data(i), in.meta(i).caplen, (*originals)[i], tables->port_mac(port),
             tables->icmp_source4(port), tables->icmp_source6(port), icmp.data());
      if (n) e.icmp.push_back(Bytes(icmp.data(), icmp.data() + n));
    }
    if (res[i].verdict == forward::Verdict::kForward && res[i].port < ports)
      e.by_port[res[i].port].push_back(Bytes(copy->data(i), copy->data(i) + copy->meta(i).caplen));
    else if (res[i].verdict == forward::Verdict::kSlowPath)
      ++e.slow;
    else
      ++e.dropped;
  }
  return e;
}

struct Fixture {
  lookup::RouteTable table;
  forward::RouterConfig neighbors;
  classify::RuleSet rules;
  Fixture() {
    table = lookup::random_route_table(7, 3000, 800);
    table.v4.push_back({0, 0, 1});
    neighbors = forward::default_neighbors(table, 2);
    rules     = classify::random_rule_set(11, classify::KeyLayout::kFiveTuple, 200);
  }
};

RunConfig base_config(const std::string& app, uint32_t batch, uint32_t workers) {
  RunConfig c;
  c.app         = app;
  c.engine      = Offload::kCpu;
  c.batch       = batch;
  c.workers     = workers;
  c.delay_us    = 50;
  c.pin_threads = false;
  c.progress    = false;
  c.ports       = {{"a", "gen:max"}, {"b", "null"}};  // names only: run() gets the ports opened
  return c;
}

struct Ran {
  RunReport report;
  MemoryPort* a;
  MemoryPort* b;
  std::shared_ptr<RunInputs> inputs;  // keeps the ports alive
};

Ran run_memory(const RunConfig& cfg, const Fixture& f, const packet::PacketBatch& in,
               uint32_t queues, uint32_t burst = 32) {
  auto inputs = std::make_shared<RunInputs>();
  auto a      = std::make_unique<MemoryPort>("a", 0, &in, queues, burst);
  auto b      = std::make_unique<MemoryPort>("b", 1, nullptr, 0);
  Ran r{{}, a.get(), b.get(), inputs};
  inputs->ports.push_back(std::move(a));
  inputs->ports.push_back(std::move(b));
  inputs->preload("router.fib", &f.table);
  inputs->preload("router.neighbors", &f.neighbors);
  inputs->preload("acl.rules", &f.rules);
  auto rep = run(cfg, *inputs);
  EXPECT_TRUE(rep.is_ok()) << rep.status().message();
  if (rep.is_ok()) r.report = *rep;
  return r;
}

TEST(LatencyHistogram, QuantilesWithinThreePercent) {
  LatencyHistogram h;
  for (uint64_t v = 1; v <= 100000; ++v) h.record(v * 10);
  EXPECT_EQ(h.count(), 100000u);
  for (double q : {0.5, 0.99, 0.999}) {
    const double want = q * 1e6;
    EXPECT_NEAR(double(h.quantile(q)), want, want * 0.035) << q;
  }
  EXPECT_EQ(h.max(), 1000000u);
  LatencyHistogram e;
  EXPECT_EQ(e.quantile(0.5), 0u);
}

TEST(Actions, ParseAndRuleActions) {
  EXPECT_EQ(parse_action("deny")->kind, ActionKind::kDeny);
  EXPECT_EQ(parse_action("drop")->kind, ActionKind::kDeny);
  EXPECT_EQ(parse_action("output:3")->port, 3);
  EXPECT_FALSE(parse_action("output:70000").is_ok());
  EXPECT_FALSE(parse_action("forward").is_ok());
  // OpenFlow action lists, as ovs-ofctl reads them.
  const auto of = classify::KeyLayout::kOpenFlow;
  classify::Rule r;
  r.action = "actions=drop";
  EXPECT_EQ(rule_action(r, of, {})->kind, ActionKind::kDeny);
  r.action = "mod_vlan_vid:3,output:2";
  EXPECT_EQ(rule_action(r, of, {})->port, 2);
  r.action = "controller(reason=no_match,max_len=128),output:4";
  EXPECT_EQ(rule_action(r, of, {})->port, 4) << "commas inside parentheses";
  r.action = "7";
  EXPECT_EQ(rule_action(r, of, {})->port, 7) << "a bare number is an output";
  r.action = "enqueue:5:1";
  EXPECT_EQ(rule_action(r, of, {})->port, 5);
  r.action = "goto:Inspect";
  EXPECT_EQ(rule_action(r, of, {})->context, "Inspect");
  r.action = "NORMAL";
  EXPECT_EQ(rule_action(r, of, {ActionKind::kDeny, 0})->kind, ActionKind::kPermit);
  // Regression: an empty or missing list drops, as in Open vSwitch; a typo is an
  // error, never a permit.
  r.action = "";
  EXPECT_EQ(rule_action(r, of, {ActionKind::kPermit, 0})->kind, ActionKind::kDeny);
  r.action = "actions=";
  EXPECT_EQ(rule_action(r, of, {ActionKind::kPermit, 0})->kind, ActionKind::kDeny);
  for (const char* bad : {"dorp", "output:x", "drop,,output:1", "outptu:1", "enqueue:x:1"}) {
    r.action = bad;
    auto a   = rule_action(r, of, {});
    ASSERT_FALSE(a.is_ok()) << bad;
    EXPECT_NE(a.status().message().find(bad == std::string("drop,,output:1") ? "empty" : ""),
              std::string::npos);
  }
  // ClassBench's trailing word: one of parse_action's, exactly; none -> the match action.
  const auto cb = classify::KeyLayout::kFiveTuple;
  r.action      = "";
  EXPECT_EQ(rule_action(r, cb, {ActionKind::kDeny, 0})->kind, ActionKind::kDeny);
  r.action = "output:3";
  EXPECT_EQ(rule_action(r, cb, {})->port, 3);
  for (const char* bad : {"dney", "DENY", "Permit", "output:", "goto:"}) {
    r.action = bad;
    auto a   = rule_action(r, cb, {});
    ASSERT_FALSE(a.is_ok()) << bad;
    EXPECT_NE(a.status().message().find(std::string("'") + bad + "'"), std::string::npos)
        << a.status().message();
  }
}

void expect_router_output(const Ran& r, const Expected& e, bool exact_order) {
  EXPECT_TRUE(r.report.check().is_ok()) << r.report.check().message();
  EXPECT_EQ(r.report.dropped, e.dropped);
  EXPECT_EQ(r.report.slow_path, e.slow);
  ASSERT_FALSE(e.icmp.empty());
  EXPECT_EQ(r.report.icmp_sent, e.icmp.size());
  // Port a (the ingress port) also carries the ICMP errors: split them off first.
  std::vector<Bytes> icmp_got, a_rest;
  for (auto& f : r.a->all_sent())
    (std::find(e.icmp.begin(), e.icmp.end(), f) != e.icmp.end() ? icmp_got : a_rest).push_back(f);
  auto icmp_want = e.icmp;
  if (!exact_order) {
    std::sort(icmp_got.begin(), icmp_got.end());
    std::sort(icmp_want.begin(), icmp_want.end());
  }
  EXPECT_TRUE(icmp_got == icmp_want)
      << icmp_got.size() << " ICMP errors, want " << icmp_want.size();
  for (uint16_t p = 0; p < 2; ++p) {
    auto got  = p == 0 ? a_rest : r.b->all_sent();
    auto want = e.by_port.count(p) ? e.by_port.at(p) : std::vector<Bytes>{};
    ASSERT_EQ(got.size(), want.size()) << "port " << p;
    if (!exact_order) {
      std::sort(got.begin(), got.end());
      std::sort(want.begin(), want.end());
    }
    for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i], want[i]) << "port " << p << " #" << i;
  }
}

TEST(Pipeline, RouterMatchesDataPathAtEveryBatchSize) {
  Fixture f;
  const auto in    = traffic(3000, 3);
  const Expected e = expect_router(in, f.table, f.neighbors, 2);
  for (uint32_t batch : {1u, 7u, 31u, 32u, 33u, 1024u, 4096u}) {
    SCOPED_TRACE(batch);
    Ran r = run_memory(base_config("router", batch, 1), f, in, 1);
    EXPECT_EQ(r.report.rx, in.size());
    EXPECT_EQ(r.report.in_flight, 0u);
    expect_router_output(r, e, true);
  }
}

TEST(Pipeline, EmptySourceEndsAtOnce) {
  Fixture f;
  auto in = packet::PacketBatch::create(1, 2048);
  Ran r   = run_memory(base_config("router+acl", 64, 2), f, *in, 1);
  EXPECT_EQ(r.report.rx, 0u);
  EXPECT_EQ(r.report.chunks, 0u);
  EXPECT_TRUE(r.report.check().is_ok());
}

TEST(Pipeline, OffloadMasterGathersAndScattersLikeTheCpu) {
  Fixture f;
  const auto in    = traffic(5000, 4);
  const Expected e = expect_router(in, f.table, f.neighbors, 2);
  for (uint32_t workers : {1u, 3u}) {
    SCOPED_TRACE(workers);
    RunConfig c      = base_config("router", 64, workers);
    c.engine         = Offload::kGpu;
    c.offload_device = "cpu";
    Ran r            = run_memory(c, f, in, 4);
    EXPECT_EQ(r.report.gpu_chunks, r.report.chunks);
    EXPECT_GT(r.report.gpu_launches, 0u);
    EXPECT_EQ(r.report.gpu_packets, in.size());
    expect_router_output(r, e, workers == 1 ? false : false);
  }
}

// A worker's frames grow to its rate times the offload's round trip (frame_window.hpp): with
// launches held 2 ms (offload_delay_us, the CPU offload device) and frames of 16 packets, the
// 4 + 1 frames a worker starts with would cover 80 packets a round trip, so it adds frames, up
// to the cap its memory was sized for, and every packet still leaves as the CPU would send it.
// Without a master a worker keeps the frames it started with.
TEST(Pipeline, FramesGrowToCoverTheOffloadRoundTrip) {
  Fixture f;
  const auto in               = traffic(6000, 9);
  const Expected e            = expect_router(in, f.table, f.neighbors, 2);
  RunConfig c                 = base_config("router", 16, 1);
  c.engine                    = Offload::kGpu;
  c.offload_device            = "cpu";
  c.offload_delay_us          = 2000;
  Ran r                       = run_memory(c, f, in, 1);
  const RunReport::Frames& fr = r.report.frames;
  EXPECT_EQ(fr.cap, 65u) << "4,096 packets' worth of 16-packet frames, at most 64, + 1";
  EXPECT_GT(fr.most, 5u) << "it added frames";
  EXPECT_LE(fr.most, fr.cap);
  EXPECT_GE(fr.round_trip_us, 2000.0) << "no frame came back before the emulated round trip";
  EXPECT_GT(fr.interval_us, 0.0);
  EXPECT_GT(fr.needed, 5u);
  EXPECT_GT(fr.waits, 0u) << "it waited for frames before it had enough";
  EXPECT_EQ(r.report.gpu_packets, in.size());
  expect_router_output(r, e, false);

  c.engine           = Offload::kCpu;
  c.offload_delay_us = 0;
  Ran cpu            = run_memory(c, f, in, 1);
  EXPECT_EQ(cpu.report.frames.most, 5u) << "the cpu policy's 4 in flight + 1";
  EXPECT_EQ(cpu.report.frames.needed, 0u);
  EXPECT_EQ(cpu.report.frames.round_trip_us, 0.0);
  expect_router_output(cpu, e, false);
}

// Per flow (here: per RX queue, since a flow never leaves its queue), packets leave in the
// order they arrived, whatever the mix of CPU and offloaded chunks.
TEST(Pipeline, FlowOrderKeptWithMixedShading) {
  Fixture f;
  const auto in    = traffic(40000, 5);
  RunConfig c      = base_config("acl", 16, 2);
  c.engine         = Offload::kAuto;  // a busy worker offloads a share of its chunks
  c.offload_device = "cpu";
  c.set_setting("acl.match", "permit");
  c.set_setting("acl.default", "permit");
  // Whether the auto policy offloads depends on how fast the workers are against the arrival
  // rate, which a loaded machine (ctest -j beside other heavy tests) changes: up to 20 runs, a
  // moment apart, until one mixes CPU and offload shading. Every run's order is checked; a
  // machine too loaded to give a mixed run in 40 tries skips the mixed claim (said so), rather
  // than failing a correct pipeline.
  Ran r = run_memory(c, f, in, 4, 8);
  for (int attempt = 1; attempt < 40 && (r.report.cpu_chunks == 0 || r.report.gpu_chunks == 0);
       ++attempt) {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    r = run_memory(c, f, in, 4, 8);
  }
  EXPECT_TRUE(r.report.check().is_ok());
  const bool mixed = r.report.cpu_chunks > 0 && r.report.gpu_chunks > 0;
  // acl app: permitted packets from port a leave on port b unchanged, so the frames out of b,
  // split by flow, must be in input order; the parser's rejects are dropped as malformed.
  auto key = [](const Bytes& fr) {
    uint32_t h = 0;
    for (uint32_t b = 26; b < 34 && b < fr.size(); ++b) h = h * 31 + fr[b];
    return h;
  };
  auto infos = packet::parse_batch(in, "ref.parse");
  std::map<uint32_t, std::vector<Bytes>> want, got;
  uint64_t malformed = 0;
  for (uint32_t i = 0; i < in.size(); ++i) {
    if ((*infos)[i].status != packet::ParseStatus::kOk) {
      ++malformed;
      continue;
    }
    Bytes fr(in.data(i), in.data(i) + in.meta(i).caplen);
    want[key(fr)].push_back(fr);
  }
  for (auto& [w, frames] : r.b->sent_)
    for (auto& fr : frames) got[key(fr)].push_back(fr);
  EXPECT_GT(malformed, 0u);
  EXPECT_EQ(r.report.drops_by_reason["malformed"], malformed);
  EXPECT_TRUE(got == want) << "a flow's packets left out of order (or were lost)";
  if (!mixed)
    GTEST_SKIP() << "order checked, but no run of 40 mixed CPU and offload shading (cpu chunks "
                 << r.report.cpu_chunks << ", offloaded " << r.report.gpu_chunks
                 << "): the machine was too loaded for the auto policy to offload";
}

TEST(Pipeline, AclDecisionsMatchReferenceClassifier) {
  Fixture f;
  // Every third rule denies, every fifth sends to port a (output:0); the rest permit.
  for (size_t i = 0; i + 1 < f.rules.rules.size(); ++i)
    f.rules.rules[i].action = i % 3 == 0 ? "deny" : i % 5 == 0 ? "output:0" : "";
  const auto in = traffic(4000, 6);
  for (Offload engine : {Offload::kCpu, Offload::kGpu}) {
    RunConfig c      = base_config("acl", 100, 1);
    c.engine         = engine;
    c.offload_device = "cpu";
    c.set_setting("acl.default", "deny");
    c.set_setting("acl.ipv6", "deny");
    Ran r            = run_memory(c, f, in, 1);
    // Reference: parse, 5-tuple, ref.linear, action.
    auto infos    = packet::parse_batch(in, "ref.parse");
    auto ref      = classify::make_classifier("ref.linear", f.rules);
    uint64_t deny = 0, to_a = 0, to_b = 0, malformed = 0, ipv6 = 0;
    std::vector<packet::FiveTuple4> keys(in.size());
    std::vector<uint8_t> present(in.size());
    packet::extract_five_tuple4({infos->data(), in.size()}, keys.data(), present.data());
    for (uint32_t i = 0; i < in.size(); ++i) {
      const auto& info = (*infos)[i];
      if (info.status != packet::ParseStatus::kOk) {
        ++malformed;
        continue;
      }
      if (!present[i]) {
        if (info.l3 == packet::L3::kIpv6)
          ++ipv6;  // the ipv6 action (deny), counted apart from the rules' denies
        else
          ++to_b;
        continue;
      }
      classify::KeyBuffer kb(classify::KeyLayout::kFiveTuple, 1);
      uint32_t w[4];
      classify::five_tuple_words(keys[i], w);
      kb.set(0, w);
      uint32_t m = 0;
      ExecContext ctx;
      ASSERT_TRUE((*ref)->classify(kb.view(), {&m, 1}, ctx).is_ok());
      if (m == classify::kNoMatch || m % 3 == 0 && m + 1 < f.rules.rules.size())
        ++deny;
      else if (m % 5 == 0 && m + 1 < f.rules.rules.size())
        ++to_a;
      else
        ++to_b;
    }
    const auto& d = r.report.drops_by_reason;
    EXPECT_EQ(d.count("acl_deny") ? d.at("acl_deny") : 0, deny);
    EXPECT_EQ(d.count("acl_ipv6") ? d.at("acl_ipv6") : 0, ipv6);
    EXPECT_EQ(d.count("malformed") ? d.at("malformed") : 0, malformed);
    EXPECT_EQ(r.a->all_sent().size(), to_a);
    EXPECT_EQ(r.b->all_sent().size(), to_b);
    EXPECT_TRUE(r.report.check().is_ok());
  }
}

TEST(Pipeline, OpenFlowAclDecisionsMatchReferenceClassifier) {
  // 12-field rules: every packet has a key (in_port included), so every packet is classified.
  Fixture f;
  // Rules written as ovs-ofctl flows, then 200 random ones below them (rarely matching).
  auto of = classify::parse_openflow_rules(
      "priority=3000,tcp,actions=drop\n"
      "priority=2999,udp,tp_dst=53,actions=drop\n"
      "priority=2998,ip,actions=mod_nw_tos:4,output:0\n",
      "acl.flows");
  ASSERT_TRUE(of.is_ok()) << of.status().message();
  f.rules          = *of;
  const auto extra = classify::random_rule_set(12, classify::KeyLayout::kOpenFlow, 200);
  for (const auto& r : extra.rules) {
    f.rules.rules.push_back(r);
    f.rules.rules.back().action = "actions=drop";
  }
  const auto in = traffic(3000, 13);
  for (Offload engine : {Offload::kCpu, Offload::kGpu}) {
    RunConfig c      = base_config("acl", 128, 1);
    c.engine         = engine;
    c.offload_device = "cpu";
    c.set_setting("acl.default", "permit");
    Ran r            = run_memory(c, f, in, 1);
    // Reference: ref.parse, the OpenFlow tuples, ref.linear, the rule's action.
    auto infos = packet::parse_batch(in, "ref.parse");
    std::vector<uint32_t> words(size_t(packet::kOfWords) * in.size());
    packet::extract_of_tuples(in.view(), {infos->data(), in.size()},
                              packet::OfTupleSoA{words.data(), in.size(), in.size()});
    const classify::KeyBatch kb{words.data(), in.size(), in.size(), classify::KeyLayout::kOpenFlow};
    std::vector<uint32_t> match(in.size());
    auto ref = classify::make_classifier("ref.linear", f.rules);
    ExecContext ctx;
    ASSERT_TRUE((*ref)->classify(kb, {match.data(), in.size()}, ctx).is_ok());
    uint64_t deny = 0, to_a = 0, to_b = 0, malformed = 0;
    for (uint32_t i = 0; i < in.size(); ++i) {
      if ((*infos)[i].status != packet::ParseStatus::kOk)
        ++malformed;
      else if (match[i] == classify::kNoMatch)
        ++to_b;  // permit: the paired port
      else if (match[i] == 2)
        ++to_a;  // output:0
      else
        ++deny;
    }
    EXPECT_GT(deny, 0u);
    EXPECT_GT(to_a + to_b, 0u);
    EXPECT_EQ(r.report.drops_by_reason["acl_deny"], deny);
    EXPECT_EQ(r.report.drops_by_reason["malformed"], malformed);
    EXPECT_EQ(r.a->all_sent().size(), to_a);
    EXPECT_EQ(r.b->all_sent().size(), to_b);
    EXPECT_TRUE(r.report.check().is_ok());
  }
}

TEST(Pipeline, RouterBehindAclDropsDeniedAndRoutesTheRest) {
  Fixture f;
  for (auto& rule : f.rules.rules) rule.action = "";
  const auto in    = traffic(2000, 8);
  RunConfig c      = base_config("router+acl", 256, 1);
  c.set_setting("acl.match", "permit");
  c.set_setting("acl.default", "permit");
  Ran r            = run_memory(c, f, in, 1);
  // Everything permitted: identical to the router alone.
  expect_router_output(r, expect_router(in, f.table, f.neighbors, 2), true);
  c.set_setting("acl.match", "deny");
  c.set_setting("acl.default", "deny");
  c.set_setting("acl.ipv6", "deny");
  r                = run_memory(c, f, in, 1);
  EXPECT_TRUE(r.report.check().is_ok());
  EXPECT_GT(r.report.drops_by_reason["acl_deny"], in.size() / 2);
}

TEST(Pipeline, DelayBoundFlushesPartialChunks) {
  Fixture f;
  const auto in = traffic(200, 9);
  RunConfig c   = base_config("router", 4096, 1);
  c.delay_us    = 1;
  Ran r         = run_memory(c, f, in, 1, 1);  // one packet per poll: chunks never fill
  EXPECT_TRUE(r.report.check().is_ok());
  EXPECT_GT(r.report.chunks, 1u);
  EXPECT_LT(r.report.batch_fill, 1.0);
  EXPECT_EQ(r.report.latency.count, r.report.tx);
}

TEST(Pipeline, StopDrainsAnEndlessSource) {
  Fixture f;
  const auto in = traffic(500, 10);
  for (Offload engine : {Offload::kCpu, Offload::kAuto}) {
    RunConfig c      = base_config("router+acl", 128, 2);
    c.engine         = engine;
    c.offload_device = "cpu";
    RunInputs inputs;
    inputs.ports.push_back(std::make_unique<MemoryPort>("a", 0, &in, 2, 32, true));
    inputs.ports.push_back(std::make_unique<MemoryPort>("b", 1, nullptr, 0));
    inputs.preload("router.fib", &f.table);
    inputs.preload("router.neighbors", &f.neighbors);
    inputs.preload("acl.rules", &f.rules);
    std::atomic<bool> stop{false};
    RunHooks hooks;
    hooks.stop                = &stop;
    hooks.progress_interval_s = 0.02;
    int progress_calls        = 0;
    hooks.progress            = [&](const RunReport& s) {
      ++progress_calls;
      EXPECT_FALSE(s.final);
      if (s.rx > 20000) stop = true;
    };
    auto rep = run(c, inputs, hooks);
    ASSERT_TRUE(rep.is_ok()) << rep.status().message();
    EXPECT_TRUE(rep->final);
    EXPECT_GT(rep->rx, 20000u);
    EXPECT_EQ(rep->in_flight, 0u);
    EXPECT_TRUE(rep->check().is_ok()) << rep->check().message();
    EXPECT_GT(progress_calls, 0);
  }
}

TEST(Pipeline, BadInputsAreErrors) {
  Fixture f;
  const auto in = traffic(10, 11);
  RunConfig c   = base_config("router", 64, 1);
  RunInputs inputs;
  inputs.ports.push_back(std::make_unique<MemoryPort>("a", 0, &in, 1));
  // No FIB given: the router module builds its documented default, the built-in table.
  auto r = run(c, inputs);
  ASSERT_TRUE(r.is_ok()) << r.status().message();
  ASSERT_EQ(r->modules.size(), 1u);
  EXPECT_NE(r->modules[0].describe.find("IPv4"), std::string::npos) << r->modules[0].describe;
  EXPECT_TRUE(r->check().is_ok()) << r->check().message();
  c.engine         = Offload::kGpu;
  c.offload_device = "cuda";
  RunInputs in2;
  in2.ports.push_back(std::make_unique<MemoryPort>("a", 0, &in, 1));
  in2.preload("router.fib", &f.table);
  in2.preload("router.neighbors", &f.neighbors);
  if (warpath::cuda_device_count() == 0) {
    auto g = run(c, in2);
    ASSERT_FALSE(g.is_ok());
    EXPECT_NE(g.status().message().find("--engine gpu"), std::string::npos);
  }
  Fixture f2;
  f2.rules.rules[0].action = "output:9";
  RunConfig a              = base_config("acl", 64, 1);
  RunInputs in3;
  in3.ports.push_back(std::make_unique<MemoryPort>("a", 0, &in, 1));
  in3.preload("acl.rules", &f2.rules);
  auto e = run(a, in3);
  ASSERT_FALSE(e.is_ok());
  EXPECT_NE(e.status().message().find("output:9"), std::string::npos);
}

// An Ethernet frame with an IPv4 UDP packet of `ip_len` bytes, identification `id`.
Bytes udp4(uint32_t ip_len, bool df, uint16_t id) {
  Bytes f(14 + ip_len, uint8_t(id * 7));
  std::memset(f.data(), 0x02, 12);
  f[12] = 0x08, f[13] = 0x00;
  uint8_t* ip = f.data() + 14;
  ip[0] = 0x45, ip[1] = 0;
  ip[2] = uint8_t(ip_len >> 8), ip[3] = uint8_t(ip_len);
  ip[4] = uint8_t(id >> 8), ip[5] = uint8_t(id);
  ip[6] = df ? 0x40 : 0, ip[7] = 0;
  ip[8] = 64, ip[9] = 17;
  const uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
  std::memcpy(ip + 12, src, 4), std::memcpy(ip + 16, dst, 4);
  ip[10] = ip[11] = 0;
  const uint16_t sum = gen::internet_checksum(ip, 20);
  ip[10] = uint8_t(sum >> 8), ip[11] = uint8_t(sum);
  ip[20] = 0x13, ip[21] = 0x88, ip[22] = 0x00, ip[23] = 0x35;  // ports 5000 -> 53
  ip[24] = uint8_t((ip_len - 20) >> 8), ip[25] = uint8_t(ip_len - 20), ip[26] = ip[27] = 0;
  return f;
}

// Out of a port whose link MTU is 1,500 bytes, IPv4 packets without DF larger than it leave as
// fragments (three per 3,000-byte packet), in frame order with the small packets around them;
// with DF they are tx_error. A port that takes only part of a burst: the packets it took only
// part of count as tx_error, and the ports' frames still add up.
TEST(Pipeline, PacketsLargerThanTheLinkLeaveAsFragmentsInOrder) {
  Fixture f;
  auto in = packet::PacketBatch::create(300, 2048, 300 * 4096);
  ASSERT_TRUE(in.is_ok());
  uint32_t small = 0, big = 0, big_df = 0;
  for (uint32_t k = 0; k < 300; ++k) {
    const uint32_t kind = k % 3;
    const Bytes frame   = udp4(kind == 0 ? 200 : 3000, kind == 2 && k % 2, uint16_t(k));
    ASSERT_TRUE(in->append(frame.data(), uint32_t(frame.size()), uint32_t(frame.size()), k));
    small += kind == 0, big += kind != 0 && !(kind == 2 && k % 2), big_df += kind == 2 && k % 2;
  }
  auto chain = parse_chain("wire");
  ASSERT_TRUE(chain.is_ok());
  for (uint32_t limit : {UINT32_MAX, 2u}) {
    SCOPED_TRACE(limit);
    RunConfig c     = base_config("router", 64, 1);
    c.chain     = *chain;
    auto inputs = std::make_shared<RunInputs>();
    auto a      = std::make_unique<MemoryPort>("a", 0, &*in, 1, 32);
    auto b      = std::make_unique<MemoryPort>("b", 1, nullptr, 0);
    b->mtu_      = 1500;
    b->tx_limit_ = limit;
    MemoryPort* out = b.get();
    inputs->ports.push_back(std::move(a));
    inputs->ports.push_back(std::move(b));
    auto rep = run(c, *inputs);
    ASSERT_TRUE(rep.is_ok()) << rep.status().message();
    EXPECT_TRUE(rep->check().is_ok()) << rep->check().message();
    EXPECT_EQ(rep->rx, 300u);
    EXPECT_EQ(out->stats().tx, rep->tx + rep->fragments - rep->fragmented) << "the port's frames add up";
    const std::vector<Bytes> sent = out->all_sent();
    // In frame order, whatever the port took: each frame's IP identification (the input's
    // index) never goes back.
    int last = -1;
    for (const Bytes& fr : sent) {
      EXPECT_LE(fr.size(), 14u + 1500u);
      const int id = fr[14 + 4] << 8 | fr[14 + 5];
      EXPECT_GE(id, last) << "reordered";
      last = id;
    }
    if (limit != UINT32_MAX) {
      EXPECT_LT(rep->tx, small + big);
      EXPECT_GT(rep->drops_by_reason.at("tx_error"), big_df);
      continue;
    }
    EXPECT_EQ(rep->tx, small + big);
    EXPECT_EQ(rep->fragmented, big);
    EXPECT_EQ(rep->fragments, 3 * big);
    EXPECT_EQ(rep->drops_by_reason.at("tx_error"), big_df);
    // The fragments of one packet are reassembled by ref.defrag into the packet itself.
    auto d = defrag::make_defragmenter("ref.defrag").value();
    std::vector<uint8_t> whole;
    uint32_t rebuilt = 0;
    for (const Bytes& fr : sent) {
      const int id = fr[14 + 4] << 8 | fr[14 + 5];
      const packet::PacketInfo info =
          packet::core::parse_packet(fr.data(), uint32_t(fr.size()), uint32_t(fr.size()));
      if (!(info.flags & packet::kFragment)) continue;
      whole.clear();
      if (d->add(info, fr.data(), uint32_t(fr.size()), 0, whole) != defrag::FragResult::kCompleted)
        continue;
      ++rebuilt;
      EXPECT_EQ(whole, udp4(3000, false, uint16_t(id))) << "packet " << id;  // wire keeps the TTL
    }
    EXPECT_EQ(rebuilt, big);
  }
}

// A chain given as text runs through the same pipeline: per-module counters add up, the
// module's reasons appear by name, CPU and offload shading agree, and so do 1 and 3 workers.
TEST(Pipeline, ChainOfModulesReportsPerModule) {
  Fixture f;
  const auto in = traffic(6000, 12);
  std::map<std::string, uint64_t> first;
  for (Offload engine : {Offload::kCpu, Offload::kGpu})
    for (uint32_t workers : {1u, 3u}) {
      SCOPED_TRACE(std::to_string(workers) + (engine == Offload::kCpu ? " cpu" : " offload"));
      RunConfig c      = base_config("router", 64, workers);
      c.engine         = engine;
      c.offload_device = "cpu";
      auto chain       = parse_chain("ttl-filter(min=2) -> acl(default=permit) -> router");
      ASSERT_TRUE(chain.is_ok());
      c.chain = *chain;
      Ran r   = run_memory(c, f, in, 4);
      const RunReport& rep = r.report;
      EXPECT_EQ(rep.rx, in.size());
      EXPECT_TRUE(rep.check().is_ok()) << rep.check().message();
      ASSERT_EQ(rep.modules.size(), 3u);
      EXPECT_EQ(rep.modules[0].kind, "ttl-filter");
      EXPECT_EQ(rep.modules[2].kind, "router");
      // TTL 1 packets (traffic(): every 37th) stop at the filter, not at the router.
      EXPECT_GT(rep.modules[0].drops.at("ttl_below_min"), 0u);
      EXPECT_EQ(rep.modules[2].slow_path.count("ttl_expired"), 0u);
      EXPECT_EQ(rep.modules[0].in, rep.rx);
      for (size_t m = 0; m + 1 < rep.modules.size(); ++m) {
        EXPECT_EQ(rep.modules[m].out, rep.modules[m + 1].in) << m;
        uint64_t decided = rep.modules[m].forwarded;
        for (auto& [name, n] : rep.modules[m].drops) decided += n;
        for (auto& [name, n] : rep.modules[m].slow_path) decided += n;
        EXPECT_EQ(rep.modules[m].in, rep.modules[m].out + decided) << m;
      }
      EXPECT_EQ(rep.modules[2].out, 0u);  // the router decides for every packet it sees
      std::map<std::string, uint64_t> totals = rep.drops_by_reason;
      for (auto& [name, n] : rep.slow_path_by_reason) totals["slow:" + name] = n;
      totals["tx"] = rep.tx;
      if (first.empty()) first = totals;
      EXPECT_EQ(totals, first);
    }
}

}  // namespace
}  // namespace warpath::runtime
