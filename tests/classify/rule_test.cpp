// tests/classify/rule_test.cpp: keys, ClassBench conversion, the plain match, range expansion
// and OpenFlow rule text.
#include <gtest/gtest.h>

#include <random>

#include "classify/expand.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify {
namespace {

TEST(Rules, ClassBenchConversionAndMatch) {
  auto cb = io::parse_classbench_rules(
      "@10.0.0.0/8 0.0.0.0/0 0 : 65535 80 : 80 0x06/0xFF\n@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n",
      "r");
  ASSERT_TRUE(cb.is_ok());
  const RuleSet set = from_classbench(*cb, "r");
  ASSERT_EQ(set.rules.size(), 2u);
  EXPECT_GT(set.rules[0].priority, set.rules[1].priority);
  const uint32_t hit[4] = {0x0a010203, 5, 1234u << 16 | 80, 6};
  const uint32_t miss[4] = {0x0a010203, 5, 1234u << 16 | 81, 6};
  EXPECT_TRUE(rule_matches(set.rules[0], set.layout, hit));
  EXPECT_FALSE(rule_matches(set.rules[0], set.layout, miss));
  EXPECT_TRUE(rule_matches(set.rules[1], set.layout, miss));
  packet::FiveTuple4 t{};
  t.src = 1, t.dst = 2, t.sport = 3, t.dport = 4, t.proto = 17;
  uint32_t k[4];
  five_tuple_words(t, k);
  EXPECT_EQ(k[2], 3u << 16 | 4);
  EXPECT_EQ(k[3], 17u);
}

TEST(Rules, KeyBufferIsSoA) {
  KeyBuffer b(KeyLayout::kOpenFlow, 3);
  uint32_t k[9];
  for (uint32_t i = 0; i < 3; ++i) {
    for (unsigned w = 0; w < 9; ++w) k[w] = i * 100 + w;
    b.set(i, k);
  }
  const KeyBatch v = b.view();
  EXPECT_EQ(v.word(4, 2), 204u);
  EXPECT_EQ(v.words[4 * 3 + 2], 204u);
  EXPECT_EQ(v.slice(1, 2).word(8, 1), 208u);
}

TEST(Rules, RangeToPrefixesIsExactAndMinimal) {
  std::mt19937 rng(1);
  for (int t = 0; t < 2000; ++t) {
    uint16_t a = uint16_t(rng()), b = uint16_t(rng());
    if (t % 5 == 0) a = 0;
    if (t % 7 == 0) b = 65535;
    const uint16_t lo = std::min(a, b), hi = std::max(a, b);
    const auto pre = detail::range_to_prefixes(lo, hi);
    ASSERT_LE(pre.size(), 30u);
    uint32_t covered = 0, next = lo;
    for (const auto& p : pre) {
      ASSERT_EQ(p.value, next) << lo << ".." << hi;
      covered += 1u << (16 - p.len);
      next = p.value + (1u << (16 - p.len));
    }
    ASSERT_EQ(covered, uint32_t(hi) - lo + 1);
  }
  EXPECT_EQ(detail::range_to_prefixes(0, 65535).size(), 1u);
  EXPECT_EQ(detail::range_to_prefixes(1, 65534).size(), 30u);
  EXPECT_EQ(detail::range_to_prefixes(1024, 65535).size(), 6u);
}

TEST(Rules, ExpansionMatchesLikeTheRule) {
  Rule r;
  r.sport_lo = 1000, r.sport_hi = 2000, r.dport_lo = 0, r.dport_hi = 1023;
  std::vector<detail::Entry> e;
  const size_t n = detail::expand_rule(r, 0, KeyLayout::kFiveTuple, e);
  EXPECT_EQ(n, e.size());
  std::mt19937 rng(2);
  for (int t = 0; t < 20000; ++t) {
    const uint32_t key[4] = {uint32_t(rng()), uint32_t(rng()), uint32_t(rng()), uint32_t(rng() & 255)};
    bool any = false;
    for (const auto& x : e) {
      bool m = true;
      for (unsigned w = 0; w < 4; ++w) m &= (key[w] & x.mask[w]) == x.value[w];
      any |= m;
    }
    ASSERT_EQ(any, rule_matches(r, KeyLayout::kFiveTuple, key));
  }
}

TEST(Rules, OpenFlowParseAndFormat) {
  auto set = parse_openflow_rules(
      "# comment\n"
      "priority=100,tcp,nw_src=10.0.0.0/8,tp_dst=80,actions=output:2\n"
      "priority=5, in_port=3 dl_src=00:11:22:33:44:55/ff:ff:ff:00:00:00 actions=drop\n"
      "dl_type=0x86dd,dl_vlan=7,dl_vlan_pcp=3,nw_tos=4,nw_dst=1.2.3.4/255.255.0.0,tp_src=1/0xff00,actions=output:1,output:2\n"
      "\n"
      "arp,actions=NORMAL\n",
      "of");
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  ASSERT_EQ(set->rules.size(), 4u);
  const Rule& a = set->rules[0];
  EXPECT_EQ(a.priority, 100u);
  EXPECT_EQ(a.value[4] >> 16, 0x0800u);
  EXPECT_EQ(a.value[5] >> 24, 6u);
  EXPECT_EQ(a.mask[6], 0xFF000000u);
  EXPECT_EQ(a.value[6], 0x0a000000u);
  EXPECT_EQ(a.value[8], 80u);
  EXPECT_EQ(a.mask[8], 0xFFFFu);
  EXPECT_EQ(a.action, "output:2");
  EXPECT_EQ(a.line, 2u);
  const Rule& b = set->rules[1];
  EXPECT_EQ(b.value[0] >> 16, 3u);
  EXPECT_EQ(b.mask[1], 0xFFFFFF00u);
  EXPECT_EQ(b.value[1], 0x00112200u);
  EXPECT_EQ(b.mask[2], 0u);
  EXPECT_EQ(set->rules[2].priority, 32768u);
  EXPECT_EQ(set->rules[2].action, "output:1,output:2");
  EXPECT_EQ(set->rules[3].value[4] >> 16, 0x0806u);
  // format -> parse round trip
  for (const Rule& r : set->rules) {
    auto again = parse_openflow_rules(format_openflow_rule(r), "rt");
    ASSERT_TRUE(again.is_ok()) << format_openflow_rule(r) << ": " << again.status().message();
    for (unsigned w = 0; w < 9; ++w) {
      EXPECT_EQ(again->rules[0].value[w], r.value[w]) << format_openflow_rule(r);
      EXPECT_EQ(again->rules[0].mask[w], r.mask[w]) << format_openflow_rule(r);
    }
  }
}

TEST(Rules, OpenFlowErrorsNameLineAndReason) {
  struct Case {
    const char* text;
    const char* want;
  } cases[] = {
      {"priority=1,actions=drop\nfoo=1,actions=drop\n", "of:2: unknown field 'foo'"},
      {"nw_src=10.0.0.300,actions=drop\n", "of:1: bad IPv4 address in 'nw_src=10.0.0.300'"},
      {"tp_dst=70000,actions=drop\n", "of:1: bad value for tp_dst in 'tp_dst=70000'"},
      {"dl_src=00:11:22:33:44,actions=drop\n", "of:1: bad MAC address in 'dl_src=00:11:22:33:44'"},
      {"tcp,nw_proto=17,actions=drop\n", "of:1: field nw_proto given twice"},
      {"priority=x,actions=drop\n", "of:1: priority 'x' is not a number"},
      {"bogus,actions=drop\n", "of:1: unknown keyword 'bogus'"},
  };
  for (const auto& c : cases) {
    auto s = parse_openflow_rules(c.text, "of");
    ASSERT_FALSE(s.is_ok()) << c.text;
    EXPECT_EQ(s.status().message().rfind(c.want, 0), 0u) << s.status().message();
  }
}

}  // namespace
}  // namespace warpath::classify
