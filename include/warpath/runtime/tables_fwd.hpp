// include/warpath/runtime/tables_fwd.hpp: the tables the runtime passes around by pointer
// (routes, neighbours, rules, SAs), declared without their headers, and TableSource, which
// carries them (and the file loaders) to the modules.
#pragma once
#include <functional>
#include <string>
#include <string_view>

#include "warpath/core/status.hpp"

namespace warpath::lookup {
struct RouteTable;
}
namespace warpath::forward {
struct RouterConfig;
}
namespace warpath::ipsec {
struct SaConfig;
}
namespace warpath::classify {
struct RuleSet;
}

namespace warpath::runtime {

/// Tables a module may take instead of loading files: what `RunInputs` passes (the presets'
/// tables, loaded by the caller) and how files are loaded (the CLI links the loaders of
/// warpath_io; without one, a module given a file name says so).
struct TableSource {
  const lookup::RouteTable* fib          = nullptr;
  const forward::RouterConfig* neighbors = nullptr;
  const classify::RuleSet* rules         = nullptr;
  std::function<Result<lookup::RouteTable>(const std::string& path)> load_routes;
  std::function<Result<classify::RuleSet>(const std::string& path, std::string_view format)>
      load_rules;
  std::function<Result<std::string>(const std::string& path)> read_text;  ///< neighbour files
  /// SA files (esp-in/out)
  std::function<Result<ipsec::SaConfig>(const std::string& path)> load_sas;
};

}  // namespace warpath::runtime
