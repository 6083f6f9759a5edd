// tools/warpath/result_file.hpp: the provenance a result file of the CLI starts with (`warpath
// run --json`): tool, version, commit, build, date, exact command line and the machine. The
// benchmarks write theirs with bench/harness/report.hpp; the helpers here are its timing.hpp's.
#pragma once
#include <unistd.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <string>

#include "harness/timing.hpp"
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/status.hpp"
#include "warpath/core/version.hpp"

namespace warpath::cli {

using bench::command_line;
using bench::group_thousands;
using bench::latencies;
using bench::Latencies;
using bench::read_first_line;
using bench::RunStart;
using bench::seconds_since;
using bench::utc_now;

/// The provenance every result file starts with: tool, version, commit, build, date, exact
/// command line, and the machine (CPU, cores, features, pinned core, host, load average at the
/// start, frequency governor). Callers add their own fields.
inline nlohmann::json result_header(const char* tool, const std::string& command,
                                    const RunStart& start) {
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
                  {"pinned_cpu", start.cpu},
                  {"hostname", host},
                  {"loadavg_start", start.loadavg},
                  {"cpufreq_governor",
                   read_first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}};
  return j;
}

/// The end of a result file: the load average at the end and the run's wall time, then the
/// JSON written to `path`.
inline Status write_result(nlohmann::json& j, const RunStart& start, const std::string& path) {
  j["machine"]["loadavg_end"] = read_first_line("/proc/loadavg");
  j["wall_s"]                 = seconds_since(start.t);
  std::ofstream f(path);
  f << j.dump(2) << "\n";
  if (!f) return Status(Errc::kIoError, path + ": cannot write");
  return Status::ok();
}

}  // namespace warpath::cli
