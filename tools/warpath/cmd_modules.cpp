// warpath modules: the module kinds a chain may use (include/warpath/runtime/module.hpp), with
// their arguments and the metadata fields they read and set.
//
//   warpath modules [--json]
#include <fmt/core.h>

#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::cli {
namespace {

int run_modules(bool json) {
  const auto kinds = runtime::module_kinds();
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const runtime::ModuleInfo* m : kinds) {
      nlohmann::ordered_json args = nlohmann::ordered_json::array();
      for (const runtime::ArgInfo& a : m->args)
        args.push_back({{"name", a.name}, {"default", a.fallback}, {"help", a.help}});
      args.push_back({{"name", "when"},
                      {"default", "every context"},
                      {"help", "context names, joined by '|', the module runs on"}});
      j.push_back({{"kind", m->kind},
                   {"summary", m->summary},
                   {"reads", runtime::field_list(m->contract.reads)},
                   {"sets", runtime::field_list(m->contract.sets)},
                   {"produces", m->contract.produces},
                   {"consumes", m->contract.consumes},
                   {"may_consume", m->contract.may_consume},
                   {"args", args}});
    }
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("Modules of a chain (warpath run --chain \"a(k=v, ...) -> b\"; docs/modules.md).\n");
  fmt::print("Every module also takes when=NAME[|NAME...]: run only on packets of those "
             "contexts.\n");
  for (const runtime::ModuleInfo* m : kinds) {
    fmt::print("\n{}  {}\n", m->kind, m->summary);
    fmt::print("  {}\n", runtime::contract_text(m->contract));
    for (const runtime::ArgInfo& a : m->args)
      fmt::print("  {:<12} {} (default: {})\n", a.name, a.help, a.fallback);
  }
  return 0;
}

}  // namespace

void add_modules(CLI::App& app, Runner& run) {
  auto json = std::make_shared<bool>(false);
  auto* cmd = app.add_subcommand("modules", "List the modules a chain (warpath run --chain) may use");
  cmd->add_flag("--json", *json, "As JSON");
  cmd->callback([json, &run] { run = [json] { return run_modules(*json); }; });
}

}  // namespace warpath::cli
