// tests/classify/engines_test.cpp: every classifier engine against ref.linear.
//
//   random rule sets with the edge cases (both layouts) at every burst size; GSwitch synthetic
//   sets across N, C, F, Cm and f; every ClassBench rule/trace pair of ../shared/data/classbench
//   (the WUSTL traces also against their own first-match column); hand-made edge cases; random
//   insert/erase sequences for engines that update; the registry's errors.
#include <gtest/gtest.h>

#include <cctype>
#include <filesystem>
#include <random>

#include "support/test_support.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"

namespace warpath::classify {
namespace {

std::vector<std::string> engine_ids() {
  std::vector<std::string> ids;
  for (const auto& e : classifier_engines())
    if (e.id != "ref.linear") ids.emplace_back(e.id);
  ids.emplace_back("validate:cpu.tuple");
  return ids;
}

std::string param_name(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param;
  for (char& c : name)
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  return name;
}

std::vector<uint32_t> sizes(uint32_t large) {
  std::vector<uint32_t> s = testing::burst_sizes();
  s.push_back(large);
  return s;
}

class ClassifierEngines : public ::testing::TestWithParam<std::string> {
 protected:
  // nullptr (and the test skips) when the engine cannot run here or take this layout.
  std::unique_ptr<Classifier> make(const RuleSet& rules) {
    auto c = make_classifier(GetParam(), rules);
    if (!c.is_ok() && c.status().code() == Errc::kNotSupported) return nullptr;
    EXPECT_TRUE(c.is_ok()) << GetParam() << ": " << c.status().message();
    return c.is_ok() ? std::move(c).value() : nullptr;
  }
  std::unique_ptr<Classifier> ref(const RuleSet& rules) {
    return std::move(make_classifier("ref.linear", rules)).value();
  }
  void check(const RuleSet& rules, const KeyBuffer& keys, const std::vector<uint32_t>& burst,
             const std::string& what) {
    auto engine = make(rules);
    if (!engine) return;
    auto oracle = ref(rules);
    EXPECT_EQ(compare_classifier(*engine, *oracle, keys, burst), "") << what;
  }
};

TEST_P(ClassifierEngines, RandomSetsBothLayouts) {
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow})
    for (uint64_t seed : {1u, 2u}) {
      const RuleSet rules = random_rule_set(seed, layout, 700);
      check(rules, random_keys(rules, seed, 2500), sizes(2500),
            std::string(layout == KeyLayout::kFiveTuple ? "5-tuple" : "openflow") + " seed " +
                std::to_string(seed));
    }
}

// The non-virtual classify() checks the span before any engine runs, naming the engine.
TEST_P(ClassifierEngines, ShortOutputSpanIsAnErrorNamingTheEngine) {
  const RuleSet rules = random_rule_set(3, KeyLayout::kFiveTuple, 50);
  auto engine         = make(rules);
  if (!engine) GTEST_SKIP() << GetParam() << " not available";
  const KeyBuffer keys = random_keys(rules, 3, 10);
  std::vector<uint32_t> out(9);
  ExecContext ctx;
  const Status s = engine->classify(keys.view(), {out.data(), 9}, ctx);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_EQ(s.message(), std::string(engine->id()) + ": output span of 9 for 10 keys");
}

TEST_P(ClassifierEngines, EdgeCases) {
  const uint32_t n = 300;
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow}) {
    RuleSet empty;
    empty.layout = layout;
    check(empty, random_keys(random_rule_set(1, layout, 10), 1, n), {0, 1, 33, n}, "empty");
    RuleSet catch_all = empty;
    catch_all.rules.push_back(Rule{});
    check(catch_all, random_keys(catch_all, 2, n), {1, 32, n}, "catch-all");
    RuleSet dups    = random_rule_set(3, layout, 20);
    const auto copy = dups.rules;
    dups.rules.insert(dups.rules.end(), copy.begin(), copy.end());  // every rule twice
    for (auto& r : dups.rules) r.priority = 7;                      // and equal priorities
    check(dups, random_keys(dups, 3, n), {1, 31, n}, "duplicates, equal priorities");
  }
  RuleSet ports;
  ports.layout = KeyLayout::kFiveTuple;
  for (uint16_t lo : {0, 1, 65534, 65535}) {
    Rule r;
    r.sport_lo = r.sport_hi = lo;
    r.dport_lo = lo, r.dport_hi = 65535;
    r.priority = lo;
    ports.rules.push_back(r);
  }
  Rule host;
  host.mask[0] = host.mask[1] = 0xFFFF'FFFFu;
  host.value[0]               = 0xFFFF'FFFFu;
  host.priority               = 100000;
  ports.rules.push_back(host);
  KeyBuffer keys(KeyLayout::kFiveTuple, 8);
  const uint32_t k[8][4] = {{0, 0, 0, 6},
                            {0, 0, 1u << 16 | 1, 17},
                            {0, 0, 65534u << 16, 0},
                            {0, 0, 0xFFFFFFFF, 0},
                            {0xFFFFFFFF, 0, 0, 0},
                            {0xFFFFFFFF, 0, 5, 1},
                            {1, 2, 3, 4},
                            {0, 0, 65535u << 16 | 65534, 255}};
  for (uint32_t i = 0; i < 8; ++i) keys.set(i, k[i]);
  check(ports, keys, {1, 8}, "ports 0/65535, /0 and /32");
}

TEST_P(ClassifierEngines, SyntheticGSwitchSets) {
  struct Case {
    uint32_t n, c, f, cm, fields;
  } cases[] = {{1024, 128, 128, 1, 12}, {1024, 128, 4, 1, 12},  {1024, 128, 128, 8, 12},
               {1024, 128, 128, 1, 5},  {600, 300, 300, 1, 12}, {2048, 8, 8, 1, 12},
               {512, 64, 16, 64, 12}};
  for (const Case& c : cases) {
    SyntheticParams p;
    p.rules = c.n, p.classes = c.c, p.full = c.f, p.matching = c.cm, p.fields = c.fields;
    p.tuples = 3000;
    auto set = synthetic_rules(p);
    ASSERT_TRUE(set.is_ok()) << set.status().message();
    check(set->rules, set->keys, {3000, 32}, set->rules.name);
  }
}

TEST_P(ClassifierEngines, ClassBenchSets) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  namespace fs                                                = std::filesystem;
  const std::vector<std::pair<std::string, std::string>> sets = {
      {"classbench/wustl_5tuple/acl1", "classbench/wustl_5tuple/acl1_trace"},
      {"classbench/wustl_5tuple/fw1", "classbench/wustl_5tuple/fw1_trace"},
      {"classbench/wustl_5tuple/ipc1", "classbench/wustl_5tuple/ipc1_trace"},
      {"classbench/db_generator/cutsplit/acl_1k", "classbench/db_generator/cutsplit/acl_1k_trace"},
      {"classbench/db_generator/cutsplit/fw_1k", "classbench/db_generator/cutsplit/fw_1k_trace"},
      {"classbench/db_generator/cutsplit/ipc_1k", "classbench/db_generator/cutsplit/ipc_1k_trace"},
  };
  for (const auto& [rule_file, trace_file] : sets) {
    auto rules = load_rules(testing::data_path(rule_file), "classbench");
    ASSERT_TRUE(rules.is_ok()) << rules.status().message();
    auto trace = io::load_trace(testing::data_path(trace_file));
    ASSERT_TRUE(trace.is_ok()) << trace.status().message();
    const uint32_t n = std::min<uint32_t>(uint32_t(trace->size()), 20000);
    trace->resize(n);
    const KeyBuffer keys = keys_from_trace(*trace);
    auto engine          = make(*rules);
    if (!engine) GTEST_SKIP() << GetParam() << " not available";
    std::vector<uint32_t> got(n);
    ExecContext ctx;
    ASSERT_TRUE(engine->classify(keys.view(), {got.data(), n}, ctx).is_ok());
    // WUSTL traces carry the first match: with file-order priorities it is the answer.
    for (uint32_t i = 0; i < n; ++i)
      if ((*trace)[i].first_match >= 0)
        ASSERT_EQ(int64_t(got[i]), (*trace)[i].first_match) << rule_file << " key " << i;
    auto oracle = ref(*rules);
    EXPECT_EQ(compare_classifier(*engine, *oracle, keys, {n, 4096, 33}), "") << rule_file;
  }
}

// The larger sets: db_generator 10K sets (7-column traces carry the generating rule, not the
// answer) and the generated 100K sets, on a slice of their traces against ref.linear.
TEST_P(ClassifierEngines, LargeSets) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  const std::vector<std::pair<std::string, uint32_t>> sets = {
      {"classbench/db_generator/neurocuts/acl1_10k", 3000},  // no traces: keys cut from rules
      {"classbench/db_generator/neurocuts/fw1_10k", 3000},
      {"classbench/db_generator/neurocuts/ipc1_10k", 3000},
      {"classbench/db_generator/cutsplit/fw_10k", 3000},
      {"classbench/generated_100k/acl1_100K.gz", 1000},
      {"classbench/generated_100k/fw1_100K.gz", 1000},
      {"classbench/generated_100k/ipc1_100K.gz", 1000},
  };
  for (const auto& [file, keys_wanted] : sets) {
    auto rules = load_rules(testing::data_path(file), "classbench");
    ASSERT_TRUE(rules.is_ok()) << rules.status().message();
    // The 100K sets run on the engines built for them: tuple, Bloom search and the address
    // split. Linear search is O(rules) per key and RFC/TIC builds take minutes there (bench
    // classify measures them).
    if (rules->rules.size() > 20000 && GetParam().find("tuple") == std::string::npos &&
        GetParam().find("bloom") == std::string::npos &&
        GetParam().find("split") == std::string::npos)
      continue;
    const std::string trace_file = file.size() > 3 && file.substr(file.size() - 3) == ".gz"
                                       ? file.substr(0, file.size() - 3) + "_trace.gz"
                                       : file + "_trace";
    KeyBuffer keys;
    if (std::filesystem::exists(testing::data_path(trace_file))) {
      auto trace = io::load_trace(testing::data_path(trace_file));
      ASSERT_TRUE(trace.is_ok()) << trace.status().message();
      trace->resize(std::min<size_t>(trace->size(), keys_wanted));
      keys = keys_from_trace(*trace);
    } else {
      keys = random_keys(*rules, 17, keys_wanted);
    }
    auto engine = make_classifier(GetParam(), *rules);
    if (!engine.is_ok()) {
      // A capacity limit (RFC tables on the biggest sets) is an answer, not a crash.
      ASSERT_TRUE(engine.status().code() == Errc::kNotSupported ||
                  engine.status().code() == Errc::kCapacity)
          << file << ": " << engine.status().message();
      continue;
    }
    auto oracle = ref(*rules);
    EXPECT_EQ(compare_classifier(**engine, *oracle, keys, {uint32_t(keys.size()), 64}), "") << file;
  }
}

TEST_P(ClassifierEngines, InsertsAndErases) {
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow}) {
    const RuleSet all = random_rule_set(9, layout, 400);
    RuleSet start     = all;
    start.rules.resize(200);
    auto engine = make(start);
    if (!engine) continue;
    if (engine->erase(0).code() == Errc::kNotSupported) GTEST_SKIP() << "rebuild-only engine";
    auto oracle = ref(start);
    ASSERT_TRUE(oracle->erase(0).is_ok());
    const KeyBuffer keys = random_keys(all, 9, 3000);
    std::mt19937_64 rng(5);
    std::vector<bool> present(all.rules.size(), false);
    for (uint32_t i = 1; i < 200; ++i) present[i] = true;
    for (int step = 0; step < 120; ++step) {
      const auto i = uint32_t(rng() % all.rules.size());
      if (present[i] && rng() % 2) {
        ASSERT_TRUE(engine->erase(i).is_ok());
        ASSERT_TRUE(oracle->erase(i).is_ok());
        present[i] = false;
      } else {
        ASSERT_TRUE(engine->insert(i, all.rules[i]).is_ok());
        ASSERT_TRUE(oracle->insert(i, all.rules[i]).is_ok());
        present[i] = true;
      }
      if (step % 10 == 0)
        ASSERT_EQ(compare_classifier(*engine, *oracle, keys, {3000}), "") << "step " << step;
    }
    EXPECT_EQ(engine->erase(uint32_t(all.rules.size()) + 5).code(), Errc::kNotFound);
  }
}

INSTANTIATE_TEST_SUITE_P(Engines, ClassifierEngines, ::testing::ValuesIn(engine_ids()), param_name);

TEST(ClassifierRegistry, Errors) {
  const RuleSet five = random_rule_set(1, KeyLayout::kFiveTuple, 10);
  EXPECT_EQ(make_classifier("cpu.nope", five).status().code(), Errc::kNotFound);
  const RuleSet of = random_rule_set(1, KeyLayout::kOpenFlow, 10);
  EXPECT_EQ(make_classifier("cpu.rfc", of).status().code(), Errc::kNotSupported);
  auto a = make_classifier("auto", of);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_EQ((*a)->id().find(".rfc"), std::string_view::npos);
  auto ref = make_classifier("ref.linear", five);
  ASSERT_TRUE(ref.is_ok());
  uint32_t out[4];
  ExecContext ctx;
  const KeyBuffer keys = random_keys(of, 1, 4);
  EXPECT_EQ((*ref)->classify(keys.view(), {out, 4}, ctx).code(), Errc::kInvalidArgument);
  const KeyBuffer fk = random_keys(five, 1, 4);
  EXPECT_EQ((*ref)->classify(fk.view(), {out, 3}, ctx).code(), Errc::kInvalidArgument);
}

TEST(ClassifierRegistry, SelfTestCheck) {
  for (const auto& e : classifier_engines()) {
    const CheckReport r = check_classifier_engine(e.id, 77, 3000);
    if (r.skipped) continue;
    EXPECT_TRUE(r.passed()) << e.id << ": " << r.detail;
  }
}

TEST(Synthetic, ShapeFollowsParameters) {
  SyntheticParams p;
  p.rules = 1000, p.classes = 100, p.full = 10, p.matching = 4, p.fields = 12, p.tuples = 500;
  auto s = synthetic_rules(p);
  ASSERT_TRUE(s.is_ok());
  EXPECT_EQ(s->rules.rules.size(), 1000u);
  std::set<std::vector<uint32_t>> masks;
  for (const Rule& r : s->rules.rules) masks.insert(std::vector<uint32_t>(r.mask, r.mask + 9));
  EXPECT_EQ(masks.size(), 100u);
  // Every tuple matches about Cm classes (random values rarely add more).
  auto ref = make_classifier("ref.linear", s->rules);
  uint32_t key[9];
  double total = 0;
  for (uint32_t i = 0; i < 500; ++i) {
    s->keys.get(i, key);
    std::set<std::vector<uint32_t>> hit;
    for (const Rule& r : s->rules.rules)
      if (rule_matches(r, s->rules.layout, key))
        hit.insert(std::vector<uint32_t>(r.mask, r.mask + 9));
    EXPECT_GE(hit.size(), 1u);
    total += double(hit.size());
  }
  EXPECT_NEAR(total / 500, 4.0, 1.0);
  p.full = 200;
  EXPECT_FALSE(synthetic_rules(p).is_ok());
}

}  // namespace
}  // namespace warpath::classify
