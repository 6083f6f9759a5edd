// cpu.nids's port filter (src/nids/cpu/port_filter.hpp) against the rules' own port test at
// every port pair of interest: it may keep a rule whose ports cannot match (a `<>` rule's two
// ways mixed), never drop one whose ports can; port sets with ranges, negations, nested lists
// and variables; the ET Open rules' ports as real input.
#include <gtest/gtest.h>

#include <filesystem>
#include <random>

#include "nids/cpu/port_filter.hpp"
#include "support/test_support.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids::detail {
namespace {

// header_matches's port part.
bool ports_match(const Rule& r, uint16_t sp, uint16_t dp) {
  return (r.sport.contains(sp) && r.dport.contains(dp)) ||
         (r.bidirectional && r.sport.contains(dp) && r.dport.contains(sp));
}

void check(const std::vector<Rule>& rules, const std::vector<uint16_t>& ports, size_t* kept_wrong) {
  PortFilter f(rules);
  ASSERT_GT(f.classes(), 0u);
  for (uint16_t sp : ports)
    for (uint16_t dp : ports) {
      const uint64_t* allowed = f.allowed(sp, dp);
      ASSERT_NE(allowed, nullptr);
      for (uint32_t i = 0; i < rules.size(); ++i) {
        const bool can = ports_match(rules[i], sp, dp);
        if (can) {
          ASSERT_TRUE(PortFilter::test(allowed, i)) << "rule " << i << " ports " << sp << " -> " << dp;
        } else if (PortFilter::test(allowed, i) && kept_wrong) {
          ++*kept_wrong;
        }
      }
    }
}

TEST(PortFilter, NeverDropsARuleWhosePortsMatch) {
  Vars vars;
  vars.set("HTTP_PORTS", "[80,8080:8088]");
  const char* sets[] = {"any", "80", "!80", "[80,443]", "1000:2000", "[1:1024,!53]",
                        "![443,1500]", "[![80,81],1:100]", "$HTTP_PORTS", "[$HTTP_PORTS,!8081]",
                        "65535", "0:0", "1024:"};
  std::vector<Rule> rules;
  for (const char* s : sets)
    for (const char* d : sets)
      for (const char* way : {"->", "<>"}) {
        auto r = parse_rule(std::string("alert tcp any ") + s + " " + way + " any " + d + " (sid:1;)", vars, "t");
        ASSERT_TRUE(r.is_ok()) << s << " " << d << ": " << r.status().message();
        rules.push_back(*r);
      }
  // Every class edge of the sets above and a few random ports.
  std::vector<uint16_t> ports = {0, 1, 2, 52, 53, 54, 79, 80, 81, 82, 99, 100, 101, 442, 443, 444,
                                 999, 1000, 1023, 1024, 1025, 1499, 1500, 1501, 2000, 2001,
                                 8079, 8080, 8081, 8082, 8088, 8089, 65534, 65535};
  std::mt19937 rng(5);
  for (int k = 0; k < 16; ++k) ports.push_back(uint16_t(rng()));
  size_t kept_wrong = 0;
  check(rules, ports, &kept_wrong);
  // One-way rules are filtered exactly; only `<>` rules can be kept by mixing their two ways.
  PortFilter f(rules);
  for (uint16_t sp : ports)
    for (uint16_t dp : ports) {
      const uint64_t* allowed = f.allowed(sp, dp);
      for (uint32_t i = 0; i < rules.size(); ++i)
        if (!rules[i].bidirectional)
          EXPECT_EQ(PortFilter::test(allowed, i), ports_match(rules[i], sp, dp)) << i;
    }
  EXPECT_GT(kept_wrong, 0u) << "the <> rules do mix their ways at some ports";
}

// The filter keeps recent class pairs' sets (a direct-mapped cache): a long run of lookups in
// random order, pairs coming back after others took their slots, answers as the rules' own
// port test. (cpu.nids's per-slot candidates are checked against ref.nids by the self-test,
// whose rules cut about a dozen port classes: more class pairs than slots.)
TEST(PortFilter, CachedSetsMatchTheRulesPorts) {
  std::vector<Rule> rules;
  for (uint32_t k = 0; k < 300; ++k) {
    const std::string sp =
        k % 3 ? "any" : std::to_string(1000 + k) + ":" + std::to_string(1100 + 7 * k);
    const std::string dp =
        std::to_string(k * 211 % 65000) + ":" + std::to_string(k * 211 % 65000 + k);
    auto r = parse_rule(
        "alert tcp any " + sp + " -> any " + dp + " (sid:" + std::to_string(k + 1) + ";)", Vars{},
        "t");
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    rules.push_back(*r);
  }
  PortFilter f(rules);
  ASSERT_GT(f.classes(), 300u) << "more class pairs than cache slots";
  std::mt19937 rng(3);
  std::vector<uint16_t> ports;
  for (int k = 0; k < 40; ++k) ports.push_back(uint16_t(rng()));
  for (int k = 0; k < 40; ++k) ports.push_back(uint16_t(1000 + rng() % 65000));
  // One-way rules: the filter is exact, so the truth is the rules' own port test.
  for (int n = 0; n < 20000; ++n) {
    const uint16_t sp = ports[rng() % ports.size()], dp = ports[rng() % ports.size()];
    const uint64_t* got = f.allowed(sp, dp);
    for (uint32_t r = 0; r < rules.size(); ++r)
      ASSERT_EQ(PortFilter::test(got, r), ports_match(rules[r], sp, dp))
          << "lookup " << n << " rule " << r;
  }
}

// Port groups (cpu.nids's prefilter databases): a pair's group set holds the set of every pair
// of ports of the same groups, and is the same for all of them; for one-way rules between ports
// that are groups of their own it is the pair's set exactly.
TEST(PortFilter, GroupSetsHoldTheSetsOfEveryPairOfTheirGroups) {
  std::vector<Rule> rules;
  std::mt19937 rng(21);
  std::vector<uint16_t> ports = {0,    7,    21,   80,    443,   1023, 1024,
                                 1433, 3306, 8080, 32767, 32768, 65535};
  for (int k = 0; k < 60; ++k) ports.push_back(uint16_t(rng()));
  for (uint16_t p : ports)  // rules on single ports: each class's own set counts
    for (const char* way : {" -> any ", " <> any "}) {
      auto r = parse_rule("alert tcp any " + std::to_string(p) + way + "any (sid:1;)", Vars{}, "t");
      ASSERT_TRUE(r.is_ok()) << r.status().message();
      rules.push_back(*r);
      auto d =
          parse_rule("alert tcp any any -> any " + std::to_string(p) + " (sid:1;)", Vars{}, "t");
      rules.push_back(*d);
    }
  for (uint32_t k = 0; k < 400; ++k) {
    auto range = [&] {
      const uint32_t lo = rng() % 3 == 0 ? rng() % 1024 : rng() % 65536;
      return std::to_string(lo) + ":" +
             std::to_string(std::min<uint32_t>(65535, lo + rng() % 3000));
    };
    const std::string sp = k % 4 ? "any" : range(), dp = k % 9 == 0 ? "any" : range();
    auto r = parse_rule("alert tcp any " + sp + (k % 13 == 0 ? " <> " : " -> ") + "any " + dp +
                            " (sid:" + std::to_string(k + 1) + ";)",
                        Vars{}, "t");
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    rules.push_back(*r);
  }
  PortFilter f(rules);
  std::vector<uint64_t> g1(f.words()), g2(f.words());
  for (uint16_t sp : ports)
    for (uint16_t dp : ports) {
      f.group_allowed(sp, dp, g1.data());
      const uint64_t* pair = f.allowed(sp, dp);
      const bool exact     = PortFilter::group_of(sp) < 0 && PortFilter::group_of(dp) < 0;
      for (uint32_t i = 0; i < rules.size(); ++i) {
        if (PortFilter::test(pair, i))
          ASSERT_TRUE(PortFilter::test(g1.data(), i)) << "rule " << i << " " << sp << "->" << dp;
        else if (exact)
          ASSERT_FALSE(PortFilter::test(g1.data(), i)) << "rule " << i << " " << sp << "->" << dp;
      }
      // Another pair of the same groups: the same group set, holding that pair's set.
      for (uint16_t sp2 : ports)
        for (uint16_t dp2 : ports) {
          auto same = [](uint16_t a, uint16_t b) {  // the same shared group (or port)
            return a == b || (PortFilter::group_of(a) >= 0 &&
                              PortFilter::group_of(a) == PortFilter::group_of(b));
          };
          if (!same(sp, sp2) || !same(dp, dp2)) continue;
          f.group_allowed(sp2, dp2, g2.data());
          ASSERT_EQ(g1, g2) << sp << "->" << dp << " and " << sp2 << "->" << dp2;
          const uint64_t* pair2 = f.allowed(sp2, dp2);
          for (uint32_t i = 0; i < rules.size(); ++i)
            if (PortFilter::test(pair2, i)) ASSERT_TRUE(PortFilter::test(g1.data(), i));
        }
    }
}

TEST(PortFilter, EtOpenRules) {
  const std::string dir = warpath::testing::data_path("patterns/et-open/rules");
  if (!std::filesystem::exists(dir)) GTEST_SKIP() << dir << " not found";
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::directory_iterator(dir))
    if (e.path().extension() == ".rules") files.push_back(e.path().string());
  auto set = load_rules(files, Vars{});
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  ASSERT_GT(set->rules.size(), 1000u);
  std::vector<uint16_t> ports = {0, 21, 22, 25, 53, 80, 110, 139, 443, 445, 1024, 1433, 3306, 3389,
                                 8080, 65535};
  std::mt19937 rng(9);
  for (int k = 0; k < 16; ++k) ports.push_back(uint16_t(rng()));
  check(set->rules, ports, nullptr);
  EXPECT_LT(PortFilter(set->rules).classes(), 2000u) << "a few classes, not a table per port";
}

}  // namespace
}  // namespace warpath::nids::detail
