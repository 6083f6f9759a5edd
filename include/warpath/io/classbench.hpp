// include/warpath/io/classbench.hpp
//
// ClassBench rule and trace files.
//
// Rule lines (one rule per line; the first line has the highest priority):
//   @sip/len <ws> dip/len <ws> sport_lo : sport_hi <ws> dport_lo : dport_hi <ws> proto/mask
//     [<ws> flags/mask] [<ws> anything else ...]
//   <ws> is any run of TABs and spaces. proto and flags are hex (0x06/0xFF, 0x0000/0x0200).
//   Both dialects are accepted: TAB or space separated, with or without the flags column, and
//   with trailing extra fields (ignored, except an ACL action word: see ClassBenchRule::action).
//   Blank lines are skipped.
//
// Trace lines (decimal unsigned integers, TABs or spaces):
//   5 columns  sip dip sport dport proto
//   6 columns  sip dip sport dport proto match       WUSTL: match = 1-based first matching rule
//   7 columns  sip dip sport dport proto flags rule  ClassBench trace_generator: rule = 0-based
//                                                    rule the header was generated from (not
//                                                    always the first match); flags ignored
//   More than 7 columns: the extra ones are ignored.
//
// Errors
//   Any malformed line fails the whole load with kParseError "file:line: reason"; nothing
//   half-loaded is returned.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/packet/flow_key.hpp"

namespace warpath::io {

struct ClassBenchRule {
  uint32_t src = 0, dst = 0;         ///< host order, bits beyond the prefix cleared
  uint8_t src_len = 0, dst_len = 0;  ///< 0..32
  uint16_t sport_lo = 0, sport_hi = 65535;
  uint16_t dport_lo = 0, dport_hi = 65535;
  uint8_t proto = 0, proto_mask = 0;   ///< proto_mask 0x00 (any) or 0xff (exact) in practice
  uint16_t flags = 0, flags_mask = 0;  ///< TCP flags, when the file has the column
  bool has_flags = false;
  uint32_t line  = 0;  ///< 1-based line in the file
  /// The first extra field that names an ACL action (permit, deny, drop, accept, allow,
  /// output:N, goto:NAME), else empty. warpath run's firewall applies it (run_config.hpp).
  std::string action;
};

struct TraceEntry {
  packet::FiveTuple4 key{};
  uint32_t flags      = 0;
  bool has_flags      = false;
  int64_t first_match = -1;  ///< 0-based first-match rule (WUSTL 6-column files), else -1
  int64_t gen_rule    = -1;  ///< 0-based generating rule (7-column files), else -1
  uint32_t line       = 0;
};

/// Parses rule text; `name` is used in error messages.
Result<std::vector<ClassBenchRule>> parse_classbench_rules(std::string_view text,
                                                           std::string_view name);
/// Loads a rule file (.gz allowed).
Result<std::vector<ClassBenchRule>> load_classbench_rules(const std::string& path);

Result<std::vector<TraceEntry>> parse_trace(std::string_view text, std::string_view name);
Result<std::vector<TraceEntry>> load_trace(const std::string& path);

/// Does `rule` match `key`? The naive definition every classifier is checked against: prefix
/// match on both addresses (length 0 matches everything), inclusive port ranges and
/// (key.proto & proto_mask) == (proto & proto_mask). Flags are parsed but not matched, as in
/// dpdk-test-acl's 5-tuple.
bool rule_matches(const ClassBenchRule& rule, const packet::FiveTuple4& key) noexcept;

/// The rule as a ClassBench line ("@10.0.0.0/8\t...") for dumps and the generator, in
/// db_generator's spelling (TABs, "lo : hi", "0x06/0xFF", "0x0000/0x0200" when has_flags, no
/// trailing TAB), so a rule read from a generated file is written back as it was.
std::string format_classbench_rule(const ClassBenchRule& rule);

}  // namespace warpath::io
