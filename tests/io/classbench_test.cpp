// tests/io/classbench_test.cpp: text files (plain, .gz, .xz), ClassBench rule and trace parsing,
// the naive matcher and the rule formatter, on hand-written text, the tiny golden files in
// tests/golden/io and, when present, the shared ClassBench and routing data sets.
#include "warpath/io/classbench.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <filesystem>
#include <string>
#include <system_error>
#include <vector>

#include "support/test_support.hpp"
#include "warpath/classify/rule.hpp"
#include "warpath/core/status.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::io {
namespace {

namespace support = warpath::testing;

constexpr uint32_t ip(uint32_t a, uint32_t b, uint32_t c, uint32_t d) {
  return a << 24 | b << 16 | c << 8 | d;
}

packet::FiveTuple4 key(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t proto) {
  packet::FiveTuple4 k{};
  k.src   = src;
  k.dst   = dst;
  k.sport = sport;
  k.dport = dport;
  k.proto = proto;
  return k;
}

/// The 0-based first matching rule, or -1: the reference every trace is checked against.
int64_t naive_first_match(const std::vector<ClassBenchRule>& rules, const packet::FiveTuple4& k) {
  for (size_t i = 0; i < rules.size(); ++i) {
    if (rule_matches(rules[i], k)) return static_cast<int64_t>(i);
  }
  return -1;
}

std::vector<ClassBenchRule> parse_rules_ok(std::string_view text) {
  auto rules = parse_classbench_rules(text, "test");
  EXPECT_TRUE(rules.is_ok()) << rules.status().to_string();
  return rules.is_ok() ? rules.value() : std::vector<ClassBenchRule>{};
}

std::vector<TraceEntry> parse_trace_ok(std::string_view text) {
  auto trace = parse_trace(text, "test");
  EXPECT_TRUE(trace.is_ok()) << trace.status().to_string();
  return trace.is_ok() ? trace.value() : std::vector<TraceEntry>{};
}

void expect_same_rule(const ClassBenchRule& a, const ClassBenchRule& b) {
  EXPECT_EQ(a.src, b.src);
  EXPECT_EQ(a.dst, b.dst);
  EXPECT_EQ(a.src_len, b.src_len);
  EXPECT_EQ(a.dst_len, b.dst_len);
  EXPECT_EQ(a.sport_lo, b.sport_lo);
  EXPECT_EQ(a.sport_hi, b.sport_hi);
  EXPECT_EQ(a.dport_lo, b.dport_lo);
  EXPECT_EQ(a.dport_hi, b.dport_hi);
  EXPECT_EQ(a.proto, b.proto);
  EXPECT_EQ(a.proto_mask, b.proto_mask);
  EXPECT_EQ(a.has_flags, b.has_flags);
  EXPECT_EQ(a.flags, b.flags);
  EXPECT_EQ(a.flags_mask, b.flags_mask);
}

std::vector<std::string> lines_of(std::string_view text) {
  std::vector<std::string> lines;
  LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) lines.emplace_back(line);
  return lines;
}

// ---- Status and LineCursor ------------------------------------------------------------------

TEST(StatusTest, ErrcNamesAndToString) {
  EXPECT_EQ(errc_name(Errc::kOk), "ok");
  EXPECT_EQ(errc_name(Errc::kInvalidArgument), "invalid_argument");
  EXPECT_EQ(errc_name(Errc::kOutOfMemory), "out_of_memory");
  EXPECT_EQ(errc_name(Errc::kCapacity), "capacity");
  EXPECT_EQ(errc_name(Errc::kNotSupported), "not_supported");
  EXPECT_EQ(errc_name(Errc::kNotBuilt), "not_built");
  EXPECT_EQ(errc_name(Errc::kCudaError), "cuda_error");
  EXPECT_EQ(errc_name(Errc::kIoError), "io_error");
  EXPECT_EQ(errc_name(Errc::kParseError), "parse_error");
  EXPECT_EQ(errc_name(Errc::kNotFound), "not_found");
  EXPECT_EQ(Status(Errc::kParseError, "rules.txt:3: bad").to_string(),
            "parse_error: rules.txt:3: bad");
  EXPECT_EQ(Status::ok().to_string(), "ok");
}

TEST(LineCursorTest, SplitsLinesDropsCrBeforeLfAndCounts) {
  LineCursor cursor("a\r\nbb\n\n c \r\nlast");
  std::string_view line;
  const char* expected[] = {"a", "bb", "", " c ", "last"};
  for (uint64_t i = 0; i < 5; ++i) {
    ASSERT_TRUE(cursor.next(line));
    EXPECT_EQ(line, expected[i]);
    EXPECT_EQ(cursor.line_number(), i + 1);
  }
  EXPECT_FALSE(cursor.next(line));
  EXPECT_EQ(cursor.line_number(), 5u);
}

TEST(LineCursorTest, EmptyTextAndTrailingNewline) {
  std::string_view line;
  LineCursor empty("");
  EXPECT_FALSE(empty.next(line));
  EXPECT_EQ(empty.line_number(), 0u);
  EXPECT_EQ(lines_of("x\n"), std::vector<std::string>({"x"}));
  EXPECT_EQ(lines_of("\n"), std::vector<std::string>({""}));
  EXPECT_EQ(lines_of("x\r\ny\r\n"), std::vector<std::string>({"x", "y"}));
}

TEST(ParseErrorTest, NamesFileAndLine) {
  const Status s = parse_error("acl1", 17, "source prefix length 33 out of range 0..32");
  EXPECT_EQ(s.code(), Errc::kParseError);
  EXPECT_EQ(s.message(), "acl1:17: source prefix length 33 out of range 0..32");
}

// ---- Rule parsing -------------------------------------------------------------------------

TEST(ClassBenchRulesTest, DbGeneratorDialect) {
  const auto rules = parse_rules_ok(
      "@176.19.181.33/32\t90.145.23.162/32\t0 : 65535\t1550 : 1550\t0x06/0xFF\t0x0000/0x0200\t\n"
      "@10.0.0.0/8\t0.0.0.0/0\t1024 : 2048\t0 : 65535\t0x00/0x00\t0x1000/0x1000\t\n");
  ASSERT_EQ(rules.size(), 2u);
  const ClassBenchRule& r = rules[0];
  EXPECT_EQ(r.src, ip(176, 19, 181, 33));
  EXPECT_EQ(r.src_len, 32);
  EXPECT_EQ(r.dst, ip(90, 145, 23, 162));
  EXPECT_EQ(r.dst_len, 32);
  EXPECT_EQ(r.sport_lo, 0);
  EXPECT_EQ(r.sport_hi, 65535);
  EXPECT_EQ(r.dport_lo, 1550);
  EXPECT_EQ(r.dport_hi, 1550);
  EXPECT_EQ(r.proto, 6);
  EXPECT_EQ(r.proto_mask, 0xff);
  EXPECT_TRUE(r.has_flags);
  EXPECT_EQ(r.flags, 0x0000);
  EXPECT_EQ(r.flags_mask, 0x0200);
  EXPECT_EQ(r.line, 1u);
  EXPECT_EQ(rules[1].src, ip(10, 0, 0, 0));
  EXPECT_EQ(rules[1].src_len, 8);
  EXPECT_EQ(rules[1].dst_len, 0);
  EXPECT_EQ(rules[1].sport_lo, 1024);
  EXPECT_EQ(rules[1].sport_hi, 2048);
  EXPECT_EQ(rules[1].proto_mask, 0);
  EXPECT_EQ(rules[1].flags, 0x1000);
  EXPECT_EQ(rules[1].flags_mask, 0x1000);
  EXPECT_EQ(rules[1].line, 2u);
}

TEST(ClassBenchRulesTest, WustlDialect) {
  const auto rules = parse_rules_ok(
      "@175.77.88.155/32 119.106.158.230/32 0 : 65535 6888 : 6888 0x06/0xFF\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].src, ip(175, 77, 88, 155));
  EXPECT_EQ(rules[0].dst, ip(119, 106, 158, 230));
  EXPECT_EQ(rules[0].dport_lo, 6888);
  EXPECT_EQ(rules[0].dport_hi, 6888);
  EXPECT_EQ(rules[0].proto, 6);
  EXPECT_FALSE(rules[0].has_flags);
  EXPECT_EQ(rules[0].flags_mask, 0);
  EXPECT_EQ(rules[1].src_len, 0);
  EXPECT_EQ(rules[1].dst_len, 0);
  EXPECT_EQ(rules[1].dport_hi, 65535);
}

TEST(ClassBenchRulesTest, MixedSpacingCompactRangesAndTrailingFields) {
  const auto rules = parse_rules_ok(
      "@1.2.3.4/32 \t 5.6.7.8/32\t \t1:2  3 :4\t0x11/0xff  0x0010/0x00ff 7 9 11\t\n"
      "@1.2.3.4/32 5.6.7.8/32 10: 20 30 :40 06/FF 17 42\n"
      "@ 1.2.3.4/32 5.6.7.8/32 0 : 0 65535 : 65535 0X01/0XFF\t\t\n");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].sport_lo, 1);
  EXPECT_EQ(rules[0].sport_hi, 2);
  EXPECT_EQ(rules[0].dport_lo, 3);
  EXPECT_EQ(rules[0].dport_hi, 4);
  EXPECT_EQ(rules[0].proto, 0x11);
  EXPECT_TRUE(rules[0].has_flags);
  EXPECT_EQ(rules[0].flags, 0x10);
  EXPECT_EQ(rules[0].flags_mask, 0xff);
  // Decimal extra fields right after the protocol are not a flags column.
  EXPECT_EQ(rules[1].sport_lo, 10);
  EXPECT_EQ(rules[1].sport_hi, 20);
  EXPECT_EQ(rules[1].dport_lo, 30);
  EXPECT_EQ(rules[1].dport_hi, 40);
  EXPECT_EQ(rules[1].proto, 6);
  EXPECT_EQ(rules[1].proto_mask, 0xff);
  EXPECT_FALSE(rules[1].has_flags);
  EXPECT_EQ(rules[2].sport_hi, 0);
  EXPECT_EQ(rules[2].dport_lo, 65535);
  EXPECT_EQ(rules[2].proto, 1);
}

TEST(ClassBenchRulesTest, KeepsAnActionFieldForTheFirewall) {
  const std::string text =
      "@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\tdeny\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 0x0000/0x0000 17 output:2\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00 42 7\n";
  auto rules = io::parse_classbench_rules(text, "acl.rules");
  ASSERT_TRUE(rules.is_ok()) << rules.status().message();
  ASSERT_EQ(rules->size(), 3u);
  EXPECT_EQ((*rules)[0].action, "deny");
  EXPECT_EQ((*rules)[1].action, "output:2");
  EXPECT_TRUE((*rules)[1].has_flags);
  EXPECT_EQ((*rules)[2].action, "");
  EXPECT_EQ(classify::from_classbench(*rules, "acl").rules[0].action, "deny");
  // A word that is no action is a typo of one: an error, never a rule that permits (a
  // firewall fails closed). Numeric extra columns are still ignored.
  for (const char* word : {"dney", "DENY", "extra", "Permit"}) {
    auto bad = io::parse_classbench_rules(
        std::string("@10.0.0.0/8\t0.0.0.0/0\t0 : 65535\t80 : 80\t0x06/0xFF\t") + word + "\n",
        "acl.rules");
    ASSERT_FALSE(bad.is_ok()) << word;
    EXPECT_EQ(bad.status().message().rfind(std::string("acl.rules:1: unknown action '") + word, 0),
              0u)
        << bad.status().message();
  }
}

TEST(ClassBenchRulesTest, ClearsHostBitsBeyondPrefix) {
  const auto rules = parse_rules_ok(
      "@10.1.2.3/8 192.168.77.255/23 0 : 65535 0 : 65535 0x00/0x00\n"
      "@255.255.255.255/0 255.255.255.255/1 0 : 65535 0 : 65535 0x00/0x00\n"
      "@255.255.255.255/32 128.0.0.1/31 0 : 65535 0 : 65535 0x00/0x00\n");
  ASSERT_EQ(rules.size(), 3u);
  EXPECT_EQ(rules[0].src, ip(10, 0, 0, 0));
  EXPECT_EQ(rules[0].dst, ip(192, 168, 76, 0));
  EXPECT_EQ(rules[1].src, 0u);
  EXPECT_EQ(rules[1].dst, ip(128, 0, 0, 0));
  EXPECT_EQ(rules[2].src, 0xffffffffu);
  EXPECT_EQ(rules[2].dst, ip(128, 0, 0, 0));
}

TEST(ClassBenchRulesTest, CrlfAndBlankLinesKeepLineNumbers) {
  const auto rules = parse_rules_ok(
      "\r\n@1.0.0.0/8\t2.0.0.0/8\t0 : 65535\t0 : 65535\t0x06/0xFF\t0x0000/0x0000\t\r\n"
      "   \r\n\t\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\r\n");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(rules[0].line, 2u);
  EXPECT_EQ(rules[0].src, ip(1, 0, 0, 0));
  EXPECT_TRUE(rules[0].has_flags);
  EXPECT_EQ(rules[1].line, 5u);
  EXPECT_EQ(rules[1].proto_mask, 0);
  EXPECT_TRUE(parse_rules_ok("").empty());
  EXPECT_TRUE(parse_rules_ok("\n\r\n \t \n").empty());
}

struct BadLine {
  const char* what;
  const char* line;
  const char* reason;  ///< A substring the message must contain.
};

TEST(ClassBenchRulesTest, EveryMalformedLineFailsTheWholeLoad) {
  const BadLine cases[] = {
      {"octet > 255", "@1.2.3.256/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source address '1.2.3.256': octet 256 out of range 0..255"},
      {"three octets", "@1.2.3/24 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source address '1.2.3' has 3 octets, expected 4"},
      {"five octets", "@1.2.3.4/32 5.6.7.8.9/32 0 : 65535 0 : 65535 0x06/0xFF",
       "destination address '5.6.7.8.9' has more than four octets"},
      {"empty octet", "@1..3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source address '1..3.4' is not a dotted quad"},
      {"letter octet", "@1.2.3.4/32 5.x.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "destination address '5.x.7.8' is not a dotted quad (bad octet 'x')"},
      {"prefix length 33", "@1.2.3.4/33 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source prefix length 33 out of range 0..32"},
      {"prefix length 99", "@1.2.3.4/32 5.6.7.8/99 0 : 65535 0 : 65535 0x06/0xFF",
       "destination prefix length 99 out of range 0..32"},
      {"no prefix length", "@1.2.3.4 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source prefix '1.2.3.4' has no /length"},
      {"negative prefix length", "@1.2.3.4/-1 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source prefix length '-1' is not a decimal number"},
      {"missing destination", "@1.2.3.4/32", "missing destination prefix"},
      {"missing protocol", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535",
       "missing protocol/mask field"},
      {"missing dport range", "@1.2.3.4/32 5.6.7.8/32 0 : 65535", "missing destination port range"},
      {"missing upper bound",
       "@1.2.3.4/32 5.6.7.8/32 0 :", "source port range starting at 0 has no upper bound"},
      {"missing colon", "@1.2.3.4/32 5.6.7.8/32 0 65535 0 : 65535 0x06/0xFF",
       "source port range '0' is not lo : hi"},
      {"lo > hi", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 80 : 70 0x06/0xFF",
       "destination port range 80 : 70 has lo > hi"},
      {"port 70000", "@1.2.3.4/32 5.6.7.8/32 0 : 70000 0 : 65535 0x06/0xFF",
       "source port 70000 out of range 0..65535"},
      {"huge port", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 99999999999999999999999 : 1 0x06/0xFF",
       "destination port 99999999999999999999999 out of range 0..65535"},
      {"port not a number", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 http : 80 0x06/0xFF",
       "destination port 'http' is not a decimal number"},
      {"bad proto hex", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0xZ6/0xFF",
       "protocol '0xZ6/0xFF' is not hex value/mask"},
      {"proto without mask", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06",
       "protocol '0x06' is not hex value/mask"},
      {"proto > 0xff", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x100/0xFF",
       "protocol value 0x100 out of range 0..0xff"},
      {"proto mask > 0xff", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0x1FF",
       "protocol mask 0x1FF out of range 0..0xff"},
      {"bare 0x", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x/0xFF",
       "protocol '0x/0xFF' is not hex value/mask"},
      {"bad flags hex", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF 0xGG00/0x0200",
       "flags '0xGG00/0x0200' is not hex value/mask"},
      {"flags > 0xffff", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF 0x10000/0xFFFF",
       "flags value 0x10000 out of range 0..0xffff"},
      {"missing '@'", "1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "rule line does not start with '@' (got '1.2.3.4/32')"},
      {"garbage", "hello world", "rule line does not start with '@' (got 'hello')"},
      {"garbage after '@'", "@hello world", "source prefix 'hello' has no /length"},
      {"lone '@'", "@", "missing source prefix"},
  };
  const std::string good = "@1.2.3.4/32\t5.6.7.8/32\t0 : 65535\t0 : 65535\t0x06/0xFF\t\n";
  for (const BadLine& c : cases) {
    SCOPED_TRACE(c.what);
    // The bad line is line 3, after a good line and a blank one, and followed by a good line.
    const std::string text = good + "\n" + c.line + "\r\n" + good;
    const auto rules       = parse_classbench_rules(text, "acl1");
    ASSERT_FALSE(rules.is_ok());
    EXPECT_EQ(rules.status().code(), Errc::kParseError);
    EXPECT_EQ(rules.status().message().rfind("acl1:3: ", 0), 0u) << rules.status().message();
    EXPECT_NE(rules.status().message().find(c.reason), std::string::npos)
        << rules.status().message();
  }
}

TEST(ClassBenchRulesTest, MessageNamesFileLineAndToken) {
  std::string text;
  for (int i = 0; i < 16; ++i) text += "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF\n";
  text += "@1.2.3.4/33 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF\n";
  const auto rules = parse_classbench_rules(text, "acl1");
  ASSERT_FALSE(rules.is_ok());
  EXPECT_EQ(rules.status().message(), "acl1:17: source prefix length 33 out of range 0..32");
  EXPECT_EQ(rules.status().to_string(),
            "parse_error: acl1:17: source prefix length 33 out of range 0..32");
}

// ---- Matching -----------------------------------------------------------------------------

TEST(RuleMatchesTest, PrefixesPortsAndProtocol) {
  const auto rules = parse_rules_ok(
      "@10.0.0.0/8 192.168.1.0/24 1024 : 2048 80 : 80 0x06/0xFF 0x0000/0x0200\n"
      "@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x00/0x00\n"
      "@1.2.3.4/32 128.0.0.0/1 0 : 65535 0 : 65535 0x11/0xFF\n");
  ASSERT_EQ(rules.size(), 3u);
  const ClassBenchRule& r = rules[0];
  EXPECT_TRUE(rule_matches(r, key(ip(10, 255, 255, 255), ip(192, 168, 1, 0), 1024, 80, 6)));
  EXPECT_TRUE(rule_matches(r, key(ip(10, 0, 0, 0), ip(192, 168, 1, 255), 2048, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(11, 0, 0, 0), ip(192, 168, 1, 1), 1500, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(9, 255, 255, 255), ip(192, 168, 1, 1), 1500, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 2, 1), 1500, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 1023, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 2049, 80, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 1500, 79, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 1500, 81, 6)));
  EXPECT_FALSE(rule_matches(r, key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 1500, 80, 17)));

  // /0 and a wildcard protocol match every key, including the all-ones corner.
  for (const auto& k : {key(0, 0, 0, 0, 0), key(~0u, ~0u, 65535, 65535, 255),
                        key(ip(10, 1, 1, 1), ip(192, 168, 1, 1), 1500, 80, 6)}) {
    EXPECT_TRUE(rule_matches(rules[1], k));
  }

  // /32 is exact; /1 splits the space in half.
  EXPECT_TRUE(rule_matches(rules[2], key(ip(1, 2, 3, 4), ip(128, 0, 0, 0), 1, 1, 17)));
  EXPECT_TRUE(rule_matches(rules[2], key(ip(1, 2, 3, 4), ~0u, 1, 1, 17)));
  EXPECT_FALSE(rule_matches(rules[2], key(ip(1, 2, 3, 5), ip(128, 0, 0, 0), 1, 1, 17)));
  EXPECT_FALSE(rule_matches(rules[2], key(ip(1, 2, 3, 4), ip(127, 255, 255, 255), 1, 1, 17)));
}

TEST(RuleMatchesTest, FlagsAreParsedButNotMatched) {
  const auto rules =
      parse_rules_ok("@0.0.0.0/0 0.0.0.0/0 0 : 65535 0 : 65535 0x06/0xFF 0x1000/0x1000\n");
  ASSERT_EQ(rules.size(), 1u);
  ASSERT_TRUE(rules[0].has_flags);
  EXPECT_TRUE(rule_matches(rules[0], key(1, 2, 3, 4, 6)));
}

TEST(RuleMatchesTest, UnmaskedRuleFromCodeStillMatchesByPrefix) {
  // A rule built in code may keep host bits; matching compares only the prefix bits.
  ClassBenchRule r;
  r.src     = ip(10, 9, 9, 9);
  r.src_len = 8;
  r.dst     = ip(1, 2, 3, 4);
  r.dst_len = 0;
  EXPECT_TRUE(rule_matches(r, key(ip(10, 0, 0, 1), 0, 0, 0, 0)));
  EXPECT_FALSE(rule_matches(r, key(ip(11, 9, 9, 9), 0, 0, 0, 0)));
}

// ---- Trace parsing ------------------------------------------------------------------------

TEST(TraceTest, FiveColumns) {
  const auto trace = parse_trace_ok("1 2 3 4 5\n4294967295\t0\t65535\t0\t255\n");
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].key.src, 1u);
  EXPECT_EQ(trace[0].key.dst, 2u);
  EXPECT_EQ(trace[0].key.sport, 3);
  EXPECT_EQ(trace[0].key.dport, 4);
  EXPECT_EQ(trace[0].key.proto, 5);
  EXPECT_EQ(trace[0].first_match, -1);
  EXPECT_EQ(trace[0].gen_rule, -1);
  EXPECT_FALSE(trace[0].has_flags);
  EXPECT_EQ(trace[0].line, 1u);
  EXPECT_EQ(trace[1].key.src, 4294967295u);
  EXPECT_EQ(trace[1].key.sport, 65535);
  EXPECT_EQ(trace[1].key.proto, 255);
  EXPECT_EQ(trace[1].line, 2u);
  for (const TraceEntry& e : trace) {
    EXPECT_EQ(e.key.pad[0] | e.key.pad[1] | e.key.pad[2], 0);
  }
}

TEST(TraceTest, SixColumnsWustlMatchIsOneBased) {
  const auto trace =
      parse_trace_ok("1079733050 4225952233 0 65535 255 82\n1079732736 4149112596 0 65535 6 1\n");
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].key.src, 1079733050u);
  EXPECT_EQ(trace[0].key.dst, 4225952233u);
  EXPECT_EQ(trace[0].first_match, 81);
  EXPECT_EQ(trace[0].gen_rule, -1);
  EXPECT_FALSE(trace[0].has_flags);
  EXPECT_EQ(trace[1].first_match, 0);
}

TEST(TraceTest, SevenColumnsTraceGenerator) {
  const auto trace = parse_trace_ok(
      "1289415424\t117750809\t0\t21\t17\t0\t383\n"
      "1034886143\t2397668021\t65535\t382\t6\t4294967295\t0\t\n");
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].key.dport, 21);
  EXPECT_EQ(trace[0].key.proto, 17);
  EXPECT_TRUE(trace[0].has_flags);
  EXPECT_EQ(trace[0].flags, 0u);
  EXPECT_EQ(trace[0].gen_rule, 383);
  EXPECT_EQ(trace[0].first_match, -1);
  EXPECT_EQ(trace[1].flags, 4294967295u);
  EXPECT_EQ(trace[1].gen_rule, 0);
}

TEST(TraceTest, ExtraColumnsCrlfAndBlankLines) {
  const auto trace = parse_trace_ok("\r\n1 2 3 4 6 0 9 x y\r\n\n  \t\n5 6 7 8 17 3\r\n");
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace[0].line, 2u);
  EXPECT_EQ(trace[0].gen_rule, 9);
  EXPECT_TRUE(trace[0].has_flags);
  EXPECT_EQ(trace[1].line, 5u);
  EXPECT_EQ(trace[1].key.proto, 17);
  EXPECT_EQ(trace[1].first_match, 2);
}

TEST(TraceTest, EveryMalformedLineFailsTheWholeLoad) {
  const BadLine cases[] = {
      {"four columns", "1 2 3 4", "trace line has 4 columns, expected at least 5"},
      {"address > 32 bits", "4294967296 2 3 4 5",
       "source address 4294967296 out of range 0..4294967295"},
      {"port 65536", "1 2 3 65536 5", "destination port 65536 out of range 0..65535"},
      {"proto 256", "1 2 3 4 256", "protocol 256 out of range 0..255"},
      {"flags > 32 bits", "1 2 3 4 6 4294967296 0", "flags 4294967296 out of range 0..4294967295"},
      {"rule id > 32 bits", "1 2 3 4 6 0 99999999999999999999999",
       "rule id 99999999999999999999999 out of range"},
      {"match id 0", "1 2 3 4 6 0", "match id 0 is invalid"},
      {"negative", "1 -2 3 4 5", "destination address '-2' is not a decimal unsigned integer"},
      {"garbage", "hello world 1 2 3", "source address 'hello' is not a decimal unsigned integer"},
      {"hex", "0x10 2 3 4 5", "source address '0x10' is not a decimal unsigned integer"},
      {"rule line", "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF",
       "source address '@1.2.3.4/32' is not a decimal unsigned integer"},
  };
  for (const BadLine& c : cases) {
    SCOPED_TRACE(c.what);
    const std::string text = std::string("1 2 3 4 5 1\n\n") + c.line + "\n1 2 3 4 5 1\n";
    const auto trace       = parse_trace(text, "acl1_trace");
    ASSERT_FALSE(trace.is_ok());
    EXPECT_EQ(trace.status().code(), Errc::kParseError);
    EXPECT_EQ(trace.status().message().rfind("acl1_trace:3: ", 0), 0u) << trace.status().message();
    EXPECT_NE(trace.status().message().find(c.reason), std::string::npos)
        << trace.status().message();
  }
}

// ---- Formatting ---------------------------------------------------------------------------

TEST(FormatTest, WritesDbGeneratorDialect) {
  auto rules = parse_rules_ok(
      "@176.19.181.33/32 90.145.23.162/32 0 : 65535 1550 : 1550 0x06/0xff 0x0/0x200 5 6\n"
      "@10.1.2.3/8 0.0.0.0/0 1:2 3 : 4 0x00/0x00\n");
  ASSERT_EQ(rules.size(), 2u);
  EXPECT_EQ(format_classbench_rule(rules[0]),
            "@176.19.181.33/32\t90.145.23.162/32\t0 : 65535\t1550 : 1550\t0x06/0xFF\t"
            "0x0000/0x0200");
  EXPECT_EQ(format_classbench_rule(rules[1]), "@10.0.0.0/8\t0.0.0.0/0\t1 : 2\t3 : 4\t0x00/0x00");
  // Values are lower-case hex and the protocol mask upper case, as db_generator writes them.
  rules = parse_rules_ok("@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x2F/0xff 0xABCD/0xFFFF\n");
  ASSERT_EQ(rules.size(), 1u);
  EXPECT_EQ(format_classbench_rule(rules[0]),
            "@1.2.3.4/32\t5.6.7.8/32\t0 : 65535\t0 : 65535\t0x2f/0xFF\t0xabcd/0xffff");
}

TEST(FormatTest, FormatParseRoundTrip) {
  std::vector<ClassBenchRule> originals;
  ClassBenchRule a;
  a.src        = ip(192, 168, 0, 0);
  a.src_len    = 16;
  a.dst        = ip(255, 255, 255, 255);
  a.dst_len    = 32;
  a.sport_lo   = 0;
  a.sport_hi   = 0;
  a.dport_lo   = 65535;
  a.dport_hi   = 65535;
  a.proto      = 0xfe;
  a.proto_mask = 0xff;
  a.has_flags  = true;
  a.flags      = 0xabcd;
  a.flags_mask = 0xffff;
  originals.push_back(a);
  ClassBenchRule b;  // The default catch-all rule, without flags.
  originals.push_back(b);
  ClassBenchRule c = a;
  c.src            = ip(128, 0, 0, 0);
  c.src_len        = 1;
  c.has_flags      = false;
  c.flags          = 0;
  c.flags_mask     = 0;
  originals.push_back(c);

  std::string text;
  for (const ClassBenchRule& r : originals) text += format_classbench_rule(r) + "\n";
  const auto parsed = parse_rules_ok(text);
  ASSERT_EQ(parsed.size(), originals.size());
  for (size_t i = 0; i < parsed.size(); ++i) {
    SCOPED_TRACE(i);
    expect_same_rule(parsed[i], originals[i]);
    EXPECT_EQ(parsed[i].line, i + 1);
  }
}

// ---- Files --------------------------------------------------------------------------------

TEST(ReadTextFileTest, PlainGzipAndXzGoldenFilesAgree) {
  const auto plain = read_text_file(support::golden_path("io/mixed_dialects.rules"));
  ASSERT_TRUE(plain.is_ok()) << plain.status().to_string();
  EXPECT_EQ(lines_of(plain.value()).size(), 5u);
  for (const char* suffix : {".gz", ".xz"}) {
    SCOPED_TRACE(suffix);
    const auto packed =
        read_text_file(support::golden_path(std::string("io/mixed_dialects.rules") + suffix));
    ASSERT_TRUE(packed.is_ok()) << packed.status().to_string();
    EXPECT_EQ(packed.value(), plain.value());
  }
}

TEST(ReadTextFileTest, MissingFileOrDirectoryIsIoError) {
  const std::string dir = support::temp_dir();
  for (const char* name : {"/nope.txt", "/nope.gz", "/nope.xz"}) {
    const std::string path = dir + name;
    const auto text        = read_text_file(path);
    ASSERT_FALSE(text.is_ok());
    EXPECT_EQ(text.status().code(), Errc::kIoError);
    EXPECT_EQ(text.status().message(), path + ": cannot open: no such file");
  }
  const auto as_dir = read_text_file(dir);
  ASSERT_FALSE(as_dir.is_ok());
  EXPECT_EQ(as_dir.status().code(), Errc::kIoError);
  EXPECT_EQ(as_dir.status().message(), dir + ": cannot read: is a directory");
  const auto rules = load_classbench_rules(dir + "/nope");
  ASSERT_FALSE(rules.is_ok());
  EXPECT_EQ(rules.status().code(), Errc::kIoError);
  const auto trace = load_trace(dir + "/nope_trace");
  ASSERT_FALSE(trace.is_ok());
  EXPECT_EQ(trace.status().code(), Errc::kIoError);
  std::filesystem::remove_all(dir);
}

TEST(ReadTextFileTest, CorruptOrTruncatedCompressedDataIsIoError) {
  const std::string dir = support::temp_dir();
  const auto gz         = support::read_bytes(support::golden_path("io/mixed_dialects.rules.gz"));
  const auto xz         = support::read_bytes(support::golden_path("io/mixed_dialects.rules.xz"));
  ASSERT_GT(gz.size(), 40u);
  ASSERT_GT(xz.size(), 40u);

  struct Case {
    const char* name;
    std::vector<uint8_t> bytes;
    const char* reason;
  };
  std::vector<Case> cases;
  cases.push_back({"truncated.gz", {gz.begin(), gz.begin() + gz.size() / 2}, "truncated"});
  cases.push_back({"no_trailer.gz", {gz.begin(), gz.end() - 4}, "corrupt gzip data"});
  std::vector<uint8_t> flipped_gz = gz;
  flipped_gz[gz.size() - 6] ^= 0xff;  // In the CRC-32 trailer.
  cases.push_back({"bad_crc.gz", flipped_gz, "corrupt gzip data"});
  cases.push_back({"plain_text.gz", {'h', 'i', '\n'}, "not in gzip format"});
  cases.push_back({"truncated.xz", {xz.begin(), xz.begin() + xz.size() / 2}, "truncated"});
  cases.push_back({"no_footer.xz", {xz.begin(), xz.end() - 1}, "corrupt xz data"});
  std::vector<uint8_t> flipped_xz = xz;
  flipped_xz[xz.size() / 2] ^= 0xff;
  cases.push_back({"flipped.xz", flipped_xz, "corrupt xz data"});
  const std::string not_xz = "this is plain text, not xz data\n";
  cases.push_back({"plain_text.xz", {not_xz.begin(), not_xz.end()}, "not in xz format"});
  cases.push_back({"tiny.xz", {'h', 'i', '\n'}, "truncated"});
  cases.push_back({"empty.xz", {}, "corrupt xz data"});

  for (const Case& c : cases) {
    SCOPED_TRACE(c.name);
    const std::string path = dir + "/" + c.name;
    support::write_bytes(path, c.bytes);
    const auto text = read_text_file(path);
    ASSERT_FALSE(text.is_ok());
    EXPECT_EQ(text.status().code(), Errc::kIoError);
    EXPECT_EQ(text.status().message().rfind(path + ": ", 0), 0u) << text.status().message();
    EXPECT_NE(text.status().message().find(c.reason), std::string::npos) << text.status().message();
  }
  std::filesystem::remove_all(dir);
}

TEST(LoadTest, GoldenRulesAndTraceAgreeWithNaiveMatch) {
  for (const char* name :
       {"mixed_dialects.rules", "mixed_dialects.rules.gz", "mixed_dialects.rules.xz"}) {
    SCOPED_TRACE(name);
    const auto rules = load_classbench_rules(support::golden_path(std::string("io/") + name));
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    ASSERT_EQ(rules->size(), 4u);
    EXPECT_TRUE(rules.value()[0].has_flags);
    EXPECT_FALSE(rules.value()[1].has_flags);
    EXPECT_FALSE(rules.value()[2].has_flags);  // "17 42" are extra fields, not flags.
    EXPECT_EQ(rules.value()[2].line, 4u);
    EXPECT_EQ(rules.value()[2].dst, ip(10, 1, 0, 0));
    EXPECT_EQ(rules.value()[3].line, 5u);
  }
  const auto rules = load_classbench_rules(support::golden_path("io/mixed_dialects.rules"));
  const auto trace = load_trace(support::golden_path("io/mixed_dialects.trace"));
  ASSERT_TRUE(rules.is_ok());
  ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();
  ASSERT_EQ(trace->size(), 6u);
  for (const TraceEntry& e : trace.value()) {
    SCOPED_TRACE(e.line);
    ASSERT_GE(e.first_match, 0);
    EXPECT_EQ(naive_first_match(rules.value(), e.key), e.first_match);
  }
}

TEST(LoadTest, ParseErrorNamesThePath) {
  const std::string dir  = support::temp_dir();
  const std::string path = dir + "/bad_rules";
  const std::string text =
      "@1.2.3.4/32 5.6.7.8/32 0 : 65535 0 : 65535 0x06/0xFF\n"
      "@1.2.3.4/32 5.6.7.8/32 0 : 65535 90 : 80 0x06/0xFF\n";
  support::write_bytes(path, {text.begin(), text.end()});
  const auto rules = load_classbench_rules(path);
  ASSERT_FALSE(rules.is_ok());
  EXPECT_EQ(rules.status().code(), Errc::kParseError);
  EXPECT_EQ(rules.status().message(), path + ":2: destination port range 90 : 80 has lo > hi");
  const auto trace = load_trace(path);
  ASSERT_FALSE(trace.is_ok());
  EXPECT_EQ(trace.status().code(), Errc::kParseError);
  EXPECT_EQ(trace.status().message().rfind(path + ":1: ", 0), 0u);
  std::filesystem::remove_all(dir);
}

// ---- Shared data sets ---------------------------------------------------------------------

struct DataSet {
  const char* rules;
  size_t rule_count;
  const char* trace;  ///< nullptr when the set has no trace
  size_t trace_count;
};

std::string classbench(const std::string& relative) {
  return support::data_path("classbench/" + relative);
}

TEST(ClassBenchDataTest, WustlSetsLoadWithReadmeCounts) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  const DataSet sets[] = {
      {"acl1", 753, "acl1_trace", 8140},       {"acl1_100", 99, "acl1_100_trace", 1000},
      {"acl1_1K", 917, "acl1_1K_trace", 9380}, {"acl1_10K", 9603, "acl1_10K_trace", 97000},
      {"fw1", 270, "fw1_trace", 2830},         {"fw1_100", 93, "fw1_100_trace", 920},
      {"fw1_1K", 792, "fw1_1K_trace", 8050},   {"fw1_10K", 9311, "fw1_10K_trace", 93250},
      {"ipc1", 1550, "ipc1_trace", 17020},     {"ipc1_100", 100, "ipc1_100_trace", 990},
      {"ipc1_1K", 938, "ipc1_1K_trace", 9380}, {"ipc1_10K", 9037, "ipc1_10K_trace", 90640},
  };
  for (const DataSet& s : sets) {
    SCOPED_TRACE(s.rules);
    const auto rules = load_classbench_rules(classbench(std::string("wustl_5tuple/") + s.rules));
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    EXPECT_EQ(rules->size(), s.rule_count);
    // Every WUSTL set ends with the default rule, which matches everything.
    const ClassBenchRule& last = rules->back();
    EXPECT_EQ(last.src_len, 0);
    EXPECT_EQ(last.dst_len, 0);
    EXPECT_EQ(last.proto_mask, 0);
    EXPECT_FALSE(last.has_flags);
    const auto trace = load_trace(classbench(std::string("wustl_5tuple/") + s.trace));
    ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();
    EXPECT_EQ(trace->size(), s.trace_count);
    for (const TraceEntry& e : trace.value()) {
      ASSERT_GE(e.first_match, 0) << "line " << e.line;
      ASSERT_LT(e.first_match, static_cast<int64_t>(rules->size())) << "line " << e.line;
    }
  }
}

TEST(ClassBenchDataTest, WustlFirstMatchesEqualNaiveLinearSearch) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  for (const char* name :
       {"acl1_100", "fw1_100", "ipc1_100", "acl1_1K", "fw1_1K", "ipc1_1K", "fw1"}) {
    SCOPED_TRACE(name);
    const std::string base = std::string("wustl_5tuple/") + name;
    const auto rules       = load_classbench_rules(classbench(base));
    const auto trace       = load_trace(classbench(base + "_trace"));
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();
    size_t mismatches = 0;
    for (const TraceEntry& e : trace.value()) {
      if (naive_first_match(rules.value(), e.key) != e.first_match && ++mismatches <= 5) {
        ADD_FAILURE() << name << "_trace:" << e.line << ": naive first match "
                      << naive_first_match(rules.value(), e.key) << " != " << e.first_match;
      }
    }
    EXPECT_EQ(mismatches, 0u);
  }
}

TEST(ClassBenchDataTest, NeurocutsSetsLoadWithReadmeCounts) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  const DataSet sets[] = {
      {"acl1_1k", 942, nullptr, 0}, {"acl1_10k", 9774, nullptr, 0},
      {"acl2_1k", 961, nullptr, 0}, {"acl2_10k", 9476, nullptr, 0},
      {"acl3_1k", 990, nullptr, 0}, {"acl3_10k", 9419, nullptr, 0},
      {"acl4_1k", 990, nullptr, 0}, {"acl4_10k", 9591, nullptr, 0},
      {"acl5_1k", 933, nullptr, 0}, {"acl5_10k", 7298, nullptr, 0},
      {"fw1_1k", 857, nullptr, 0},  {"fw1_10k", 9379, nullptr, 0},
      {"fw2_1k", 971, nullptr, 0},  {"fw2_10k", 9655, nullptr, 0},
      {"fw3_1k", 799, nullptr, 0},  {"fw3_10k", 9037, nullptr, 0},
      {"fw4_1k", 847, nullptr, 0},  {"fw4_10k", 8775, nullptr, 0},
      {"fw5_1k", 864, nullptr, 0},  {"fw5_10k", 8833, nullptr, 0},
      {"ipc1_1k", 974, nullptr, 0}, {"ipc1_10k", 9518, nullptr, 0},
      {"ipc2_1k", 696, nullptr, 0}, {"ipc2_10k", 10000, nullptr, 0},
  };
  for (const DataSet& s : sets) {
    SCOPED_TRACE(s.rules);
    const auto rules =
        load_classbench_rules(classbench(std::string("db_generator/neurocuts/") + s.rules));
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    EXPECT_EQ(rules->size(), s.rule_count);
    for (const ClassBenchRule& r : rules.value()) ASSERT_TRUE(r.has_flags) << "line " << r.line;
  }
}

TEST(ClassBenchDataTest, CutsplitTraceGeneratorTraces) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  const DataSet sets[] = {
      {"acl_1k", 1016, "acl_1k_trace", 10160},
      {"fw_1k", 856, "fw_1k_trace", 14027},
      {"ipc_1k", 1007, "ipc_1k_trace", 10070},
      {"fw_10k", 9388, "fw_10k_trace", 93880},
  };
  for (const DataSet& s : sets) {
    SCOPED_TRACE(s.rules);
    const std::string base = std::string("db_generator/cutsplit/") + s.rules;
    const auto rules       = load_classbench_rules(classbench(base));
    const auto trace = load_trace(classbench(std::string("db_generator/cutsplit/") + s.trace));
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    ASSERT_TRUE(trace.is_ok()) << trace.status().to_string();
    EXPECT_EQ(rules->size(), s.rule_count);
    EXPECT_EQ(trace->size(), s.trace_count);
    const bool check_matches = s.rule_count < 2000;  // Keeps the naive search fast.
    for (const TraceEntry& e : trace.value()) {
      ASSERT_TRUE(e.has_flags);
      ASSERT_EQ(e.first_match, -1);
      ASSERT_GE(e.gen_rule, 0) << "line " << e.line;
      ASSERT_LT(e.gen_rule, static_cast<int64_t>(rules->size())) << "line " << e.line;
      if (!check_matches) continue;
      // The header lies in its generating rule, so the first match exists and is no later.
      EXPECT_TRUE(rule_matches(rules.value()[static_cast<size_t>(e.gen_rule)], e.key))
          << "line " << e.line;
      const int64_t first = naive_first_match(rules.value(), e.key);
      EXPECT_GE(first, 0) << "line " << e.line;
      EXPECT_LE(first, e.gen_rule) << "line " << e.line;
    }
  }
}

TEST(ClassBenchDataTest, FormatReproducesDbGeneratorLines) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  // Every db_generator-dialect file here: the cutsplit and neurocuts sets and the 100K sets.
  std::vector<std::string> names = {"generated_100k/acl1_100K.gz", "generated_100k/fw1_100K.gz",
                                    "generated_100k/ipc1_100K.gz"};
  for (const char* dir : {"db_generator/cutsplit", "db_generator/neurocuts"}) {
    std::error_code ec;
    for (const auto& entry : std::filesystem::directory_iterator(classbench(dir), ec)) {
      const std::string file = entry.path().filename().string();
      if (file.find("_trace") == std::string::npos) names.push_back(std::string(dir) + "/" + file);
    }
  }
  ASSERT_EQ(names.size(), 3u + 4u + 24u);
  for (const std::string& name : names) {
    SCOPED_TRACE(name);
    const auto text = read_text_file(classbench(name));
    ASSERT_TRUE(text.is_ok()) << text.status().to_string();
    const auto rules = parse_classbench_rules(text.value(), name);
    ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
    const std::vector<std::string> lines = lines_of(text.value());
    ASSERT_EQ(lines.size(), rules->size());
    std::string formatted;
    for (size_t i = 0; i < lines.size(); ++i) {
      // The generator writes a trailing TAB; the formatter does not.
      ASSERT_EQ(format_classbench_rule(rules.value()[i]) + "\t", lines[i]) << "line " << i + 1;
      formatted += format_classbench_rule(rules.value()[i]) + "\n";
    }
    const auto again = parse_classbench_rules(formatted, "formatted");
    ASSERT_TRUE(again.is_ok()) << again.status().to_string();
    ASSERT_EQ(again->size(), rules->size());
    for (size_t i = 0; i < rules->size(); ++i) expect_same_rule(again.value()[i], rules.value()[i]);
  }
}

TEST(ClassBenchDataTest, Gzip100KRuleSet) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  const auto rules = load_classbench_rules(classbench("generated_100k/acl1_100K.gz"));
  ASSERT_TRUE(rules.is_ok()) << rules.status().to_string();
  EXPECT_EQ(rules->size(), 99597u);
  EXPECT_EQ(format_classbench_rule(rules->front()),
            "@177.10.218.159/32\t54.152.150.237/32\t0 : 65535\t1526 : 1526\t0x06/0xFF\t"
            "0x0000/0x0200");
  for (const ClassBenchRule& r : rules.value()) {
    ASSERT_TRUE(r.has_flags) << "line " << r.line;
    ASSERT_TRUE(r.proto_mask == 0 || r.proto_mask == 0xff) << "line " << r.line;
  }
  EXPECT_EQ(rules->back().line, 99597u);
}

TEST(ClassBenchDataTest, XzRoutingTableReads) {
  if (!support::have_data()) GTEST_SKIP() << "no data directory at " << support::data_dir();
  const std::string path = support::data_path("routing/ipv4_linx_updates_2014-12-17.txt.xz");
  const auto text        = read_text_file(path);
  ASSERT_TRUE(text.is_ok()) << text.status().to_string();
  ASSERT_FALSE(text->empty());
  const std::vector<std::string> lines = lines_of(text.value());
  EXPECT_EQ(lines.size(), 23446u);  // One update per line, as the routing README counts.
  EXPECT_EQ(lines.front().rfind("1418774413 ", 0), 0u);
  EXPECT_EQ(text->back(), '\n');
}

}  // namespace
}  // namespace warpath::io
