// src/runtime/actions.hpp
//
// ACL actions and the pipeline's outcome reasons.
//
// Reasons: the router's (forward::Reason, 0 .. kReasonCount-1) followed by the pipeline's own,
// so one counter array per worker covers every packet. Each reason has one verdict; the names
// are what the report, the CLI and JSON print.
#pragma once
#include <cstdint>
#include <string_view>

#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"
#include "warpath/forward/verdict.hpp"

namespace warpath::runtime {

enum class ActionKind : uint8_t { kPermit, kDeny, kOutput };
struct Action {
  ActionKind kind = ActionKind::kPermit;
  uint16_t port   = 0;  ///< kOutput
};

/// "permit", "deny" / "drop", "output:N" (N < 65536). kInvalidArgument otherwise.
Result<Action> parse_action(std::string_view text);
/// A rule's action: its own text (ClassBench trailing field or OpenFlow actions=) when it has
/// one, else `when_empty`. OpenFlow: drop -> deny, output:N -> output, anything else -> permit.
Result<Action> rule_action(const classify::Rule& rule, Action when_empty);

enum class Extra : uint8_t {
  kAclDeny = 0,  ///< drop: "acl_deny"
  kMalformed,    ///< drop: "malformed" (acl app: the parser rejected the packet)
  kNoPort,       ///< drop: "no_port" (the output port is not configured)
  kTxError,      ///< drop: "tx_error" (the port could not send it)
  kCount
};
inline constexpr unsigned kRouterReasons = forward::kReasonCount;
inline constexpr unsigned kAllReasons    = kRouterReasons + unsigned(Extra::kCount);
inline constexpr uint16_t reason_id(forward::Reason r) { return uint16_t(r); }
inline constexpr uint16_t reason_id(Extra e) { return uint16_t(kRouterReasons + unsigned(e)); }

const char* any_reason_name(unsigned reason) noexcept;
forward::Verdict any_reason_verdict(unsigned reason) noexcept;

}  // namespace warpath::runtime
