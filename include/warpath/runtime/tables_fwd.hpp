// include/warpath/runtime/tables_fwd.hpp: TableSource, which carries the file loaders and the
// tables a caller loaded itself to the modules, and the loaders' table types, declared without
// their headers.
#pragma once
#include <functional>
#include <string>
#include <string_view>
#include <typeinfo>
#include <vector>

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

/// Tables a module may take instead of loading files, and how files are loaded (the CLI links
/// the loaders of warpath_io; without one, a module given a file name says so).
///
/// A caller that loaded a table itself (`warpath run` loads a preset's tables to print its
/// summary; the pipeline bench and tests hand in tables they made) preloads it under
/// the key of the file it stands for, the module's kind and argument: "router.fib",
/// "router.neighbors", "acl.rules". A preset's module then takes it instead of the file (a
/// chain's modules load what their arguments name). The runtime knows no key and no table
/// type: a module asks for its own by type, and a table of another type is not found.
struct TableSource {
  std::function<Result<lookup::RouteTable>(const std::string& path)> load_routes;
  std::function<Result<classify::RuleSet>(const std::string& path, std::string_view format)>
      load_rules;
  std::function<Result<std::string>(const std::string& path)> read_text;  ///< neighbour files
  /// SA files (esp-in/out)
  std::function<Result<ipsec::SaConfig>(const std::string& path)> load_sas;

  /// Hands in `table` (not owned: it outlives the run) under `key`; a second call with the
  /// same key replaces the first.
  template <class T>
  void preload(std::string_view key, const T* table) {
    for (Preloaded& p : preloaded_)
      if (p.key == key) {
        p = {std::string(key), table, &typeid(T)};
        return;
      }
    preloaded_.push_back({std::string(key), table, &typeid(T)});
  }
  /// The table preloaded under `key`, or nullptr (none, or one of another type).
  template <class T>
  const T* preloaded(std::string_view key) const {
    for (const Preloaded& p : preloaded_)
      if (p.key == key && *p.type == typeid(T)) return static_cast<const T*>(p.table);
    return nullptr;
  }
  bool has_preloaded(std::string_view key) const {
    for (const Preloaded& p : preloaded_)
      if (p.key == key) return true;
    return false;
  }

 private:
  struct Preloaded {
    std::string key;
    const void* table          = nullptr;
    const std::type_info* type = nullptr;
  };
  std::vector<Preloaded> preloaded_;
};

}  // namespace warpath::runtime
