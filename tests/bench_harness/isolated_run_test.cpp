// bench/harness/isolated_run.hpp: a benchmark's work in a child process comes back whole, and
// a child that crashes, hangs past its deadline or ends without a result is reported as such
// while the parent goes on; the peak memory a build adds is seen.
#include <gtest/gtest.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <thread>
#include <unistd.h>

#include "harness/isolated_run.hpp"

namespace warpath::bench {
namespace {

TEST(IsolatedRun, TheChildsHeadAndPayloadComeBack) {
  const pid_t parent = getpid();
  const IsolatedResult r = run_isolated(
      [&](nlohmann::json& head, std::vector<uint8_t>& payload) {
        head["pid_differs"] = getpid() != parent;
        head["rows"]        = {1, 2, 3};
        payload.assign(1 << 20, 0);
        for (size_t k = 0; k < payload.size(); ++k) payload[k] = uint8_t(k * 7);
      },
      std::chrono::seconds(30));
  ASSERT_TRUE(r.ok) << r.why;
  EXPECT_FALSE(r.in_process);
  EXPECT_EQ(r.head["pid_differs"], true) << "it ran in a child";
  EXPECT_EQ(r.head["rows"].size(), 3u);
  ASSERT_EQ(r.payload.size(), size_t(1) << 20);
  for (size_t k = 0; k < r.payload.size(); k += 4099) ASSERT_EQ(r.payload[k], uint8_t(k * 7));
}

TEST(IsolatedRun, ACrashIsReportedWithItsSignal) {
  const IsolatedResult r = run_isolated(
      [](nlohmann::json&, std::vector<uint8_t>&) {
        std::signal(SIGSEGV, SIG_DFL);  // a crash, whatever handler a sanitizer installed
        std::raise(SIGSEGV);
      },
      std::chrono::seconds(30));
  EXPECT_FALSE(r.ok);
  EXPECT_FALSE(r.timed_out);
  EXPECT_NE(r.why.find("crashed (signal 11"), std::string::npos) << r.why;
}

TEST(IsolatedRun, AHangIsKilledAtTheDeadline) {
  const auto t0 = std::chrono::steady_clock::now();
  const IsolatedResult r = run_isolated(
      [](nlohmann::json&, std::vector<uint8_t>&) { std::this_thread::sleep_for(std::chrono::seconds(60)); },
      std::chrono::seconds(1));
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.timed_out);
  EXPECT_EQ(r.why, "gave up after 1 s");
  EXPECT_LT(took, 10.0);
}

TEST(IsolatedRun, AChildThatEndsWithoutAResult) {
  const IsolatedResult r = run_isolated(
      [](nlohmann::json&, std::vector<uint8_t>&) { _exit(3); }, std::chrono::seconds(30));
  EXPECT_FALSE(r.ok);
  EXPECT_EQ(r.why, "the process ended without a result");
}

TEST(IsolatedRun, APayloadPastItsBoundIsRefused) {
  const IsolatedResult r = run_isolated(
      [](nlohmann::json&, std::vector<uint8_t>& payload) { payload.assign(4096, 1); },
      std::chrono::seconds(30), 1024);
  EXPECT_FALSE(r.ok);
  EXPECT_TRUE(r.payload.empty());
}

TEST(PeakRss, SeesWhatABuildTouched) {
  const PeakRss peak;
  std::vector<uint8_t> big(size_t(64) << 20);
  std::memset(big.data(), 1, big.size());
  const uint64_t grew = peak.growth();
  if (grew == 0) GTEST_SKIP() << "this kernel does not reset VmHWM";
  EXPECT_GE(grew, uint64_t(48) << 20);
  EXPECT_GT(proc_kb_field("/proc/meminfo", "MemTotal"), 0u);
  EXPECT_EQ(proc_kb_field("/proc/meminfo", "NoSuchField"), 0u);
}

}  // namespace
}  // namespace warpath::bench
