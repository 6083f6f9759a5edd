// include/warpath/classify/rule_updates.hpp
//
// Rule update files: the changes `warpath classify --updates` applies while it classifies.
//
//   + PRIORITY RULE     insert RULE (in the rule file's format: a ClassBench line or an
//                       ovs-ofctl flow) as the rule of that priority, replacing any
//   - PRIORITY          delete the rule of that priority
//
// PRIORITY is a rule's identity and rank: a lower number wins, and the rule file's own rules
// have priorities 0..n-1 in file order (ClassBench: the same order as the file's). OpenFlow
// flows keep their priority= as the first rank; PRIORITY breaks ties and names the flow.
// Blank lines and '#' comments are skipped. Errors are kParseError "file:line: reason",
// including a '-' of a priority that no earlier line or the rule file holds at that point.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"

namespace warpath::classify {

struct RuleUpdate {
  bool insert       = true;
  uint32_t priority = 0;  ///< the rule's index in the classifier
  Rule rule;              ///< inserts only
  uint32_t line = 0;
};

/// Parses update text for rules of `format` ("classbench" or "openflow"); `present` is how
/// many rules the rule file has (priorities 0..present-1 exist at the start).
Result<std::vector<RuleUpdate>> parse_rule_updates(std::string_view text, std::string_view name,
                                                   std::string_view format, uint32_t present);
/// Reads and parses an update file (.gz/.xz allowed).
Result<std::vector<RuleUpdate>> load_rule_updates(const std::string& path,
                                                  std::string_view format, uint32_t present);

/// The rule set after `updates` (for checks): rules by priority, without the deleted ones;
/// `index_of[i]` is the priority of rules[i].
RuleSet apply_rule_updates(const RuleSet& rules, const std::vector<RuleUpdate>& updates,
                           std::vector<uint32_t>& index_of);

}  // namespace warpath::classify
