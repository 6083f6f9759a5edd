// tests/forward/batch_test.cpp: the batch driver on generated traffic: keys, lookup, verdicts
// and counters that add up, at every burst size.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "forward/forward_test_util.hpp"
#include "support/test_support.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::forward {
namespace {

using testing::ones_complement_checksum;

// Routes for the generator's address space (IPv4 10.0.0.0/8, IPv6 fd00::/8): most packets
// find a route, one prefix has no neighbour, and some addresses have no route at all.
testing::LinearFib make_fib() {
  testing::LinearFib fib;
  fib.v4.push_back({0x0a000000u, 9, 1});    // 10.0.0.0/9
  fib.v4.push_back({0x0a800000u, 10, 2});   // 10.128.0.0/10
  fib.v4.push_back({0x0ac00000u, 11, 99});  // 10.192.0.0/11: next hop without a neighbour
  fib.v6.push_back({lookup::Ip6{0xfd00000000000000ull, 0}, 9, 3});
  fib.v6.push_back({lookup::Ip6{0xfd80000000000000ull, 0}, 10, 1});
  return fib;
}

RouterTables make_tables() {
  RouterConfig c;
  for (lookup::NextHop nh : {1u, 2u, 3u})
    c.neighbors.push_back({nh, uint16_t(nh), default_neighbor_mac(nh)});
  return RouterTables::build(c).value();
}

// Generated traffic with every 7th IPv4 packet's TTL set to 1 and every 11th packet's IPv4
// checksum broken.
packet::PacketBatch traffic(uint32_t count, uint32_t* expired, uint32_t* broken) {
  gen::TrafficParams p;
  p.count    = count;
  p.seed     = 42;
  auto batch = gen::batch_for(count).value();
  EXPECT_TRUE(gen::generate_traffic(p, batch).is_ok());
  auto infos = packet::parse_batch(batch).value();
  *expired = *broken = 0;
  for (uint32_t i = 0; i < batch.size(); ++i) {
    if (infos[i].l3 != packet::L3::kIpv4) continue;
    uint8_t* ip = batch.data(i) + infos[i].l3_offset;
    if (i % 7 == 0) {
      ip[8]  = 1;
      ip[10] = ip[11]  = 0;
      const uint16_t c = ones_complement_checksum(ip, 20);
      ip[10]           = uint8_t(c >> 8);
      ip[11]           = uint8_t(c);
      ++*expired;
    } else if (i % 11 == 0) {
      ip[11] ^= 0x40;
      ++*broken;
    }
  }
  return batch;
}

TEST(ForwardBatch, CountersAddUpOnGeneratedTraffic) {
  uint32_t expired = 0, broken = 0;
  auto batch          = traffic(5000, &expired, &broken);
  const auto original = [&] {
    std::vector<std::vector<uint8_t>> v;
    for (uint32_t i = 0; i < batch.size(); ++i)
      v.emplace_back(batch.data(i), batch.data(i) + batch.meta(i).caplen);
    return v;
  }();
  auto infos        = packet::parse_batch(batch).value();
  const auto fib    = make_fib();
  const auto tables = make_tables();
  RouteKeys keys(batch.size());
  std::vector<lookup::NextHop> nhs(batch.size());
  std::vector<ForwardResult> results(batch.size());
  ExecContext ctx;
  Status s = route_batch(batch, {infos.data(), uint32_t(infos.size())}, fib, tables, keys,
                         {nhs.data(), uint32_t(nhs.size())},
                         {results.data(), uint32_t(results.size())}, ctx);
  ASSERT_TRUE(s.is_ok()) << s.to_string();

  ForwardCounters c;
  c.add({results.data(), uint32_t(results.size())});
  ASSERT_TRUE(c.check().is_ok()) << c.check().to_string();
  EXPECT_EQ(c.rx, 5000u);
  EXPECT_EQ(c.reason(Reason::kTtlExpired), expired);
  EXPECT_EQ(c.reason(Reason::kBadIpv4Checksum), broken);
  EXPECT_GT(c.reason(Reason::kNoRoute), 0u);
  EXPECT_GT(c.reason(Reason::kNoNeighbor), 0u);
  EXPECT_GT(c.tx, 2500u);
  EXPECT_EQ(c.tx_by_port.size(), 3u);

  // Every packet against an independent expectation of its next hop, and forwarded packets
  // re-parsed: still valid, TTL / hop limit one less, MACs rewritten.
  std::vector<packet::PacketInfo> after = packet::parse_batch(batch).value();
  for (uint32_t i = 0; i < batch.size(); ++i) {
    SCOPED_TRACE(i);
    lookup::NextHop want = lookup::kNoRoute;
    ExecContext c2;
    if (infos[i].l3 == packet::L3::kIpv4) {
      const uint32_t dst = uint32_t(infos[i].dst[0]) << 24 | uint32_t(infos[i].dst[1]) << 16 |
                           uint32_t(infos[i].dst[2]) << 8 | infos[i].dst[3];
      ASSERT_TRUE(fib.lookup4({&dst, 1}, {&want, 1}, c2).is_ok());
    } else if (infos[i].l3 == packet::L3::kIpv6) {
      lookup::Ip6 a;
      for (int b = 0; b < 8; ++b) a.hi = a.hi << 8 | infos[i].dst[b];
      for (int b = 8; b < 16; ++b) a.lo = a.lo << 8 | infos[i].dst[b];
      ASSERT_TRUE(fib.lookup6({&a, 1}, {&want, 1}, c2).is_ok());
    }
    EXPECT_EQ(nhs[i], want);
    const std::vector<uint8_t> now(batch.data(i), batch.data(i) + batch.meta(i).caplen);
    if (results[i].verdict != Verdict::kForward) {
      EXPECT_EQ(now, original[i]);
      continue;
    }
    EXPECT_EQ(results[i].port, uint16_t(want));
    EXPECT_EQ(after[i].status, infos[i].status);
    EXPECT_EQ(after[i].ttl, infos[i].ttl - 1);
    const Mac mac = default_neighbor_mac(want);
    EXPECT_TRUE(std::equal(mac.begin(), mac.end(), now.begin()));
  }
}

TEST(ForwardBatch, EveryBurstSizeAgreesWithOnePacketAtATime) {
  uint32_t expired = 0, broken = 0;
  const auto fib    = make_fib();
  const auto tables = make_tables();
  for (uint32_t n : testing::burst_sizes()) {
    SCOPED_TRACE(n);
    auto batch = traffic(n, &expired, &broken);
    auto one   = traffic(n, &expired, &broken);
    auto infos = packet::parse_batch(batch).value();
    RouteKeys keys(n);
    std::vector<lookup::NextHop> nhs(n + 1);
    std::vector<ForwardResult> results(n + 1);
    ExecContext ctx;
    ASSERT_TRUE(route_batch(batch, {infos.data(), n}, fib, tables, keys, {nhs.data(), n},
                            {results.data(), n}, ctx)
                    .is_ok());
    for (uint32_t i = 0; i < n; ++i) {
      const auto r = testing::route_one(
          testing::Frame{std::vector<uint8_t>(one.data(i), one.data(i) + one.meta(i).caplen),
                         one.meta(i).len},
          nhs[i], tables);
      ASSERT_EQ(r.result.reason, results[i].reason) << i;
      ASSERT_EQ(r.result.port, results[i].port) << i;
      ASSERT_TRUE(std::equal(r.bytes.begin(), r.bytes.end(), batch.data(i))) << i;
    }
  }
}

TEST(ForwardBatch, LookupEnginesGiveTheSameVerdicts) {
  // The same routes in every lookup engine of this build: same next hops, same verdicts.
  const auto naive = make_fib();
  lookup::RouteTable table;
  table.source      = lookup::NextHopSource::kNumeric;
  table.v4          = naive.v4;
  table.v6          = naive.v6;
  const auto tables = make_tables();
  uint32_t expired = 0, broken = 0;
  auto want_batch  = traffic(3000, &expired, &broken);
  auto infos       = packet::parse_batch(want_batch).value();
  const uint32_t n = want_batch.size();
  RouteKeys keys(n);
  std::vector<lookup::NextHop> want_nh(n), got_nh(n);
  std::vector<ForwardResult> want(n), got(n);
  ExecContext ctx;
  ASSERT_TRUE(route_batch(want_batch, {infos.data(), n}, naive, tables, keys, {want_nh.data(), n},
                          {want.data(), n}, ctx)
                  .is_ok());
  for (const auto& e : lookup::fib_engines()) {
    if (e.available && !e.available()) continue;
    SCOPED_TRACE(std::string(e.id));
    auto fib = lookup::make_fib(e.id, table);
    ASSERT_TRUE(fib.is_ok()) << fib.status().to_string();
    auto batch = traffic(3000, &expired, &broken);
    ASSERT_TRUE(route_batch(batch, {infos.data(), n}, **fib, tables, keys, {got_nh.data(), n},
                            {got.data(), n}, ctx)
                    .is_ok());
    EXPECT_EQ(got_nh, want_nh);
    for (uint32_t i = 0; i < n; ++i) {
      ASSERT_EQ(got[i].reason, want[i].reason) << i;
      ASSERT_EQ(got[i].port, want[i].port) << i;
    }
  }
}

TEST(ForwardBatch, ShortSpansAreErrors) {
  uint32_t expired = 0, broken = 0;
  auto batch = traffic(8, &expired, &broken);
  auto infos = packet::parse_batch(batch).value();
  std::vector<lookup::NextHop> nhs(8, lookup::kNoRoute);
  std::vector<ForwardResult> results(8);
  const auto tables = make_tables();
  EXPECT_EQ(
      forward_batch(batch, {infos.data(), 7}, {nhs.data(), 8}, tables, {results.data(), 8}).code(),
      Errc::kInvalidArgument);
  EXPECT_EQ(
      forward_batch(batch, {infos.data(), 8}, {nhs.data(), 8}, tables, {results.data(), 7}).code(),
      Errc::kInvalidArgument);
  RouteKeys keys(4);
  EXPECT_EQ(keys.extract({infos.data(), 8}).code(), Errc::kInvalidArgument);
}

TEST(ForwardCounters, CheckNamesTheBrokenIdentity) {
  ForwardCounters c;
  c.add(ForwardResult{Verdict::kForward, Reason::kForwarded, 1, 0});
  c.add(ForwardResult{Verdict::kDrop, Reason::kNoRoute, 0, lookup::kNoRoute});
  c.add(ForwardResult{Verdict::kSlowPath, Reason::kTtlExpired, 0, 0});
  EXPECT_TRUE(c.check().is_ok());
  c.icmp_sent = 1;
  EXPECT_TRUE(c.check().is_ok());
  c.icmp_suppressed = 1;
  EXPECT_FALSE(c.check().is_ok());
  c.icmp_suppressed = 0;
  ++c.rx;
  EXPECT_NE(c.check().message().find("rx 4 != tx 1 + dropped 1 + slow_path 1"), std::string::npos)
      << c.check().message();
  --c.rx;
  ++c.by_reason[unsigned(Reason::kNoNeighbor)];
  EXPECT_NE(c.check().message().find("drop reasons sum to 2"), std::string::npos);
  --c.by_reason[unsigned(Reason::kNoNeighbor)];
  c.tx_by_port[3] = 1;
  EXPECT_NE(c.check().message().find("tx by port"), std::string::npos);
}

}  // namespace
}  // namespace warpath::forward
