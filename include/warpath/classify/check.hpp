// include/warpath/classify/check.hpp
//
// Rule-set generators and the differential check of classifier engines against ref.linear,
// shared by `warpath gen rules`, `warpath selftest`, the tests and the benchmarks.
#pragma once
#include <string>
#include <vector>

#include "warpath/classify/classifier.hpp"
#include "warpath/core/registry.hpp"

namespace warpath::classify {

/// GSwitch's synthetic generator (gswitch-conext14.md sections 6-7): N rules of f fields
/// (f = 5: the 5-tuple layout; f = 12: OpenFlow) in C classes (distinct masks made by
/// wildcarding fields of a base tuple, and address prefixes when more masks are needed), of
/// which F are full (ceil((N - (C - F)) / F) rules each) and the other C - F hold one rule;
/// each generated tuple matches Cm classes (classes are grouped Cm at a time and share the
/// base tuples their rules are cut from). Priorities are random (ties: lower index wins).
struct SyntheticParams {
  uint32_t rules = 1024, classes = 128, full = 128, matching = 1, fields = 12;
  uint32_t tuples = 100000;
  uint64_t seed   = 1;
};
struct SyntheticSet {
  RuleSet rules;
  KeyBuffer keys;
};
Result<SyntheticSet> synthetic_rules(const SyntheticParams& p);

/// A random rule set with the edge cases every engine must get right: /0 and /32 prefixes,
/// ports 0 and 65535, exact, wildcard and arbitrary port ranges, protocol wildcards,
/// duplicate rules, a catch-all (5-tuple); random field masks incl. MAC masks (OpenFlow).
RuleSet random_rule_set(uint64_t seed, KeyLayout layout, uint32_t rules);

/// `count` keys: about half built to match a random rule of `rules`, the rest random.
KeyBuffer random_keys(const RuleSet& rules, uint64_t seed, uint32_t count);

/// Classifies every key through `engine` in consecutive bursts of each size and compares with
/// `ref`; returns the first difference, or "" when all agree.
std::string compare_classifier(const Classifier& engine, const Classifier& ref,
                               const KeyBuffer& keys, const std::vector<uint32_t>& sizes);

/// The module's self-test entry (core/registry.hpp ModuleInfo::check).
CheckReport check_classifier_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::classify
