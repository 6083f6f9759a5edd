// tools/warpath/run_print.hpp: what `warpath run` shows: the live progress line, the summary
// at the end and the same as JSON.
//
// The progress line is one line on stderr, rewritten in place with '\r' from the pipeline's
// progress callback; rates are deltas between two snapshots, so they show the current rate,
// not the mean since the start. The summary (stdout) is a table in the style of
// `warpath route`: one "name value" line per total, so scripts can read it, then the port
// table, batching, latency and rates. The JSON has the provenance header of the bench result
// files (result_file.hpp result_header) and then every counter of the report.
#pragma once
#include <cstdint>
#include <cstdio>
#include <tuple>
#include <vector>
#include <nlohmann/json.hpp>
#include <string>

#include "warpath/runtime/pipeline.hpp"
#include "warpath/runtime/run_config.hpp"

namespace warpath::cli {

/// What the summary says besides the report: how the run ended, where the tables came from.
struct RunContext {
  std::string fib, rules;  ///< "routes.txt (N routes)", "built-in ..." or empty (not used)
  std::string stopped_by;  ///< "SIGINT", "SIGTERM" or empty
  std::string command, load_start;
};

class ProgressLine {
 public:
  explicit ProgressLine(std::FILE* out) : out_(out) {}
  /// Rewrites the line from a snapshot (called from the run() thread).
  void update(const runtime::RunReport& snapshot);
  /// Clears the line (before the summary is printed).
  void finish();

 private:
  std::FILE* out_;
  bool shown_       = false;
  double last_s_    = 0;
  uint64_t last_rx_ = 0, last_tx_ = 0, last_bytes_ = 0, last_cpu_ = 0, last_gpu_ = 0;
  std::vector<std::tuple<uint64_t, uint64_t, uint64_t>> last_modules_;  ///< in, out, forwarded
};

void print_run_summary(const runtime::RunConfig& config, const runtime::RunReport& report,
                       const RunContext& context, std::FILE* out = stdout);

/// One line of `--stats-interval`: the counters of a live snapshot (totals, rates since
/// `prev` (the previous line's snapshot, or none), drops and slow path by reason, ports and
/// modules), for tools that cannot read the TTY progress line.
nlohmann::ordered_json run_stats_line(const runtime::RunReport& r, const runtime::RunReport* prev);

nlohmann::ordered_json run_report_json(const runtime::RunConfig& config,
                                       const runtime::RunReport& report, const RunContext& context);

}  // namespace warpath::cli
