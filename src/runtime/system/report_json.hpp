// src/runtime/system/report_json.hpp: a run's report as JSON (nlohmann), what `warpath run
// --json` writes after its provenance header and what the Python package's Chain.run returns:
// every counter of the RunReport, the ports, the modules with their own counters, the stages.
#pragma once
#include <nlohmann/json.hpp>
#include <string>

#include "warpath/runtime/pipeline.hpp"
#include "warpath/runtime/run_config.hpp"

namespace warpath::runtime {

/// Where a run's tables came from and how it ended, for the report (empty: not used).
struct ReportNames {
  std::string fib, rules;  ///< "routes.txt (N routes)", "built-in ..."
  std::string stopped_by;  ///< "SIGINT", "SIGTERM"
};

/// The report's body: app, chain, schedule, errors, warnings, engines, the run's settings,
/// seconds and rates, totals, the counters' check, ports, modules, drops and slow path by
/// reason, icmp, copies, fragments, batches, stages and latency.
nlohmann::ordered_json run_report_body(const RunConfig& config, const RunReport& report,
                                       const ReportNames& names = {});
/// The "totals" object (rx, tx, dropped, slow_path, bytes, in_flight).
nlohmann::ordered_json report_totals_json(const RunReport& report);
/// Nanoseconds a packet by stage (RunReport::Stages).
nlohmann::ordered_json report_stages_json(const RunReport::Stages& stages);
/// {"cap", "most", "needed", "round_trip_us", "interval_us", "waits"}: the workers' frames.
nlohmann::ordered_json report_frames_json(const RunReport::Frames& frames);

}  // namespace warpath::runtime
