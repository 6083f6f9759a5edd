// src/classify/expand.hpp: port ranges to prefixes, for the engines that need value/mask
// rules only (tuple and Bloom search; GSwitch section 4.2 assumes masks).
//
// A range [lo, hi] of 16-bit ports becomes the minimal set of prefixes covering it exactly
// (at most 30 for any range, e.g. 1..65534). A rule with a source range of a prefixes and a
// destination range of b prefixes becomes a * b entries, each with the rule's priority and
// index, and the port word's mask and value set from the two prefixes. The expansion factor
// (entries / rules) is reported per rule set (ClassifierStats::entries).
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

struct PortPrefix {
  uint16_t value;  ///< bits beyond len are zero
  uint8_t len;     ///< 0..16
};

/// Minimal prefix cover of [lo, hi] (lo <= hi), in increasing port order.
std::vector<PortPrefix> range_to_prefixes(uint16_t lo, uint16_t hi);

/// A value/mask-only rule: what tuple and Bloom search store.
struct Entry {
  uint32_t value[kMaxKeyWords] = {};
  uint32_t mask[kMaxKeyWords]  = {};
  uint32_t priority            = 0;
  uint32_t index               = 0;  ///< the rule's index in the RuleSet
};

/// Expands one rule (appending to `out`); returns the number of entries added.
size_t expand_rule(const Rule& r, uint32_t index, KeyLayout layout, std::vector<Entry>& out);
/// Expands a whole rule set, in rule order.
std::vector<Entry> expand_rules(const RuleSet& rules);

}  // namespace warpath::classify::detail
