// src/io/text/classbench_parse.cpp: ClassBench rule and trace text, the naive matcher and the
// rule formatter.
//
// The parsers walk each line with a small scanner instead of splitting it into a fixed number of
// tokens, so both rule dialects (TAB or space separated, "lo : hi" or "lo:hi", with or without
// the flags column, with trailing extra fields) go through one code path. Numbers are read with
// std::from_chars, so nothing here throws except std::bad_alloc, which the public functions turn
// into kOutOfMemory.
#include <charconv>
#include <cstdio>
#include <new>
#include <string>
#include <system_error>

#include "warpath/io/classbench.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::io {
namespace {

constexpr bool is_space(char c) { return FieldScanner::is_space(c); }

enum class NumStatus { kOk, kNotNumber, kOutOfRange };

/// Parses all of `text` as an unsigned number in `base` no larger than `max`.
NumStatus parse_number(std::string_view text, int base, uint64_t max, uint64_t& out) {
  if (text.empty()) return NumStatus::kNotNumber;
  const char* first    = text.data();
  const char* last     = first + text.size();
  const auto [ptr, ec] = std::from_chars(first, last, out, base);
  if (ec == std::errc::invalid_argument || ptr != last) return NumStatus::kNotNumber;
  if (ec == std::errc::result_out_of_range || out > max) return NumStatus::kOutOfRange;
  return NumStatus::kOk;
}

/// Parses a hex number with an optional 0x or 0X prefix.
NumStatus parse_hex(std::string_view text, uint64_t max, uint64_t& out) {
  if (text.size() >= 2 && text[0] == '0' && (text[1] == 'x' || text[1] == 'X')) {
    text.remove_prefix(2);
  }
  return parse_number(text, 16, max, out);
}

std::string quoted(std::string_view text) {
  std::string out = "'";
  out.append(text);
  out += '\'';
  return out;
}

/// Parses "a.b.c.d/len" into a masked host-order address; `what` is "source" or "destination".
bool parse_prefix(std::string_view token, const char* what, uint32_t& addr, uint8_t& len,
                  std::string& error) {
  const std::string field = what;
  if (token.empty()) {
    error = "missing " + field + " prefix";
    return false;
  }
  const size_t slash = token.find('/');
  if (slash == std::string_view::npos) {
    error = field + " prefix " + quoted(token) + " has no /length";
    return false;
  }
  const std::string_view dotted   = token.substr(0, slash);
  const std::string_view len_text = token.substr(slash + 1);

  uint32_t value = 0;
  int octets     = 0;
  size_t pos     = 0;
  while (true) {
    const size_t dot = dotted.find('.', pos);
    const std::string_view part =
        dotted.substr(pos, dot == std::string_view::npos ? std::string_view::npos : dot - pos);
    if (octets == 4) {
      error = field + " address " + quoted(dotted) + " has more than four octets";
      return false;
    }
    uint64_t octet = 0;
    switch (parse_number(part, 10, 255, octet)) {
      case NumStatus::kOk:
        break;
      case NumStatus::kNotNumber:
        error = field + " address " + quoted(dotted) + " is not a dotted quad (bad octet " +
                quoted(part) + ")";
        return false;
      case NumStatus::kOutOfRange:
        error = field + " address " + quoted(dotted) + ": octet " + std::string(part) +
                " out of range 0..255";
        return false;
    }
    value = value << 8 | static_cast<uint32_t>(octet);
    ++octets;
    if (dot == std::string_view::npos) break;
    pos = dot + 1;
  }
  if (octets != 4) {
    error = field + " address " + quoted(dotted) + " has " + std::to_string(octets) +
            " octets, expected 4";
    return false;
  }

  uint64_t prefix_len = 0;
  switch (parse_number(len_text, 10, 32, prefix_len)) {
    case NumStatus::kOk:
      break;
    case NumStatus::kNotNumber:
      error = field + " prefix length " + quoted(len_text) + " is not a decimal number";
      return false;
    case NumStatus::kOutOfRange:
      error = field + " prefix length " + std::string(len_text) + " out of range 0..32";
      return false;
  }
  len                 = static_cast<uint8_t>(prefix_len);
  const uint32_t mask = len == 0 ? 0u : ~0u << (32 - len);
  addr                = value & mask;
  return true;
}

bool parse_port(std::string_view text, const std::string& field, uint16_t& port,
                std::string& error) {
  uint64_t value = 0;
  switch (parse_number(text, 10, 65535, value)) {
    case NumStatus::kOk:
      port = static_cast<uint16_t>(value);
      return true;
    case NumStatus::kNotNumber:
      error = field + " " + quoted(text) + " is not a decimal number";
      return false;
    case NumStatus::kOutOfRange:
      error = field + " " + std::string(text) + " out of range 0..65535";
      return false;
  }
  return false;
}

/// Parses "lo : hi" (or "lo:hi", "lo: hi", "lo :hi"); `what` is "source" or "destination".
bool parse_port_range(FieldScanner& scan, const char* what, uint16_t& lo, uint16_t& hi,
                      std::string& error) {
  const std::string field = std::string(what) + " port";
  std::string_view first  = scan.next();
  if (first.empty()) {
    error = "missing " + field + " range";
    return false;
  }
  std::string_view lo_text;
  std::string_view hi_text;
  const size_t colon = first.find(':');
  if (colon != std::string_view::npos) {
    lo_text = first.substr(0, colon);
    hi_text = first.substr(colon + 1);
    if (hi_text.empty()) hi_text = scan.next();
  } else {
    lo_text                       = first;
    const std::string_view second = scan.next();
    if (second.empty() || second[0] != ':') {
      error = field + " range " + quoted(first) + " is not lo : hi";
      return false;
    }
    hi_text = second.substr(1);
    if (hi_text.empty()) hi_text = scan.next();
  }
  if (lo_text.empty()) {
    error = field + " range " + quoted(first) + " has no lower bound";
    return false;
  }
  if (hi_text.empty()) {
    error = field + " range starting at " + std::string(lo_text) + " has no upper bound";
    return false;
  }
  if (!parse_port(lo_text, field, lo, error) || !parse_port(hi_text, field, hi, error)) {
    return false;
  }
  if (lo > hi) {
    error = field + " range " + std::to_string(lo) + " : " + std::to_string(hi) + " has lo > hi";
    return false;
  }
  return true;
}

/// Parses hex "value/mask" with both parts at most `max`; `what` is "protocol" or "flags".
bool parse_value_mask(std::string_view token, const char* what, uint64_t max, uint64_t& value,
                      uint64_t& mask, std::string& error) {
  const std::string field = what;
  const size_t slash      = token.find('/');
  if (slash == std::string_view::npos) {
    error = field + " " + quoted(token) + " is not hex value/mask";
    return false;
  }
  const std::string_view parts[2] = {token.substr(0, slash), token.substr(slash + 1)};
  uint64_t* outs[2]               = {&value, &mask};
  const char* names[2]            = {" value ", " mask "};
  char max_text[16];
  std::snprintf(max_text, sizeof(max_text), "0x%llx", static_cast<unsigned long long>(max));
  for (int i = 0; i < 2; ++i) {
    switch (parse_hex(parts[i], max, *outs[i])) {
      case NumStatus::kOk:
        break;
      case NumStatus::kNotNumber:
        error = field + " " + quoted(token) + " is not hex value/mask";
        return false;
      case NumStatus::kOutOfRange:
        error = field + names[i] + std::string(parts[i]) + " out of range 0.." + max_text;
        return false;
    }
  }
  return true;
}

bool parse_rule_line(std::string_view line, ClassBenchRule& rule, std::string& error) {
  if (line[0] != '@') {
    FieldScanner first(line);
    error = "rule line does not start with '@' (got " + quoted(first.next()) + ")";
    return false;
  }
  FieldScanner scan(line.substr(1));
  if (!parse_prefix(scan.next(), "source", rule.src, rule.src_len, error)) return false;
  if (!parse_prefix(scan.next(), "destination", rule.dst, rule.dst_len, error)) return false;
  if (!parse_port_range(scan, "source", rule.sport_lo, rule.sport_hi, error)) return false;
  if (!parse_port_range(scan, "destination", rule.dport_lo, rule.dport_hi, error)) return false;

  const std::string_view proto = scan.next();
  if (proto.empty()) {
    error = "missing protocol/mask field";
    return false;
  }
  uint64_t value = 0;
  uint64_t mask  = 0;
  if (!parse_value_mask(proto, "protocol", 0xff, value, mask, error)) return false;
  rule.proto      = static_cast<uint8_t>(value);
  rule.proto_mask = static_cast<uint8_t>(mask);

  // An optional flags/mask column; a following token without '/' is an extra field, as is
  // everything after the flags. Extra fields are ignored except the first that names an ACL
  // action (permit, deny, drop, accept, allow, output:N, goto:NAME), which the firewall uses.
  std::string_view extra = scan.next();
  if (!extra.empty() && extra.find('/') != std::string_view::npos) {
    if (!parse_value_mask(extra, "flags", 0xffff, value, mask, error)) return false;
    rule.flags      = static_cast<uint16_t>(value);
    rule.flags_mask = static_cast<uint16_t>(mask);
    rule.has_flags  = true;
    extra           = scan.next();
  }
  for (; !extra.empty(); extra = scan.next()) {
    if (extra == "permit" || extra == "deny" || extra == "drop" || extra == "accept" ||
        extra == "allow" || extra.substr(0, 7) == "output:" || extra.substr(0, 5) == "goto:") {
      rule.action = std::string(extra);
      break;
    }
    // Anything but a number is a typo of an action ("dney", "DENY", "\"deny\""): ignoring it
    // would make the rule permit, so a firewall would fail open. Numeric extra columns (decimal
    // or 0x hex) stay ignored, as ClassBench files carry them.
    const bool hex = extra.size() > 2 && extra[0] == '0' && (extra[1] == 'x' || extra[1] == 'X') &&
                     extra.find_first_not_of("0123456789abcdefABCDEF", 2) == std::string_view::npos;
    const bool dec = extra.find_first_not_of("0123456789") == std::string_view::npos;
    if (!hex && !dec) {
      error = "unknown action '" + std::string(extra) +
              "' (expected permit, deny, drop, accept, allow, output:N or goto:NAME, lower case)";
      return false;
    }
  }
  return true;
}

bool is_blank(std::string_view line) {
  for (const char c : line) {
    if (!is_space(c)) return false;
  }
  return true;
}

Result<std::vector<ClassBenchRule>> parse_rules_impl(std::string_view text, std::string_view name) {
  std::vector<ClassBenchRule> rules;
  LineCursor cursor(text);
  std::string_view line;
  std::string error;
  while (cursor.next(line)) {
    if (is_blank(line)) continue;
    ClassBenchRule rule;
    rule.line = static_cast<uint32_t>(cursor.line_number());
    if (!parse_rule_line(line, rule, error)) {
      return parse_error(name, cursor.line_number(), error);
    }
    rules.push_back(rule);
  }
  return rules;
}

constexpr int kTraceMaxColumns = 7;

bool parse_trace_line(std::string_view line, TraceEntry& entry, std::string& error) {
  FieldScanner scan(line);
  std::string_view tokens[kTraceMaxColumns];
  int columns = 0;
  for (std::string_view token = scan.next(); !token.empty(); token = scan.next()) {
    if (columns == kTraceMaxColumns) break;  // Columns beyond the seventh are ignored.
    tokens[columns++] = token;
  }
  if (columns < 5) {
    error = "trace line has " + std::to_string(columns) +
            " columns, expected at least 5 (sip dip sport dport proto)";
    return false;
  }
  static constexpr const char* kNames6[] = {"source address", "destination address",
                                            "source port",    "destination port",
                                            "protocol",       "match id"};
  static constexpr const char* kNames7[] = {"flags", "rule id"};
  static constexpr uint64_t kMax[]       = {0xffffffffu, 0xffffffffu, 65535,      65535,
                                            255,         0xffffffffu, 0xffffffffu};
  uint64_t values[kTraceMaxColumns]      = {};
  for (int i = 0; i < columns; ++i) {
    const std::string field = (columns == 7 && i >= 5) ? kNames7[i - 5] : kNames6[i];
    switch (parse_number(tokens[i], 10, kMax[i], values[i])) {
      case NumStatus::kOk:
        break;
      case NumStatus::kNotNumber:
        error = field + " " + quoted(tokens[i]) + " is not a decimal unsigned integer";
        return false;
      case NumStatus::kOutOfRange:
        error =
            field + " " + std::string(tokens[i]) + " out of range 0.." + std::to_string(kMax[i]);
        return false;
    }
  }
  entry.key.src   = static_cast<uint32_t>(values[0]);
  entry.key.dst   = static_cast<uint32_t>(values[1]);
  entry.key.sport = static_cast<uint16_t>(values[2]);
  entry.key.dport = static_cast<uint16_t>(values[3]);
  entry.key.proto = static_cast<uint8_t>(values[4]);
  if (columns == 6) {
    if (values[5] == 0) {
      error = "match id 0 is invalid (WUSTL match ids are 1-based)";
      return false;
    }
    entry.first_match = static_cast<int64_t>(values[5]) - 1;
  } else if (columns == 7) {
    entry.flags     = static_cast<uint32_t>(values[5]);
    entry.has_flags = true;
    entry.gen_rule  = static_cast<int64_t>(values[6]);
  }
  return true;
}

Result<std::vector<TraceEntry>> parse_trace_impl(std::string_view text, std::string_view name) {
  std::vector<TraceEntry> entries;
  LineCursor cursor(text);
  std::string_view line;
  std::string error;
  while (cursor.next(line)) {
    if (is_blank(line)) continue;
    TraceEntry entry;
    entry.line = static_cast<uint32_t>(cursor.line_number());
    if (!parse_trace_line(line, entry, error)) {
      return parse_error(name, cursor.line_number(), error);
    }
    entries.push_back(entry);
  }
  return entries;
}

Status out_of_memory(std::string_view name) {
  return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory while parsing");
}

bool prefix_matches(uint32_t addr, uint32_t prefix, uint8_t len) noexcept {
  if (len == 0) return true;  // A shift by 32 would be undefined; /0 matches everything.
  const uint32_t mask = len >= 32 ? ~0u : ~0u << (32 - len);
  return (addr & mask) == (prefix & mask);
}

}  // namespace

Result<std::vector<ClassBenchRule>> parse_classbench_rules(std::string_view text,
                                                           std::string_view name) {
  try {
    return parse_rules_impl(text, name);
  } catch (const std::bad_alloc&) {
    return out_of_memory(name);
  }
}

Result<std::vector<TraceEntry>> parse_trace(std::string_view text, std::string_view name) {
  try {
    return parse_trace_impl(text, name);
  } catch (const std::bad_alloc&) {
    return out_of_memory(name);
  }
}

bool rule_matches(const ClassBenchRule& rule, const packet::FiveTuple4& key) noexcept {
  return prefix_matches(key.src, rule.src, rule.src_len) &&
         prefix_matches(key.dst, rule.dst, rule.dst_len) && key.sport >= rule.sport_lo &&
         key.sport <= rule.sport_hi && key.dport >= rule.dport_lo && key.dport <= rule.dport_hi &&
         (key.proto & rule.proto_mask) == (rule.proto & rule.proto_mask);
}

// The case follows ClassBench's db_generator ("0x%02x/0xFF", "0x%04x/0x%04x"), so a rule read
// from a generated file is written back byte for byte, less the generator's trailing TAB.
std::string format_classbench_rule(const ClassBenchRule& rule) {
  char buf[160];
  const auto octet = [](uint32_t addr, int i) { return (addr >> (24 - 8 * i)) & 0xffu; };
  int n            = std::snprintf(
                 buf, sizeof(buf), "@%u.%u.%u.%u/%u\t%u.%u.%u.%u/%u\t%u : %u\t%u : %u\t0x%02x/0x%02X",
                 octet(rule.src, 0), octet(rule.src, 1), octet(rule.src, 2), octet(rule.src, 3),
                 unsigned{rule.src_len}, octet(rule.dst, 0), octet(rule.dst, 1), octet(rule.dst, 2),
                 octet(rule.dst, 3), unsigned{rule.dst_len}, unsigned{rule.sport_lo}, unsigned{rule.sport_hi},
                 unsigned{rule.dport_lo}, unsigned{rule.dport_hi}, unsigned{rule.proto},
                 unsigned{rule.proto_mask});
  std::string out(buf, n > 0 ? static_cast<size_t>(n) : 0);
  if (rule.has_flags) {
    n = std::snprintf(buf, sizeof(buf), "\t0x%04x/0x%04x", unsigned{rule.flags},
                      unsigned{rule.flags_mask});
    out.append(buf, n > 0 ? static_cast<size_t>(n) : 0);
  }
  return out;
}

}  // namespace warpath::io
