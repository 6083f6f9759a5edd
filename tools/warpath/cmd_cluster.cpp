// warpath cluster: the NIDS, flows and reassembly over a corpus of captures, sharded over a Ray
// cluster (python/warpath/dist.py; docs/cluster.md). The Python package does the work: this
// command hands every argument to `python -m warpath cluster` (exec_python_package).
//
//   warpath cluster nids|flows|reassemble --in GLOB|DIR ... --out DIR [--address local|auto|HOST:PORT]
#include <string>
#include <vector>

#include "commands.hpp"
#include "python_exec.hpp"

namespace warpath::cli {

void add_cluster(CLI::App& app, Runner& run) {
  auto args = std::make_shared<std::vector<std::string>>();
  auto* cmd = app.add_subcommand(
      "cluster", "Run nids, flows or reassemble over a corpus of captures on a Ray cluster (or "
                 "local worker processes), shards merged into one output; `warpath cluster "
                 "--help` for its options");
  cmd->prefix_command();  // everything after `cluster` is the Python command's
  cmd->set_help_flag();   // and so is --help
  cmd->callback([cmd, args, &run] {
    *args = cmd->remaining();
    run = [args] {
      std::vector<std::string> all = {"cluster"};
      all.insert(all.end(), args->begin(), args->end());
      return exec_python_package(all, "cluster");
    };
  });
}

}  // namespace warpath::cli
