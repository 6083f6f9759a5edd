// bench/harness/timing.hpp: what the benchmarks share besides their report (report.hpp):
// timing passes, pinning, the run's start, the exact command line, /proc facts and number
// formatting. Header-only; the CLI's commands use the same helpers.
#pragma once
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <fstream>
#include <iterator>
#include <string>
#include <vector>

#include "harness/report.hpp"
#include "warpath/core/status.hpp"

namespace warpath::bench {

namespace timing_detail {
using Clock = std::chrono::steady_clock;
}

inline double seconds_since(timing_detail::Clock::time_point t0) {
  return std::chrono::duration<double>(timing_detail::Clock::now() - t0).count();
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

inline std::string read_first_line(const char* path) { return first_line(path); }

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
    const auto t0 = timing_detail::Clock::now();
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

/// Where a benchmark run started: its time, the load average then, and the core it is pinned
/// to (pin_run).
struct RunStart {
  timing_detail::Clock::time_point t;
  std::string loadavg;
  int cpu = -1;
};

/// Pins the calling thread to `cpu` (-1: the one it is on) and notes the start; kIoError when
/// the kernel refuses the pin.
inline Result<RunStart> pin_run(int cpu) {
  RunStart s{timing_detail::Clock::now(), read_first_line("/proc/loadavg"),
             cpu >= 0 ? cpu : sched_getcpu()};
  if (!pin_to(s.cpu))
    return Status(Errc::kIoError,
                  "cannot pin to cpu " + std::to_string(s.cpu) + ": " + std::strerror(errno));
  return s;
}

}  // namespace warpath::bench
