// tests/forward/neighbors_test.cpp: the neighbour file, default neighbours and RouterTables.
#include <array>
#include <gtest/gtest.h>

#include <string>

#include "forward/core/forward_core.hpp"
#include "warpath/forward/router.hpp"

namespace warpath::forward {
namespace {

lookup::RouteTable numeric_fib() {
  lookup::RouteTable t;
  t.source = lookup::NextHopSource::kNumeric;
  t.v4.push_back({0x0a000000u, 8, 1});
  t.v4.push_back({0x0b000000u, 8, 6});
  t.v6.push_back({lookup::Ip6{0x20010db800000000ull, 0}, 32, 6});
  return t;
}

lookup::RouteTable named_fib() {
  lookup::RouteTable t;
  t.source        = lookup::NextHopSource::kNamed;
  t.nexthop_names = {"veth0", "195.66.226.74", "2001:7f8:4::1a0b:1"};
  for (uint32_t i = 0; i < t.nexthop_names.size(); ++i) t.nexthop_ids[t.nexthop_names[i]] = i;
  t.v4.push_back({0x0a000000u, 8, 0});
  t.v4.push_back({0x0b000000u, 8, 1});
  t.v6.push_back({lookup::Ip6{0x20010db800000000ull, 0}, 32, 2});
  return t;
}

TEST(Mac, ParseAndFormat) {
  Mac m;
  EXPECT_TRUE(parse_mac("00:1b:21:AA:bb:0c", m));
  EXPECT_EQ(format_mac(m), "00:1b:21:aa:bb:0c");
  EXPECT_TRUE(parse_mac("2:0:0:0:0:1", m));
  EXPECT_EQ(format_mac(m), "02:00:00:00:00:01");
  for (const char* bad : {"", "00:11:22:33:44", "00:11:22:33:44:55:66", "00:11:22:33:44:5g",
                          "001:11:22:33:44:55", "00-11-22-33-44-55", "00:11:22:33:44:55 "})
    EXPECT_FALSE(parse_mac(bad, m)) << bad;
  EXPECT_EQ(format_mac(default_port_mac(0x0102)), "02:00:00:00:01:02");
  EXPECT_EQ(format_mac(default_neighbor_mac(0x0a0b0c0d)), "02:01:0a:0b:0c:0d");
}

TEST(Neighbors, NumericFile) {
  const char* text =
      "# next hop, port, MAC\n"
      "1\t0\t00:11:22:33:44:01\n"
      "\n"
      "6 3 00:11:22:33:44:06   # trailing comment\n"
      "port 3 00:1b:21:00:00:03 10.0.0.254 2001:db8::fe\n"
      "port 0 - 10.1.0.254\n"
      "router 203.0.113.1\r\n";
  auto c = parse_neighbors("n.txt", text, numeric_fib());
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_EQ(c->neighbors.size(), 2u);
  EXPECT_EQ(c->neighbors[1].nexthop, 6u);
  EXPECT_EQ(c->neighbors[1].port, 3);
  EXPECT_EQ(format_mac(c->neighbors[1].mac), "00:11:22:33:44:06");
  ASSERT_EQ(c->port_macs.size(), 1u);
  EXPECT_EQ(format_mac(c->port_macs.at(3)), "00:1b:21:00:00:03");
  ASSERT_EQ(c->addresses.size(), 4u);
  EXPECT_EQ(c->addresses[0].port, 3);
  EXPECT_EQ(c->addresses[0].v4, 0x0a0000feu);
  EXPECT_TRUE(c->addresses[1].is_v6);
  EXPECT_EQ(c->addresses[1].v6[15], 0xfe);
  EXPECT_EQ(c->addresses[3].port, -1);

  auto t = RouterTables::build(*c);
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->neighbor_count(), 2u);
  EXPECT_EQ(t->ports(), (std::vector<uint16_t>{0, 3}));
  ASSERT_NE(t->find(6), nullptr);
  EXPECT_EQ(t->find(6)->port, 3);
  EXPECT_EQ(t->find(2), nullptr);
  EXPECT_EQ(format_mac(t->port_mac(3)), "00:1b:21:00:00:03");
  EXPECT_EQ(format_mac(t->port_mac(0)), "02:00:00:00:00:00");
  EXPECT_EQ(format_mac(t->port_mac(9)), "02:00:00:00:00:09");
  EXPECT_EQ(t->icmp_source4(3), 0x0a0000feu);
  EXPECT_EQ(t->icmp_source4(0), 0x0a0100feu);
  EXPECT_EQ(t->icmp_source4(7), 0x0a0000feu) << "no address on port 7: the first configured";
  EXPECT_EQ(t->icmp_source6(0)[15], 0xfe);
  const RouterView v = t->view();
  EXPECT_EQ(v.addr4_count, 3u);
  EXPECT_EQ(v.addr6_count, 1u) << "a family with addresses gets no default";
  EXPECT_EQ(v.port_count, 4u);
}

TEST(Neighbors, NamedFile) {
  const char* text =
      "veth0 1 00:11:22:33:44:01\n"
      "195.66.226.74 2 00:11:22:33:44:02\n"
      "2001:7f8:4::1a0b:1 2 00:11:22:33:44:03\n";
  auto c = parse_neighbors("n.txt", text, named_fib());
  ASSERT_TRUE(c.is_ok()) << c.status().to_string();
  ASSERT_EQ(c->neighbors.size(), 3u);
  EXPECT_EQ(c->neighbors[1].nexthop, 1u);
  EXPECT_EQ(c->neighbors[2].nexthop, 2u);
}

TEST(Neighbors, Defaults) {
  const RouterConfig c = default_neighbors(numeric_fib());
  ASSERT_EQ(c.neighbors.size(), 2u);
  EXPECT_EQ(c.neighbors[0].nexthop, 1u);
  EXPECT_EQ(c.neighbors[0].port, 1);
  EXPECT_EQ(c.neighbors[1].nexthop, 6u);
  EXPECT_EQ(c.neighbors[1].port, 2);
  EXPECT_EQ(format_mac(c.neighbors[1].mac), "02:01:00:00:00:06");
  EXPECT_EQ(default_neighbors(numeric_fib(), 5).neighbors[1].port, 1);
  auto t = RouterTables::build(c);
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->icmp_source4(0), kDefaultRouterAddr4);
  EXPECT_EQ(t->icmp_source6(0), kDefaultRouterAddr6);
  EXPECT_EQ(t->view().addr4_count, 1u);
  EXPECT_EQ(t->view().addr6_count, 1u);
}

// The direct index of next hops (RouterView::neighbor_slots) answers as the binary search of
// the sorted table does: dense ids, gaps, ids past the largest; sparse ids (past
// kMaxNeighborSlots) keep the search.
TEST(Neighbors, DirectIndexAnswersAsTheSearch) {
  for (const uint32_t top : {40u, kMaxNeighborSlots - 1, kMaxNeighborSlots}) {
    RouterConfig c;
    for (uint32_t nh : {0u, 3u, 4u, 17u, top})
      c.neighbors.push_back({nh, uint16_t(nh % 3), default_neighbor_mac(nh)});
    auto t = RouterTables::build(c);
    ASSERT_TRUE(t.is_ok());
    const RouterView v = t->view();
    EXPECT_EQ(v.neighbor_slots != nullptr, top < kMaxNeighborSlots) << top;
    RouterView searched = v;
    searched.neighbor_slots      = nullptr;
    searched.neighbor_slot_count = 0;
    for (uint32_t nh : {0u, 1u, 3u, 4u, 5u, 17u, 18u, 39u, top, top + 1, kNoNextHop - 1}) {
      const NeighborEntry* a = core::find_neighbor(v, nh);
      EXPECT_EQ(a, core::find_neighbor(searched, nh)) << nh;
      EXPECT_EQ(a, t->find(nh)) << nh;
      if (a) EXPECT_EQ(a->nexthop, nh);
    }
  }
  // No neighbours: no index, and nothing found.
  auto empty = RouterTables::build(RouterConfig{});
  ASSERT_TRUE(empty.is_ok());
  EXPECT_EQ(core::find_neighbor(empty->view(), 0), nullptr);
}

// A live interface's link-local address (every one has one) is the router's (packets for it go
// to the host) but never the source of ICMPv6 errors to off-link hosts: the port's global
// address, else a router-wide global one, else the default.
TEST(Neighbors, LinkLocalAddressesNeverSourceIcmpv6Errors) {
  RouterConfig c = default_neighbors(numeric_fib());
  std::array<uint8_t, 16> ll{0xfe, 0x80}, global{0x20, 0x01, 0x0d, 0xb8};
  ll[15] = 1, global[15] = 7;
  c.addresses.push_back({0, true, 0, ll});
  auto t = RouterTables::build(c);
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->icmp_source6(0), kDefaultRouterAddr6);
  EXPECT_EQ(t->view().addr6_count, 2u);  // the link-local one is the router's all the same
  c.addresses.push_back({1, true, 0, global});
  t = RouterTables::build(c);
  ASSERT_TRUE(t.is_ok());
  EXPECT_EQ(t->icmp_source6(0), global);  // another port's global one
  EXPECT_EQ(t->icmp_source6(1), global);
  EXPECT_EQ(t->view().addr6_count, 2u);   // no default beside a global address
}

struct BadCase {
  const char* text;
  const char* message;  // the whole message, file:line: reason
  bool named = false;
};

TEST(Neighbors, Errors) {
  const BadCase cases[] = {
      {"1 0\n", "n.txt:1: expected '<nexthop> <port> <mac>', got 2 fields"},
      {"# c\n1 0 00:11:22:33:44:55 extra\n",
       "n.txt:2: expected '<nexthop> <port> <mac>', got 4 fields"},
      {"x1 0 00:11:22:33:44:55\n",
       "n.txt:1: next hop 'x1' is not a number 0..2147483646 (the FIB's next hops are numeric)"},
      {"-1 0 00:11:22:33:44:55\n",
       "n.txt:1: next hop '-1' is not a number 0..2147483646 (the FIB's next hops are numeric)"},
      {"1 70000 00:11:22:33:44:55\n", "n.txt:1: port '70000' is not a number 0..65535"},
      {"1 0 00:11:22:33:44\n", "n.txt:1: '00:11:22:33:44' is not a MAC address"},
      {"1 0 01:00:5e:00:00:01\n",
       "n.txt:1: neighbour MAC 01:00:5e:00:00:01 is a multicast address"},
      {"1 0 00:11:22:33:44:55\n\n1 1 00:11:22:33:44:56\n",
       "n.txt:3: next hop '1' is listed twice (first at line 1)"},
      {"veth9 0 00:11:22:33:44:55\n", "n.txt:1: next hop 'veth9' is not in the FIB", true},
      {"port 1\n", "n.txt:1: expected 'port <port> <mac>|- [<address>...]'"},
      {"port x 00:11:22:33:44:55\n", "n.txt:1: port 'x' is not a number 0..65535"},
      {"port 1 ff:ff:ff:ff:ff:ff\n", "n.txt:1: port MAC ff:ff:ff:ff:ff:ff is a multicast address"},
      {"port 1 -\nport 1 -\n", "n.txt:2: port 1 is configured twice (first at line 1)"},
      {"port 1 - 10.0.0.300\n", "n.txt:1: '10.0.0.300' is not an IPv4 or IPv6 address"},
      {"router\n", "n.txt:1: 'router' needs at least one address"},
      {"router 224.0.0.1\n", "n.txt:1: '224.0.0.1' is not a unicast address"},
      {"router ::\n", "n.txt:1: '::' is not a unicast address"},
      {"router 127.0.0.1\n", "n.txt:1: '127.0.0.1' is not a unicast address"},
  };
  for (const auto& c : cases) {
    auto r = parse_neighbors("n.txt", c.text, c.named ? named_fib() : numeric_fib());
    ASSERT_FALSE(r.is_ok()) << c.text;
    EXPECT_EQ(r.status().code(), Errc::kParseError);
    EXPECT_EQ(r.status().message(), c.message) << c.text;
  }
}

}  // namespace
}  // namespace warpath::forward
