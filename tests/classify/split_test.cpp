// tests/classify/split_test.cpp: the address split (split_image.hpp, core/split_core.hpp,
// cpu/split_cpu.hpp) against ref.linear: nested prefixes at the ends of the address space with
// keys on every interval bound and its neighbours, at sizes that give 1 to 5 index layers; the
// scalar body, the portable and the dispatched (AVX-512 where the CPU has it) loops at every
// burst size; where rules are filed (sharing, non-prefix masks, empty port ranges), the
// threshold from /1 to none, and the memory limit.
#include <gtest/gtest.h>

#include <random>

#include "classify/cpu/split_cpu.hpp"
#include "classify/split_image.hpp"
#include "support/test_support.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"

namespace warpath::classify {
namespace {

uint32_t prefix_mask(unsigned len) { return len ? ~uint32_t(0) << (32 - len) : 0; }

Rule prefix_rule(uint32_t src, unsigned src_len, uint32_t dst, unsigned dst_len) {
  Rule r;
  r.mask[0]  = prefix_mask(src_len);
  r.value[0] = src & r.mask[0];
  r.mask[1]  = prefix_mask(dst_len);
  r.value[1] = dst & r.mask[1];
  return r;
}

void finish(RuleSet& rs) {
  for (uint32_t i = 0; i < rs.rules.size(); ++i)
    rs.rules[i].priority = uint32_t(rs.rules.size() - 1 - i);
}

// Nested source prefixes (/17 to /32) clustered so they nest, including the first and last
// addresses; destinations, ports and protocols varied so candidates must be checked. Every
// fourth rule is filed by destination instead (a wild source).
RuleSet nested_rules(std::mt19937& rng, uint32_t n) {
  RuleSet rs;
  const uint32_t anchors[] = {0u, 0xFFFF'FFFFu, 0x8000'0000u, 0x0A0B'0C0Du};
  for (uint32_t i = 0; i < n; ++i) {
    const uint32_t base = anchors[rng() % 4] ^ (rng() % 4 ? rng() & 0x0000'FFFFu : rng());
    const unsigned len  = 17 + rng() % 16;
    Rule r = rng() % 4 ? prefix_rule(base, len, rng() & 0xFF00'0000u, rng() % 3 ? 0 : 8)
                       : prefix_rule(0, 0, base, len);
    if (rng() % 3 == 0) r.dport_lo = r.dport_hi = uint16_t(rng() % 4);
    if (rng() % 4 == 0) r.sport_lo = 1024;
    if (rng() % 3 == 0) r.mask[3] = 0xFF, r.value[3] = rng() % 2 ? 6 : 17;
    rs.rules.push_back(r);
  }
  rs.rules.push_back(prefix_rule(0, 8, 0, 0));  // a short prefix: the rest tree
  finish(rs);
  return rs;
}

// Keys on the first and last address of each prefix (of up to 2,000 rules drawn at random)
// and their neighbours, the other fields random or matching.
KeyBuffer bound_keys(std::mt19937& rng, const RuleSet& rs) {
  std::vector<std::array<uint32_t, 4>> list;
  const size_t n = rs.rules.size();
  for (size_t i = 0; i < std::min<size_t>(n, 2000); ++i)
    for (unsigned w = 0; w < 2; ++w) {
      const Rule& r     = rs.rules[n > 2000 ? rng() % n : i];
      const uint32_t lo = r.value[w], hi = r.value[w] | ~r.mask[w];
      for (uint32_t a : {lo - 1, lo, lo + 1, hi - 1, hi, hi + 1}) {
        std::array<uint32_t, 4> k{uint32_t(rng()), uint32_t(rng()),
                                  uint32_t(rng() % 2048) << 16 | uint32_t(rng() % 6),
                                  rng() % 3 ? 6u : 17u};
        k[w]     = a;
        k[1 - w] = r.value[1 - w] | (rng() & ~r.mask[1 - w]);
        list.push_back(k);
      }
    }
  for (uint32_t a : {0u, 1u, 0xFFFF'FFFEu, 0xFFFF'FFFFu}) list.push_back({a, a, 0, 6});
  KeyBuffer keys(KeyLayout::kFiveTuple, uint32_t(list.size()));
  for (uint32_t i = 0; i < list.size(); ++i) keys.set(i, list[i].data());
  return keys;
}

std::vector<uint32_t> reference(const RuleSet& rs, const KeyBuffer& keys) {
  auto ref = make_classifier("ref.linear", rs);
  EXPECT_TRUE(ref.is_ok());
  std::vector<uint32_t> want(keys.size());
  ExecContext ctx;
  EXPECT_TRUE((*ref)->classify(keys.view(), {want.data(), keys.size()}, ctx).is_ok());
  return want;
}

// The image's three lookups (scalar body, portable loop, dispatched loop) against ref.linear
// at every burst size.
void check_image(const RuleSet& rs, const KeyBuffer& keys, uint32_t min_prefix,
                 const std::string& what) {
  auto img = detail::SplitImage::build(rs, detail::kRfcMaxImageBytes, min_prefix);
  ASSERT_TRUE(img.is_ok()) << what << ": " << img.status().message();
  const core::SplitView v          = (*img)->view();
  const std::vector<uint32_t> want = reference(rs, keys);
  const KeyBatch all               = keys.view();
  for (uint32_t i = 0; i < keys.size(); ++i)
    ASSERT_EQ(core::split_lookup(v, all.word(0, i), all.word(1, i), all.word(2, i), all.word(3, i)),
              want[i])
        << what << " scalar key " << i << " " << std::hex << all.word(0, i) << " "
        << all.word(1, i);
  std::vector<uint32_t> bursts = testing::burst_sizes();
  bursts.push_back(keys.size());
  for (auto* loop : {&detail::split_batched_portable, &detail::split_batched})
    for (uint32_t burst : bursts) {
      if (!burst) continue;
      std::vector<uint32_t> got(keys.size(), 0xDEAD'BEEFu);
      for (uint32_t off = 0; off < keys.size(); off += burst) {
        const uint32_t m = std::min(burst, keys.size() - off);
        loop(v, all.slice(off, m), got.data() + off, 0, m);
      }
      ASSERT_EQ(got, want) << what << (loop == &detail::split_batched ? " dispatched" : " portable")
                           << " burst " << burst;
    }
}

TEST(Split, IndexBoundsAtEveryDepth) {
  // 1 rule: one layer; 40: two; 600: three; 9,000: four; 70,000: five (intervals / 16 / 17...).
  for (uint32_t n : {1u, 40u, 600u, 9000u, 70000u}) {
    std::mt19937 rng(n);
    const RuleSet rs = nested_rules(rng, n);
    check_image(rs, bound_keys(rng, rs), detail::kSplitMinPrefix, std::to_string(n) + " rules");
  }
}

TEST(Split, EveryThreshold) {
  std::mt19937 rng(5);
  RuleSet rs = nested_rules(rng, 300);
  for (uint32_t i = 0; i < 100; ++i)  // short prefixes too
    rs.rules.push_back(prefix_rule(rng(), 1 + rng() % 16, rng(), rng() % 17));
  finish(rs);
  const KeyBuffer keys = bound_keys(rng, rs);
  // 1: every non-wild prefix is indexed; 33: none (all in the rest tree).
  for (uint32_t t : {1u, 8u, 16u, 17u, 24u, 32u, 33u})
    check_image(rs, keys, t, "min prefix " + std::to_string(t));
}

TEST(Split, WhereRulesAreFiled) {
  RuleSet rs;
  // Shared source /24 (three rules), distinct destinations: filed by destination.
  for (uint32_t i = 0; i < 3; ++i)
    rs.rules.push_back(prefix_rule(0x0A00'0100u, 24, 0x0B00'0000u + i, 32));
  // Distinct sources, shared destination: by source.
  for (uint32_t i = 0; i < 2; ++i)
    rs.rules.push_back(prefix_rule(0x0C00'0000u + i, 32, 0x0D00'0000u, 24));
  // Equal sharing: the longer prefix (destination /30 over source /20).
  rs.rules.push_back(prefix_rule(0x0E00'0000u, 20, 0x0F00'0000u, 30));
  // A non-prefix source mask and a short destination: the rest.
  Rule odd    = prefix_rule(0, 0, 0x1000'0000u, 8);
  odd.mask[0] = 0xFF00'FF00u, odd.value[0] = 0x1100'2200u;
  rs.rules.push_back(odd);
  // A non-prefix port mask: the rest, even with /32 addresses.
  Rule ports    = prefix_rule(0x1200'0000u, 32, 0x1300'0000u, 32);
  ports.mask[2] = 0x0005'0000u, ports.value[2] = 0x0001'0000u;
  rs.rules.push_back(ports);
  // A port range and a prefix-shaped port mask that do not meet: never matches.
  Rule never     = prefix_rule(0x1400'0000u, 32, 0, 0);
  never.dport_lo = 0, never.dport_hi = 10, never.mask[2] = 0xFF00u, never.value[2] = 0x0100u;
  rs.rules.push_back(never);
  finish(rs);
  auto img = detail::SplitImage::build(rs);
  ASSERT_TRUE(img.is_ok()) << img.status().message();
  const auto& c = (*img)->counts();
  EXPECT_EQ(c.by_field[core::kSplitSrc], 2u);
  EXPECT_EQ(c.by_field[core::kSplitDst], 4u);
  EXPECT_EQ(c.by_field[core::kSplitSport] + c.by_field[core::kSplitDport], 0u);
  EXPECT_EQ(c.rest, 2u);
  EXPECT_EQ(c.never_match, 1u);
  EXPECT_NE((*img)->detail().find("1 rules never match"), std::string::npos) << (*img)->detail();
  std::mt19937 rng(3);
  check_image(rs, bound_keys(rng, rs), detail::kSplitMinPrefix, "filing");
}

TEST(Split, EmptyAndRestOnly) {
  std::mt19937 rng(9);
  RuleSet empty;
  check_image(empty, bound_keys(rng, nested_rules(rng, 5)), detail::kSplitMinPrefix, "empty");
  RuleSet wild;
  wild.rules.push_back(Rule{});
  finish(wild);
  check_image(wild, bound_keys(rng, nested_rules(rng, 5)), detail::kSplitMinPrefix, "catch-all");
  auto img = detail::SplitImage::build(wild);
  ASSERT_TRUE(img.is_ok());
  EXPECT_EQ((*img)->counts().rest, 1u);
  EXPECT_EQ((*img)->view().part[0].layers + (*img)->view().part[1].layers, 0u);
}

// /16 sources with random port ranges too wide for a port index: at /17 they would all be the
// rest, whose RFC tree (ports by ports) does not fit a quarter of 8 MiB; the build indexes /8
// and longer instead.
TEST(Split, ShorterPrefixesWhenTheRestDoesNotFit) {
  std::mt19937 rng(12);
  RuleSet rs;
  for (uint32_t i = 0; i < 3000; ++i) {
    Rule r     = prefix_rule(uint32_t(rng()), 16, 0, 0);
    r.sport_lo = uint16_t(rng() % 60000);
    r.sport_hi = uint16_t(r.sport_lo + 300 + rng() % 2000);
    r.dport_lo = uint16_t(rng() % 60000);
    r.dport_hi = uint16_t(r.dport_lo + 300 + rng() % 2000);
    rs.rules.push_back(r);
  }
  finish(rs);
  auto img = detail::SplitImage::build(rs, 8u << 20);
  ASSERT_TRUE(img.is_ok()) << img.status().message();
  EXPECT_EQ((*img)->min_prefix(), 8u) << (*img)->detail();
  EXPECT_EQ((*img)->counts().rest, 0u);
  std::vector<std::array<uint32_t, 4>> list;
  for (uint32_t i = 0; i < 4000; ++i) {
    const Rule& r = rs.rules[rng() % rs.rules.size()];
    list.push_back({r.value[0] | (uint32_t(rng()) & 0xFFFFu), uint32_t(rng()),
                    uint32_t(rng() % 4 ? r.sport_lo : rng() & 0xFFFF) << 16 |
                        (rng() % 4 ? r.dport_lo : uint32_t(rng()) & 0xFFFF),
                    6});
  }
  KeyBuffer keys(KeyLayout::kFiveTuple, uint32_t(list.size()));
  for (uint32_t i = 0; i < list.size(); ++i) keys.set(i, list[i].data());
  check_image(rs, keys, (*img)->min_prefix(), "after the fallback to /8");
}

// Rules told apart only by ports (wild addresses, exact or narrow ports, as firewall service
// rules): filed by port, overlapping ranges included; a wide range stays in the rest.
TEST(Split, PortParts) {
  std::mt19937 rng(13);
  RuleSet rs;
  for (uint32_t i = 0; i < 2000; ++i) {
    Rule r;
    const uint16_t lo = uint16_t(rng() % 3000), w = uint16_t(rng() % 4 ? 0 : rng() % 200);
    (i % 3 ? r.dport_lo : r.sport_lo) = lo;
    (i % 3 ? r.dport_hi : r.sport_hi) = uint16_t(lo + w);
    if (rng() % 2) r.mask[3] = 0xFF, r.value[3] = rng() % 2 ? 6 : 17;
    rs.rules.push_back(r);
  }
  Rule wide;
  wide.dport_lo = 1024;  // 1024-65535: too wide for an index
  rs.rules.push_back(wide);
  finish(rs);
  auto img = detail::SplitImage::build(rs, detail::kRfcMaxImageBytes, 17, true);
  ASSERT_TRUE(img.is_ok()) << img.status().message();
  const auto& c = (*img)->counts();
  EXPECT_GT(c.by_field[core::kSplitSport], 600u);
  EXPECT_GT(c.by_field[core::kSplitDport], 1300u);
  EXPECT_EQ(c.rest, 1u);
  std::vector<std::array<uint32_t, 4>> list;
  for (uint32_t i = 0; i < 6000; ++i) {
    const Rule& r     = rs.rules[rng() % rs.rules.size()];
    const uint32_t sp = rng() % 2 ? r.sport_lo + rng() % 3 : rng() % 4000;
    const uint32_t dp = rng() % 2 ? r.dport_hi + rng() % 3 - 1 : rng() % 4000;
    list.push_back({uint32_t(rng()), uint32_t(rng()), (sp & 0xFFFF) << 16 | (dp & 0xFFFF),
                    rng() % 2 ? 6u : 17u});
  }
  KeyBuffer keys(KeyLayout::kFiveTuple, uint32_t(list.size()));
  for (uint32_t i = 0; i < list.size(); ++i) keys.set(i, list[i].data());
  check_image(rs, keys, 17, "port parts");
}

// A GSwitch 5-field set whose short-address rules differ only by ports (the rest's RFC tree
// could not hold it before port parts): it builds and equals ref.linear.
TEST(Split, GSwitchSetWithPortOnlyRules) {
  SyntheticParams p;
  p.rules = 18565, p.classes = 13, p.full = 13, p.matching = 1, p.fields = 5, p.seed = 13;
  p.tuples = 3000;
  auto set = synthetic_rules(p);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  check_image(set->rules, set->keys, 0, "GSwitch 18565,13,13,1,5");
}

TEST(Split, MemoryLimitIsAnError) {
  std::mt19937 rng(11);
  const RuleSet rs = nested_rules(rng, 2000);
  auto img         = detail::SplitImage::build(rs, 4096);
  ASSERT_FALSE(img.is_ok());
  EXPECT_EQ(img.status().code(), Errc::kCapacity);
  EXPECT_NE(img.status().message().find("split"), std::string::npos) << img.status().message();
}

// auto's image limit picks, per set, the fastest engine within 64 MiB (bench/results).
TEST(Split, AutoPicksByImageLimit) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  const std::pair<const char*, const char*> cases[] = {
      {"classbench/wustl_5tuple/acl1_10K", "cpu.rfc"},
      {"classbench/wustl_5tuple/ipc1_10K", "cpu.tic"},
      {"classbench/wustl_5tuple/fw1_10K", "cpu.split"},
  };
  for (const auto& [file, want] : cases) {
    auto rules = load_rules(testing::data_path(file), "classbench");
    ASSERT_TRUE(rules.is_ok()) << rules.status().message();
    auto made = make_classifier("auto", *rules);
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    EXPECT_EQ((*made)->id(), want) << file;
    EXPECT_LE((*made)->stats().memory_bytes, kAutoImageBytes) << file;
    auto checked = make_classifier("validate:auto", *rules);  // the same pick, beside ref.linear
    ASSERT_TRUE(checked.is_ok()) << checked.status().message();
    EXPECT_EQ((*checked)->id(), "validate:" + std::string(want)) << file;
  }
  // An explicit limit below every image: the tree engines all pass, TupleMerge takes it.
  auto rules = load_rules(testing::data_path("classbench/wustl_5tuple/fw1_10K"), "classbench");
  ASSERT_TRUE(rules.is_ok());
  ClassifyParams tiny;
  tiny.max_image_bytes = 4096;
  auto made            = make_best_classifier(*rules, "cpu.", tiny);
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  EXPECT_EQ((*made)->id(), "cpu.tuplemerge");
  // A caller that will update the rules gets the best engine that takes updates.
  ClassifyParams live;
  live.updates = true;
  auto updatable = make_best_classifier(*rules, "", live);
  ASSERT_TRUE(updatable.is_ok()) << updatable.status().message();
  EXPECT_EQ((*updatable)->id(), "cpu.overlay");
  EXPECT_TRUE(takes_updates("cpu.overlay"));
  EXPECT_TRUE(takes_updates("validate:cpu.tuplemerge"));
  EXPECT_TRUE(takes_updates("cpu.bloom"));
  EXPECT_FALSE(takes_updates("cpu.split"));
}

TEST(Split, OpenFlowRulesAreNotSupported) {
  RuleSet of;
  of.layout = KeyLayout::kOpenFlow;
  EXPECT_EQ(make_classifier("cpu.split", of).status().code(), Errc::kNotSupported);
  EXPECT_FALSE(takes_layout("cpu.split", KeyLayout::kOpenFlow));
  EXPECT_TRUE(takes_layout("cpu.split", KeyLayout::kFiveTuple));
  EXPECT_TRUE(takes_layout("cpu.tuple", KeyLayout::kOpenFlow));
}

}  // namespace
}  // namespace warpath::classify
