// The benchmarks' report (bench/harness/report.hpp): ratios to the fastest anchor of each
// workload, the paired median, the markdown table and a JSON file that parses with every field.
#include "harness/report.hpp"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

namespace warpath::bench {
namespace {

Row row(const std::string& workload, const std::string& engine, double rate, bool anchor) {
  Row r;
  r.workload = workload;
  r.engine   = engine;
  r.anchor   = anchor;
  r.unit     = "lookups";
  r.rate     = rate;
  return r;
}

TEST(BenchReport, RatiosAreToTheFastestAnchorOfTheSameWorkload) {
  std::vector<Row> rows = {row("1k", "rte.a", 50e6, true), row("1k", "rte.b", 100e6, true),
                           row("1k", "warpath", 150e6, false), row("1m", "warpath", 80e6, false),
                           row("1m", "rte.a", 40e6, true)};
  Row skipped = row("1m", "rte.c", 0, true);
  skipped.skipped = "no memory";
  rows.push_back(skipped);
  ratios_to_best_anchor(rows);
  EXPECT_DOUBLE_EQ(rows[0].ratio, 0.5);
  EXPECT_DOUBLE_EQ(rows[1].ratio, 1.0);
  EXPECT_DOUBLE_EQ(rows[2].ratio, 1.5);
  EXPECT_DOUBLE_EQ(rows[3].ratio, 2.0);
  EXPECT_DOUBLE_EQ(rows[5].ratio, 0);  // skipped: no ratio
  std::vector<Row> alone = {row("x", "warpath", 1e6, false)};
  ratios_to_best_anchor(alone);
  EXPECT_EQ(alone[0].ratio, 0);  // no anchor in its workload
}

TEST(BenchReport, PairedMedianIsTheMedianOfPerRoundRatios) {
  EXPECT_DOUBLE_EQ(paired_median({2, 4, 9}, {1, 1, 3}), 3.0);  // ratios 2, 4, 3
  EXPECT_DOUBLE_EQ(paired_median({2, 4}, {1, 1, 5}), 3.0);     // rounds both have: 2, 4
  EXPECT_EQ(paired_median({}, {1}), 0);
  EXPECT_EQ(median({}), 0);
  EXPECT_DOUBLE_EQ(median({5, 1, 3}), 3);
}

TEST(BenchReport, TableHasAColumnPerTitleAndSaysWhyARowWasSkipped) {
  std::vector<Row> rows = {row("1k", "warpath", 2e6, false), row("1k", "rte.a", 1e6, true)};
  rows[1].skipped = "built without DPDK";
  rows[0].with("patterns", int64_t(12));
  char* buf  = nullptr;
  size_t len = 0;
  std::FILE* f = open_memstream(&buf, &len);
  print_table(f,
              {workload_column("flows"), engine_column(), rate_column("M/s"), ns_column(),
               field_column("patterns", "patterns"), ratio_column("vs anchor")},
              rows);
  std::fclose(f);
  const std::string text(buf, len);
  std::free(buf);
  EXPECT_NE(text.find("| flows | engine | M/s | ns/item | patterns | vs anchor |"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("| 1k | warpath | 2.0 | 500.00 | 12 | - |"), std::string::npos) << text;
  EXPECT_NE(text.find("| 1k | rte.a | skipped: built without DPDK |"), std::string::npos) << text;
}

TEST(BenchReport, ResultFileParsesWithProvenanceParamsNotesAndEveryRow) {
  std::vector<Row> rows = {row("1k", "warpath \"fast\"\n", 2e6, false),
                           row("1k", "rte.a", 1e6, true)};
  rows[0].with("flows", int64_t(1000)).with("hot", true).with("note", std::string("a\\b\tc"));
  rows[0].pass_s = {0.5, 0.25};
  ratios_to_best_anchor(rows);
  char arg0[] = "bench", arg1[] = "--json";
  char* argv[] = {arg0, arg1};
  const std::string path = ::testing::TempDir() + "report_test.json";
  ASSERT_TRUE(write_results(path, provenance("test-bench", 2, argv, 3),
                            {{"seconds", 0.5}, {"repeat", int64_t(3)}}, {"a note", "\"quoted\""},
                            rows));
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["tool"], "test-bench");
  EXPECT_EQ(j["command"], "bench --json");
  EXPECT_EQ(j["machine"]["pinned_cpu"], 3);
  EXPECT_TRUE(j["machine"].contains("cpu"));
  EXPECT_TRUE(j["build"].contains("compiler"));
  EXPECT_EQ(j["params"]["repeat"], 3);
  EXPECT_EQ(j["notes"][1], "\"quoted\"");
  ASSERT_EQ(j["results"].size(), 2u);
  const auto& r = j["results"][0];
  EXPECT_EQ(r["engine"], "warpath \"fast\"\n");
  EXPECT_EQ(r["flows"], 1000);
  EXPECT_EQ(r["hot"], true);
  EXPECT_EQ(r["note"], "a\\b\tc");
  EXPECT_DOUBLE_EQ(r["ratio"].get<double>(), 2.0);
  EXPECT_DOUBLE_EQ(r["ns"].get<double>(), 500.0);
  EXPECT_EQ(r["pass_s"].size(), 2u);
  EXPECT_EQ(j["results"][1]["anchor"], true);
  EXPECT_FALSE(write_results("/nonexistent-dir/x.json", {}, {}, {}, rows));
}

TEST(BenchReport, PairedToTheFastestAnchorUsesItsPasses) {
  std::vector<Row> rows = {row("v4", "rte.a", 1e6, true), row("v4", "rte.b", 2e6, true),
                           row("v4", "warpath", 3e6, false), row("v6", "warpath", 1e6, false)};
  rows[0].pass_s        = {4, 4, 4};
  rows[1].pass_s        = {2, 3, 2};  // the fastest anchor of v4
  rows[2].pass_s        = {1, 1, 2};  // ratios 2, 3, 1: median 2
  rows[3].pass_s        = {1, 1, 1};  // no anchor in v6
  paired_to_best_anchor(rows);
  EXPECT_DOUBLE_EQ(rows[1].paired, 1.0);
  EXPECT_DOUBLE_EQ(rows[2].paired, 2.0);
  EXPECT_DOUBLE_EQ(rows[0].paired, 0.5);
  EXPECT_EQ(rows[3].paired, 0);
}

TEST(BenchReport, JsonValuesAreWrittenVerbatimAndNestUnderDottedKeys) {
  std::vector<Row> rows = {row("1k", "warpath", 1e6, false)};
  rows[0].with("updates.pairs", int64_t(7)).with("updates.p99_us", 1.5);
  const std::string path = ::testing::TempDir() + "report_json_test.json";
  ASSERT_TRUE(write_results(path,
                            {{"dpdk.available", true},
                             {"dpdk.variants", Json{R"([{"name":"rte_lpm","available":true}])"}},
                             {"check.reference.ipv4", std::string("cpu.lpm")},
                             {"empty", Json{}}},
                            {}, {}, rows));
  std::ifstream in(path);
  const nlohmann::json j = nlohmann::json::parse(in);
  EXPECT_EQ(j["dpdk"]["available"], true);
  EXPECT_EQ(j["dpdk"]["variants"][0]["name"], "rte_lpm");
  EXPECT_EQ(j["check"]["reference"]["ipv4"], "cpu.lpm");
  EXPECT_TRUE(j["empty"].is_null());
  EXPECT_EQ(j["results"][0]["updates"]["pairs"], 7);
  EXPECT_DOUBLE_EQ(j["results"][0]["updates"]["p99_us"].get<double>(), 1.5);
}

TEST(BenchReport, RowLineIsOneLineOfTheSameKeys) {
  Row r    = row("short", "libnids", 4e6, true);
  r.pass_s = {0.25, 0.2};
  r.with("packets", int64_t(800000)).with("end.ns", 3.5).with("note", std::string("a\nb"));
  const std::string line = row_line(r);
  EXPECT_EQ(line.find('\n'), std::string::npos) << line;
  const nlohmann::json j = nlohmann::json::parse(line);
  EXPECT_EQ(j["workload"], "short");
  EXPECT_EQ(j["anchor"], true);
  EXPECT_DOUBLE_EQ(j["rate"].get<double>(), 4e6);
  EXPECT_DOUBLE_EQ(j["ns"].get<double>(), 250.0);
  EXPECT_EQ(j["packets"], 800000);
  EXPECT_DOUBLE_EQ(j["end"]["ns"].get<double>(), 3.5);
  EXPECT_EQ(j["note"], "a\nb");
  EXPECT_EQ(j["pass_s"].size(), 2u);
}

// A results file that cannot be made is said so, with the reason, before a bench runs
// (unwritable) and when it writes (write_results' `why`, nothing on stderr then); a path that can
// be is left as it was found.
TEST(BenchReport, AnUnwritablePathIsNamedWithItsReasonAndAWritableOneLeftAlone) {
  const std::string bad = "/nonexistent-warpath-dir/x.json";
  EXPECT_EQ(unwritable(bad), bad + ": cannot write (No such file or directory)");
  std::string why;
  EXPECT_FALSE(write_results(bad, {}, {}, {}, {}, &why));
  EXPECT_EQ(why, bad + ": cannot write (No such file or directory)");
  EXPECT_EQ(unwritable(""), "") << "no file asked for";
  EXPECT_EQ(unwritable("/tmp"), "/tmp: cannot write (Is a directory)");
  char dir[] = "/tmp/warpath-report-XXXXXX";
  ASSERT_NE(mkdtemp(dir), nullptr);
  const std::string path = std::string(dir) + "/r.json";
  EXPECT_EQ(unwritable(path), "");
  EXPECT_NE(access(path.c_str(), F_OK), 0) << "the probe left no file";
  EXPECT_TRUE(write_results(path, {}, {}, {}, {}, &why));
  EXPECT_EQ(unwritable(path), "") << "an existing writable file";
  std::ifstream in(path);
  EXPECT_FALSE(nlohmann::json::parse(in).empty()) << "and it is still there";
  std::remove(path.c_str());
  rmdir(dir);
}

}  // namespace
}  // namespace warpath::bench
