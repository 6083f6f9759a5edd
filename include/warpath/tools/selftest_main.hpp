// include/warpath/tools/selftest_main.hpp: the body of `warpath selftest` and of the
// dependency-free `warpath-selftest` binary: runs run_selftest(), prints one line per engine
// and a verdict, writes JSON when asked. Returns the exit code (0 only if nothing failed).
#pragma once
#include <string>

#include "warpath/selftest/selftest.hpp"

namespace warpath {

int selftest_main(const SelftestOptions& options, const std::string& json_path);
/// Prints the id of every engine `options` selects, one a line (`--list`: scripts/gpu-check.sh
/// runs each in a process of its own). Returns 0.
int selftest_list(const SelftestOptions& options);

}  // namespace warpath
