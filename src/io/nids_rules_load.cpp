// src/io/nids_rules_load.cpp: nids::load_rules reading files from disk (.gz too) with
// io::read_text_file (include/warpath/nids/rule.hpp).
#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {

Result<RuleSet> load_rules(const std::vector<std::string>& paths, const Vars& vars) {
  return load_rules(paths, vars, [](const std::string& f) { return io::read_text_file(f); });
}

}  // namespace warpath::nids
