#include "modules/actions.hpp"

#include <charconv>
#include <optional>
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

namespace {

std::string lower(std::string_view t) {
  std::string s(t);
  for (char& c : s)
    if (c >= 'A' && c <= 'Z') c = char(c - 'A' + 'a');
  return s;
}

// OpenFlow actions that leave the packet to the next module (warpath's acl decides only
// forward / drop / output / goto): what Open vSwitch accepts, by name (case-insensitive, as
// ovs-ofctl reads them), bare or with an argument after ':' or '('.
bool continues(std::string_view name) {
  static constexpr std::string_view kKnown[] = {
      "normal",       "flood",        "all",          "local",        "in_port",
      "controller",   "mod_vlan_vid", "mod_vlan_pcp", "strip_vlan",   "push_vlan",
      "pop_vlan",     "mod_dl_src",   "mod_dl_dst",   "mod_nw_src",   "mod_nw_dst",
      "mod_nw_tos",   "mod_nw_ecn",   "mod_tp_src",   "mod_tp_dst",   "set_field",
      "load",         "move",         "dec_ttl",      "set_queue",    "pop_queue",
      "note",         "resubmit",     "learn",        "ct",           "set_tunnel",
      "set_tunnel64", "push_mpls",    "pop_mpls",     "mod_dl_vlan",  "exit"};
  for (std::string_view k : kKnown)
    if (name == k) return true;
  return false;
}

/// ovs-ofctl's actions= text: a comma-separated list (commas inside parentheses belong to one
/// action). The first output decides; drop denies; an empty list drops (as in Open vSwitch).
Result<Action> openflow_actions(std::string_view t) {
  bool any = false;
  std::optional<Action> decided;
  for (size_t pos = 0; pos < t.size();) {
    size_t end = pos;
    for (int depth = 0; end < t.size() && (depth > 0 || t[end] != ','); ++end)
      depth += t[end] == '(' ? 1 : t[end] == ')' ? -1 : 0;
    std::string_view one = t.substr(pos, end - pos);
    pos                  = end + 1;
    while (!one.empty() && (one.front() == ' ' || one.front() == '\t')) one.remove_prefix(1);
    while (!one.empty() && (one.back() == ' ' || one.back() == '\t')) one.remove_suffix(1);
    if (one.empty()) return Status(Errc::kInvalidArgument, "empty action in '" + std::string(t) + "'");
    any                    = true;
    const size_t arg       = one.find_first_of(":(");
    const std::string name = lower(one.substr(0, arg));
    if (name == "drop") {
      if (!decided) decided = Action{ActionKind::kDeny, 0, {}};
    } else if (name == "output" || name == "goto" || name == "enqueue") {
      // output:N, goto:NAME (the name keeps its case), enqueue:N:Q (an output to port N).
      const std::string_view rest = arg == std::string_view::npos ? "" : one.substr(arg);
      std::string text            = name + std::string(rest);
      if (name == "enqueue") {
        const size_t q = rest.find(':', 1);
        text = q == std::string_view::npos ? "enqueue" + std::string(rest)
                                           : "output" + std::string(rest.substr(0, q));
      }
      auto a = parse_action(text);
      if (!a.is_ok()) return a.status();
      if (!decided) decided = std::move(*a);
    } else if (!name.empty() && name.find_first_not_of("0123456789") == std::string::npos) {
      auto a = parse_action("output:" + name);  // a bare port number is output:N
      if (!a.is_ok()) return a.status();
      if (!decided) decided = std::move(*a);
    } else if (!continues(name)) {
      return Status(Errc::kInvalidArgument,
                    "unknown OpenFlow action '" + std::string(one) +
                        "' (known: drop, output:N, N, enqueue:N:Q, goto:NAME, normal, "
                        "controller, mod_*, set_field, ...)");
    }
  }
  if (!any) return Action{ActionKind::kDeny, 0, {}};  // actions= (or none): drop
  return decided ? *decided : Action{ActionKind::kPermit, 0, {}};
}

}  // namespace

Result<Action> rule_action(const classify::Rule& rule, classify::KeyLayout layout,
                           Action when_empty) {
  std::string_view t = rule.action;
  while (!t.empty() && (t.front() == ' ' || t.front() == '\t')) t.remove_prefix(1);
  while (!t.empty() && (t.back() == ' ' || t.back() == '\t')) t.remove_suffix(1);
  if (layout == classify::KeyLayout::kOpenFlow) {
    if (t.substr(0, 8) == "actions=") t.remove_prefix(8);
    return openflow_actions(t);
  }
  // ClassBench: the optional trailing word, exactly one of parse_action's (a typo such as
  // "dney" or "DENY" must not permit: a firewall fails closed).
  if (t.empty()) return when_empty;
  return parse_action(t);
}

}  // namespace warpath::runtime
