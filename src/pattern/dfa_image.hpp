// src/pattern/dfa_image.hpp: regex patterns as a few search DFAs (core/dfa_core.hpp has the
// layout and the scan body): the patterns are packed greedily into groups whose DFA stays
// within a state budget; what cannot be determinized (assertions other than ^, or a pattern
// alone over the budget) is left to a fallback matcher.
#pragma once
#include <cstdint>
#include <vector>

#include "pattern/core/dfa_core.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

struct DfaGroup {
  uint8_t classes[256] = {};
  uint32_t width = 1, states = 0, start = 0;
  std::vector<uint32_t> next, accept_begin, accepts;
  std::vector<uint32_t> empty_at_start;  ///< ids whose empty match at offset 0 is reported (/^a?/)
  size_t patterns = 0;

  core::DfaView view() const {
    core::DfaView v;
    v.classes      = classes;
    v.next         = next.data();
    v.width        = width;
    v.start        = start;
    v.accept_begin = accept_begin.data();
    v.accepts      = accepts.data();
    return v;
  }
  size_t bytes() const { return 256 + (next.size() + accept_begin.size() + accepts.size()) * 4; }
};

struct DfaSet {
  std::vector<DfaGroup> groups;
  std::vector<Pattern> rest;           ///< for the fallback matcher
  std::vector<std::string> rest_why;   ///< per rest pattern: why it is not in a DFA
  std::vector<uint32_t> single_match;  ///< sorted ids of H patterns in the groups
};

/// States one group's DFA may have (4,096 states x 64 classes x 4 bytes = 1 MiB: an L2's worth).
inline constexpr uint32_t kDfaStateBudget = 4096;

/// Groups for `patterns` (each must be in the subset: build_automaton errors are returned).
Result<DfaSet> build_dfa_set(const std::vector<Pattern>& patterns, uint32_t state_budget = kDfaStateBudget);

}  // namespace warpath::pattern::detail
