// Rule update files (include/warpath/classify/rule_updates.hpp).
#include "warpath/classify/rule_updates.hpp"

#include <charconv>
#include <map>
#include <unordered_set>

#include "warpath/io/classbench.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::classify {
namespace {

// A one-line rule parser's "name:1: reason" as "name:line: reason".
Status at_line(const Status& s, std::string_view name, uint64_t line) {
  std::string m        = s.message();
  const std::string at = std::string(name) + ":1: ";
  if (m.rfind(at, 0) == 0) m = m.substr(at.size());
  return io::parse_error(name, line, m);
}

}  // namespace

Result<std::vector<RuleUpdate>> parse_rule_updates(std::string_view text, std::string_view name,
                                                   std::string_view format, uint32_t present) {
  if (format != "classbench" && format != "openflow")
    return Status(Errc::kInvalidArgument,
                  "unknown rule format '" + std::string(format) + "' (classbench or openflow)");
  std::unordered_set<uint32_t> live;
  live.reserve(present);
  for (uint32_t i = 0; i < present; ++i) live.insert(i);
  std::vector<RuleUpdate> out;
  io::LineCursor lines(text);
  std::string_view l;
  uint64_t line = 0;
  auto error    = [&](const std::string& why) { return io::parse_error(name, line, why); };
  while (lines.next(l)) {
    line = lines.line_number();
    l    = io::trim(l);
    if (l.empty() || l.front() == '#') continue;
    RuleUpdate u;
    u.line = uint32_t(line);
    if (l.front() != '+' && l.front() != '-')
      return error("expected '+ PRIORITY RULE' or '- PRIORITY', got '" +
                   std::string(l.substr(0, 40)) + "'");
    u.insert = l.front() == '+';
    l        = io::trim(l.substr(1));
    const char* end = l.data() + l.size();
    auto [p, ec]    = std::from_chars(l.data(), end, u.priority);
    if (ec != std::errc() || (p != end && *p != ' ' && *p != '\t'))
      return error("bad priority '" + std::string(l.substr(0, l.find_first_of(" \t"))) +
                   "' (a number from 0 to 4294967294)");
    if (u.priority == kNoMatch) return error("priority 4294967295 is reserved");
    const std::string_view rest = io::trim(l.substr(size_t(p - l.data())));
    if (!u.insert) {
      if (!rest.empty()) return error("'-' takes a priority only");
      if (!live.erase(u.priority))
        return error("no rule of priority " + std::to_string(u.priority) + " to delete");
      out.push_back(std::move(u));
      continue;
    }
    if (rest.empty()) return error("'+' needs a rule after the priority");
    if (format == "classbench") {
      auto r = io::parse_classbench_rules(rest, name);
      if (!r.is_ok()) return at_line(r.status(), name, line);
      if (r->size() != 1) return error("expected one rule");
      u.rule = from_classbench(*r, std::string(name)).rules[0];
    } else {
      auto r = parse_openflow_rules(rest, name);
      if (!r.is_ok()) return at_line(r.status(), name, line);
      if (r->rules.size() != 1) return error("expected one flow");
      u.rule = r->rules[0];
    }
    u.rule.line = uint32_t(line);
    live.insert(u.priority);
    out.push_back(std::move(u));
  }
  return out;
}

RuleSet apply_rule_updates(const RuleSet& rules, const std::vector<RuleUpdate>& updates,
                           std::vector<uint32_t>& index_of) {
  std::map<uint32_t, Rule> by;
  for (uint32_t i = 0; i < rules.rules.size(); ++i) by[i] = rules.rules[i];
  for (const RuleUpdate& u : updates) {
    if (u.insert) by[u.priority] = u.rule;
    else by.erase(u.priority);
  }
  RuleSet out;
  out.layout = rules.layout;
  out.name   = rules.name + " (updated)";
  index_of.clear();
  for (auto& [p, r] : by) out.rules.push_back(r), index_of.push_back(p);
  return out;
}

}  // namespace warpath::classify
