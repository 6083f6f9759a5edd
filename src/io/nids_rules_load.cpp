// src/io/nids_rules_load.cpp: rule files and directories from disk (.gz too), for
// nids::load_rules (include/warpath/nids/rule.hpp).
#include <algorithm>
#include <filesystem>

#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {

Result<RuleSet> load_rules(const std::vector<std::string>& paths, const Vars& vars) {
  RuleSet set;
  std::vector<std::string> files;
  for (const std::string& p : paths) {
    std::error_code ec;
    if (std::filesystem::is_directory(p, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(p, ec)) {
        const std::string f = e.path().string();
        if (e.is_regular_file() && (f.ends_with(".rules") || f.ends_with(".rules.gz"))) in_dir.push_back(f);
      }
      if (ec) return Status(Errc::kIoError, p + ": " + ec.message());
      std::sort(in_dir.begin(), in_dir.end());
      if (in_dir.empty()) return Status(Errc::kNotFound, p + ": no *.rules files");
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(p);
    }
  }
  for (const std::string& f : files) {
    WARPATH_ASSIGN_OR_RETURN(std::string text, io::read_text_file(f));
    add_rules_text(set, text, f, vars);
  }
  return set;
}

}  // namespace warpath::nids
