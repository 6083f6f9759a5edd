// include/warpath/selftest/selftest.hpp
//
// The self-test: every engine of every module against its module's reference engine, on fresh
// random data. `warpath selftest` and the dependency-free `warpath-selftest` binary (built by
// the "gpu" preset for GPU machines that have only the CUDA toolkit) both call run_selftest().
// By default only CUDA engines are checked (that is what a GPU machine is for); `all` adds the
// CPU engines.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/selftest/catalogue.hpp"

namespace warpath {

struct SelftestOptions {
  uint64_t seed  = 0;        ///< 0: derived from the clock (printed, so a failure can be rerun)
  uint64_t items = 100000;   ///< items per engine
  bool all       = false;    ///< also check CPU engines
  std::string filter;        ///< only engine ids containing this text
  bool require_gpu = false;  ///< a skipped CUDA engine counts as a failure (scripts/gpu-check.sh)
};

struct SelftestResult {
  uint64_t seed = 0;
  std::vector<CheckReport> reports;
  int passed = 0, failed = 0, skipped = 0;
  bool ok() const { return failed == 0; }
};

SelftestResult run_selftest(const SelftestOptions& options);

/// The result as JSON (hand-written: this must build without a JSON library).
std::string selftest_json(const SelftestResult& result);

}  // namespace warpath
