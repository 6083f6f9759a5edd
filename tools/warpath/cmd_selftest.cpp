// warpath selftest: every CUDA engine (or, with --all, every engine) against its reference.
#include <fmt/core.h>

#include <memory>

#include "commands.hpp"
#include "warpath/selftest/selftest.hpp"
#include "warpath/tools/selftest_main.hpp"

namespace warpath::cli {

void add_selftest(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<SelftestOptions>();
  auto json = std::make_shared<std::string>();
  auto* cmd =
      app.add_subcommand("selftest", "Check engines against their reference on fresh random data");
  cmd->add_option("--seed", o->seed, "Seed (default: from the clock; printed)");
  cmd->add_option("--items", o->items, "Items per engine")
      ->check(CLI::Range(uint64_t(1), uint64_t(1) << 26));
  cmd->add_flag("--all", o->all, "Check CPU engines too (default: CUDA engines only)");
  cmd->add_flag("--require-gpu", o->require_gpu, "Fail when a CUDA engine cannot run here");
  cmd->add_option("--engine", o->filter, "Only engines whose id contains this text");
  cmd->add_flag("--exact", o->exact, "Only the engine whose id is --engine's text")
      ->needs(cmd->get_option("--engine"));
  cmd->add_option("--json", *json, "Write the result as JSON to this file");
  auto list = std::make_shared<bool>(false);
  cmd->add_flag("--list", *list, "Print the ids of the engines the options select, one a line");
  cmd->callback([o, json, list, &run] {
    run = [o, json, list] { return *list ? selftest_list(*o) : selftest_main(*o, *json); };
  });
}

}  // namespace warpath::cli
