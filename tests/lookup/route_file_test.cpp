// tests/lookup/route_file_test.cpp: route, update and address text; the real tables load with
// the counts their README gives.
#include <gtest/gtest.h>

#include "support/test_support.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup {
namespace {

Ip6 ip6(const char* text) {
  Ip6 a;
  EXPECT_TRUE(parse_ipv6(text, a)) << text;
  return a;
}

TEST(RouteText, AddressesRoundTrip) {
  uint32_t a = 0;
  ASSERT_TRUE(parse_ipv4("10.1.2.3", a));
  EXPECT_EQ(a, 0x0a010203u);
  EXPECT_EQ(format_ipv4(a), "10.1.2.3");
  for (const char* bad : {"", "10.1.2", "10.1.2.256", "1.2.3.4.5", "a.b.c.d", " 1.2.3.4"})
    EXPECT_FALSE(parse_ipv4(bad, a)) << bad;
  const Ip6 v6 = ip6("2001:db8::1");
  EXPECT_EQ(v6.hi, 0x20010db800000000ull);
  EXPECT_EQ(v6.lo, 1u);
  EXPECT_EQ(format_ipv6(v6), "2001:db8::1");
  EXPECT_EQ(format_ipv6(ip6("::ffff:1.2.3.4")), "::ffff:1.2.3.4");
  Ip6 x;
  for (const char* bad : {"", "2001:db8:::1", "1:2:3:4:5:6:7:8:9", "g::1"})
    EXPECT_FALSE(parse_ipv6(bad, x)) << bad;
}

TEST(RouteText, Masks) {
  EXPECT_EQ(mask4(0xffffffffu, 0), 0u);
  EXPECT_EQ(mask4(0xffffffffu, 8), 0xff000000u);
  EXPECT_EQ(mask4(0x12345678u, 32), 0x12345678u);
  const Ip6 ones{~0ull, ~0ull};
  EXPECT_EQ(mask6(ones, 0), (Ip6{0, 0}));
  EXPECT_EQ(mask6(ones, 64), (Ip6{~0ull, 0}));
  EXPECT_EQ(mask6(ones, 65), (Ip6{~0ull, 1ull << 63}));
  EXPECT_EQ(mask6(ones, 128), ones);
}

TEST(RouteText, NumericNamedAndAssignedNextHops) {
  auto numeric = parse_routes("t", "10.0.0.0/8 7\n# comment\n\n2001:db8::/32\t9\n");
  ASSERT_TRUE(numeric.is_ok()) << numeric.status().message();
  EXPECT_EQ(numeric->source, NextHopSource::kNumeric);
  ASSERT_EQ(numeric->v4.size(), 1u);
  EXPECT_EQ(numeric->v4[0].prefix, 0x0a000000u);
  EXPECT_EQ(numeric->v4[0].nh, 7u);
  ASSERT_EQ(numeric->v6.size(), 1u);
  EXPECT_EQ(numeric->v6[0].len, 32);
  EXPECT_EQ(numeric->v6[0].nh, 9u);
  EXPECT_EQ(numeric->nexthop_text(7), "7");
  EXPECT_EQ(numeric->nexthop_text(kNoRoute), "-1");

  auto named = parse_routes("t", "1.0.4.0/22 veth27\n1.0.5.0/24 veth6\n1.0.6.0/24 veth27\n");
  ASSERT_TRUE(named.is_ok());
  EXPECT_EQ(named->source, NextHopSource::kNamed);
  EXPECT_EQ(named->v4[0].nh, 0u);
  EXPECT_EQ(named->v4[1].nh, 1u);
  EXPECT_EQ(named->v4[2].nh, 0u);
  EXPECT_EQ(named->nexthop_text(1), "veth6");

  auto assigned = parse_routes("t", "1.0.0.0/24\n1.0.4.0/22\n");
  ASSERT_TRUE(assigned.is_ok());
  EXPECT_EQ(assigned->source, NextHopSource::kAssigned);
  EXPECT_EQ(assigned->v4[0].nh, assigned_nexthop4(0x01000000u, 24));
  EXPECT_LT(assigned->v4[1].nh, kAssignedNhs);
  EXPECT_NE(assigned_nexthop4(0x01000000u, 24), assigned_nexthop4(0x01000000u, 23) + 1000);
}

TEST(RouteText, HostBitsAreClearedAndCounted) {
  auto t = parse_routes("t", "10.1.2.3/8 1\n2001:db8::1/32 2\n");
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->v4[0].prefix, 0x0a000000u);
  EXPECT_EQ(t->v6[0].prefix, ip6("2001:db8::"));
  EXPECT_EQ(t->host_bits_cleared, 2u);
}

TEST(RouteText, ErrorsNameFileLineAndReason) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"10.0.0.0/8 1\n10.0.0.0 2\n", "f:2: prefix '10.0.0.0' has no /length"},
      {"10.0.0.0/33 1\n", "f:1: prefix length in '10.0.0.0/33' is not a number 0..32"},
      {"2001::/129 1\n", "f:1: prefix length in '2001::/129' is not a number 0..128"},
      {"10.0.0.300/8 1\n", "f:1: bad IPv4 address '10.0.0.300'"},
      {"2001:::/8 1\n", "f:1: bad IPv6 address '2001:::'"},
      {"10.0.0.0/8 1\n11.0.0.0/8 x\n", "f:2: next hop 'x' is not an integer"},
      {"10.0.0.0/8 1\n11.0.0.0/8\n", "f:2: missing next hop (earlier lines have one)"},
      {"10.0.0.0/8\n11.0.0.0/8 1\n", "f:2: next hop given, but earlier lines have none"},
      {"10.0.0.0/8 1 extra\n", "f:1: extra fields after the next hop"},
      {"10.0.0.0/8 1\n10.0.0.0/8 2\n", "f:2: duplicate prefix 10.0.0.0/8"},
      {"10.0.0.0/8 4294967295\n", "f:1: next hop '4294967295' is above the maximum 2147483646"},
  };
  for (const auto& c : cases) {
    auto t = parse_routes("f", c.text);
    ASSERT_FALSE(t.is_ok()) << c.text;
    EXPECT_EQ(t.status().code(), Errc::kParseError);
    EXPECT_EQ(t.status().message().rfind(c.want, 0), 0u)
        << "got: " << t.status().message() << "\nwant prefix: " << c.want;
  }
}

TEST(RouteText, UpdatesInternNextHopsAfterAssignedOnes) {
  auto table = parse_routes("base", "10.0.0.0/8\n");
  ASSERT_TRUE(table.is_ok());
  auto u = parse_route_updates("u",
                               "1418774413 w 202.70.88.0/21 0.0.0.0\n"
                               "1418774413 a 202.70.88.0/21 195.66.226.74\n"
                               "1418774414 a 2001:db8::/32 195.66.226.74\n",
                               *table);
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  ASSERT_EQ(u->size(), 3u);
  EXPECT_FALSE((*u)[0].announce);
  EXPECT_TRUE((*u)[1].announce);
  EXPECT_EQ((*u)[1].r4.prefix, 0xca465800u);
  EXPECT_EQ((*u)[1].r4.len, 21);
  EXPECT_EQ((*u)[1].r4.nh, kAssignedNhs);
  EXPECT_TRUE((*u)[2].is_v6);
  EXPECT_EQ((*u)[2].r6.nh, kAssignedNhs);
  EXPECT_EQ(table->nexthop_text(kAssignedNhs), "195.66.226.74");
  EXPECT_EQ(table->nexthop_text(3), "3");
  EXPECT_EQ((*u)[2].line, 3u);

  RouteTable t2;
  for (const char* bad :
       {"x a 1.0.0.0/8 1\n", "1 b 1.0.0.0/8 1\n", "1 a 1.0.0.0/8\n", "1 a 1.0.0.0 1\n"}) {
    auto e = parse_route_updates("u", bad, t2);
    ASSERT_FALSE(e.is_ok()) << bad;
    EXPECT_EQ(e.status().message().rfind("u:1: ", 0), 0u) << e.status().message();
  }
}

TEST(RouteText, Addresses) {
  auto a = parse_addresses("a", "10.0.0.1\n\n2001:db8::1\n");
  ASSERT_TRUE(a.is_ok());
  ASSERT_EQ(a->size(), 2u);
  EXPECT_FALSE((*a)[0].is_v6);
  EXPECT_EQ((*a)[0].v4, 0x0a000001u);
  EXPECT_TRUE((*a)[1].is_v6);
  auto bad = parse_addresses("a", "10.0.0.1\n10.0.0.1 x\n");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_EQ(bad.status().message(), "a:2: more than one field");
  auto bad2 = parse_addresses("a", "1.2.3\n");
  ASSERT_FALSE(bad2.is_ok());
  EXPECT_EQ(bad2.status().message(), "a:1: bad IPv4 address '1.2.3'");
}

TEST(RouteFiles, MissingFileIsAnIoError) {
  auto t = load_routes("/nonexistent/routes.txt");
  ASSERT_FALSE(t.is_ok());
  EXPECT_EQ(t.status().code(), Errc::kIoError);
}

// The real tables of ../shared/data/routing, with the counts of their README.
TEST(RouteFiles, RealTablesLoad) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  struct Want {
    const char* file;
    size_t v4, v6;
    NextHopSource source;
  } wants[] = {
      {"routing/ipv4_fulltable_2024-03_iprbench.txt.xz", 901899, 0, NextHopSource::kAssigned},
      {"routing/ipv6_fulltable_2024-03_iprbench.txt.xz", 0, 160147, NextHopSource::kAssigned},
      {"routing/ipv6_routeviews_2021-01_as19653_nh.txt.xz", 0, 105957, NextHopSource::kNumeric},
      {"routing/ipv6_linx_2014-12-25_nh.txt.xz", 0, 20440, NextHopSource::kNamed},
      {"routing/ipv4_routeviews_2019-08_as23367_partial_nh.txt.xz", 126806, 0,
       NextHopSource::kNamed},
  };
  for (const auto& w : wants) {
    auto t = load_routes(testing::data_path(w.file));
    ASSERT_TRUE(t.is_ok()) << t.status().message();
    EXPECT_EQ(t->v4.size(), w.v4) << w.file;
    EXPECT_EQ(t->v6.size(), w.v6) << w.file;
    EXPECT_EQ(t->source, w.source) << w.file;
    EXPECT_EQ(t->host_bits_cleared, 0u) << w.file;
  }
  auto linx = load_routes(testing::data_path("routing/ipv6_linx_2014-12-25_nh.txt.xz"));
  EXPECT_EQ(linx->nexthop_names.size(), 94u);  // README: 94 distinct next hops
  auto rv =
      load_routes(testing::data_path("routing/ipv4_routeviews_2019-08_as23367_partial_nh.txt.xz"));
  EXPECT_EQ(rv->nexthop_names.size(), 32u);  // veth0..veth31

  auto base = load_routes(testing::data_path("routing/ipv4_fulltable_2024-03_iprbench.txt.xz"));
  auto u =
      load_route_updates(testing::data_path("routing/ipv4_linx_updates_2014-12-17.txt.xz"), *base);
  ASSERT_TRUE(u.is_ok()) << u.status().message();
  size_t announce = 0;
  for (const auto& x : *u) announce += x.announce;
  EXPECT_EQ(u->size(), 23446u);
  EXPECT_EQ(announce, 18141u);
}

}  // namespace
}  // namespace warpath::lookup
