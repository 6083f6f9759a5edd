// tools/warpath/bench_util.hpp: what `warpath bench lookup` and `warpath bench classify` share:
// timing passes, the provenance a result file records (UTC time, exact command line, /proc
// facts) and number formatting.
#pragma once
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "harness/report.hpp"
#include "warpath/core/status.hpp"
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/version.hpp"

namespace warpath::cli {

namespace bench_util_detail {
using Clock = std::chrono::steady_clock;
}

inline double seconds_since(bench_util_detail::Clock::time_point t0) {
  return std::chrono::duration<double>(bench_util_detail::Clock::now() - t0).count();
}

/// p50, p99 and the maximum of per-operation latencies (sorts `lat`; all 0 when empty).
struct Latencies {
  double p50 = 0, p99 = 0, max = 0;
};
inline Latencies latencies(std::vector<double>& lat) {
  if (lat.empty()) return {};
  std::sort(lat.begin(), lat.end());
  return {lat[lat.size() / 2], lat[std::min(lat.size() - 1, lat.size() * 99 / 100)], lat.back()};
}

inline std::string group_thousands(uint64_t v) {
  std::string s = std::to_string(v), out;
  for (size_t i = 0; i < s.size(); ++i) {
    if (i && (s.size() - i) % 3 == 0) out += ',';
    out += s[i];
  }
  return out;
}

inline std::string utc_now() { return bench::utc_now(); }

inline std::string read_first_line(const char* path) { return bench::first_line(path); }

/// The exact command line, as the kernel has it.
inline std::string command_line() {
  std::ifstream f("/proc/self/cmdline", std::ios::binary);
  std::string all((std::istreambuf_iterator<char>(f)), std::istreambuf_iterator<char>()), out;
  std::string arg;
  for (const char c : all) {
    if (c != '\0') {
      arg += c;
      continue;
    }
    const bool quote = arg.empty() || arg.find_first_of(" \t'\"$") != std::string::npos;
    out += (out.empty() ? "" : " ") + (quote ? "'" + arg + "'" : arg);
    arg.clear();
  }
  return out;
}

inline std::string base_name(const std::string& path) {
  const auto slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// Times `fn(offset, n)` over [0, count) in chunks of `batch` (0: one call), `repeat` passes.
template <class Fn>
std::vector<double> time_passes(uint64_t count, uint32_t batch, unsigned repeat, Fn&& fn) {
  std::vector<double> out;
  const uint64_t step = batch ? batch : count;
  for (unsigned p = 0; p < repeat; ++p) {
    const auto t0 = bench_util_detail::Clock::now();
    for (uint64_t off = 0; off < count; off += step) fn(off, uint32_t(std::min(step, count - off)));
    out.push_back(seconds_since(t0));
  }
  return out;
}

/// Pins the calling thread to `cpu`; false when the kernel refuses.
inline bool pin_to(int cpu) {
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(cpu, &set);
  return sched_setaffinity(0, sizeof set, &set) == 0;
}

inline double mib(uint64_t b) { return double(b) / double(1 << 20); }

/// The provenance every result file starts with: tool, version, commit, build, date, exact
/// command line, and the machine (CPU, cores, features, pinned core, host, load average at the
/// start, frequency governor). Callers add their own fields.
inline nlohmann::json result_header(const char* tool, const std::string& command, int pinned_cpu,
                                    const std::string& load_start) {
  const BuildInfo b     = build_info();
  const CpuFeatures& cf = cpu_features();
  char host[256]        = {};
  gethostname(host, sizeof host - 1);
  nlohmann::json j;
  j["tool"]    = tool;
  j["version"] = version();
  j["commit"]  = b.git_commit;
  j["build"]   = {{"compiler", b.compiler}, {"type", b.build_type}, {"cuda", built_with_cuda()}};
  j["date"]    = utc_now();
  j["command"] = command;
  j["machine"] = {{"cpu", cf.model},
                  {"logical_cores", cf.logical_cores},
                  {"features", cf.names()},
                  {"pinned_cpu", pinned_cpu},
                  {"hostname", host},
                  {"loadavg_start", load_start},
                  {"cpufreq_governor",
                   read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}};
  return j;
}

/// The end of a result file: the load average at the end and the run's wall time, then the
/// JSON written to `path`.
inline Status write_result(nlohmann::json& j, bench_util_detail::Clock::time_point t_start,
                           const std::string& path) {
  j["machine"]["loadavg_end"] = read_first_line("/proc/loadavg");
  j["wall_s"]                 = seconds_since(t_start);
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) return Status(Errc::kIoError, path + ": cannot write");
  return Status::ok();
}

}  // namespace warpath::cli
