#include "runtime/actions.hpp"

#include <charconv>
#include <string>

namespace warpath::runtime {

Result<Action> parse_action(std::string_view t) {
  if (t == "permit" || t == "allow" || t == "accept") return Action{ActionKind::kPermit, 0};
  if (t == "deny" || t == "drop") return Action{ActionKind::kDeny, 0};
  if (t.substr(0, 7) == "output:") {
    const std::string_view n = t.substr(7);
    unsigned port            = 0;
    auto [end, ec]           = std::from_chars(n.data(), n.data() + n.size(), port);
    if (!n.empty() && ec == std::errc() && end == n.data() + n.size() && port < 65536)
      return Action{ActionKind::kOutput, uint16_t(port)};
  }
  return Status(Errc::kInvalidArgument,
                "action '" + std::string(t) + "': expected permit, deny, drop or output:N");
}

Result<Action> rule_action(const classify::Rule& rule, Action when_empty) {
  std::string_view t = rule.action;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (t.substr(0, 8) == "actions=") t.remove_prefix(8);
  if (t.empty()) return when_empty;
  if (t.find('=') == std::string_view::npos && t.find(',') == std::string_view::npos) {
    auto a = parse_action(t);
    if (a.is_ok() || t.substr(0, 7) == "output:") return a;
  }
  // OpenFlow action lists: the first output decides; drop (or an empty list) denies.
  for (size_t pos = 0; pos <= t.size();) {
    size_t end = t.find(',', pos);
    if (end == std::string_view::npos) end = t.size();
    const std::string_view one = t.substr(pos, end - pos);
    if (one == "drop") return Action{ActionKind::kDeny, 0};
    if (one.substr(0, 7) == "output:") return parse_action(one);
    pos = end + 1;
  }
  return Action{ActionKind::kPermit, 0};
}

const char* any_reason_name(unsigned r) noexcept {
  if (r < kRouterReasons) return forward::reason_name(forward::Reason(r));
  switch (Extra(r - kRouterReasons)) {
    case Extra::kAclDeny:
      return "acl_deny";
    case Extra::kMalformed:
      return "malformed";
    case Extra::kNoPort:
      return "no_port";
    case Extra::kTxError:
      return "tx_error";
    default:
      return "unknown";
  }
}

forward::Verdict any_reason_verdict(unsigned r) noexcept {
  if (r < kRouterReasons) return forward::reason_verdict(forward::Reason(r));
  return forward::Verdict::kDrop;
}

}  // namespace warpath::runtime
