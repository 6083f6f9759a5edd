// tools/warpath/commands.hpp: each subcommand registers itself on the CLI11 app and returns
// the function that runs it. A runner returns the process exit code: 0 success, 1 failure
// (bad input files, mismatches), 2 usage errors (CLI11 reports those before a runner runs).
#pragma once
#include <CLI/CLI.hpp>
#include <functional>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath::cli {

using Runner = std::function<int()>;

void add_info(CLI::App& app, Runner& run);
void add_parse(CLI::App& app, Runner& run);
void add_flows(CLI::App& app, Runner& run);
void add_defrag(CLI::App& app, Runner& run);
void add_reassemble(CLI::App& app, Runner& run);
void add_gen(CLI::App& app, Runner& run);
void add_selftest(CLI::App& app, Runner& run);
void add_demo(CLI::App& app, Runner& run);
void add_lookup(CLI::App& app, Runner& run);
void add_classify(CLI::App& app, Runner& run);
void add_bench(CLI::App& app, Runner& run);
void add_route(CLI::App& app, Runner& run);
void add_run(CLI::App& app, Runner& run);
void add_modules(CLI::App& app, Runner& run);
void add_docs(CLI::App& app, Runner& run);
void add_patterns(CLI::App& app, Runner& run);
void add_nids(CLI::App& app, Runner& run);
void add_report(CLI::App& app, Runner& run);
void add_cluster(CLI::App& app, Runner& run);
/// An error or pattern text as one printable line (binary bytes as \xNN).
std::string printable(const std::string& m);

/// Prints "warpath: <message>" to stderr and returns 1.
int fail(const Status& status);
int fail(const std::string& message);
/// A benchmark's exit code (bench/: 0 passed, 1 failed), or its error's through fail().
int exit_code(Result<int> r);
/// Prints each warning as "warpath: warning: <text>" to stderr.
void print_warnings(const std::vector<std::string>& warnings);
/// `--strict`: 1 (with a message) when there were warnings, else 0.
int strict_exit(bool strict, const std::vector<std::string>& warnings);
/// Adds the `--strict` flag of a command that reads a capture: "Exit 1 when the capture is
/// damaged (by default <what> of the packets before the damaged record <done>, with a warning
/// naming it)".
void add_strict_flag(CLI::App* cmd, bool& strict, const std::string& what, const std::string& done);
/// Adds `--shard K/N` (checked by io::parse_shard) of a command that tracks flows: only part K
/// of N of the capture, whole flows to one part (warpath cluster's cut; docs/cluster.md).
void add_shard_option(CLI::App* cmd, std::string& shard);
/// Adds `--progress` of a command that reads a capture: the progress line (capture_progress.hpp)
/// even when stderr is not a terminal.
void add_progress_flag(CLI::App* cmd, bool& progress);

}  // namespace warpath::cli
