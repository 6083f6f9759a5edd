// tests/lookup/fib_engines_test.cpp: every lookup engine against ref.lpm.
//
//   random tables (nested prefixes, /0 /32 /128) at every burst size and after random updates;
//   hand-made edge cases; the real tables of ../shared/data/routing; the LINX update hour on the
//   full IPv4 table, checked around every updated prefix after every step; readers running
//   while a writer updates (old or new answer, never another); both IPv4 entry widths; errors.
#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>

#include "support/test_support.hpp"
#include "warpath/core/read_guard.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/lookup/fib.hpp"

namespace warpath::lookup {
namespace {

std::vector<std::string> engine_ids() {
  std::vector<std::string> ids;
  for (const auto& e : fib_engines())
    if (e.id != "ref.lpm") ids.emplace_back(e.id);
  ids.emplace_back("validate:cpu.lpm");
  return ids;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

class FibEngines : public ::testing::TestWithParam<std::string> {
 protected:
  std::unique_ptr<Fib> make(const RouteTable& t, const FibParams& p = {}) {
    auto fib = make_fib(GetParam(), t, p);
    if (!fib.is_ok() && fib.status().code() == Errc::kNotSupported) return nullptr;
    EXPECT_TRUE(fib.is_ok()) << fib.status().message();
    return fib.is_ok() ? std::move(fib).value() : nullptr;
  }
  std::unique_ptr<Fib> ref(const RouteTable& t) {
    return std::move(make_fib("ref.lpm", t)).value();
  }
};

std::vector<uint32_t> sizes(uint32_t large) {
  std::vector<uint32_t> s = testing::burst_sizes();
  s.push_back(large);
  return s;
}

TEST_P(FibEngines, RandomTablesEveryBurstSize) {
  for (uint64_t seed : {1u, 2u, 3u}) {
    const RouteTable t = random_route_table(seed, 3000, 3000);
    auto fib           = make(t);
    if (!fib) GTEST_SKIP() << GetParam() << " not available";
    auto oracle = ref(t);
    std::vector<uint32_t> a4;
    std::vector<Ip6> a6;
    random_addresses(t, seed, 20000, a4, a6);
    EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, sizes(20000)), "") << "seed " << seed;
  }
}

TEST_P(FibEngines, RandomUpdates) {
  RouteTable t = random_route_table(7, 1500, 1500);
  auto fib     = make(t);
  if (!fib) GTEST_SKIP() << GetParam() << " not available";
  auto oracle = ref(t);
  std::vector<uint32_t> a4;
  std::vector<Ip6> a6;
  random_addresses(t, 7, 5000, a4, a6);
  for (int round = 0; round < 5; ++round) {
    ASSERT_EQ(random_updates(*fib, *oracle, t, 100 + round, 200), "") << "round " << round;
    ASSERT_EQ(compare_engine(*fib, *oracle, a4, a6, {5000, 33}), "") << "round " << round;
  }
}

TEST_P(FibEngines, EdgeCases) {
  const uint32_t probe4[] = {0,          1,          0x0a000000, 0x0a0000ff, 0x0a000100, 0x0affffff,
                             0x0b000000, 0x7f000001, 0xc0a80101, 0xfffffffe, 0xffffffff};
  std::vector<uint32_t> a4(std::begin(probe4), std::end(probe4));
  std::vector<Ip6> a6;
  for (uint32_t x : probe4) a6.push_back(Ip6{uint64_t(x) << 32, x});
  a6.push_back(Ip6{~0ull, ~0ull});
  a6.resize(a4.size());

  std::vector<RouteTable> tables(6);
  tables[1].v4 = {{0, 0, 5}};  // only a default route
  tables[1].v6 = {{Ip6{}, 0, 6}};
  tables[2].v4 = {{0x0a000000, 32, 1}, {0xffffffff, 32, 2}, {0, 32, 3}};  // host routes
  tables[2].v6 = {{Ip6{0x0a00000000ull << 24, 0x0a000000}, 128, 1}, {Ip6{~0ull, ~0ull}, 128, 2}};
  for (unsigned len = 0; len <= 32; ++len)  // a chain /0../32 around 10.0.0.0 and its end
    tables[3].v4.push_back({mask4(0x0a0000ffu, len), uint8_t(len), len});
  for (unsigned len = 0; len <= 128; ++len)
    tables[3].v6.push_back({mask6(Ip6{~0ull, ~0ull}, len), uint8_t(len), len});
  tables[4].v4 = {
      {0x0a000000, 8, 1}, {0x0a000000, 24, 2}, {0x0a000000, 25, 3}, {0x0a000080, 25, 4}};
  tables[5].v4 = {{0x0a000000, 25, 1}, {0x0a000000, 26, 2}};  // groups without a /24 below
  for (size_t k = 0; k < tables.size(); ++k) {
    auto fib = make(tables[k]);
    if (!fib) GTEST_SKIP() << GetParam() << " not available";
    auto oracle = ref(tables[k]);
    EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, {1, 32, uint32_t(a4.size())}), "")
        << "table " << k;
  }
}

TEST_P(FibEngines, BothEntryWidths) {
  RouteTable t = random_route_table(11, 3000, 10);
  // More distinct next hops than a 16-bit image holds.
  RouteTable wide = t;
  for (size_t i = 0; i < wide.v4.size(); ++i) wide.v4[i].nh = NextHop(i * 40);
  for (unsigned bits : {16u, 32u}) {
    FibParams p;
    p.entry_bits = bits;
    auto fib     = make(t, p);
    if (!fib) GTEST_SKIP() << GetParam() << " not available";
    if (GetParam() != "validate:cpu.lpm") EXPECT_EQ(fib->stats().entry_bits, bits);
    auto oracle = ref(t);
    std::vector<uint32_t> a4;
    std::vector<Ip6> a6;
    random_addresses(t, 11, 4000, a4, a6);
    EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, {4000}), "") << bits;
  }
  auto fib = make(wide);
  ASSERT_TRUE(fib);
  auto oracle = ref(wide);
  std::vector<uint32_t> a4;
  std::vector<Ip6> a6;
  random_addresses(wide, 12, 4000, a4, a6);
  EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, {4000}), "");
}

// A 16-bit image that runs out of next-hop values or tbl8 groups during updates is rebuilt.
TEST_P(FibEngines, UpdatesBeyondCapacityRebuild) {
  RouteTable t;
  t.v4 = {{0x0a000000, 8, 1}};
  FibParams p;
  p.spare_groups = 2;
  auto fib       = make(t, p);
  if (!fib) GTEST_SKIP() << GetParam() << " not available";
  auto oracle = ref(t);
  for (uint32_t i = 0; i < 40; ++i) {  // 40 groups needed, 2 spare
    const Route4 r{0x0a000000u | (i << 8) | 0x80u, 25, 100 + i};
    ASSERT_TRUE(fib->add4(r).is_ok());
    ASSERT_TRUE(oracle->add4(r).is_ok());
  }
  for (uint32_t i = 0; i < 33000; i += 1) {  // more next hops than 16 bits hold
    const Route4 r{0x0b000000u | (i << 8), 24, 1000 + i};
    ASSERT_TRUE(fib->add4(r).is_ok());
    ASSERT_TRUE(oracle->add4(r).is_ok());
  }
  if (GetParam() != "validate:cpu.lpm") {
    EXPECT_GE(fib->stats().rebuilds, 2u);
    EXPECT_EQ(fib->stats().entry_bits, 32u);
  }
  std::vector<uint32_t> a4;
  for (uint32_t i = 0; i < 33000; ++i) a4.push_back(0x0b000000u | (i << 8) | (i & 255));
  for (uint32_t i = 0; i < 40; ++i) a4.push_back(0x0a000000u | (i << 8) | 0x81u);
  std::vector<Ip6> a6(a4.size());
  EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, {uint32_t(a4.size())}), "");
}

// Readers see, per address, the answer before or after each update, never anything else.
TEST_P(FibEngines, ConcurrentReadersSeeOldOrNew) {
  RouteTable t;
  t.v4     = {{0x0a000000, 8, 1}};
  t.v6     = {{Ip6{0x20010db800000000ull, 0}, 32, 1}};
  auto fib = make(t);
  if (!fib) GTEST_SKIP() << GetParam() << " not available";
  std::atomic<bool> stop{false};
  std::atomic<uint64_t> bad{0}, seen{0};
  std::thread reader([&] {
    // 10.1.x.x flips between /8 (1) and /16 (2); 10.1.0.128/25 between those and /25 (3).
    std::vector<uint32_t> a4 = {0x0a010000, 0x0a0100ff, 0x0a010081, 0x0a01ff00, 0x0a020000};
    std::vector<Ip6> a6      = {Ip6{0x20010db800010000ull, 5}, Ip6{0x20010db800020000ull, 5}};
    std::vector<NextHop> r4(a4.size()), r6(a6.size());
    ExecContext ctx;
    while (!stop.load()) {
      if (!fib->lookup4({a4.data(), uint32_t(a4.size())}, {r4.data(), uint32_t(r4.size())}, ctx)
               .is_ok() ||
          !fib->lookup6({a6.data(), uint32_t(a6.size())}, {r6.data(), uint32_t(r6.size())}, ctx)
               .is_ok()) {
        ++bad;
        return;
      }
      // 10.1.0.255 and 10.1.0.129 (i = 1, 2) are inside 10.1.0.128/25 as well.
      for (int i = 0; i < 4; ++i)
        bad += r4[i] != 1 && r4[i] != 2 && !((i == 1 || i == 2) && r4[i] == 3);
      bad += r4[4] != 1;
      bad += r6[0] != 1 && r6[0] != 2;
      bad += r6[1] != 1;
      ++seen;
    }
  });
  for (int k = 0; k < 300; ++k) {
    ASSERT_TRUE(fib->add4({0x0a010000, 16, 2}).is_ok());
    ASSERT_TRUE(fib->add4({0x0a010080, 25, 3}).is_ok());
    ASSERT_TRUE(fib->remove4(0x0a010080, 25).is_ok());
    ASSERT_TRUE(fib->remove4(0x0a010000, 16).is_ok());
    if (k % 10 == 0) {
      ASSERT_TRUE(fib->add6({Ip6{0x20010db800010000ull, 0}, 48, 2}).is_ok());
      ASSERT_TRUE(fib->remove6(Ip6{0x20010db800010000ull, 0}, 48).is_ok());
    }
  }
  while (seen.load() < 100) std::this_thread::yield();
  stop = true;
  reader.join();
  EXPECT_EQ(bad.load(), 0u);
}

TEST_P(FibEngines, RealTables) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  for (const char* file : {"routing/ipv4_fulltable_2024-03_iprbench.txt.xz",
                           "routing/ipv4_routeviews_2019-08_as23367_partial_nh.txt.xz",
                           "routing/ipv6_fulltable_2024-03_iprbench.txt.xz",
                           "routing/ipv6_routeviews_2021-01_as19653_nh.txt.xz",
                           "routing/ipv6_linx_2014-12-25_nh.txt.xz"}) {
    auto t = load_routes(testing::data_path(file));
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    auto fib = make(*t);
    if (!fib) GTEST_SKIP() << GetParam() << " not available";
    auto oracle = ref(*t);
    std::vector<uint32_t> a4;
    std::vector<Ip6> a6;
    random_addresses(*t, 5, 100000, a4, a6);
    EXPECT_EQ(compare_engine(*fib, *oracle, a4, a6, {100000, 4096}), "") << file;
  }
}

// The LINX hour of BGP updates on the full IPv4 table: after every update the addresses at
// the edges and inside of the updated prefix agree with the reference; all of them at the end.
TEST_P(FibEngines, LinxUpdateHour) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto t = load_routes(testing::data_path("routing/ipv4_fulltable_2024-03_iprbench.txt.xz"));
  ASSERT_TRUE(t.is_ok());
  auto updates =
      load_route_updates(testing::data_path("routing/ipv4_linx_updates_2014-12-17.txt.xz"), *t);
  ASSERT_TRUE(updates.is_ok()) << updates.status().message();
  auto fib = make(*t);
  if (!fib) GTEST_SKIP() << GetParam() << " not available";
  auto oracle = ref(*t);
  std::mt19937 rng(3);
  uint64_t absent_fib = 0, absent_ref = 0;
  std::vector<uint32_t> probe(8);
  std::vector<NextHop> got(8), want(8);
  ExecContext ctx;
  for (const auto& u : *updates) {
    ASSERT_TRUE(apply_update(*fib, u, &absent_fib).is_ok()) << "line " << u.line;
    ASSERT_TRUE(apply_update(*oracle, u, &absent_ref).is_ok()) << "line " << u.line;
    const uint32_t lo = u.r4.prefix, span = u.r4.len == 0 ? ~0u : (~0u >> u.r4.len);
    probe = {lo,
             lo + span,
             lo - 1,
             lo + span + 1,
             lo + (uint32_t(rng()) & span),
             lo + (uint32_t(rng()) & span),
             lo + span / 2,
             lo ^ 0x80};
    ASSERT_TRUE(fib->lookup4({probe.data(), 8}, {got.data(), 8}, ctx).is_ok());
    ASSERT_TRUE(oracle->lookup4({probe.data(), 8}, {want.data(), 8}, ctx).is_ok());
    ASSERT_EQ(got, want) << "after update on line " << u.line;
  }
  EXPECT_EQ(absent_fib, absent_ref);
  std::vector<uint32_t> a4;
  std::vector<Ip6> a6;
  random_addresses(*t, 9, 200000, a4, a6);
  EXPECT_EQ(compare_engine(*fib, *oracle, a4, {}, {200000}), "");
}

INSTANTIATE_TEST_SUITE_P(Engines, FibEngines, ::testing::ValuesIn(engine_ids()), param_name);

TEST(FibRegistry, ErrorsAndIds) {
  RouteTable t;
  t.v4         = {{0x0a000000, 8, 1}};
  auto unknown = make_fib("cpu.nope", t);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Errc::kNotFound);
  RouteTable bad;
  bad.v4 = {{0x0a000001, 8, 1}};
  for (const auto& e : fib_engines()) {
    auto fib = make_fib(e.id, bad);
    if (!e.available()) continue;
    ASSERT_FALSE(fib.is_ok()) << e.id;
    EXPECT_EQ(fib.status().code(), Errc::kInvalidArgument) << e.id;
    EXPECT_NE(fib.status().message().find("host bits"), std::string::npos);
  }
  auto a = make_fib("auto", t);
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ((*a)->id(), "cpu.lpm.compressed");
  EXPECT_EQ((*a)->remove4(0x0b000000, 8).code(), Errc::kNotFound);
  uint32_t addr = 0;
  NextHop nh    = 0;
  ExecContext ctx;
  EXPECT_EQ((*a)->lookup4({&addr, 1}, {&nh, 0}, ctx).code(), Errc::kInvalidArgument);
  EXPECT_EQ((*a)->lookup4({&addr, 1}, {&nh, 0}, ctx).message(),
            std::string((*a)->id()) + ": output span of 0 for 1 addresses");
  const FibStats s = (*a)->stats();
  EXPECT_EQ(s.routes4, 1u);
  EXPECT_EQ(s.entry_bits, 16u);
  // The readers' tables: tbl24's chunks, not tbl24, which is the writer's (rib_bytes).
  EXPECT_LT(s.memory_bytes, (uint64_t(1) << 24) * 2);
  EXPECT_GE(s.rib_bytes, (uint64_t(1) << 24) * 2);
  // The aliases resolve in the registry: cpu is the CPU engine of the highest priority.
  for (const auto& [alias, id] : {std::pair{"cpu", "cpu.lpm.compressed"}, {"ref", "ref.lpm"},
                                  {"validate:cpu", "validate:cpu.lpm.compressed"}}) {
    auto f = make_fib(alias, t);
    ASSERT_TRUE(f.is_ok()) << alias << ": " << f.status().message();
    EXPECT_EQ((*f)->id(), id) << alias;
  }
  auto plain = make_fib("cpu.lpm", t);
  ASSERT_TRUE(plain.is_ok());
  EXPECT_GE((*plain)->stats().memory_bytes, (uint64_t(1) << 24) * 2);
}

// A table without IPv4 routes has no IPv4 image (no 32 MiB tbl24) until the first IPv4 route.
TEST_P(FibEngines, NoIpv4ImageUntilTheFirstRoute) {
  RouteTable t;
  t.v6     = {{Ip6{0x20010db800000000ull, 0}, 32, 3}};
  auto fib = make(t);
  if (!fib) GTEST_SKIP() << GetParam() << " not available";
  if (GetParam() != "validate:cpu.lpm") EXPECT_LT(fib->stats().memory_bytes, uint64_t(1) << 24);
  uint32_t a[2] = {0x0a000001, 0};
  NextHop nh[2] = {0, 0};
  ExecContext ctx;
  ASSERT_TRUE(fib->lookup4({a, 2}, {nh, 2}, ctx).is_ok());
  EXPECT_EQ(nh[0], kNoRoute);
  EXPECT_EQ(fib->remove4(0x0a000000, 8).code(), Errc::kNotFound);
  ASSERT_TRUE(fib->add4({0x0a000000, 8, 9}).is_ok());
  ASSERT_TRUE(fib->lookup4({a, 2}, {nh, 2}, ctx).is_ok());
  EXPECT_EQ(nh[0], 9u);
  EXPECT_EQ(nh[1], kNoRoute);
}

TEST(FibRegistry, SelfTestCheck) {
  for (const auto& e : fib_engines()) {
    const CheckReport r = check_fib_engine(e.id, 42, 5000);
    if (r.skipped) continue;
    EXPECT_TRUE(r.passed()) << e.id << ": " << r.detail;
    EXPECT_EQ(r.items, 10000u);
  }
}

TEST(ReadGuard, SynchronizeWaitsForReaders) {
  ReadGuard guard;
  std::atomic<int> phase{0};
  std::thread reader([&] {
    ReadGuard::Section s(guard);
    phase = 1;
    while (phase.load() != 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    phase = 3;
  });
  while (phase.load() != 1) std::this_thread::yield();
  phase = 2;
  guard.synchronize();
  EXPECT_EQ(phase.load(), 3);  // returned only after the reader left its section
  reader.join();
  guard.synchronize();  // no reader: returns at once
}

}  // namespace
}  // namespace warpath::lookup
