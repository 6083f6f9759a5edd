#include "warpath/core/registry.hpp"

#include "warpath/classify/check.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath {

namespace packet {
CheckReport check_parser_engine(std::string_view id, uint64_t seed, uint64_t items);
}

const std::vector<ModuleInfo>& all_modules() {
  static const std::vector<ModuleInfo> modules = {
      {"packet", &packet::parser_engines, &packet::check_parser_engine},
      {"lookup", &lookup::fib_engines, &lookup::check_fib_engine},
      {"classify", &classify::classifier_engines, &classify::check_classifier_engine},
  };
  return modules;
}

Result<std::string> resolve_auto(const std::vector<EngineInfo>& engines, std::string_view module) {
  const EngineInfo* best = nullptr;
  for (const auto& e : engines)
    if (e.available() && (!best || e.priority > best->priority)) best = &e;
  if (!best)
    return Status(Errc::kNotSupported, "no " + std::string(module) + " engine is available");
  return std::string(best->id);
}

std::string_view strip_validate(std::string_view id, bool& validating) {
  constexpr std::string_view kPrefix = "validate:";
  validating                         = id.substr(0, kPrefix.size()) == kPrefix;
  return validating ? id.substr(kPrefix.size()) : id;
}

}  // namespace warpath
