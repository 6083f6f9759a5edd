// tests/classify/rfc_tic_test.cpp: cpu.rfc, cpu.tic and cpu.split (and their CUDA engines where
// a GPU is present) against a naive oracle written here: small random 5-tuple sets with the edge
// cases
// (/0 and /32 prefixes, non-prefix masks, ports 0 and 65535, HI and arbitrary ranges, protocol
// wildcards, 16-bit protocol masks, masked port words, equal priorities, duplicates), the empty
// set, a single catch-all, every burst size; wustl_5tuple/acl1 against its trace's first-match
// column; the memory limit; the instruction encoding.
#include <gtest/gtest.h>

#include <random>

#include "classify/rfc_image.hpp"
#include "classify/tic_image.hpp"
#include "support/test_support.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/io/classbench.hpp"

namespace warpath::classify {
namespace {

// The plain definition (rule.hpp), written again so these tests depend on nothing else.
uint32_t oracle(const RuleSet& rs, const uint32_t* k) {
  uint32_t best = kNoMatch;
  for (uint32_t i = 0; i < rs.rules.size(); ++i) {
    const Rule& r = rs.rules[i];
    bool ok       = true;
    for (unsigned w = 0; w < 4; ++w) ok &= (k[w] & r.mask[w]) == r.value[w];
    const uint32_t sp = k[2] >> 16, dp = k[2] & 0xFFFF;
    ok &= sp >= r.sport_lo && sp <= r.sport_hi && dp >= r.dport_lo && dp <= r.dport_hi;
    if (ok && (best == kNoMatch || better(r.priority, i, rs.rules[best].priority, best))) best = i;
  }
  return best;
}

struct Keys {
  std::vector<uint32_t> words;  // SoA, stride = n
  uint32_t n = 0;
  KeyBatch batch() const { return {words.data(), n, n, KeyLayout::kFiveTuple}; }
  void key(uint32_t i, uint32_t* k) const {
    for (unsigned w = 0; w < 4; ++w) k[w] = words[size_t(w) * n + i];
  }
};

Keys make_keys(const std::vector<std::array<uint32_t, 4>>& list) {
  Keys k;
  k.n = uint32_t(list.size());
  k.words.resize(size_t(4) * k.n);
  for (uint32_t i = 0; i < k.n; ++i)
    for (unsigned w = 0; w < 4; ++w) k.words[size_t(w) * k.n + i] = list[i][w];
  return k;
}

uint32_t prefix_mask(unsigned len) { return len ? ~uint32_t(0) << (32 - len) : 0; }

// A random rule set with every edge case, and keys on and around its rules' corners.
RuleSet random_rules(std::mt19937& rng, uint32_t n, bool odd) {
  RuleSet rs;
  rs.name   = "random";
  auto pick = [&](uint32_t m) { return uint32_t(rng() % m); };
  for (uint32_t i = 0; i < n; ++i) {
    Rule r;
    for (unsigned w = 0; w < 2; ++w) {
      const unsigned len = pick(4) == 0 ? (pick(2) ? 0 : 32) : pick(33);
      r.mask[w]          = prefix_mask(len);
      if (odd && pick(12) == 0) r.mask[w] = rng() | 0xFFFF'F000u;  // not a prefix
      // Few distinct address values so rules overlap.
      r.value[w] =
          (pick(4) << 30 | pick(4) << 22 | pick(4) << 14 | pick(4) << 6 | pick(64)) & r.mask[w];
    }
    auto ports = [&](uint16_t& lo, uint16_t& hi) {
      switch (pick(6)) {
        case 0:
          lo = 0, hi = 65535;
          break;
        case 1:
          lo = hi = uint16_t(pick(3) == 0 ? (pick(2) ? 0 : 65535) : pick(2000));
          break;
        case 2:
          lo = 1024, hi = 65535;
          break;
        case 3:
          lo = 0, hi = 1023;
          break;
        default: {
          uint16_t a = uint16_t(pick(3000)), b = uint16_t(pick(3) ? pick(3000) : 65535);
          lo = std::min(a, b), hi = std::max(a, b);
        }
      }
    };
    ports(r.sport_lo, r.sport_hi);
    ports(r.dport_lo, r.dport_hi);
    if (pick(2)) {
      r.mask[3]  = 0xFF;
      r.value[3] = pick(3) == 0 ? pick(256) : (pick(2) ? 6 : 17);
    }
    if (odd && pick(10) == 0) {
      r.mask[3]  = pick(2) ? 0x0F : 0xFF00;  // 16-bit protocol chunk, GEN instruction
      r.value[3] = rng() & r.mask[3];
    }
    if (odd && pick(10) == 0) {
      r.mask[2]  = pick(2) ? 0x0001'0000u : 0x0000'00F0u;  // masked port word
      r.value[2] = rng() & r.mask[2];
    }
    r.priority = odd ? pick(8) : n - 1 - i;  // odd sets: many equal priorities
    rs.rules.push_back(r);
    if (pick(16) == 0) rs.rules.push_back(r);  // duplicate
  }
  return rs;
}

Keys corner_keys(std::mt19937& rng, const RuleSet& rs, uint32_t n) {
  std::vector<std::array<uint32_t, 4>> list;
  auto near = [&](uint32_t v) { return v + uint32_t(int(rng() % 3) - 1); };
  for (uint32_t i = 0; i < n; ++i) {
    std::array<uint32_t, 4> k{};
    if (rs.rules.empty() || rng() % 8 == 0) {
      for (auto& w : k) w = rng();
    } else {
      const Rule& r = rs.rules[rng() % rs.rules.size()];
      for (unsigned w = 0; w < 2; ++w)
        k[w] = rng() % 2 ? (r.value[w] | (rng() & ~r.mask[w])) : near(r.value[w]);
      const uint16_t ends[] = {r.sport_lo, r.sport_hi, r.dport_lo, r.dport_hi,
                               0,          65535,      1023,       1024};
      const uint32_t sp     = rng() % 3 ? ends[rng() % 8] + (rng() % 3) - 1 : rng();
      const uint32_t dp     = rng() % 3 ? ends[rng() % 8] + (rng() % 3) - 1 : rng();
      k[2]                  = (sp & 0xFFFF) << 16 | (dp & 0xFFFF);
      if (rng() % 4 == 0) k[2] = r.value[2] | (k[2] & ~r.mask[2]);
      k[3] = rng() % 4 ? (r.value[3] | (rng() % 4 == 0 ? rng() & ~r.mask[3] : 0)) : rng() % 256;
    }
    list.push_back(k);
  }
  return make_keys(list);
}

std::vector<std::string> engines() {
  std::vector<std::string> ids = {"cpu.rfc", "cpu.tic", "cpu.split"};
  if (cuda_device_count() > 0) ids.insert(ids.end(), {"cuda.rfc", "cuda.tic", "cuda.split"});
  return ids;
}

// Every engine against the oracle, at every burst size (the bursts walk through the keys).
void check_all(const RuleSet& rs, const Keys& keys, const std::string& what) {
  std::vector<uint32_t> want(keys.n);
  for (uint32_t i = 0; i < keys.n; ++i) {
    uint32_t k[4];
    keys.key(i, k);
    want[i] = oracle(rs, k);
  }
  std::vector<uint32_t> bursts = testing::burst_sizes();
  bursts.push_back(keys.n);
  for (const std::string& id : engines()) {
    auto made = make_classifier(id, rs);
    ASSERT_TRUE(made.is_ok()) << id << " " << what << ": " << made.status().message();
    const auto& c = *made.value();
    EXPECT_EQ(c.stats().rules, rs.rules.size());
    for (uint32_t burst : bursts) {
      std::vector<uint32_t> got(keys.n, 0xDEAD'BEEFu);
      ExecContext ctx;
      ctx.threads = burst == keys.n ? 3 : 1;
      for (uint32_t off = 0; off < keys.n && burst; off += burst) {
        const uint32_t m = std::min(burst, keys.n - off);
        ASSERT_TRUE(c.classify(keys.batch().slice(off, m), {got.data() + off, m}, ctx).is_ok());
      }
      if (burst == 0) {
        ASSERT_TRUE(c.classify(keys.batch().slice(0, 0), {got.data(), 0}, ctx).is_ok());
        continue;
      }
      for (uint32_t i = 0; i < keys.n; ++i) {
        uint32_t k[4];
        keys.key(i, k);
        ASSERT_EQ(got[i], want[i])
            << id << " " << what << " burst " << burst << " key " << i << " [" << std::hex << k[0]
            << " " << k[1] << " " << k[2] << " " << k[3] << "]";
      }
    }
  }
}

TEST(RfcTic, RandomSetsMatchOracle) {
  for (uint32_t seed = 1; seed <= 12; ++seed) {
    std::mt19937 rng(seed);
    const bool odd   = seed % 2 == 0;
    const uint32_t n = seed <= 4 ? seed * 3
                       : odd     ? 60
                                 : 150 + seed * 10;  // random masks explode RFC
    const RuleSet rs = random_rules(rng, n, odd);
    check_all(rs, corner_keys(rng, rs, 5000), "seed " + std::to_string(seed));
  }
}

TEST(RfcTic, EdgeSets) {
  std::mt19937 rng(7);
  RuleSet empty;
  check_all(empty, corner_keys(rng, empty, 300), "empty set");
  RuleSet all;
  all.rules.push_back(Rule{});  // catch-all
  check_all(all, corner_keys(rng, all, 300), "catch-all");
  RuleSet dup;
  Rule r;
  r.mask[0] = 0xFFFF'FFFFu, r.value[0] = 0x0A00'0001u;
  r.sport_lo = r.sport_hi = 65535;
  r.dport_lo = r.dport_hi = 0;
  r.mask[3] = 0xFF, r.value[3] = 6;
  dup.rules = {r, r, r, Rule{}};
  for (uint32_t i = 0; i < 4; ++i) dup.rules[i].priority = 5;
  check_all(dup, corner_keys(rng, dup, 300), "duplicates");
}

TEST(RfcTic, Acl1TraceFirstMatch) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto rules = io::load_classbench_rules(testing::data_path("classbench/wustl_5tuple/acl1"));
  auto trace = io::load_trace(testing::data_path("classbench/wustl_5tuple/acl1_trace"));
  ASSERT_TRUE(rules.is_ok() && trace.is_ok());
  const RuleSet rs = from_classbench(rules.value(), "acl1");
  std::vector<std::array<uint32_t, 4>> list;
  for (const auto& t : trace.value()) {
    std::array<uint32_t, 4> k{};
    five_tuple_words(t.key, k.data());
    list.push_back(k);
  }
  const Keys keys = make_keys(list);
  for (const std::string& id : engines()) {
    auto made = make_classifier(id, rs);
    ASSERT_TRUE(made.is_ok()) << id << ": " << made.status().message();
    EXPECT_GT(made.value()->stats().memory_bytes, 0u);
    EXPECT_FALSE(made.value()->stats().detail.empty());
    std::vector<uint32_t> got(keys.n);
    ExecContext ctx;
    ASSERT_TRUE(made.value()->classify(keys.batch(), {got.data(), keys.n}, ctx).is_ok());
    for (uint32_t i = 0; i < keys.n; ++i)
      ASSERT_EQ(int64_t(got[i]), trace.value()[i].first_match) << id << " trace line " << i + 1;
  }
}

// A firewall-like set: each rule names one address and leaves the other wild, so nearly every
// (source, destination) pair is a class of its own and P = (X, Y) with F = (P, Z) outgrows the
// limit; the builder then takes P = (Y, Z), F = (P, X). Before, the phase-0 lists (every rule
// that leaves an address wild is in every class of that address's chunks) made X's build scan
// too many list elements, and the answers must still be the oracle's.
RuleSet firewall_rules(std::mt19937& rng, uint32_t n) {
  RuleSet rs;
  rs.name = "firewall";
  for (uint32_t i = 0; i < n; ++i) {
    Rule r;
    const unsigned w = rng() % 8 == 0 ? 2 : rng() % 2;  // the named address (2: both)
    for (unsigned k = 0; k < 2; ++k) {
      if (w != 2 && k != w) continue;
      const unsigned len = rng() % 3 == 0 ? 24 : 32;
      r.mask[k]          = prefix_mask(len);
      r.value[k]         = (0x0A00'0000u | (rng() % 4000) << 8 | rng() % 256) & r.mask[k];
    }
    static const uint16_t kPorts[] = {22, 25, 53, 80, 443, 8080};
    switch (rng() % 4) {
      case 0:
        break;
      case 1:
        r.dport_lo = r.dport_hi = kPorts[rng() % 6];
        break;
      case 2:
        r.dport_lo = 1024;
        break;
      default:
        r.sport_lo = 1024, r.dport_lo = r.dport_hi = kPorts[rng() % 6];
    }
    if (rng() % 3) r.mask[3] = 0xFF, r.value[3] = rng() % 2 ? 6 : 17;
    r.priority = n - i;
    rs.rules.push_back(r);
  }
  rs.rules.push_back(Rule{});  // default
  return rs;
}

TEST(RfcTic, FirewallSetTakesTheOtherShape) {
  std::mt19937 rng(11);
  const RuleSet rs = firewall_rules(rng, 1500);
  const Keys keys  = corner_keys(rng, rs, 20000);
  for (uint64_t limit : {detail::kRfcMaxImageBytes, uint64_t(32) << 20}) {
    auto img = detail::RfcImage::build(rs, limit);
    ASSERT_TRUE(img.is_ok()) << img.status().message();
    const core::RfcView v = img.value()->view();
    if (limit != detail::kRfcMaxImageBytes) {
      EXPECT_EQ(v.shape, 1u) << img.value()->detail();
      EXPECT_NE(img.value()->detail().find("P=(Y,Z)"), std::string::npos);
    }
    for (uint32_t i = 0; i < keys.n; ++i) {
      uint32_t k[4];
      keys.key(i, k);
      ASSERT_EQ(core::rfc_lookup(v, k[0], k[1], k[2], k[3]), oracle(rs, k))
          << "limit " << limit << " key " << i;
    }
  }
  check_all(rs, corner_keys(rng, rs, 3000), "firewall");
}

// wustl_5tuple/fw1_10K: cpu.rfc could not build it (kCapacity) before.
TEST(RfcTic, Fw1_10KTraceFirstMatch) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto rules = io::load_classbench_rules(testing::data_path("classbench/wustl_5tuple/fw1_10K"));
  auto trace = io::load_trace(testing::data_path("classbench/wustl_5tuple/fw1_10K_trace"));
  ASSERT_TRUE(rules.is_ok() && trace.is_ok());
  const RuleSet rs = from_classbench(rules.value(), "fw1_10K");
  std::vector<std::array<uint32_t, 4>> list;
  for (const auto& t : trace.value()) {
    std::array<uint32_t, 4> k{};
    five_tuple_words(t.key, k.data());
    list.push_back(k);
  }
  const Keys keys = make_keys(list);
  auto made       = make_classifier("cpu.rfc", rs);
  ASSERT_TRUE(made.is_ok()) << made.status().message();
  std::vector<uint32_t> got(keys.n);
  ExecContext ctx;
  ASSERT_TRUE(made.value()->classify(keys.batch(), {got.data(), keys.n}, ctx).is_ok());
  for (uint32_t i = 0; i < keys.n; ++i)
    ASSERT_EQ(int64_t(got[i]), trace.value()[i].first_match) << "trace line " << i + 1;
}

TEST(RfcTic, MemoryLimitFailsCleanly) {
  std::mt19937 rng(3);
  const RuleSet rs = random_rules(rng, 200, false);
  auto rfc         = detail::RfcImage::build(rs, 64 << 10);
  ASSERT_FALSE(rfc.is_ok());
  EXPECT_EQ(rfc.status().code(), Errc::kCapacity);
  EXPECT_NE(rfc.status().message().find("entries"), std::string::npos) << rfc.status().message();
  auto tic = detail::TicImage::build(rs, 64 << 10);
  ASSERT_FALSE(tic.is_ok());
  EXPECT_EQ(tic.status().code(), Errc::kCapacity);
}

TEST(RfcTic, RejectsWrongLayouts) {
  RuleSet of;
  of.layout = KeyLayout::kOpenFlow;
  EXPECT_EQ(make_classifier("cpu.rfc", of).status().code(), Errc::kNotSupported);
  EXPECT_EQ(make_classifier("cpu.tic", of).status().code(), Errc::kNotSupported);
  RuleSet five;
  auto c = make_classifier("cpu.rfc", five);
  ASSERT_TRUE(c.is_ok());
  std::vector<uint32_t> words(9), out(1);
  ExecContext ctx;
  EXPECT_FALSE(c.value()
                   ->classify({words.data(), 1, 1, KeyLayout::kOpenFlow}, {out.data(), 1}, ctx)
                   .is_ok());
  EXPECT_FALSE(c.value()
                   ->classify({words.data(), 1, 1, KeyLayout::kFiveTuple}, {out.data(), 0}, ctx)
                   .is_ok());
}

// Instructions of 4, 8 and 12 bytes and NOP padding, read back by the interpreter.
TEST(RfcTic, InstructionBlocks) {
  RuleSet rs;
  for (uint32_t i = 0; i < 40; ++i) {  // one address pair, 40 candidates: several blocks
    Rule r;
    r.sport_lo = r.sport_hi = uint16_t(i % 3 == 0 ? 0 : 100 + i);
    if (i % 3 == 0) r.sport_hi = 65535;
    r.dport_lo = uint16_t(i), r.dport_hi = uint16_t(i % 2 ? i : 2000 + i);
    r.mask[3] = 0xFF, r.value[3] = i % 2 ? 6 : 17;
    r.priority = 100 - i;
    rs.rules.push_back(r);
  }
  auto img = detail::TicImage::build(rs);
  ASSERT_TRUE(img.is_ok()) << img.status().message();
  EXPECT_NE(img.value()->detail().find("code"), std::string::npos);
  std::mt19937 rng(9);
  check_all(rs, corner_keys(rng, rs, 2000), "blocks");
}

}  // namespace
}  // namespace warpath::classify
