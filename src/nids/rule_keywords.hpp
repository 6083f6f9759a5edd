// src/nids/rule_keywords.hpp: the parsers of one rule keyword's value each (internal; used by
// rule_parse.cpp). Errors: kParseError for a malformed value, kNotSupported (the message
// starting with the keyword or construct) for one outside the subset.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/nids/rule.hpp"

namespace warpath::nids::detail {

inline Status syntax(std::string msg) { return Status(Errc::kParseError, std::move(msg)); }
inline Status unsupported(std::string msg) { return Status(Errc::kNotSupported, std::move(msg)); }

/// A decimal integer in [lo, hi] (`what` names it in the message).
Result<int64_t> parse_int(std::string_view t, std::string_view what, int64_t lo, int64_t hi);
/// A quoted content string: |hex| runs and \" \; \\ \: escapes.
Result<std::string> content_bytes(std::string_view v);
/// dsize, itype, icode: N, !N, <N, >N, <=N, >=N, N<>M.
Result<NumTest> parse_numtest(std::string_view v, std::string_view what);
Status parse_flow(std::string_view v, FlowOpt& f);
/// ip_proto: [!|<|>]N, or a protocol's name (/etc/protocols' names for the common ones).
Result<NumTest> parse_ip_proto(std::string_view v);
/// stream_size: SIDE,OP,N.
Result<StreamSize> parse_stream_size(std::string_view v);
Status parse_flowbits(std::string_view v, Rule& r);
Status parse_xbits(std::string_view v, Rule& r);
Status parse_flowint(std::string_view v, Rule& r);
Status parse_flags(std::string_view v, TcpFlags& f);
/// A pcre keyword's value; an expression PCRE2 does not compile is a syntax error (with
/// PCRE2's reason and offset), so --check-rules and --skip-bad-rules see it before a run.
Result<Pcre> parse_pcre(std::string_view v);
/// PCRE2 compile options of a pcre's flags (the parser's check and the image's compile).
uint32_t pcre_options(const Pcre& p) noexcept;
/// A number (decimal, or hex with 0x) in [lo, hi], or the name of a byte_extract variable in
/// `vars`: then `var` is its index (else -1) and the result 0. `kw` and `what` name it in errors.
Result<int64_t> number_or_var(std::string_view t, std::string_view kw, std::string_view what,
                              int64_t lo, int64_t hi, const std::vector<std::string>& vars,
                              int8_t& var);
/// byte_test (jump = false) or byte_jump as a payload item; names are `vars`' variables.
Result<Item> parse_byte(std::string_view value, bool jump, const std::vector<std::string>& vars);
/// base64_decode's value (empty: the defaults) as a payload item.
Result<Item> parse_base64_decode(std::string_view value);
/// byte_extract as a payload item; its variable is appended to `vars`.
Result<Item> parse_byte_extract(std::string_view value, std::vector<std::string>& vars);
/// threshold, or (filter) detection_filter.
Status parse_threshold(std::string_view v, bool filter, Threshold& t);

}  // namespace warpath::nids::detail
