// Suricata rules: the header (addresses, ports, variables), every supported keyword and its
// modifiers, syntax errors with their reason, rules outside the subset skipped by keyword, rule
// files (disabled lines, continuations, duplicate sids), classification, and the shared ET Open
// set as real input.
#include <gtest/gtest.h>

#include <arpa/inet.h>

#include <filesystem>

#include "support/test_support.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

Rule parse_ok(const std::string& text, const Vars& vars = {}) {
  auto r = parse_rule(text, vars, "t:1");
  EXPECT_TRUE(r.is_ok()) << text << ": " << r.status().message();
  return r.is_ok() ? *r : Rule{};
}

Status parse_status(const std::string& text) {
  auto r = parse_rule(text, Vars{}, "t:1");
  return r.is_ok() ? Status::ok() : r.status();
}

bool has4(const AddrSet& s, const char* a) {
  uint8_t b[16] = {};
  inet_pton(AF_INET, a, b);
  return s.contains(4, b);
}

TEST(NidsRule, ParsesAnEtOpenRule) {
  const Rule r = parse_ok(
      R"(alert tcp $EXTERNAL_NET any -> $HOME_NET 445 (msg:"ET EXPLOIT \"quoted\" thing"; )"
      R"(flow:established,to_server; content:"|ff|SMB"; depth:8; fast_pattern; content:"A\;B"; )"
      R"(distance:2; within:10; nocase; pcre:"/^x[0-9]+/Ri"; isdataat:!4,relative; )"
      R"(flowbits:set,smb.seen; reference:cve,2017-0144; classtype:attempted-admin; )"
      R"(metadata:created_at 2017_05_13; sid:2024217; rev:3;))");
  EXPECT_EQ(r.action, Action::kAlert);
  EXPECT_EQ(r.proto, Proto::kTcp);
  EXPECT_EQ(r.msg, "ET EXPLOIT \"quoted\" thing");
  EXPECT_EQ(r.sid, 2024217u);
  EXPECT_EQ(r.rev, 3u);
  EXPECT_EQ(r.classtype, "attempted-admin");
  EXPECT_TRUE(r.flow.established && r.flow.to_server);
  ASSERT_EQ(r.items.size(), 4u);
  EXPECT_EQ(r.items[0].content.bytes, std::string("\xffSMB"));
  EXPECT_TRUE(r.items[0].content.has_depth);
  EXPECT_EQ(r.items[0].content.depth, 8);
  EXPECT_TRUE(r.items[0].content.fast_pattern);
  EXPECT_EQ(r.items[1].content.bytes, "A;B");
  EXPECT_TRUE(r.items[1].content.nocase);
  EXPECT_EQ(r.items[1].content.distance, 2);
  EXPECT_EQ(r.items[1].content.within, 10);
  EXPECT_EQ(r.items[2].kind, Item::kPcre);
  EXPECT_EQ(r.items[2].pcre.regex, "^x[0-9]+");
  EXPECT_TRUE(r.items[2].pcre.relative && r.items[2].pcre.caseless);
  EXPECT_EQ(r.items[3].kind, Item::kIsDataAt);
  EXPECT_TRUE(r.items[3].isdataat.negated && r.items[3].isdataat.relative);
  ASSERT_EQ(r.flowbits.size(), 1u);
  EXPECT_EQ(r.flowbits[0].op, Flowbit::kSet);
  EXPECT_TRUE(has4(r.dst, "10.1.2.3"));
  EXPECT_FALSE(has4(r.src, "10.1.2.3"));  // EXTERNAL_NET is !HOME_NET
  EXPECT_TRUE(has4(r.src, "8.8.8.8"));
  EXPECT_TRUE(r.dport.contains(445));
  EXPECT_FALSE(r.dport.contains(446));
}

TEST(NidsRule, AddressesAndPorts) {
  Vars v;
  v.set("MINE", "[10.0.0.0/8,!10.1.0.0/16]");
  auto a = parse_addresses("[$MINE,192.0.2.1,2001:db8::/32]", v);
  ASSERT_TRUE(a.is_ok()) << a.status().message();
  EXPECT_TRUE(has4(*a, "10.2.0.1"));
  EXPECT_FALSE(has4(*a, "10.1.0.1"));
  EXPECT_TRUE(has4(*a, "192.0.2.1"));
  EXPECT_FALSE(has4(*a, "192.0.2.2"));
  uint8_t six[16];
  inet_pton(AF_INET6, "2001:db8::5", six);
  EXPECT_TRUE(a->contains(6, six));
  auto mask = parse_addresses("10.0.0.0/255.255.0.0", v);
  ASSERT_TRUE(mask.is_ok());
  EXPECT_TRUE(has4(*mask, "10.0.9.9"));
  EXPECT_FALSE(has4(*mask, "10.1.0.0"));
  // A home network with an exception, and the external network as its complement.
  v.set("HOME", "[10.0.0.0/8,!10.1.0.0/16]");
  auto ext = parse_addresses("!$HOME", v);
  ASSERT_TRUE(ext.is_ok());
  EXPECT_TRUE(has4(*ext, "10.1.2.3"));   // the exception is outside home
  EXPECT_FALSE(has4(*ext, "10.2.0.1"));
  EXPECT_TRUE(has4(*ext, "8.8.8.8"));
  auto both = parse_addresses("[$HOME,!10.2.0.0/16]", v);  // a list: its items less its negations
  ASSERT_TRUE(both.is_ok());
  EXPECT_TRUE(has4(*both, "10.3.0.1"));
  EXPECT_FALSE(has4(*both, "10.2.0.1"));
  EXPECT_FALSE(has4(*both, "10.1.0.1"));  // HOME's own exception holds inside the list
  EXPECT_FALSE(has4(*both, "8.8.8.8"));
  auto nports = parse_ports("![1:100,!80]", v);
  ASSERT_TRUE(nports.is_ok());
  EXPECT_TRUE(nports->contains(80));
  EXPECT_FALSE(nports->contains(81));
  EXPECT_TRUE(nports->contains(101));
  auto neg = parse_addresses("![1.2.3.4,5.6.7.0/24]", v);
  ASSERT_TRUE(neg.is_ok());
  EXPECT_TRUE(has4(*neg, "9.9.9.9"));
  EXPECT_FALSE(has4(*neg, "5.6.7.8"));

  auto p = parse_ports("[1:1024,!80,8080:,$HTTP_PORTS]", v);
  ASSERT_TRUE(p.is_ok()) << p.status().message();
  EXPECT_TRUE(p->contains(22));
  EXPECT_FALSE(p->contains(80));  // excluded wins over $HTTP_PORTS
  EXPECT_FALSE(p->contains(2000));
  EXPECT_TRUE(p->contains(65535));
  auto not80 = parse_ports("$SHELLCODE_PORTS", v);
  ASSERT_TRUE(not80.is_ok());
  EXPECT_TRUE(not80->contains(81));
  EXPECT_FALSE(not80->contains(80));

  for (const char* bad : {"!any", "[1.2.3.4", "300.1.1.1", "$NOPE", "1.2.3.4/33", "10.0.0.0/255.0.255.0"})
    EXPECT_FALSE(parse_addresses(bad, v).is_ok()) << bad;
  for (const char* bad : {"70000", "[80", "90:80", "x", ":"})
    EXPECT_FALSE(parse_ports(bad, v).is_ok()) << bad;
  v.set("LOOP", "$LOOP");  // a cycle ends with an error, not a hang
  EXPECT_FALSE(parse_addresses("$LOOP", v).is_ok());
}

TEST(NidsRule, KeywordsAndModifiers) {
  Rule r = parse_ok(R"(drop udp any any <> any 53 (content:!"abc"; offset:2; depth:5; dsize:10<>20; sid:1;))");
  EXPECT_EQ(r.action, Action::kDrop);
  EXPECT_TRUE(r.bidirectional);
  EXPECT_TRUE(r.items[0].content.negated);
  EXPECT_EQ(r.dsize.op, NumTest::kRange);
  EXPECT_TRUE(r.dsize.matches(15));
  EXPECT_FALSE(r.dsize.matches(20));
  r = parse_ok(R"(alert tcp any any -> any any (flags:S+,12; sid:2;))");
  EXPECT_TRUE(r.flags.matches(0x02));
  EXPECT_TRUE(r.flags.matches(0x12));
  EXPECT_FALSE(r.flags.matches(0x10));
  r = parse_ok(R"(alert icmp any any -> any any (itype:>7; icode:0; sid:3;))");
  EXPECT_TRUE(r.itype.matches(8));
  EXPECT_FALSE(r.itype.matches(7));
  r = parse_ok(R"(reject tcp any any -> any any (flowbits:isset,a|b; flowbits:noalert; content:"x"; startswith; sid:4;))");
  EXPECT_EQ(r.action, Action::kDrop);
  EXPECT_TRUE(r.noalert);
  EXPECT_TRUE(r.flowbits[0].any);
  EXPECT_EQ(r.flowbits[0].names.size(), 2u);
  EXPECT_TRUE(r.items[0].content.startswith);
  r = parse_ok("alert tcp any any -> any any (content:\"a|20 0d 0A|b\"; sid:5;)");
  EXPECT_EQ(r.items[0].content.bytes, "a \r\nb");
  r = parse_ok(R"(alert tcp any any -> any any (byte_test:4,!&,0x80,2,relative,little,bitmask 0xff00; )"
               R"(byte_jump:2,-1,string,hex,multiplier 4,align,post_offset 3; sid:7;))");
  ASSERT_EQ(r.items.size(), 2u);
  EXPECT_EQ(r.items[0].kind, Item::kByteTest);
  EXPECT_EQ(r.items[0].byte.op, '&');
  EXPECT_TRUE(r.items[0].byte.negated && r.items[0].byte.relative && r.items[0].byte.little);
  EXPECT_EQ(r.items[0].byte.value, 0x80u);
  EXPECT_EQ(r.items[0].byte.bitmask, 0xff00u);
  EXPECT_EQ(r.items[1].kind, Item::kByteJump);
  EXPECT_EQ(r.items[1].byte.offset, -1);
  EXPECT_EQ(r.items[1].byte.base, 16);
  EXPECT_EQ(r.items[1].byte.multiplier, 4u);
  EXPECT_TRUE(r.items[1].byte.align);
  EXPECT_EQ(r.items[1].byte.post_offset, 3);
  r = parse_ok("alert ip any any -> any 5060 (content:\"INVITE\"; threshold: type both, track by_src, count 100, seconds 60; sid:8;)");
  EXPECT_EQ(r.threshold.type, Threshold::kBoth);
  EXPECT_EQ(r.threshold.count, 100u);
  EXPECT_FALSE(r.dport.unrestricted());
  r = parse_ok("alert ip any any -> any any (detection_filter:track by_dst, count 5, seconds 10; sid:9;)");
  EXPECT_EQ(r.threshold.type, Threshold::kDetectionFilter);
  EXPECT_EQ(r.threshold.track, Threshold::kByDst);
  r = parse_ok("alert ip any any -> any any (sid:6;)");
  EXPECT_FALSE(r.has_payload());
}

TEST(NidsRule, SyntaxErrorsSayWhat) {
  struct Case {
    const char* rule;
    const char* says;
  } cases[] = {
      {"alert tcp any any -> any any (content:\"x\";)", "no sid"},
      {"alert tcp any any any -> any any (sid:1;)", "header has 8 fields"},
      {"alert tcp any any <- any any (sid:1;)", "'<-'"},
      {"bogus tcp any any -> any any (sid:1;)", "unknown action"},
      {"alert tcp any any -> any any (content:\"|4|\"; sid:1;)", "odd number of hex digits"},
      {"alert tcp any any -> any any (content:\"a\\x\"; sid:1;)", "invalid escape"},
      {"alert tcp any any -> any any (content:\"abcd\"; depth:2; sid:1;)", "depth 2 is shorter"},
      {"alert tcp any any -> any any (nocase; sid:1;)", "without a preceding content"},
      {"alert tcp any any -> any any (flow:sideways; sid:1;)", "unknown option 'sideways'"},
      {"alert tcp any any -> any any (content:\"a\"; offset:1; distance:2; sid:1;)", "offset/depth with distance/within"},
      {"alert tcp any any -> any any (pcre:\"/a/q\"; sid:1;)", "unknown flag 'q'"},
      {"alert tcp any any -> any any (sid:abc;)", "not a number"},
      {"alert icmp any 80 -> any any (sid:1;)", "ports with proto icmp"},
      {"alert tcp 1.2.3.4.5 any -> any any (sid:1;)", "not an address"},
      {"alert tcp any any -> any any (sid:1;) trailing", "after the closing"},
      {"alert tcp any any -> any any (byte_test:9,=,1,0; sid:1;)", "9 bytes (1..8 binary)"},
      {"alert tcp any any -> any any (byte_test:1,~,1,0; sid:1;)", "unknown operator"},
      {"alert tcp any any -> any any (byte_test:1,=,1; sid:1;)", "at least 4 values"},
      {"alert tcp any any -> any any (byte_jump:1,0,sideways; sid:1;)", "unknown option 'sideways'"},
      {"alert tcp any any -> any any (threshold:type limit, count 1, seconds 5; sid:1;)", "needs type, track, count and seconds"},
      {"alert tcp any any -> any any (threshold:type often, track by_src, count 1, seconds 5; sid:1;)", "unknown type 'often'"},
      // byte_extract's variables: set before use, once, in the buffer that reads them.
      {"alert tcp any any -> any any (byte_test:1,>,len,0; sid:1;)", "'len' is no byte_extract variable"},
      {"alert tcp any any -> any any (content:\"a\"; distance:var; sid:1;)", "'var' is no byte_extract variable"},
      {"alert tcp any any -> any any (content:\"a\"; depth:n; byte_extract:1,0,n; sid:1;)", "'n' is no byte_extract"},
      {"alert tcp any any -> any any (byte_extract:1,0,n; byte_extract:1,1,n; sid:1;)", "'n' set twice"},
      {"alert tcp any any -> any any (byte_extract:9,0,n; sid:1;)", "9 bytes (1..8 binary)"},
      {"alert tcp any any -> any any (byte_extract:21,0,n,string,dec; sid:1;)", "21 bytes (1..20 as a string)"},
      {"alert tcp any any -> any any (byte_extract:1,0,n,align 3; sid:1;)", "align takes 2 or 4"},
      {"alert tcp any any -> any any (byte_extract:1,0,n,hex; sid:1;)", "without string"},
      {"alert tcp any any -> any any (byte_extract:1,0,1n; sid:1;)", "bad variable name"},
      {"alert tcp any any -> any any (byte_extract:1,0; sid:1;)", "at least 3 values"},
      {"alert tcp any any -> any any (stream_size:server,<; sid:1;)", "SIDE,OPERATOR,NUMBER"},
      {"alert tcp any any -> any any (content:\"AB\"; byte_extract:1,0,n; depth:n; sid:1;)", "read before the byte_extract"},
      {"alert tcp any any -> any any (stream_size:middle,<,5; sid:1;)", "unknown side 'middle'"},
      {"alert tcp any any -> any any (stream_size:server,<>,5; sid:1;)", "unknown operator '<>'"},
      {"alert ip any any -> any any (ip_proto:tcpx; sid:1;)", "unknown protocol 'tcpx'"},
      {"alert ip any any -> any any (ip_proto:256; sid:1;)", "out of range"},
      {"alert tls any any -> any any (tls.version:2.0; sid:1;)", "tls.version: '2.0'"},
      {"alert tcp any any -> any any (xbits:set,a; sid:1;)", "xbits: expected"},
      {"alert tcp any any -> any any (flowint:n,*,2; sid:1;)", "unknown modifier '*'"},
      {"alert tcp any any -> any any (base64_data; content:\"a\"; sid:1;)", "without a base64_decode"},
      {"alert tcp any any -> any any (base64_decode:bytes x; sid:1;)", "not a number"},
      {"alert tcp any any -> any any (base64_decode:size 4; sid:1;)", "unknown option 'size 4'"},
      {"alert tcp any any -> any any (base64_decode; base64_data; base64_decode; sid:1;)", "after base64_data"},
      {"alert http any any -> any any (base64_decode; base64_data; http.uri; content:\"x\"; sid:1;)", "http.uri after base64_data"},
      {"alert http any any -> any any (content:\"a\"; base64_decode:relative; base64_data; pcre:\"/x/U\"; sid:1;)", "names another buffer"},
      {"alert http any any -> any any (base64_decode; base64_data; content:\"x\"; http_uri; sid:1;)", "names another buffer"},
      {"alert http any any -> any any (http.uri; base64_decode; base64_data; dotprefix; content:\"x\"; sid:1;)", "dotprefix after base64_data"},
      {"alert tcp any any -> any any (flowint:n,+; sid:1;)", "a value is needed"},
      {"alert tcp any any -> any any (flowint:n,isset,1; sid:1;)", "take no value"},
      {"alert tcp any any -> any any (flowint:1n,=,1; sid:1;)", "bad name"},
      {"alert tcp any any -> any any (xbits:set,a,track flow; sid:1;)", "unknown track 'flow'"},
      {"alert tcp any any -> any any (xbits:set,a,expire 5,expire 6; sid:1;)", "no track"},
      {"alert tcp any any -> any any (xbits:flip,a,track ip_src; sid:1;)", "unknown command 'flip'"},
      {"alert tcp any any -> any any (xbits:set,a,track ip_src,expire 0; sid:1;)", "out of range"},
      {"alert http any any -> any any (tls.version:1.2; sid:1;)", "tls.version in an http rule"},
      {"alert udp any any -> any any (tls.version:1.2; sid:1;)", "tls.version in a rule for udp"},
      {"alert http any any -> any any (byte_extract:1,0,n; http.uri; content:\"a\"; offset:n; sid:1;)",
       "'n' read in another buffer"},
  };
  for (const Case& c : cases) {
    Status s = parse_status(c.rule);
    EXPECT_EQ(s.code(), Errc::kParseError) << c.rule << ": " << s.message();
    EXPECT_NE(s.message().find(c.says), std::string::npos) << c.rule << ": " << s.message();
  }
}

TEST(NidsRule, OutsideTheSubsetIsSkippedByKeyword) {
  struct Case {
    const char* rule;
    const char* key;
  } cases[] = {
      {"alert dcerpc any any -> any any (content:\"x\"; sid:1;)", "app-layer proto dcerpc"},
      {"alert smtp any any -> any any (file_data; content:\"x\"; sid:1;)", "app-layer proto smtp buffers"},
      {"alert tcp any any -> any any (smb.named_pipe; content:\"x\"; sid:1;)", "smb.named_pipe"},
      {"alert tcp any any -> any any (byte_extract:1,0,len,dce; sid:1;)", "byte_extract"},
      {"alert tcp any any -> any any (byte_jump:4,0,relative,dce; sid:1;)", "byte_jump"},
      {"alert tcp any any -> any any (content:\"a\"; threshold:type limit,track by_flow,count 1,seconds 60; sid:1;)", "threshold"},
      {"alert tcp any any -> any any (content:\"a\"; asn1:oversize_length 10; sid:1;)", "asn1"},
  };
  for (const Case& c : cases) {
    Status s = parse_status(c.rule);
    EXPECT_EQ(s.code(), Errc::kNotSupported) << c.rule << ": " << s.message();
    EXPECT_EQ(reason_key({"t:1", 1, s.message(), false}), c.key) << s.message();
  }
  // A syntax error later in a rule outside the subset still counts as a syntax error.
  EXPECT_EQ(parse_status("alert tcp any any -> any any (http.uri; content:\"|zz|\"; sid:1;)").code(),
            Errc::kParseError);
}

TEST(NidsRule, RuleFiles) {
  RuleSet set;
  add_rules_text(set,
                 "# a comment\n"
                 "alert tcp any any -> any any (msg:\"one\"; sid:1;)\n"
                 "# alert tcp any any -> any any (msg:\"disabled\"; sid:2;)\n"
                 "alert tcp any any -> any any (msg:\"two lines\"; \\\n"
                 "   content:\"x\"; sid:3;)\n"
                 "alert tcp any any -> any any (msg:\"dup\"; sid:1;)\n"
                 "alert tcp any any -> any any (msg:\"app\"; smb.share; sid:4;)\n"
                 "alert tcp any any -> any (sid:5;)\n",
                 "f.rules", Vars{});
  ASSERT_EQ(set.files.size(), 1u);
  const FileReport& f = set.files[0];
  EXPECT_EQ(f.rules, 5u);
  EXPECT_EQ(f.disabled, 1u);
  EXPECT_EQ(f.loaded, 2u);
  ASSERT_EQ(set.rules.size(), 2u);
  EXPECT_EQ(set.rules[1].sid, 3u);
  EXPECT_EQ(set.rules[1].where, "f.rules:4");
  ASSERT_EQ(f.problems.size(), 3u);
  EXPECT_EQ(f.problems[0].where, "f.rules:6");
  EXPECT_NE(f.problems[0].reason.find("duplicate sid 1"), std::string::npos);
  EXPECT_FALSE(f.problems[1].syntax);
  EXPECT_EQ(f.problems[1].sid, 4u);
  EXPECT_TRUE(f.problems[2].syntax);
  EXPECT_EQ(set.syntax_errors(), 2u);
  EXPECT_EQ(set.skipped(), 1u);
}

TEST(NidsRule, ClassificationAndActionOrder) {
  const Classification& c = default_classification();
  ASSERT_TRUE(c.count("bad-unknown"));
  EXPECT_EQ(c.at("bad-unknown").priority, 2);
  EXPECT_EQ(c.at("trojan-activity").description, "A Network Trojan was detected");
  auto parsed = parse_classification("config classification: x,Thing X,4\n", "c");
  ASSERT_TRUE(parsed.is_ok());
  EXPECT_EQ(parsed->at("x").priority, 4);
  EXPECT_FALSE(parse_classification("config classification: x,Thing\n", "c").is_ok());
  auto order = parse_action_order("drop,pass,reject,alert");
  ASSERT_TRUE(order.is_ok());
  EXPECT_EQ(*order, (std::vector<Action>{Action::kDrop, Action::kPass, Action::kAlert}));
  EXPECT_FALSE(parse_action_order("drop,alert").is_ok());
  EXPECT_FALSE(parse_action_order("drop,pass,alert,log").is_ok());
}

// The shared ET Open set: every enabled rule either loads or is skipped for a keyword outside
// the subset; none is a syntax error (the parser reads real rules as Suricata does).
TEST(NidsRule, EtOpenLoadsWithoutSyntaxErrors) {
  const std::string dir = testing::data_path("patterns/et-open/rules");
  if (!std::filesystem::is_directory(dir)) GTEST_SKIP() << dir << " not found";
  auto set = load_rules({dir}, Vars{});
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  EXPECT_EQ(set->syntax_errors(), 0u);
  uint32_t rules = 0;
  for (const FileReport& f : set->files) rules += f.rules;
  EXPECT_EQ(rules, 7124u);  // the enabled rules the data's README counts
  EXPECT_GT(set->rules.size(), 1000u);
}

}  // namespace
}  // namespace warpath::nids
