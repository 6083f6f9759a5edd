// tests/classify/linear_test.cpp: cpu.linear (every scan path: portable, AVX2, AVX-512) and
// the image of core/linear_core.hpp against a naive oracle written here from the definition in
// rule.hpp: block edges, early exit with equal priorities, rules that cannot match, both
// layouts, OpenFlow MAC masks, batch sizes and strides, threads, argument checks.
#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "classify/core/linear_core.hpp"
#include "classify/engines.hpp"
#include "classify/linear_image.hpp"
#include "support/test_support.hpp"

namespace warpath::classify {
namespace {

// ---- The oracle: the definition, nothing else ----
bool naive_matches(const Rule& r, KeyLayout layout, const uint32_t* key) {
  for (unsigned w = 0; w < key_words(layout); ++w)
    if ((key[w] & r.mask[w]) != r.value[w]) return false;
  const uint32_t pw = key[ports_word(layout)];
  const uint32_t sp = pw >> 16, dp = pw & 0xFFFFu;
  return sp >= r.sport_lo && sp <= r.sport_hi && dp >= r.dport_lo && dp <= r.dport_hi;
}

uint32_t naive_classify(const RuleSet& set, const uint32_t* key) {
  uint32_t best = kNoMatch;
  for (uint32_t i = 0; i < set.rules.size(); ++i) {
    if (!naive_matches(set.rules[i], set.layout, key)) continue;
    if (best == kNoMatch || better(set.rules[i].priority, i, set.rules[best].priority, best))
      best = i;
  }
  return best;
}

// Keys in SoA with a stride larger than the count, so that slices and strides are exercised.
struct Keys {
  KeyLayout layout;
  std::vector<std::vector<uint32_t>> aos;
  KeyBatch batch(std::vector<uint32_t>& soa, uint32_t pad) const {
    const uint32_t n = uint32_t(aos.size()), stride = n + pad;
    soa.assign(size_t(stride) * key_words(layout), 0xDEADBEEFu);
    for (uint32_t i = 0; i < n; ++i)
      for (unsigned w = 0; w < key_words(layout); ++w) soa[size_t(w) * stride + i] = aos[i][w];
    return {soa.data(), n, stride, layout};
  }
};

uint32_t prefix_mask(unsigned len) { return len == 0 ? 0 : ~0u << (32 - len); }

Rule random_rule(std::mt19937& rng, KeyLayout layout, uint32_t prio_range) {
  Rule r;
  auto pick = [&](uint32_t n) { return uint32_t(rng() % n); };
  if (layout == KeyLayout::kFiveTuple) {
    for (unsigned w : {0u, 1u}) {
      static const unsigned lens[] = {0, 0, 8, 16, 24, 31, 32, 32};
      const unsigned len           = pick(3) ? lens[pick(8)] : pick(33);
      r.mask[w]                    = prefix_mask(len);
      r.value[w] = uint32_t(rng() % 4) << 28 & r.mask[w];  // few values: many overlaps
      if (pick(2)) r.value[w] |= uint32_t(rng()) & r.mask[w] & 0x00FFFFFFu;
    }
    if (pick(2)) {
      r.mask[3]  = 0xFF;
      r.value[3] = pick(2) ? 6 : 17;
    }
    auto range = [&](uint16_t& lo, uint16_t& hi) {
      switch (pick(6)) {
        case 0:
          lo = 0, hi = 65535;
          break;
        case 1:
          lo = hi = uint16_t(pick(3) == 0 ? 0 : pick(2) ? 65535 : 80);
          break;
        case 2:
          lo = 0, hi = uint16_t(pick(1024));
          break;
        case 3:
          lo = uint16_t(1024 + pick(1000)), hi = 65535;
          break;
        case 4:
          lo = uint16_t(pick(65536)), hi = uint16_t(lo + pick(65536 - lo));
          break;
        default:
          lo = 0, hi = 65535;
      }
    };
    range(r.sport_lo, r.sport_hi);
    range(r.dport_lo, r.dport_hi);
  } else {
    // OpenFlow: value/mask on every word, MAC masks on words 1 and 2, ports as value/mask.
    for (unsigned w = 0; w < 9; ++w) {
      if (pick(3) == 0) continue;  // wildcard
      uint32_t m = 0;
      switch (pick(4)) {
        case 0:
          m = ~0u;
          break;
        case 1:
          m = prefix_mask(pick(33));
          break;
        case 2:
          m = w == 1 || w == 2 ? 0x0000FFFFu : 0xFFFF0000u;
          break;  // MAC halves
        default:
          m = uint32_t(rng()) & uint32_t(rng());
      }
      r.mask[w]  = m;
      r.value[w] = uint32_t(rng() % 3) * 0x01010101u & m;
    }
  }
  r.priority = prio_range ? uint32_t(rng() % prio_range) : 0;
  return r;
}

std::vector<uint32_t> random_key(std::mt19937& rng, const RuleSet& set) {
  const unsigned words = key_words(set.layout);
  std::vector<uint32_t> k(words);
  for (auto& w : k) w = rng() % 3 == 0 ? uint32_t(rng()) : uint32_t(rng() % 4) << 28;
  if (!set.rules.empty() && rng() % 4 != 0) {  // mostly keys derived from a rule
    const Rule& r = set.rules[rng() % set.rules.size()];
    for (unsigned w = 0; w < words; ++w) k[w] = r.value[w] | (k[w] & ~r.mask[w]);
    if (set.layout == KeyLayout::kFiveTuple) {
      auto port = [&](uint16_t lo, uint16_t hi) {
        switch (rng() % 4) {
          case 0:
            return uint32_t(lo);
          case 1:
            return uint32_t(hi);
          default:
            return lo + (hi > lo ? uint32_t(rng() % (uint32_t(hi - lo) + 1)) : 0u);
        }
      };
      k[2] = port(r.sport_lo, r.sport_hi) << 16 | port(r.dport_lo, r.dport_hi);
    }
  }
  if (set.layout == KeyLayout::kFiveTuple && rng() % 8 == 0) k[2] = rng() % 2 ? 0 : 0xFFFFFFFFu;
  return k;
}

std::vector<int> isas() {
  std::vector<int> v = {1};
  RuleSet none;
  for (int isa : {2, 3})
    if (detail::make_cpu_linear_isa(none, {}, isa).is_ok()) v.push_back(isa);
  return v;
}

// Runs every path over the keys at the given batch sizes and compares with the oracle.
void expect_oracle(const RuleSet& set, const Keys& keys, std::vector<uint32_t> bursts = {},
                   uint32_t threads = 1) {
  std::vector<uint32_t> want(keys.aos.size());
  for (size_t i = 0; i < want.size(); ++i) want[i] = naive_classify(set, keys.aos[i].data());
  std::vector<uint32_t> soa;
  const KeyBatch all = keys.batch(soa, 3);
  if (bursts.empty()) bursts = {all.count};
  for (int isa : isas()) {
    auto made = detail::make_cpu_linear_isa(set, {}, isa);
    ASSERT_TRUE(made.is_ok()) << made.status().message();
    const auto& clf = *made;
    ExecContext ctx;
    ctx.threads = threads;
    for (uint32_t burst : bursts) {
      if (burst == 0) {
        ASSERT_TRUE(clf->classify(all.slice(0, 0), {nullptr, 0}, ctx).is_ok());
        continue;
      }
      std::vector<uint32_t> got(all.count, 0x12345678u);
      for (uint32_t off = 0; off < all.count; off += burst) {
        const uint32_t n = std::min(burst, all.count - off);
        ASSERT_TRUE(clf->classify(all.slice(off, n), {got.data() + off, n}, ctx).is_ok());
      }
      for (size_t i = 0; i < want.size(); ++i)
        ASSERT_EQ(got[i], want[i]) << "isa " << isa << " burst " << burst << " key " << i
                                   << " rules " << set.rules.size() << " " << set.name;
    }
  }
}

Keys make_keys(std::mt19937& rng, const RuleSet& set, uint32_t n) {
  Keys k{set.layout, {}};
  for (uint32_t i = 0; i < n; ++i) k.aos.push_back(random_key(rng, set));
  return k;
}

TEST(LinearImage, LayoutKeepsActiveWordsOnly) {
  RuleSet set;
  Rule r;
  r.mask[0] = 0xFF000000u, r.value[0] = 0x0A000000u, r.dport_lo = r.dport_hi = 80;
  set.rules                  = {r, Rule{}};
  const uint32_t order[]     = {0, 1};
  const core::LinearLayout l = core::linear_layout(set.rules.data(), order, 2, 4, 2);
  EXPECT_EQ(l.words, 1u);
  EXPECT_EQ(l.word_ids[0], 0u);
  EXPECT_EQ(l.ranges, 1u);
  EXPECT_EQ(l.block_words(), 4 * core::kLinearLanes);
  std::vector<uint32_t> blocks(l.block_words());
  core::linear_fill(l, set.rules.data(), order, 2, blocks.data());
  const core::LinearView v{l, blocks.data(), order, 2};
  const uint32_t key_hit[4] = {0x0A000001u, 0, 80, 0}, key_miss[4] = {0x0B000001u, 0, 81, 0};
  EXPECT_EQ(core::linear_classify(v, core::linear_key(l, key_hit, 1, 0)), 0u);
  EXPECT_EQ(core::linear_classify(v, core::linear_key(l, key_miss, 1, 0)), 1u);
  EXPECT_EQ(core::linear_valid_lanes(17, 1), 1u);
  EXPECT_EQ(core::linear_valid_lanes(32, 1), 0xFFFFu);
}

// The GPU body on the host: linear_first_serial with the word count fixed at compile time (as
// cuda.linear instantiates it), over chunks of 16 blocks whose answers are min-reduced.
template <int NW, int R>
uint32_t gpu_like(const core::LinearView& v, const core::LinearKey& k) {
  uint32_t best = core::kLinearNone;
  for (uint32_t b0 = 0; b0 < v.block_count(); b0 += 16) {
    core::LinearView chunk = v;
    chunk.blocks           = v.block(b0);
    chunk.rules            = v.rules - b0 * core::kLinearLanes;
    const uint32_t nb      = std::min(16u, v.block_count() - b0);
    const uint32_t pos     = core::linear_first_serial<NW, R>(chunk, k, 0, nb);
    if (pos != core::kLinearNone) best = std::min(best, b0 * core::kLinearLanes + pos);
  }
  return core::linear_answer(v, best);
}

template <int NW = 0>
uint32_t gpu_like_dispatch(const core::LinearView& v, const core::LinearKey& k) {
  if constexpr (NW < 9)
    if (v.layout.words != NW) return gpu_like_dispatch<NW + 1>(v, k);
  return v.layout.ranges ? gpu_like<NW, 1>(v, k) : gpu_like<NW, 0>(v, k);
}

TEST(LinearCore, SerialChunkedBodyMatchesOracle) {
  std::mt19937 rng(16);
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow})
    for (uint32_t n : {0u, 1u, 15u, 16u, 17u, 255u, 256u, 257u, 600u}) {
      RuleSet set;
      set.layout = layout;
      for (uint32_t i = 0; i < n; ++i) set.rules.push_back(random_rule(rng, layout, 20));
      std::vector<uint32_t> order, storage;
      const core::LinearView v = detail::build_linear_image(set, order, storage);
      const Keys keys          = make_keys(rng, set, 300);
      std::vector<uint32_t> soa;
      const KeyBatch b = keys.batch(soa, 1);
      for (uint32_t i = 0; i < b.count; ++i) {
        const uint32_t want     = naive_classify(set, keys.aos[i].data());
        const core::LinearKey k = core::linear_key(v.layout, b.words, b.stride, i);
        ASSERT_EQ(core::linear_answer(v, core::linear_first_serial(v, k, 0, v.block_count())), want)
            << n;
        ASSERT_EQ(core::linear_classify(v, k), want) << n;
        ASSERT_EQ(gpu_like_dispatch(v, k), want) << n << " words " << v.layout.words;
      }
    }
}

TEST(CpuLinear, BlockEdgesBothLayouts) {
  std::mt19937 rng(11);
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow})
    for (uint32_t n : {0u, 1u, 2u, 7u, 8u, 9u, 15u, 16u, 17u, 31u, 32u, 33u, 47u, 48u, 49u, 100u}) {
      RuleSet set;
      set.layout = layout;
      set.name   = layout == KeyLayout::kFiveTuple ? "5t" : "of";
      for (uint32_t i = 0; i < n; ++i) set.rules.push_back(random_rule(rng, layout, 8));
      expect_oracle(set, make_keys(rng, set, 200));
    }
}

TEST(CpuLinear, BurstSizesAndThreads) {
  std::mt19937 rng(12);
  RuleSet set;
  for (uint32_t i = 0; i < 300; ++i) set.rules.push_back(random_rule(rng, set.layout, 0));
  for (uint32_t i = 0; i < set.rules.size(); ++i) set.rules[i].priority = 300 - i;
  const Keys keys = make_keys(rng, set, 9000);
  expect_oracle(set, keys, {0, 1, 31, 32, 33, 4096, 9000});
  expect_oracle(set, keys, {9000}, 3);
}

TEST(CpuLinear, EqualPrioritiesAndInvertedOrder) {
  std::mt19937 rng(13);
  // All equal: the lowest index wins, so the scan must stop at the first match in index order.
  RuleSet eq;
  for (uint32_t i = 0; i < 70; ++i) eq.rules.push_back(random_rule(rng, eq.layout, 0));
  eq.rules.push_back(Rule{});  // catch-all last
  expect_oracle(eq, make_keys(rng, eq, 500));
  // Priorities rising with the index: the last matching rule wins.
  RuleSet up = eq;
  for (uint32_t i = 0; i < up.rules.size(); ++i) up.rules[i].priority = i;
  expect_oracle(up, make_keys(rng, up, 500));
  // Duplicates of one rule with a catch-all in the middle at a higher priority.
  RuleSet dup;
  Rule r     = random_rule(rng, dup.layout, 0);
  r.priority = 5;
  for (int i = 0; i < 20; ++i) dup.rules.push_back(r);
  Rule all;
  all.priority = 6;
  dup.rules.insert(dup.rules.begin() + 17, all);
  Keys k = make_keys(rng, dup, 100);
  expect_oracle(dup, k);
  auto clf = detail::make_cpu_linear_isa(dup, {}, 0);
  ASSERT_TRUE(clf.is_ok());
  std::vector<uint32_t> soa, out(k.aos.size());
  ExecContext ctx;
  ASSERT_TRUE((*clf)->classify(k.batch(soa, 0), {out.data(), uint32_t(out.size())}, ctx).is_ok());
  for (uint32_t a : out) EXPECT_EQ(a, 17u);
}

TEST(CpuLinear, CatchAllsEmptyRangesAndDeadRules) {
  std::mt19937 rng(14);
  RuleSet set;
  Rule dead_range;
  dead_range.sport_lo = 10, dead_range.sport_hi = 9, dead_range.priority = 9;  // empty range
  Rule dead_value;
  dead_value.mask[1] = 0xFFFF0000u, dead_value.value[1] = 0x00000001u, dead_value.priority = 9;
  Rule edge;
  edge.sport_lo = edge.sport_hi = 65535, edge.dport_lo = edge.dport_hi = 0, edge.priority = 8;
  Rule host;
  host.mask[0] = host.mask[1] = ~0u, host.value[0] = 0xFFFFFFFFu, host.priority = 7;
  set.rules = {dead_range, dead_value, edge, host, Rule{}};
  Keys keys = make_keys(rng, set, 300);
  keys.aos.push_back({0xFFFFFFFFu, 0, 0xFFFF0000u, 0});
  keys.aos.push_back({0xFFFFFFFFu, 0, 0x0009000Au, 0});
  keys.aos.push_back({0, 0, 0x000A0000u, 0});
  expect_oracle(set, keys);
  // Only catch-alls: no word and no range in the image.
  RuleSet alls;
  alls.rules = {Rule{}, Rule{}};
  expect_oracle(alls, make_keys(rng, alls, 40));
  // Only dead rules: an empty image.
  RuleSet dead;
  dead.rules = {dead_range, dead_value};
  expect_oracle(dead, make_keys(rng, dead, 40));
}

TEST(CpuLinear, LargeRandomSetsBothLayouts) {
  std::mt19937 rng(15);
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow}) {
    RuleSet set;
    set.layout = layout;
    for (uint32_t i = 0; i < 1500; ++i) set.rules.push_back(random_rule(rng, layout, 50));
    expect_oracle(set, make_keys(rng, set, 3000), {33, 3000});
  }
}

TEST(CpuLinear, ClassBenchTraceFirstMatch) {
  const std::string dir = testing::data_path("classbench/wustl_5tuple/");
  auto cb               = io::load_classbench_rules(dir + "acl1_1K");
  auto trace            = io::load_trace(dir + "acl1_1K_trace");
  if (!cb.is_ok() || !trace.is_ok()) GTEST_SKIP() << "no ClassBench data";
  const RuleSet set = from_classbench(*cb, "acl1_1K");
  Keys keys{set.layout, {}};
  for (size_t i = 0; i < trace->size() && i < 3000; ++i) {
    uint32_t k[4];
    five_tuple_words((*trace)[i].key, k);
    keys.aos.push_back({k[0], k[1], k[2], k[3]});
  }
  expect_oracle(set, keys, {32, 3000});
}

TEST(CpuLinear, ArgumentChecks) {
  RuleSet set;
  set.rules = {Rule{}};
  auto clf  = detail::make_cpu_linear_isa(set, {}, 0);
  ASSERT_TRUE(clf.is_ok());
  std::vector<uint32_t> words(9 * 4, 0), out(4);
  ExecContext ctx;
  const KeyBatch of{words.data(), 4, 4, KeyLayout::kOpenFlow};
  EXPECT_EQ((*clf)->classify(of, {out.data(), 4}, ctx).code(), Errc::kInvalidArgument);
  const KeyBatch ft{words.data(), 4, 4, KeyLayout::kFiveTuple};
  EXPECT_EQ((*clf)->classify(ft, {out.data(), 3}, ctx).code(), Errc::kInvalidArgument);
  EXPECT_TRUE((*clf)->classify(ft, {out.data(), 4}, ctx).is_ok());
  EXPECT_EQ(out[3], 0u);
  EXPECT_EQ((*clf)->id(), "cpu.linear");
  EXPECT_EQ((*clf)->insert(0, Rule{}).code(), Errc::kNotSupported);
  EXPECT_EQ((*clf)->stats().rules, 1u);
}

}  // namespace
}  // namespace warpath::classify
