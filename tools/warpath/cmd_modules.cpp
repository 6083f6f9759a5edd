// warpath modules: the module kinds a chain may use (include/warpath/runtime/module.hpp), with
// their arguments and the metadata fields they read and set; in text, also the preset
// applications of `warpath run --app` as the chains they run (run_config.hpp: PresetCatalog).
//
//   warpath modules [--json]
#include <fmt/core.h>

#include <cctype>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::cli {
namespace {

/// The presets as the chains they run without settings (the built-in tables; a top-level
/// setting, a preset's own file, by its name), then the
/// settings they take (a table's keys as [T] k1 k2, a file marked *).
void print_presets() {
  const runtime::PresetCatalog& p = runtime::presets();
  if (p.apps.empty()) return;
  fmt::print("\nPresets (warpath run --app NAME): the chains they run with the built-in tables\n");
  for (const std::string& app : p.apps) {
    runtime::RunConfig c;
    c.app = app;
    for (const runtime::PresetKey& k : p.keys)  // a top-level setting shown by its name: sa=SA
      if (k.key.find('.') == std::string::npos) {
        std::string name = k.key;
        for (char& ch : name) ch = char(std::toupper(static_cast<unsigned char>(ch)));
        c.set_setting(k.key, name);
      }
    fmt::print("  {:<12} {}\n", app, runtime::format_chain(runtime::preset_chain(c, {})));
  }
  std::string text, table;
  for (const runtime::PresetKey& k : p.keys) {
    const size_t dot      = k.key.find('.');
    const std::string t   = dot == std::string::npos ? "" : k.key.substr(0, dot);
    const std::string key = k.key.substr(dot == std::string::npos ? 0 : dot + 1);
    if (t != table || t.empty())
      text += (text.empty() ? "" : ";") + (t.empty() ? "" : " [" + t + "]");
    table = t;
    text += " " + key + (k.path ? "*" : "");
  }
  fmt::print(
      "Their settings (config file keys; flags --fib, --rules, ... set them; * a file):\n "
      "{}\n",
      text);
}

/// What a file argument is to the run: no output may overwrite an input or another output.
const char* file_role(runtime::ArgFile f) {
  return f == runtime::ArgFile::kInput ? "input" : "output";
}

int run_modules(bool json) {
  const auto kinds = runtime::module_kinds();
  if (json) {
    nlohmann::ordered_json j = nlohmann::ordered_json::array();
    for (const runtime::ModuleInfo* m : kinds) {
      nlohmann::ordered_json args = nlohmann::ordered_json::array();
      for (const runtime::ArgInfo& a : m->args) {
        args.push_back({{"name", a.name}, {"default", a.fallback}, {"help", a.help}});
        if (a.file != runtime::ArgFile::kNone) args.back()["file"] = file_role(a.file);
      }
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
      fmt::print(
          "  {:<12} {}{} (default: {})\n", a.name, a.help,
          a.file == runtime::ArgFile::kNone ? "" : fmt::format(" [{} file]", file_role(a.file)),
          a.fallback);
  }
  print_presets();
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
