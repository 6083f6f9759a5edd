// src/io/rules_load.cpp: classification rule files from disk (.gz and .xz allowed).
#include "warpath/classify/rule.hpp"
#include "warpath/classify/rule_updates.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::classify {

Result<RuleSet> load_rules(const std::string& path, std::string_view format) {
  if (format == "classbench") {
    auto rules = io::load_classbench_rules(path);
    if (!rules.is_ok()) return rules.status();
    return from_classbench(rules.value(), path);
  }
  if (format == "openflow") {
    auto text = io::read_text_file(path);
    if (!text.is_ok()) return text.status();
    return parse_openflow_rules(text.value(), path);
  }
  return Status(Errc::kInvalidArgument,
                "unknown rule format '" + std::string(format) + "' (classbench or openflow)");
}

Result<KeyBuffer> load_keys(const std::string& path, KeyLayout layout) {
  if (layout == KeyLayout::kFiveTuple) {
    auto trace = io::load_trace(path);
    if (!trace.is_ok()) return trace.status();
    return keys_from_trace(trace.value());
  }
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_openflow_trace(text.value(), path);
}

Result<std::vector<RuleUpdate>> load_rule_updates(const std::string& path,
                                                  std::string_view format, uint32_t present) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_rule_updates(text.value(), path, format, present);
}

}  // namespace warpath::classify
