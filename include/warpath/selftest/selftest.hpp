// include/warpath/selftest/selftest.hpp
//
// The self-test: every engine of every module against its module's reference engine, on fresh
// random data. `warpath selftest` and the dependency-free `warpath-selftest` binary (built by
// the "gpu" preset for GPU machines that have only the CUDA toolkit) both call run_selftest().
// By default only CUDA engines are checked (that is what a GPU machine is for); `all` adds the
// CPU engines.
#pragma once
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/selftest/catalogue.hpp"

namespace warpath {

struct SelftestOptions {
  uint64_t seed  = 0;        ///< 0: derived from the clock (printed, so a failure can be rerun)
  uint64_t items = 100000;   ///< items per engine
  bool all       = false;    ///< also check CPU engines
  std::string filter;        ///< only engine ids containing this text
  bool exact       = false;  ///< only the engine whose id is `filter` (one engine per process)
  bool require_gpu = false;  ///< a skipped CUDA engine counts as a failure (scripts/gpu-check.sh)
};

struct SelftestResult {
  uint64_t seed = 0;
  std::vector<CheckReport> reports;
  std::vector<double> seconds;  ///< each report's check time
  int passed = 0, failed = 0, skipped = 0;
  bool ok() const { return failed == 0; }
};

/// Whether a run with `options` checks engine `id` (never a reference engine).
bool selftest_selects(const SelftestOptions& options, std::string_view id);

/// `progress`, when given, is called after each engine's check with the results so far (the
/// new report last), so a caller can print and save them as they come: a run cut short by a
/// time limit still tells what it checked.
SelftestResult run_selftest(const SelftestOptions& options,
                            const std::function<void(const SelftestResult&)>& progress = {});

/// The result as JSON (hand-written: this must build without a JSON library).
std::string selftest_json(const SelftestResult& result);

}  // namespace warpath
