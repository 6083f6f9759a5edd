// src/modules/actions.hpp
//
// ACL actions: what the acl module does with a packet a rule matched (or no rule matched).
//   permit      continue: the next module decides (in the acl preset, `wire` forwards it)
//   deny, drop  drop, reason acl_deny
//   output:N    forward out of port N unchanged (a policy route)
//   goto:NAME   continue with the context key NAME (GASPP): modules declared when=NAME run
//               on it
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"

namespace warpath::runtime {

enum class ActionKind : uint8_t { kPermit, kDeny, kOutput, kGoto };
struct Action {
  ActionKind kind = ActionKind::kPermit;
  uint16_t port   = 0;  ///< kOutput
  std::string context;  ///< kGoto
};

/// "permit", "deny" / "drop", "output:N" (N < 65536), "goto:NAME" (NAME [A-Za-z0-9_.-]+).
/// kInvalidArgument otherwise.
Result<Action> parse_action(std::string_view text);
/// A rule's action. ClassBench (KeyLayout::kFiveTuple): the trailing word, one of
/// parse_action's, or `when_empty` without one. OpenFlow (kOpenFlow): the actions= list as
/// ovs-ofctl reads it (names case-insensitive, commas inside parentheses kept together): the
/// first output:N / N / enqueue:N:Q / goto:NAME decides, else drop denies, else the packet
/// continues (normal, controller, mod_*, set_field, ... : permit); an empty or missing list
/// drops, as in Open vSwitch. Anything unknown is kInvalidArgument naming it (fail closed).
Result<Action> rule_action(const classify::Rule& rule, classify::KeyLayout layout,
                           Action when_empty);

}  // namespace warpath::runtime
