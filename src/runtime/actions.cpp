#include "runtime/actions.hpp"

#include <charconv>
#include <string>

namespace warpath::runtime {

Result<Action> parse_action(std::string_view t) {
  if (t == "permit" || t == "allow" || t == "accept") return Action{ActionKind::kPermit, 0, {}};
  if (t == "deny" || t == "drop") return Action{ActionKind::kDeny, 0, {}};
  if (t.substr(0, 7) == "output:") {
    const std::string_view n = t.substr(7);
    unsigned port            = 0;
    auto [end, ec]           = std::from_chars(n.data(), n.data() + n.size(), port);
    if (!n.empty() && ec == std::errc() && end == n.data() + n.size() && port < 65536)
      return Action{ActionKind::kOutput, uint16_t(port), {}};
  }
  if (t.substr(0, 5) == "goto:") {
    const std::string_view name = t.substr(5);
    bool ok                     = !name.empty();
    for (char c : name)
      ok = ok && ((c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                  c == '_' || c == '.' || c == '-');
    if (ok) return Action{ActionKind::kGoto, 0, std::string(name)};
  }
  return Status(Errc::kInvalidArgument, "action '" + std::string(t) +
                                            "': expected permit, deny, drop, output:N or goto:NAME");
}

Result<Action> rule_action(const classify::Rule& rule, Action when_empty) {
  std::string_view t = rule.action;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.substr(0, 8) == "actions=") t.remove_prefix(8);
  if (t.empty()) return when_empty;
  if (t.find('=') == std::string_view::npos && t.find(',') == std::string_view::npos) {
    auto a = parse_action(t);
    if (a.is_ok() || t.substr(0, 7) == "output:" || t.substr(0, 5) == "goto:") return a;
  }
  // OpenFlow action lists: the first output decides; drop (or an empty list) denies.
  for (size_t pos = 0; pos <= t.size();) {
    size_t end = t.find(',', pos);
    if (end == std::string_view::npos) end = t.size();
    const std::string_view one = t.substr(pos, end - pos);
    if (one == "drop") return Action{ActionKind::kDeny, 0, {}};
    if (one.substr(0, 7) == "output:") return parse_action(one);
    pos = end + 1;
  }
  return Action{ActionKind::kPermit, 0, {}};
}

}  // namespace warpath::runtime
