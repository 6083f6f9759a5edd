// tests/lookup/bsl6_test.cpp: the IPv6 binary-search-on-lengths image and its CPU loops
// (core::bsl6_lookup, bsl6_lookup_scalar, bsl6_lookup_batched) against a naive oracle, on the
// real tables of ../shared/data/routing and on generated tables built to stress markers.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

#include "lookup/bsl6_image.hpp"
#include "lookup/core/bsl6_core.hpp"
#include "lookup/cpu/bsl6_cpu.hpp"
#include "support/test_support.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup {
namespace {

using detail::Bsl6Image;

struct Ip6Hash {
  size_t operator()(const Ip6& a) const noexcept {
    return std::hash<uint64_t>()(a.hi * 0x9E3779B97F4A7C15ull ^ a.lo);
  }
};

// The oracle: one exact-match map per length, probed from the longest length down.
class Oracle {
 public:
  explicit Oracle(const std::vector<Route6>& routes) : maps_(129) {
    for (const Route6& r : routes) maps_[r.len][r.prefix] = r.nh;
    for (int len = 128; len >= 0; --len)
      if (!maps_[len].empty()) lens_.push_back(unsigned(len));
  }
  NextHop lookup(Ip6 a) const {
    for (unsigned len : lens_) {
      const auto it = maps_[len].find(mask6(a, len));
      if (it != maps_[len].end()) return it->second;
    }
    return kNoRoute;
  }

 private:
  std::vector<std::unordered_map<Ip6, NextHop, Ip6Hash>> maps_;
  std::vector<unsigned> lens_;
};

Ip6 random_ip6(std::mt19937_64& rng) { return Ip6{rng(), rng()}; }

// The address with the host bits of `p`/len replaced: random, all zeros, all ones.
Ip6 fill_host(Ip6 p, unsigned len, Ip6 bits) {
  const Ip6 m = mask6(Ip6{~0ull, ~0ull}, len);
  return Ip6{(p.hi & m.hi) | (bits.hi & ~m.hi), (p.lo & m.lo) | (bits.lo & ~m.lo)};
}
Ip6 minus_one(Ip6 a) { return a.lo != 0 ? Ip6{a.hi, a.lo - 1} : Ip6{a.hi - 1, ~0ull}; }
Ip6 plus_one(Ip6 a) { return a.lo != ~0ull ? Ip6{a.hi, a.lo + 1} : Ip6{a.hi + 1, 0}; }

// Addresses: a quarter uniform, half random under a table prefix, a quarter at and around
// prefix boundaries (first, last, one before, one after).
std::vector<Ip6> make_addresses(const std::vector<Route6>& routes, size_t count,
                                std::mt19937_64& rng) {
  std::vector<Ip6> out;
  out.reserve(count);
  while (out.size() < count) {
    const uint64_t kind = rng() % 8;
    if (routes.empty() || kind < 2) {
      out.push_back(random_ip6(rng));
      continue;
    }
    const Route6& r = routes[rng() % routes.size()];
    if (kind < 6) {
      out.push_back(fill_host(r.prefix, r.len, random_ip6(rng)));
    } else {
      const Ip6 first = r.prefix, last = fill_host(r.prefix, r.len, Ip6{~0ull, ~0ull});
      switch (rng() % 4) {
        case 0:
          out.push_back(first);
          break;
        case 1:
          out.push_back(last);
          break;
        case 2:
          out.push_back(minus_one(first));
          break;
        default:
          out.push_back(plus_one(last));
          break;
      }
    }
  }
  return out;
}

std::unique_ptr<Bsl6Image> build_ok(const std::vector<Route6>& routes,
                                    uint32_t max_blocks = Bsl6Image::kDefaultMaxBlocks) {
  auto img = Bsl6Image::build(routes, max_blocks);
  EXPECT_TRUE(img.is_ok()) << img.status().to_string();
  return img.is_ok() ? std::move(img).value() : nullptr;
}

// Every engine against the oracle on `addrs`, over the burst sizes of the module tests.
// max_blocks: how many /16s of the initial array may get a /24 block (0: /16 leaves only).
void check_all(const std::vector<Route6>& routes, const std::vector<Ip6>& addrs,
               uint32_t max_blocks = Bsl6Image::kDefaultMaxBlocks) {
  SCOPED_TRACE("max_blocks " + std::to_string(max_blocks));
  const auto img = build_ok(routes, max_blocks);
  ASSERT_NE(img, nullptr);
  const core::Bsl6View v = img->view();
  const Oracle oracle(routes);
  std::vector<NextHop> want(addrs.size());
  for (size_t i = 0; i < addrs.size(); ++i) want[i] = oracle.lookup(addrs[i]);

  for (size_t i = 0; i < addrs.size(); ++i) {
    const NextHop got = core::bsl6_lookup(v, addrs[i]);
    if (got != want[i]) {
      ADD_FAILURE() << "core::bsl6_lookup(" << format_ipv6(addrs[i]) << ") = " << got << ", oracle "
                    << want[i];
      return;
    }
  }
  std::vector<uint32_t> sizes = {0, 1, 15, 16, 17, 31, 32, 33, 255, 256, 257, 513, 4096, 100000};
  for (uint32_t s : testing::burst_sizes()) sizes.push_back(s);
  for (uint32_t n : sizes) {
    n = uint32_t(std::min<size_t>(n, addrs.size()));
    for (int loop = 0; loop < 3; ++loop) {
      SCOPED_TRACE("n=" + std::to_string(n) +
                   (loop == 0   ? " scalar"
                    : loop == 1 ? " batched"
                                : " batched portable"));
      std::vector<NextHop> out(n + 1, 0xABCD'0123u);
      if (loop == 0)
        detail::bsl6_lookup_scalar(v, addrs.data(), out.data(), n);
      else if (loop == 1)
        detail::bsl6_lookup_batched(v, addrs.data(), out.data(), n);
      else
        detail::bsl6_lookup_batched_portable(v, addrs.data(), out.data(), n);
      ASSERT_EQ(out[n], 0xABCD'0123u) << "wrote past the batch";
      for (uint32_t i = 0; i < n; ++i)
        ASSERT_EQ(out[i], want[i]) << "address " << format_ipv6(addrs[i]) << " index " << i;
    }
  }
}

// ---- real tables ---------------------------------------------------------------------------

void check_real_table(const std::string& file, bool expect_default) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto table = load_routes(testing::data_path("routing/" + file));
  ASSERT_TRUE(table.is_ok()) << table.status().to_string();
  const std::vector<Route6>& routes = table->v6;
  ASSERT_GT(routes.size(), 10000u);
  const auto img = build_ok(routes);
  ASSERT_NE(img, nullptr);
  const bool has_default =
      std::any_of(routes.begin(), routes.end(), [](const Route6& r) { return r.len == 0; });
  EXPECT_EQ(has_default, expect_default);
  EXPECT_EQ(img->view().default_nh != kNoRoute, has_default);
  // A marker table per length and at most one marker per prefix and length probed.
  EXPECT_GT(img->markers(), 0u);
  EXPECT_LT(img->markers(), routes.size() * img->view().height);
  EXPECT_GT(img->blocks(), 0u);
  EXPECT_GT(img->trees(), 0u);
  std::printf(
      "[ info ] %s: %zu routes, %u lengths, %u blocks, %u trees, height %u, %llu markers, "
      "%.2f MiB\n",
      file.c_str(), routes.size(), img->lengths(), img->blocks(), img->trees(), img->view().height,
      static_cast<unsigned long long>(img->markers()), double(img->memory_bytes()) / (1 << 20));
  std::mt19937_64 rng(0xB516 + routes.size());
  const auto addrs = make_addresses(routes, 200000, rng);
  check_all(routes, addrs);
  // Fewer blocks than dense /16s: the rest are /16 leaves whose trees hold lengths 17..24.
  for (uint32_t max_blocks : {0u, 5u}) {
    const auto capped = build_ok(routes, max_blocks);
    ASSERT_NE(capped, nullptr);
    EXPECT_EQ(capped->blocks(), max_blocks);
    check_all(routes, std::vector<Ip6>(addrs.begin(), addrs.begin() + 50000), max_blocks);
  }
}

TEST(Bsl6Real, FullTable) { check_real_table("ipv6_fulltable_2024-03_iprbench.txt.xz", false); }
TEST(Bsl6Real, RouteViews) { check_real_table("ipv6_routeviews_2021-01_as19653_nh.txt.xz", true); }
TEST(Bsl6Real, Linx) { check_real_table("ipv6_linx_2014-12-25_nh.txt.xz", false); }

// ---- generated tables ----------------------------------------------------------------------

// Chains /0 (optional), /1, ..., /128 over a few base addresses, plus for every length the
// sibling prefix (the last prefix bit flipped), with random next hops.
std::vector<Route6> nested_table(std::mt19937_64& rng, bool with_default, int bases,
                                 bool siblings) {
  std::unordered_map<Ip6, bool, Ip6Hash> seen[129];
  std::vector<Route6> routes;
  auto add = [&](Ip6 p, unsigned len) {
    p = mask6(p, len);
    if (len == 0 && !with_default) return;
    if (seen[len].emplace(p, true).second)
      routes.push_back(Route6{p, uint8_t(len), NextHop(rng() % 1000)});
  };
  for (int b = 0; b < bases; ++b) {
    const Ip6 base = random_ip6(rng);
    for (unsigned len = 0; len <= 128; ++len) {
      if (rng() % 4 == 0 && len != 0 && len != 128) continue;  // gaps in the chain
      add(base, len);
      if (siblings && len > 0) {
        Ip6 s = base;
        if (len <= 64)
          s.hi ^= 1ull << (64 - len);
        else
          s.lo ^= 1ull << (128 - len);
        add(s, len);
      }
    }
  }
  std::shuffle(routes.begin(), routes.end(), rng);
  return routes;
}

TEST(Bsl6Generated, NestedChainsWithDefault) {
  for (uint64_t seed = 1; seed <= 6; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto routes = nested_table(rng, true, int(1 + seed * 3), seed % 2 == 0);
    check_all(routes, make_addresses(routes, 20000, rng));
  }
}

TEST(Bsl6Generated, NestedChainsWithoutDefault) {
  for (uint64_t seed = 11; seed <= 16; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto routes = nested_table(rng, false, int(1 + seed % 5), seed % 2 == 1);
    check_all(routes, make_addresses(routes, 20000, rng));
  }
}

// Many random prefixes of random lengths in a few dense regions, so markers of one prefix
// are covered by other prefixes, and a large table that exercises bucket overflow.
TEST(Bsl6Generated, DenseRandomTables) {
  for (uint64_t seed = 21; seed <= 23; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    std::unordered_map<Ip6, bool, Ip6Hash> seen[129];
    std::vector<Route6> routes;
    const Ip6 regions[3] = {random_ip6(rng), random_ip6(rng), random_ip6(rng)};
    const size_t count   = seed == 23 ? 60000 : 3000;
    while (routes.size() < count) {
      const unsigned len = unsigned(rng() % 129);
      // The first 16 to 40 bits come from a region, the rest are random.
      const Ip6 p =
          mask6(fill_host(regions[rng() % 3], unsigned(16 + rng() % 25), random_ip6(rng)), len);
      if (seen[len].emplace(p, true).second)
        routes.push_back(Route6{p, uint8_t(len), NextHop(rng() % kMaxNextHop)});
    }
    const auto addrs = make_addresses(routes, 100000, rng);
    check_all(routes, addrs);
    check_all(routes, addrs, 1);
  }
}

TEST(Bsl6Generated, HostRoutesOnly) {
  std::mt19937_64 rng(31);
  std::vector<Route6> routes;
  for (int i = 0; i < 5000; ++i) routes.push_back(Route6{random_ip6(rng), 128, NextHop(i)});
  routes.push_back(Route6{Ip6{~0ull, ~0ull}, 128, kMaxNextHop});
  routes.push_back(Route6{Ip6{0, 0}, 128, 7});
  // 5,000 random /16s: more dense /16s than blocks in the capped builds.
  const auto addrs = make_addresses(routes, 20000, rng);
  for (uint32_t max_blocks : {Bsl6Image::kDefaultMaxBlocks, 0u, 100u})
    check_all(routes, addrs, max_blocks);
}

TEST(Bsl6Generated, EmptyAndSingleRoute) {
  std::mt19937_64 rng(41);
  const std::vector<Route6> none;
  check_all(none, make_addresses(none, 5000, rng));
  const auto empty = build_ok(none);
  ASSERT_NE(empty, nullptr);
  EXPECT_EQ(empty->lengths(), 0u);
  EXPECT_EQ(empty->markers(), 0u);
  EXPECT_EQ(core::bsl6_lookup(empty->view(), Ip6{1, 2}), kNoRoute);

  const std::vector<Route6> only_default = {Route6{Ip6{}, 0, 42}};
  check_all(only_default, make_addresses(only_default, 5000, rng));
  EXPECT_EQ(core::bsl6_lookup(build_ok(only_default)->view(), Ip6{1, 2}), 42u);

  for (unsigned len : {1u, 7u, 32u, 48u, 63u, 64u, 65u, 100u, 127u, 128u}) {
    SCOPED_TRACE("len " + std::to_string(len));
    const std::vector<Route6> one = {Route6{mask6(random_ip6(rng), len), uint8_t(len), 5}};
    check_all(one, make_addresses(one, 5000, rng));
    const auto img = build_ok(one);
    // Routes of length <= 16 live in the initial array only; a longer one is one table.
    EXPECT_EQ(img->lengths(), len > 16 ? 1u : 0u);
    EXPECT_EQ(img->markers(), 0u);
  }
}

// The marker count and the exact answers for a small hand-made table.
TEST(Bsl6Image, MarkersCarryTheirBestMatchingPrefix) {
  Ip6 p32, p48, p64, p128;
  ASSERT_TRUE(parse_ipv6("2001:db8::", p32));
  ASSERT_TRUE(parse_ipv6("2001:db8:1::", p48));
  ASSERT_TRUE(parse_ipv6("2001:db8:1:2::", p64));
  ASSERT_TRUE(parse_ipv6("2001:db8:1:2::9", p128));
  const std::vector<Route6> routes = {
      {Ip6{}, 0, 1}, {p32, 32, 2}, {p48, 48, 3}, {p64, 64, 4}, {p128, 128, 5}};
  const auto img = build_ok(routes);
  ASSERT_NE(img, nullptr);
  EXPECT_EQ(img->lengths(), 4u);
  const auto v = img->view();
  Ip6 a;
  ASSERT_TRUE(parse_ipv6("2001:db8:1:2::9", a));
  EXPECT_EQ(core::bsl6_lookup(v, a), 5u);
  ASSERT_TRUE(parse_ipv6("2001:db8:1:2::8", a));
  EXPECT_EQ(core::bsl6_lookup(v, a), 4u);
  ASSERT_TRUE(parse_ipv6("2001:db8:1:3::", a));
  EXPECT_EQ(core::bsl6_lookup(v, a), 3u);
  ASSERT_TRUE(parse_ipv6("2001:db8:2::", a));
  EXPECT_EQ(core::bsl6_lookup(v, a), 2u);
  ASSERT_TRUE(parse_ipv6("2001:db9::", a));
  EXPECT_EQ(core::bsl6_lookup(v, a), 1u);
  // Lengths {32, 48, 128}: the /128 leaves a marker at the root /48 that no /32 or /48
  // covers, so the marker must carry the default route's next hop, not kNoRoute.
  Ip6 q32, q48, inside;
  ASSERT_TRUE(parse_ipv6("2001:db9::", q32));
  ASSERT_TRUE(parse_ipv6("2001:db9:1::", q48));
  ASSERT_TRUE(parse_ipv6("2001:db8:1:ffff::", inside));
  const std::vector<Route6> deep = {{Ip6{}, 0, 9}, {p128, 128, 5}, {q32, 32, 2}, {q48, 48, 3}};
  const auto img2                = build_ok(deep);
  ASSERT_NE(img2, nullptr);
  EXPECT_EQ(img2->lengths(), 3u);
  EXPECT_EQ(img2->markers(), 1u);
  EXPECT_EQ(core::bsl6_lookup(img2->view(), inside), 9u);
  EXPECT_EQ(core::bsl6_lookup(img2->view(), p128), 5u);
  std::mt19937_64 rng(5);
  check_all(deep, make_addresses(deep, 2000, rng));
}

TEST(Bsl6Image, RejectsBadRoutes) {
  Ip6 p;
  ASSERT_TRUE(parse_ipv6("2001:db8::", p));
  auto expect_bad = [](const std::vector<Route6>& routes, const std::string& needle) {
    const auto img = Bsl6Image::build(routes);
    ASSERT_FALSE(img.is_ok());
    EXPECT_EQ(img.status().code(), Errc::kInvalidArgument);
    EXPECT_NE(img.status().message().find(needle), std::string::npos) << img.status().message();
  };
  expect_bad({Route6{p, 129, 1}}, "2001:db8::/129");
  expect_bad({Route6{p, 32, kMaxNextHop + 1}}, "2001:db8::/32");
  expect_bad({Route6{p, 32, kNoRoute}}, "next hop");
  expect_bad({Route6{Ip6{p.hi, 1}, 64, 1}}, "host bits");
  expect_bad({Route6{p, 32, 1}, Route6{p, 48, 1}, Route6{p, 32, 2}}, "duplicate");
}

}  // namespace
}  // namespace warpath::lookup

namespace warpath::lookup {
namespace {

// ---- updates ---------------------------------------------------------------------------------

// Applies `steps` random updates (adds of new routes near existing ones, next-hop changes,
// removals, short routes that repaint many leaves) to an image derived update by update, and
// after each compares addresses in and around the route with an oracle rebuilt from the
// current route set; at the end every engine is checked on a full address sample. Returns how
// many updates were taken incrementally (the rest asked for a rebuild, as FibState does).
size_t check_updates(std::vector<Route6> routes, int steps, std::mt19937_64& rng,
                     uint32_t max_blocks = Bsl6Image::kDefaultMaxBlocks) {
  auto img = build_ok(routes, max_blocks);
  EXPECT_NE(img, nullptr);
  if (!img) return 0;
  std::unordered_map<Ip6, size_t, Ip6Hash> index[129];  // route -> position in routes
  for (size_t i = 0; i < routes.size(); ++i) index[routes[i].len][routes[i].prefix] = i;
  size_t incremental = 0;
  for (int step = 0; step < steps; ++step) {
    Route6 r{};
    bool remove      = false;
    const uint64_t k = rng() % 10;
    if (k < 3 && !routes.empty()) {  // remove
      r      = routes[rng() % routes.size()];
      remove = true;
    } else if (k < 5 && !routes.empty()) {  // new next hop
      r    = routes[rng() % routes.size()];
      r.nh = NextHop(rng() % 5000);
    } else {  // a new route: under or beside an existing one, sometimes short
      const Ip6 base = routes.empty() ? random_ip6(rng) : routes[rng() % routes.size()].prefix;
      unsigned len   = k == 9 ? unsigned(8 + rng() % 17) : unsigned(17 + rng() % 112);
      r = Route6{mask6(fill_host(base, unsigned(rng() % 64), random_ip6(rng)), len), uint8_t(len),
                 NextHop(rng() % 5000)};
    }
    auto next = img->updated(r, remove);
    if (next.is_ok()) {
      img = std::move(next).value();
      ++incremental;
    } else {
      EXPECT_EQ(next.status().code(), Errc::kCapacity) << next.status().to_string();
    }
    // The route set after the update.
    auto& slot    = index[r.len];
    const auto it = slot.find(r.prefix);
    if (remove) {
      const size_t pos = it->second;
      slot.erase(it);
      if (pos != routes.size() - 1) {
        routes[pos]                                = routes.back();
        index[routes[pos].len][routes[pos].prefix] = pos;
      }
      routes.pop_back();
    } else if (it != slot.end()) {
      routes[it->second].nh = r.nh;
    } else {
      slot[r.prefix] = routes.size();
      routes.push_back(r);
    }
    if (!next.is_ok()) {  // what FibState does: rebuild from the route set
      img = build_ok(routes, max_blocks);
      if (!img) return incremental;
    }
    const Oracle oracle(routes);
    const Ip6 last = fill_host(r.prefix, r.len, Ip6{~0ull, ~0ull});
    for (Ip6 a : {r.prefix, last, minus_one(r.prefix), plus_one(last),
                  fill_host(r.prefix, r.len, random_ip6(rng)),
                  fill_host(r.prefix, r.len > 8 ? r.len - 8 : 0, random_ip6(rng))}) {
      const NextHop want = oracle.lookup(a);
      if (core::bsl6_lookup(img->view(), a) != want) {
        ADD_FAILURE() << "step " << step << (remove ? " remove " : " add ") << format_ipv6(r.prefix)
                      << "/" << unsigned(r.len) << ": address " << format_ipv6(a) << " gives "
                      << core::bsl6_lookup(img->view(), a) << ", oracle " << want;
        return incremental;
      }
    }
  }
  // The final image against a fresh oracle on a full sample, with every loop.
  const Oracle oracle(routes);
  const auto v           = img->view();
  std::vector<Ip6> addrs = make_addresses(routes, 20000, rng);
  std::vector<NextHop> out(addrs.size());
  detail::bsl6_lookup_batched(v, addrs.data(), out.data(), uint32_t(addrs.size()));
  for (size_t i = 0; i < addrs.size(); ++i)
    if (out[i] != oracle.lookup(addrs[i])) {
      ADD_FAILURE() << "after the updates: " << format_ipv6(addrs[i]) << " gives " << out[i]
                    << ", oracle " << oracle.lookup(addrs[i]);
      break;
    }
  return incremental;
}

TEST(Bsl6Updates, RealTableUpdatesAreIncremental) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto table = load_routes(testing::data_path("routing/ipv6_linx_2014-12-25_nh.txt.xz"));
  ASSERT_TRUE(table.is_ok()) << table.status().to_string();
  std::mt19937_64 rng(71);
  const int steps          = 400;
  const size_t incremental = check_updates(table->v6, steps, rng);
  std::printf("[ info ] %zu of %d updates incremental\n", incremental, steps);
  // New lengths and full tables ask for a rebuild now and then; most updates must not.
  EXPECT_GT(incremental, size_t(steps) * 3 / 4);
}

TEST(Bsl6Updates, GeneratedTables) {
  for (uint64_t seed = 81; seed <= 84; ++seed) {
    SCOPED_TRACE("seed " + std::to_string(seed));
    std::mt19937_64 rng(seed);
    const auto routes = nested_table(rng, seed % 2 == 0, int(2 + seed % 3), true);
    check_updates(routes, 300, rng, seed == 84 ? 0u : Bsl6Image::kDefaultMaxBlocks);
  }
  std::mt19937_64 rng(91);
  check_updates({}, 200, rng);  // from an empty table: every new length asks for a rebuild
}

}  // namespace
}  // namespace warpath::lookup
