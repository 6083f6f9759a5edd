// Detection: the payload semantics of content and its modifiers, pcre, isdataat, backtracking,
// stream chunks (lookback, matches alerting once, anchors), flowbits, pass and the action
// order, IP-only rules, headers and flow options; every engine, and the engines against
// ref.nids on generated rules at several sizes.
#include "warpath/nids/detect.hpp"

#include <arpa/inet.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <random>

#include "nids/cpu/port_groups.hpp"
#include "nids/cpu/rule_groups.hpp"
#include "nids/detector_base.hpp"
#include "support/test_support.hpp"

namespace warpath::nids {
namespace {

const std::vector<std::string>& engines() {
  static const std::vector<std::string> ids = {"ref.nids", "cpu.nids", "validate:cpu.nids",
                                               "block:cpu.ac", "validate:block:cpu.ac"};
  return ids;
}

// An engine by id; "block:<pattern engine>" is cuda.nids's detector over that engine's block
// scans (cuda.ac on a GPU; cpu.ac here runs the same detector without one).
Result<std::unique_ptr<Detector>> make_engine(const std::string& engine,
                                              std::shared_ptr<const DetectImage> image) {
  const bool validate = engine.rfind("validate:block:", 0) == 0;
  if (!validate && engine.rfind("block:", 0) != 0) return make_detector(engine, std::move(image));
  const std::string pattern_engine = engine.substr(engine.rfind(':') + 1);
  auto d                           = detail::make_block_detector(image, engine, pattern_engine);
  if (!validate || !d.is_ok()) return d;
  return detail::validated_detector(std::move(*d), std::move(image));
}

struct Harness {
  std::shared_ptr<const DetectImage> image;
  std::unique_ptr<Detector> det;
  uint8_t a[4] = {10, 0, 0, 1}, b[4] = {192, 0, 2, 9};

  Harness(const std::string& engine, const std::string& rules, const std::string& order = "") {
    RuleSet set;
    add_rules_text(set, rules, "t", Vars{});
    for (const FileReport& f : set.files)
      for (const RuleProblem& p : f.problems) ADD_FAILURE() << p.where << ": " << p.reason;
    if (!order.empty()) {
      auto o = parse_action_order(order);
      EXPECT_TRUE(o.is_ok());
      set.action_order = *o;
    }
    auto img = compile_rules(set);
    EXPECT_TRUE(img.is_ok()) << img.status().message();
    image = *img;
    auto d = make_engine(engine, image);
    EXPECT_TRUE(d.is_ok()) << d.status().message();
    det = std::move(*d);
  }
  Unit packet(const std::string& payload, uint8_t proto = 6) {
    Unit u;
    u.pkt.proto = proto;
    u.pkt.src = a, u.pkt.dst = b;
    u.pkt.sport = 40000, u.pkt.dport = 80;
    u.pkt.dsize = uint32_t(payload.size());
    keep_ = payload;
    u.data = reinterpret_cast<const uint8_t*>(keep_.data());
    u.len  = uint32_t(keep_.size());
    return u;
  }
  // The sids that match, in evaluation order.
  std::vector<uint32_t> sids(const Unit& u) {
    std::vector<Hit> hits;
    Status s = det->inspect(u, hits);
    EXPECT_TRUE(s.is_ok()) << s.message();
    std::vector<uint32_t> out;
    for (const Hit& h : hits) out.push_back(image->rules()[h.rule].sid);
    return out;
  }
  std::vector<uint32_t> sids(const std::string& payload) { return sids(packet(payload)); }
  // A stream chunk of `flow`: `more` appended to `buffer` (the inspector's: what came before,
  // then the new bytes), whose sids are returned.
  std::vector<uint32_t> chunk(std::string& buffer, const std::string& more, uint64_t flow,
                              bool at_start = false) {
    Unit u            = packet("");
    u.buffer          = Buffer::kStream;
    u.flow            = flow;
    u.at_stream_start = at_start;
    u.new_from        = uint32_t(buffer.size());
    buffer += more;
    u.data = reinterpret_cast<const uint8_t*>(buffer.data());
    u.len  = uint32_t(buffer.size());
    return sids(u);
  }

 private:
  std::string keep_;
};

using Sids = std::vector<uint32_t>;

// One rule against payloads: whether it matches each.
struct PayloadCase {
  const char* options;
  const char* payload;
  bool match;
};

TEST(NidsDetect, PayloadSemantics) {
  const PayloadCase cases[] = {
      {R"(content:"abc";)", "xxabcxx", true},
      {R"(content:"abc";)", "xxABCxx", false},
      {R"(content:"abc"; nocase;)", "xxABCxx", true},
      {R"(content:"abc"; offset:2;)", "xxabc", true},
      {R"(content:"abc"; offset:3;)", "xxabc", false},
      {R"(content:"abc"; depth:4;)", "xabcx", true},
      {R"(content:"abc"; depth:4;)", "xxabc", false},
      {R"(content:"abc"; offset:1; depth:3;)", "xabc", true},
      {R"(content:"ab"; content:"cd"; distance:0;)", "abcd", true},
      {R"(content:"ab"; content:"cd"; distance:1;)", "abcd", false},
      {R"(content:"ab"; content:"cd"; distance:1;)", "abxcd", true},
      {R"(content:"ab"; content:"cd"; within:2;)", "abcd", true},
      {R"(content:"ab"; content:"cd"; within:2;)", "abxcd", false},
      {R"(content:"ab"; content:"cd"; distance:1; within:2;)", "abxcd", true},
      {R"(content:"ab"; content:"cd"; distance:1; within:2;)", "abxxcd", false},
      {R"(content:"cd"; content:"ab"; distance:-4; within:2;)", "abcd", true},
      {R"(content:"ab"; content:"cd"; distance:0; within:2;)", "ab ab cd", false},
      // backtracking: the first "a" fails, the second one's neighbour matches
      {R"(content:"a"; content:"b"; distance:0; within:1;)", "a a ab", true},
      {R"(content:"abc"; content:!"xyz";)", "abc", true},
      {R"(content:"abc"; content:!"xyz";)", "abc xyz", false},
      {R"(content:"abc"; content:!"xyz"; distance:0; within:4;)", "abc     xyz", true},
      {R"(content:"abc"; startswith;)", "abcx", true},
      {R"(content:"abc"; startswith;)", "xabc", false},
      {R"(content:"abc"; endswith;)", "xabc", true},
      {R"(content:"abc"; endswith;)", "abcx", false},
      {R"(pcre:"/a[0-9]+b/";)", "xa123b", true},
      {R"(pcre:"/a[0-9]+b/";)", "xab", false},
      {R"(pcre:"/^abc/";)", "xabc", false},
      {R"(content:"x"; pcre:"/^abc/R";)", "xabc", true},
      {R"(content:"x"; pcre:"/^abc/R";)", "x abc", false},
      {R"(pcre:!"/evil/i";)", "good", true},
      {R"(pcre:!"/evil/i";)", "EVIL", false},
      {R"(pcre:"/(a)\1/";)", "xaa", true},  // a back-reference: PCRE2 takes it
      {R"(isdataat:3;)", "abcd", true},
      {R"(isdataat:4;)", "abcd", false},
      {R"(isdataat:!4;)", "abcd", true},
      {R"(content:"ab"; isdataat:2,relative;)", "abcd", true},
      {R"(content:"ab"; isdataat:3,relative;)", "abcd", false},
      {R"(content:"ab"; isdataat:!1,relative;)", "ab", true},
      {R"(byte_test:1,>,0x40,0;)", "A", true},
      {R"(byte_test:1,>,0x41,0;)", "A", false},
      {R"(byte_test:2,=,0x4142,0;)", "AB", true},
      {R"(byte_test:2,=,0x4241,0,little;)", "AB", true},
      {R"(byte_test:2,=,0x4142,1;)", "AB", false},  // not all in the buffer
      {R"(byte_test:3,=,123,0,string,dec;)", "123x", true},
      {R"(byte_test:3,=,123,0,string,dec;)", "12ax", false},
      {R"(byte_test:2,=,255,0,string,hex;)", "ffx", true},
      {R"(byte_test:1,&,0x01,0;)", "A", true},
      {R"(byte_test:1,!=,0x41,0;)", "A", false},
      {R"(byte_test:1,=,5,0,bitmask 0xf0;)", "O", false},
      {R"(byte_test:1,=,4,0,bitmask 0xf0;)", "O", true},  // 0x4f
      {R"(content:"x"; byte_test:1,=,0x41,0,relative;)", "xA", true},
      {R"(byte_jump:1,0; content:"Z"; within:1;)", "\x02xyZ", true},  // 1 + 2: Z at 3
      {R"(byte_jump:1,0; content:"Z"; within:1;)", "\x02yZ", false},
      {R"(byte_jump:1,0,multiplier 2; content:"Z"; within:1;)", "\x01yzZ", true},
      {R"(byte_jump:1,0,from_beginning; content:"Z"; within:1;)", "\x02yZ", true},
      {R"(byte_jump:2,0,string,dec,post_offset -2; content:"Z"; within:1;)", "03aZ", true},
      {R"(byte_jump:1,0;)", "\x09" "ab", false},  // past the end
      // byte_extract: a variable for later items, the cursor after the bytes read.
      {R"(byte_extract:1,0,n; content:"Z"; offset:n; depth:1;)", "\x02xZ", true},
      {R"(byte_extract:1,0,n; content:"Z"; offset:n; depth:1;)", "\x01xZ", false},
      {R"(byte_extract:1,0,n,string; content:"ab"; distance:n; within:2;)", "2xxab", true},
      {R"(byte_extract:1,0,n,string; content:"ab"; distance:n; within:2;)", "2xab", false},
      {R"(byte_extract:1,0,n,string,dec; isdataat:n;)", "3xx", false},  // n = 3: no byte 3
      {R"(byte_extract:1,0,n,string,dec; isdataat:n;)", "3xxy", true},
      {R"(byte_extract:2,0,n,little; byte_test:2,=,n,2;)", "\x01\x02\x02\x01", true},
      {R"(byte_extract:2,0,n; byte_test:2,=,n,2;)", "\x01\x02\x02\x01", false},
      {R"(byte_extract:1,0,n,multiplier 2; isdataat:n;)", "\x02" "abcd", true},  // n = 4
      {R"(byte_extract:1,0,n,multiplier 2; isdataat:n;)", "\x03" "abcde", false},  // n = 6
      {R"(byte_extract:1,0,n,align 4; byte_test:1,=,n,4;)", "\x01" "abc\x04", true},  // 1 -> 4
      {R"(byte_extract:1,0,n,align 4; byte_test:1,=,n,4;)", "\x01" "abc\x01", false},
      {R"(byte_extract:1,1,v; byte_test:1,=,v,0;)", "\x07\x07", true},
      {R"(byte_extract:1,0,n; byte_jump:n,0,relative; content:"Z"; within:1;)", "\x01\x02xyZ", true},
      {R"(byte_extract:1,0,n; byte_jump:n,0,relative; content:"Z"; within:1;)", "\x01\x03xyZ", false},
      {R"(byte_extract:1,0,n,string; byte_jump:n,0,relative; isdataat:1,relative;)", "0x", true},  // 0 bytes
      {R"(byte_extract:1,0,off; byte_test:1,=,0x5a,off;)", "\x02xZ", true},
      {R"(byte_extract:1,0,n; content:"Z"; offset:n; depth:1;)", "\xff" "Z", false},  // past the end
      // base64_decode / base64_data: items after base64_data look at the decoded bytes.
      {R"(base64_decode; base64_data; content:"Hello";)", "SGVsbG8gV29ybGQ=", true},
      {R"(base64_decode; base64_data; content:"World"; endswith;)", "SGVsbG8gV29ybGQ", true},  // partial group
      {R"(base64_decode:offset 8; base64_data; content:"World";)", "aaaaaaaaSGVsbG8gV29ybGQ=", true},
      {R"(base64_decode:offset 24; base64_data; content:"World";)", "aaaaaaaaSGVsbG8gV29ybGQ=", false},
      {R"(content:"aaaa"; base64_decode:relative; base64_data; content:"Hello"; startswith;)", "xaaaaSGVsbG8=", true},
      {R"(content:"aaaa"; base64_decode:relative,offset 1; base64_data; content:"Hello";)", "xaaaaSGVsbG8=", false},
      {R"(base64_decode:bytes 4; base64_data; content:"Hello";)", "SGVsbG8=", false},  // "Hel" only
      {R"(base64_decode; base64_data; content:"World";)", "SGVsbG8g V29ybGQ=", false},  // a space ends it
      {R"(base64_decode; base64_data; content:!"World";)", "SGVsbG8g", true},
      {R"(base64_decode; content:"bG8";)", "SGVsbG8=", false},  // no base64_data: no match (Suricata)
      // Suricata 7's decoding (RFC 4648, not strict): decoding goes on after '=' ("Hi" "Hi"); a
      // character outside the alphabet ends it, the group it cut giving what it has (1 byte
      // for 1 or 2 characters, 2 for 3).
      {R"(base64_decode; base64_data; content:"HiHi"; startswith; endswith;)", "SGk=SGk=", true},
      {R"(base64_decode; base64_data; content:"Hello W"; startswith; endswith;)", "SGVsbG8gV2 x", true},
      {R"(base64_decode; base64_data; content:"fooba"; startswith; endswith;)", "Zm9vYmE!", true},
      {R"(base64_decode; base64_data; content:"f"; startswith; endswith;)", "Zm 9v", true},
      {R"(base64_decode; base64_data; bsize:<3; content:"a";)", "YWJjZGVm", false},  // bsize: decoded
      {R"(base64_decode; base64_data; bsize:6; content:"a";)", "YWJjZGVm", true},
      {R"(base64_decode; base64_data; content:"x";)", "!!!!", false},  // nothing decoded
      // Backtracking re-extracts: the first L's length overshoots, the second's fits.
      {R"(content:"L"; byte_extract:1,0,n,relative; content:"Z"; distance:n; within:1;)",
       "L\x09" "abL\x01xZ", true},
      {R"(content:"L"; byte_extract:1,0,n,relative; content:"Z"; distance:n; within:1;)",
       "L\x09" "abL\x02xZ", false},
  };
  for (const std::string& engine : engines()) {
    for (const PayloadCase& c : cases) {
      Harness h(engine, std::string("alert tcp any any -> any any (") + c.options + " sid:1;)\n");
      EXPECT_EQ(!h.sids(c.payload).empty(), c.match) << engine << ": " << c.options << " on \"" << c.payload << "\"";
    }
    Harness h(engine, "alert tcp any any -> any any (content:\"|00 ff|A\"; sid:1;)\n");
    EXPECT_EQ(h.sids(std::string("x\0\xff" "A", 4)), Sids{1});
  }
}

// A rule whose only content is in base64_data looks at streams too: its match counts in the
// chunk whose new bytes the encoded text reaches, once.
TEST(NidsDetect, Base64OnStreams) {
  for (const std::string& engine : engines()) {
    Harness h(engine, "alert tcp any any -> any any (base64_decode; base64_data; content:\"Hello\"; sid:1;)\n");
    EXPECT_EQ(h.image->kind(0), RuleKind::kPacketStream) << engine;
    std::string stream;
    // Absolute positions count from the chunk, or from the stream's start while the buffer
    // holds it (at_start), as for contents.
    EXPECT_EQ(h.chunk(stream, "SGVs", 9, true), Sids{}) << engine;
    EXPECT_EQ(h.chunk(stream, "bG8", 9, true), Sids{1}) << engine;
    EXPECT_EQ(h.chunk(stream, "=", 9, true), Sids{}) << engine;  // the text grew: no second alert
    EXPECT_EQ(h.chunk(stream, " more", 9, true), Sids{}) << engine;  // the text ended before these
    h.det->end_flow(9);
  }
}

// Stream chunks: content split across deliveries matches (lookback), an occurrence alerts
// once, and absolute positions count from the chunk.
TEST(NidsDetect, StreamChunks) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp any any -> any any (content:\"EVIL\"; sid:1;)\n"
              "alert tcp any any -> any any (content:\"GET\"; depth:3; sid:2;)\n");
    std::string stream;
    auto chunk = [&](const std::string& more) { return h.chunk(stream, more, 7); };
    EXPECT_EQ(chunk("GET /EV"), Sids{2}) << engine;
    EXPECT_EQ(chunk("IL x"), Sids{1}) << engine;       // spans the two chunks
    EXPECT_EQ(chunk(" more"), Sids{}) << engine;       // EVIL was reported already
    EXPECT_EQ(chunk("GET EVIL"), (Sids{1, 2})) << engine;  // depth counts from this chunk
    h.det->end_flow(7);
  }
  // While the buffer holds the stream's start, anchored contents may count from it: a request
  // split over segments still matches "GET " at depth 4.
  for (const std::string& engine : engines()) {
    Harness h(engine, "alert tcp any any -> any any (content:\"GET \"; depth:4; content:\"passwd\"; distance:0; sid:1;)\n");
    std::string stream;
    auto chunk = [&](const std::string& more, bool at_start) {
      return h.chunk(stream, more, 9, at_start);
    };
    EXPECT_EQ(chunk("GET /etc/pa", true), Sids{}) << engine;
    EXPECT_EQ(chunk("sswd", true), Sids{1}) << engine;
    stream.clear();
    EXPECT_EQ(chunk("GET /etc/pa", false), Sids{}) << engine;
    EXPECT_EQ(chunk("sswd", false), Sids{}) << engine;  // the lookback is not the stream's start
  }
}

// Armed rules last as long as their fast pattern's occurrence is in the buffer: past
// ArmedRules::kMax armed, every rule of the group is a candidate only until the chunk that armed
// them leaves the 4 KiB lookback (before, every later chunk of the direction evaluated every
// rule: a chunk of 65 fast patterns made a stream cost its whole rule set per segment). The
// same alerts either way: a rule still matches while its pattern is in the buffer, and cannot
// after.
TEST(NidsDetect, ArmedRulesLeaveWithTheLookback) {
  std::string rules;
  for (int n = 0; n < 100; ++n)
    rules += "alert tcp any any -> any any (content:\"KEY" + std::to_string(1000 + n) +
             "X\"; content:\"E" + std::to_string(1000 + n) +
             "\"; distance:0; sid:" + std::to_string(1000 + n) + ";)\n";
  std::string keys;
  for (int n = 0; n < 100; ++n) keys += "KEY" + std::to_string(1000 + n) + "X ";
  for (const std::string& engine : engines()) {
    if (engine == "ref.nids" || engine.rfind("validate:", 0) == 0) continue;  // no prefilter
    Harness h(engine, rules);
    std::string held;  // the inspector's buffer: the last 4 KiB, then the chunk
    auto chunk = [&](const std::string& more) {
      if (held.size() > kStreamLookback) held.erase(0, held.size() - kStreamLookback);
      return h.chunk(held, more, 5);
    };
    EXPECT_EQ(chunk(keys), Sids{}) << engine;  // 100 rules armed: past kMax, the whole group
    const uint64_t before = h.det->counters().candidates;
    EXPECT_EQ(chunk(std::string(100, '.') + "E1099"), (Sids{1099})) << engine;  // in the lookback
    EXPECT_GE(h.det->counters().candidates - before, 100u) << engine;
    for (int k = 0; k < 45; ++k) chunk(std::string(100, '.'));  // the keys leave the lookback
    const uint64_t after = h.det->counters().candidates;
    EXPECT_EQ(chunk(std::string(100, '.') + "E1098"), Sids{}) << engine;
    EXPECT_EQ(h.det->counters().candidates, after) << engine;  // nothing armed any more
    EXPECT_EQ(chunk("KEY1042X E1042"), Sids{1042}) << engine;  // armed again by a new one
    h.det->end_flow(5);
  }
}

TEST(NidsDetect, FlowbitsAcrossPacketsAndFlows) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp any any -> any any (content:\"login\"; flowbits:set,auth; flowbits:noalert; sid:1;)\n"
              "alert tcp any any -> any any (content:\"secret\"; flowbits:isset,auth; sid:2;)\n"
              "alert tcp any any -> any any (content:\"secret\"; flowbits:isnotset,auth; sid:3;)\n"
              "alert tcp any any -> any any (content:\"logout\"; flowbits:unset,auth; sid:4;)\n");
    auto on = [&](uint64_t flow, const std::string& p) {
      Unit u = h.packet(p);
      u.flow = flow;
      return h.sids(u);
    };
    EXPECT_EQ(on(1, "secret"), Sids{3}) << engine;
    EXPECT_EQ(on(1, "login"), Sids{1}) << engine;  // noalert rules match; the caller does not log them
    EXPECT_EQ(on(1, "secret"), Sids{2}) << engine;
    EXPECT_EQ(on(2, "secret"), Sids{3}) << engine;  // bits are per flow
    EXPECT_EQ(on(1, "logout"), Sids{4}) << engine;
    EXPECT_EQ(on(1, "secret"), Sids{3}) << engine;
    EXPECT_EQ(on(1, "login secret"), (Sids{1, 2})) << engine;  // setters run first
    h.det->end_flow(1);
    EXPECT_EQ(on(1, "secret"), Sids{3}) << engine;  // ended flows forget their bits
    EXPECT_EQ(h.det->counters().flows_with_bits, 0u) << engine;
  }
}

// flowint: conditions before the rule matches, changes after (at once: later rules see them);
// per flow.
TEST(NidsDetect, FlowintCountsPerFlow) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp any any -> any any (content:\"fail\"; flowint:fails,+,1; sid:1;)\n"
              "alert tcp any any -> any any (content:\"fail\"; flowint:fails,>=,3; sid:2;)\n"
              "alert tcp any any -> any any (content:\"new\"; flowint:fails,notset; sid:3;)\n"
              "alert tcp any any -> any any (content:\"ok\"; flowint:fails,=,0; flowint:limit,-,1; sid:4;)\n"
              "alert tcp any any -> any any (content:\"max\"; flowint:limit,=,2; sid:5;)\n"
              "alert tcp any any -> any any (content:\"cmp\"; flowint:fails,>,limit; sid:6;)\n"
              "alert tcp any any -> any any (content:\"cmp\"; flowint:fails,==,none; sid:7;)\n"
              "alert tcp any any -> any any (content:\"fail\"; flowint:fails,+,1; flowint:fails,isset; sid:8;)\n");
    auto on = [&](uint64_t flow, const std::string& p) {
      Unit u = h.packet(p);
      u.flow = flow;
      return h.sids(u);
    };
    EXPECT_EQ(on(1, "new"), Sids{3}) << engine;
    EXPECT_EQ(on(1, "fail"), (Sids{1, 8})) << engine;     // 1 after sid 1: sid 8 sees it set; 2
    EXPECT_EQ(on(1, "fail"), (Sids{1, 8, 2})) << engine;  // 3, 4: sid 2 (a checker, last) sees 4
    EXPECT_EQ(on(1, "new"), Sids{}) << engine;
    EXPECT_EQ(on(2, "new"), Sids{3}) << engine;        // per flow
    EXPECT_EQ(on(1, "max"), Sids{5}) << engine;
    EXPECT_EQ(on(1, "cmp"), Sids{6}) << engine;        // 4 > 2; an unset one compares as 0
    EXPECT_EQ(on(1, "ok"), Sids{4}) << engine;         // fails = 0, limit = 1
    EXPECT_EQ(on(1, "cmp"), Sids{7}) << engine;        // 0 == (unset) 0
    EXPECT_EQ(h.det->counters().flows_with_ints, 1u) << engine;
    h.det->end_flow(1);
    EXPECT_EQ(on(1, "new"), Sids{3}) << engine;        // ended flows forget them
    EXPECT_EQ(h.det->counters().flows_with_ints, 0u) << engine;
    Unit none = h.packet("fail new");                   // no flow: no integer to change or test
    EXPECT_EQ(h.sids(none), Sids{1}) << engine;
  }
  // A rule that only counts is not IP-only: it counts every packet (Suricata's flowint is not
  // IP-only compatible).
  Harness k("cpu.nids", "alert tcp any any -> any any (flowint:n,+,1; sid:1;)\n");
  EXPECT_EQ(k.image->kind(0), RuleKind::kPacket);
}

// xbits live on hosts and address pairs, across flows, until they expire in packet time.
TEST(NidsDetect, XbitsAcrossFlowsUntilTheyExpire) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp any any -> any any (content:\"probe\"; xbits:set,scan,track ip_src,expire 10; xbits:noalert; sid:1;)\n"
              "alert tcp any any -> any any (content:\"hit\"; xbits:isset,scan,track ip_src; sid:2;)\n"
              "alert tcp any any -> any any (content:\"hit\"; xbits:isset,scan,track ip_dst; sid:3;)\n"
              "alert tcp any any -> any any (content:\"pair\"; xbits:set,p,track ip_pair; sid:4;)\n"
              "alert tcp any any -> any any (content:\"hit\"; xbits:isset,p,track ip_pair; sid:5;)\n"
              "alert tcp any any -> any any (content:\"hit\"; xbits:isnotset,scan,track ip_src; sid:6;)\n"
              "alert tcp any any -> any any (content:\"clear\"; xbits:unset,scan,track ip_src; sid:7;)\n");
    uint8_t c[4] = {10, 0, 0, 7};
    auto on = [&](uint64_t flow, const std::string& p, uint64_t sec, bool reply = false, const uint8_t* src = nullptr) {
      Unit u = h.packet(p);
      u.flow      = flow;
      u.pkt.ts_ns = sec * 1'000'000'000ull;
      if (src) u.pkt.src = src;
      if (reply) std::swap(u.pkt.src, u.pkt.dst);
      return h.sids(u);
    };
    EXPECT_EQ(on(1, "hit", 0), Sids{6}) << engine;
    EXPECT_EQ(on(1, "probe", 1), Sids{1}) << engine;
    EXPECT_EQ(on(2, "hit", 2), Sids{2}) << engine;              // another flow of that source
    EXPECT_EQ(on(3, "hit", 3, true), (Sids{3, 6})) << engine;     // it is the reply's destination
    EXPECT_EQ(on(4, "hit", 4, false, c), Sids{6}) << engine;   // another host has no bit
    EXPECT_EQ(on(2, "hit", 11), Sids{6}) << engine;             // expired 10 s after it was set
    EXPECT_EQ(on(5, "probe", 12), Sids{1}) << engine;
    EXPECT_EQ(on(5, "clear hit", 13), (Sids{7, 6})) << engine;   // the unset runs first
    EXPECT_EQ(on(6, "pair", 14), Sids{4}) << engine;
    EXPECT_EQ(on(7, "hit", 15, true), (Sids{5, 6})) << engine;  // a pair either way round
    EXPECT_EQ(on(8, "hit", 16, false, c), Sids{6}) << engine;  // another pair
    h.det->end_flow(6);
    EXPECT_EQ(on(9, "hit", 17), (Sids{5, 6})) << engine;        // not the flow's: it stays
    EXPECT_EQ(h.det->counters().xbits, 1u) << engine;
    EXPECT_EQ(h.image->kind(5), RuleKind::kPacketStream);
  }
}

// A toggle matched by two units of one packet (its payload and a stream chunk) toggles once.
TEST(NidsDetect, FlowbitsChangeOncePerPacket) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert ip any any -> any any (msg:\"t\"; content:\"ab\"; flowbits:toggle,t; sid:1;)\n"
              "alert ip any any -> any any (msg:\"c\"; content:\"zz\"; flowbits:isset,t; sid:2;)\n");
    Unit p = h.packet("ab");
    p.flow = 3, p.packet = 10;
    EXPECT_EQ(h.sids(p), Sids{1}) << engine;
    std::string stream = "xab";
    Unit s = h.packet("");
    s.buffer = Buffer::kStream, s.flow = 3, s.packet = 10, s.new_from = 0;
    s.data = reinterpret_cast<const uint8_t*>(stream.data()), s.len = 3;
    EXPECT_EQ(h.sids(s), Sids{1}) << engine;
    Unit q = h.packet("zz");
    q.flow = 3, q.packet = 11;
    EXPECT_EQ(h.sids(q), Sids{2}) << engine;  // toggled once: set
  }
}

TEST(NidsDetect, PassAndActionOrder) {
  const std::string rules =
      "alert tcp any any -> any any (content:\"x\"; sid:1;)\n"
      "pass tcp any any -> any any (content:\"x\"; sid:2;)\n"
      "drop tcp any any -> any any (content:\"x\"; sid:3;)\n";
  for (const std::string& engine : engines()) {
    Harness dflt(engine, rules);
    EXPECT_EQ(dflt.sids("x"), Sids{2}) << engine;  // pass first, then nothing
    Harness dap(engine, rules, "drop,alert,pass");
    EXPECT_EQ(dap.sids("x"), (Sids{3, 1, 2})) << engine;
    Harness dpa(engine, rules, "drop,pass,alert");
    EXPECT_EQ(dpa.sids("x"), (Sids{3, 2})) << engine;
  }
}

TEST(NidsDetect, HeadersFlowAndRuleTypes) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp 10.0.0.0/8 any -> any 80 (content:\"q\"; sid:1;)\n"
              "alert tcp any 80 <> 10.0.0.1 any (content:\"q\"; sid:2;)\n"
              "alert tcp any any -> any any (flow:established,to_server; content:\"q\"; sid:3;)\n"
              "alert tcp any any -> any any (flow:to_client; content:\"q\"; sid:4;)\n"
              "alert udp any any -> any any (content:\"q\"; sid:5;)\n"
              "alert ip 10.0.0.1 any -> any any (sid:6;)\n"
              "alert tcp any any -> any any (dsize:>3; sid:7;)\n"
              "alert tcp any any -> any any (flags:S; sid:8;)\n");
    Unit u = h.packet("q");
    EXPECT_EQ(h.sids(u), (Sids{1, 2, 6})) << engine;
    u.pkt.has_flow = true, u.pkt.established = true, u.first_in_dir = false;
    EXPECT_EQ(h.sids(u), (Sids{1, 2, 3})) << engine;  // IP-only: first packet of a direction only
    std::swap(u.pkt.src, u.pkt.dst);
    std::swap(u.pkt.sport, u.pkt.dport);
    u.pkt.to_server = false;
    EXPECT_EQ(h.sids(u), (Sids{2, 4})) << engine;  // <> matches the reply
    Unit udp = h.packet("q", 17);
    EXPECT_EQ(h.sids(udp), (Sids{5, 6})) << engine;
    Unit syn = h.packet("qqqq");
    syn.pkt.tcp_flags = 0x02;
    syn.stream_flow   = true;  // payload rules look at the stream; packet rules still run
    EXPECT_EQ(h.sids(syn), (Sids{6, 7, 8})) << engine;
    EXPECT_EQ(h.image->kind(5), RuleKind::kIpOnly);
  }
  // Packet keywords and rules without a content to find look at packets, even on stream flows.
  Harness k("cpu.nids",
            "alert tcp any any -> any any (flags:PA; content:\"x\"; sid:1;)\n"
            "alert tcp any any -> any any (byte_test:1,=,65,0; sid:2;)\n"
            "alert tcp any any -> any any (content:!\"x\"; sid:3;)\n"
            "alert tcp any any -> any any (content:\"x\"; sid:4;)\n");
  for (uint32_t i = 0; i < 3; ++i) EXPECT_EQ(k.image->kind(i), RuleKind::kPacket) << i;
  EXPECT_EQ(k.image->kind(3), RuleKind::kPacketStream);
  Unit pa = k.packet("Ax");
  pa.pkt.tcp_flags = 0x18;
  pa.stream_flow   = true;
  EXPECT_EQ(k.sids(pa), (Sids{1, 2}));
}

// stream_size and ip_proto are header conditions every engine checks alike.
TEST(NidsDetect, StreamSizeAndIpProto) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert tcp any any -> any any (stream_size:server,<,5; sid:1;)\n"
              "alert tcp any any -> any any (stream_size:client,>=,100; sid:2;)\n"
              "alert tcp any any -> any any (stream_size:both,!=,1; sid:3;)\n"
              "alert tcp any any -> any any (stream_size:either,=,1; sid:4;)\n"
              "alert ip any any -> any any (ip_proto:17; sid:5;)\n"
              "alert ip any any -> any any (ip_proto:!tcp; sid:6;)\n"
              "alert ip any any -> any any (ip_proto:>16; sid:7;)\n");
    Unit u = h.packet("q");
    EXPECT_EQ(h.sids(u), Sids{}) << engine;  // no session: stream_size never holds
    u.pkt.has_session   = true;
    u.pkt.stream_size[0] = 100, u.pkt.stream_size[1] = 1;
    EXPECT_EQ(h.sids(u), (Sids{1, 2, 4})) << engine;
    u.pkt.stream_size[1] = 5;
    EXPECT_EQ(h.sids(u), (Sids{2, 3})) << engine;
    Unit udp = h.packet("q", 17);
    udp.pkt.has_session = true;  // not TCP: stream_size never holds
    EXPECT_EQ(h.sids(udp), (Sids{5, 6, 7})) << engine;
    EXPECT_EQ(h.image->kind(4), RuleKind::kPacket);  // not IP-only: it looks at every packet
  }
}

TEST(NidsDetect, BoundsAndCounters) {
  // Many candidate positions with a relative rule that never completes: bounded, counted.
  Harness h("cpu.nids", "alert tcp any any -> any any (content:\"a\"; content:\"a\"; distance:0; content:\"z\"; distance:0; within:1; sid:1;)\n");
  const std::string many(60000, 'a');
  EXPECT_EQ(h.sids(many), Sids{});
  EXPECT_GT(h.det->counters().backtrack_limit, 0u);
  Harness p("cpu.nids", "alert tcp any any -> any any (pcre:\"/(a+)+b/\"; sid:1;)\n");
  EXPECT_EQ(p.sids(std::string(5000, 'a')), Sids{});
}

// The self-test found a prefilter that missed: with single-match patterns beside it, Vectorscan
// 5.4.9 does not report "xc" at the end of this payload. The prefilter asks for every match.
TEST(NidsDetect, PrefilterFindsALiteralBesideOthers) {
  for (const std::string& engine : engines()) {
    Harness h(engine,
              "alert ip any any -> any any (msg:\"r\"; content:\"B\"; sid:16;)\n"
              "alert ip any any -> any any (msg:\"r\"; content:\"B\"; sid:1;)\n"
              "alert ip any any -> any any (msg:\"r\"; content:\"xc\"; nocase; sid:8;)\n"
              "alert ip any any -> any any (msg:\"r\"; content:\"ba\"; sid:12;)\n");
    Unit u = h.packet("cxxbxxbxxBAxxbBAxaaxxbcBxbAAAAxxAxaxbAxBxAaxxBbccxaxxaAxxxBBxBcxc", 1);
    EXPECT_EQ(h.sids(u), (Sids{16, 1, 8})) << engine;
  }
}

TEST(NidsDetect, EnginesAgreeWithTheReference) {
  for (uint64_t seed : {1u, 2u, 3u, 10u}) {
    const CheckReport r = check_nids_engine("cpu.nids", seed, 3000);
    EXPECT_TRUE(r.passed()) << r.detail;
    // cuda.nids's detector, its block prefilter on cpu.ac: batches of 0, 1, up to 96 units.
    const CheckReport b = detail::check_detector(
        "block:cpu.ac", [](auto image) { return make_engine("validate:block:cpu.ac", image); },
        seed, 3000);
    EXPECT_TRUE(b.passed()) << b.detail;
    EXPECT_EQ(b.items, 3000u);
  }
  EXPECT_FALSE(make_detector("cuda.nids", nullptr).is_ok());
}

// cpu.nids scans with the database of a unit's port groups and direction
// (nids/cpu/port_groups.hpp) when the rules name ports or a direction: rules on low,
// registered and dynamic ports, source and destination, `<>` and any-port ones, to_server and
// to_client ones, over packets (of flows and not) and stream chunks of both directions of flows
// on mixed ports. Every unit gets ref.nids's sids; port group databases were used, and a
// second detector of the image compiles none (it clones the image's).
TEST(NidsDetect, PortGroupDatabasesGiveTheReferencesAlerts) {
  const std::vector<std::string> ports = {
      "21",          "25",        "80",      "443",  "445",
      "1433",        "2000:2100", "4444",    "8080", "[40000,50000]",
      "33000:34000", "!80",       "[1:1023]"};
  std::string rules;
  for (int k = 0; k < 120; ++k) {
    const std::string p    = ports[size_t(k) % ports.size()];
    const std::string head = k % 5 == 0    ? "any " + p + " -> any any"
                             : k % 7 == 0  ? "any any <> any " + p
                             : k % 11 == 0 ? "any any -> any any"
                                           : "any any -> any " + p;
    const std::string flow = k % 3 == 1 ? "flow:to_server; " : k % 3 == 2 ? "flow:to_client; " : "";
    rules += "alert tcp " + head + " (" + flow + "content:\"key" + std::to_string(100 + k) +
             "\"; sid:" + std::to_string(k + 1) + ";)\n";
  }
  RuleSet set;
  add_rules_text(set, rules, "t", Vars{});
  for (const FileReport& f : set.files)
    for (const RuleProblem& p : f.problems) ADD_FAILURE() << p.where << ": " << p.reason;
  auto image = compile_rules(set);
  ASSERT_TRUE(image.is_ok()) << image.status().message();
  const uint16_t unit_ports[] = {21,   25,    80,    443,   445,   1433,  2050, 4444,
                                 8080, 40000, 50000, 33500, 45000, 60000, 1030, 7};
  auto ref                    = make_detector("ref.nids", *image);
  ASSERT_TRUE(ref.is_ok());
  uint8_t a[4] = {10, 0, 0, 1}, b[4] = {192, 0, 2, 9};
  auto run = [&](Detector& cpu, uint64_t seed) {
    std::mt19937_64 rng(seed);
    std::vector<std::string> buffers(128);
    uint64_t hits = 0;
    for (int n = 0; n < 3000; ++n) {
      const uint64_t f    = rng() % 128;  // a flow direction: its ports stay the same
      const uint64_t flow = seed * 1000 + f / 2;
      const uint8_t dir   = uint8_t(f % 2);
      Unit u;
      u.pkt.proto = 6;
      u.pkt.src = a, u.pkt.dst = b;
      u.pkt.sport     = unit_ports[(dir ? flow * 7 + 3 : flow) % 16];
      u.pkt.dport     = unit_ports[(dir ? flow : flow * 7 + 3) % 16];
      u.pkt.has_flow  = flow % 5 != 0;  // some packets of untracked flows
      u.pkt.to_server = dir == 0;
      std::string more(20 + rng() % 60, '.');
      for (int k = 0; k < 3; ++k) {
        const std::string key = "key" + std::to_string(100 + rng() % 120);
        more.replace(rng() % (more.size() - key.size()), key.size(), key);
      }
      std::string packet;
      if (rng() % 2) {  // a stream chunk: the flow's buffer, then the new bytes
        std::string& buf = buffers[f];
        if (buf.size() > 600) buf.erase(0, buf.size() - 300);
        u.buffer       = Buffer::kStream;
        u.flow         = flow;
        u.dir          = dir;
        u.pkt.has_flow = true;
        u.new_from     = uint32_t(buf.size());
        buf += more;
        u.data = reinterpret_cast<const uint8_t*>(buf.data());
        u.len  = uint32_t(buf.size());
      } else {
        packet      = more;
        u.pkt.dsize = uint32_t(packet.size());
        u.data      = reinterpret_cast<const uint8_t*>(packet.data());
        u.len       = uint32_t(packet.size());
      }
      std::vector<Hit> want, got;
      ASSERT_TRUE((*ref)->inspect(u, want).is_ok());
      ASSERT_TRUE(cpu.inspect(u, got).is_ok());
      ASSERT_EQ(got.size(), want.size()) << "unit " << n;
      for (size_t i = 0; i < got.size(); ++i) ASSERT_EQ(got[i].rule, want[i].rule) << "unit " << n;
      hits += got.size();
    }
    EXPECT_GT(hits, 500u);
  };
  auto cpu = make_detector("cpu.nids", *image);
  ASSERT_TRUE(cpu.is_ok());
  run(**cpu, 1);
  EXPECT_GT((*cpu)->counters().port_group_dbs, 3u);
  auto& cache       = static_cast<const detail::Image&>(**image).prefilter_cache();
  const size_t made = cache.size();
  EXPECT_GT(made, 3u);
  // The rule groups' databases too: made by the first detector, in the image's group cache.
  auto& groups             = static_cast<const detail::Image&>(**image).group_cache();
  const size_t groups_made = groups.size();
  EXPECT_GT(groups_made, 0u);
  auto second = make_detector("cpu.nids", *image);
  ASSERT_TRUE(second.is_ok());
  run(**second, 1);  // the same units (ref.nids keeps no state for these rules)
  EXPECT_EQ((*second)->counters().port_group_dbs, (*cpu)->counters().port_group_dbs);
  EXPECT_EQ(cache.size(), made) << "the second detector cloned the image's databases";
  EXPECT_EQ(groups.size(), groups_made) << "the second detector compiled its groups again";
  run(**second, 2);  // and other flows
}

// Traffic that visits every port (a scan) over rules for as many ports: the image compiles at
// most PrefilterCache::kMaxDatabases port group databases; the units past that scan their
// group's database, with the same alerts.
TEST(NidsDetect, PortGroupDatabasesAreBounded) {
  std::string rules = "alert tcp any any -> any any (content:\"anyport\"; sid:1;)\n";
  for (int p = 1; p <= 300; ++p)
    rules += "alert tcp any any -> any " + std::to_string(p) + " (content:\"k" + std::to_string(p) +
             "x\"; sid:" + std::to_string(p + 1) + ";)\n";
  RuleSet set;
  add_rules_text(set, rules, "t", Vars{});
  auto image = compile_rules(set);
  ASSERT_TRUE(image.is_ok()) << image.status().message();
  auto cpu = make_detector("cpu.nids", *image);
  auto ref = make_detector("ref.nids", *image);
  ASSERT_TRUE(cpu.is_ok() && ref.is_ok());
  uint8_t a[4] = {10, 0, 0, 1}, b[4] = {192, 0, 2, 9};
  for (int p = 1; p <= 300; ++p) {
    const std::string payload =
        "..k" + std::to_string(p) + "x..anyport..k" + std::to_string(p + 1) + "x";
    Unit u;
    u.pkt.proto = 6;
    u.pkt.src = a, u.pkt.dst = b;
    u.pkt.sport = 40000, u.pkt.dport = uint16_t(p);
    u.pkt.dsize = uint32_t(payload.size());
    u.data      = reinterpret_cast<const uint8_t*>(payload.data());
    u.len       = uint32_t(payload.size());
    std::vector<Hit> want, got;
    ASSERT_TRUE((*ref)->inspect(u, want).is_ok());
    ASSERT_TRUE((*cpu)->inspect(u, got).is_ok());
    ASSERT_EQ(got.size(), 2u) << "port " << p;
    ASSERT_EQ(got.size(), want.size());
    for (size_t i = 0; i < got.size(); ++i) EXPECT_EQ(got[i].rule, want[i].rule);
  }
  auto& cache = static_cast<const detail::Image&>(**image).prefilter_cache();
  EXPECT_EQ(cache.size(), detail::PrefilterCache::kMaxDatabases);
  EXPECT_EQ((*cpu)->counters().port_group_dbs, detail::PrefilterCache::kMaxDatabases);
}

std::string fmt_hex(uint8_t b) {
  static const char* kDigits = "0123456789abcdef";
  return {kDigits[b >> 4], kDigits[b & 15], ' '};
}

// ET Open's loadable rules over the ANMLZoo dotstar trace (it holds strings many of them look
// for), as the GPU benchmark feeds cuda.nids: 1,500-byte packets, and 256-byte stream chunks of
// 64 interleaved flows after up to 4 KiB of lookback; cuda.nids's detector over cpu.ac gives
// cpu.nids's hits at batch sizes 1, 7 and all, and something matches.
TEST(NidsDetect, BlockDetectorAgreesWithCpuOnEtOpen) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  auto read = [](const std::string& path) -> Result<std::string> {
    const std::vector<uint8_t> b = testing::read_bytes(path);
    return std::string(b.begin(), b.end());
  };
  auto set = load_rules({testing::data_path("patterns/et-open/rules")}, Vars{}, read);
  ASSERT_TRUE(set.is_ok()) << set.status().message();
  const std::vector<uint8_t> trace =
      testing::read_bytes(testing::data_path("patterns/anmlzoo/dotstar/backdoor_1MB.input"));
  ASSERT_GT(trace.size(), 600000u);
  // ET Open's rules rarely match random bytes: 150 rules whose 6-byte contents are cut from the
  // trace (some straddle a chunk's start) make sure things match, beside them.
  std::string extra;
  for (uint32_t r = 0; r < 150; ++r) {
    extra += "alert tcp any any -> any any (msg:\"cut\"; content:\"|";
    for (uint32_t k = 0; k < 6; ++k) extra += fmt_hex(trace[size_t(r) * 3989 + 250 + k]);
    extra += "|\"; sid:" + std::to_string(9100000 + r) + ";)\n";
  }
  add_rules_text(*set, extra, "cut.rules", Vars{});
  auto image = compile_rules(*set);
  ASSERT_TRUE(image.is_ok()) << image.status().message();
  static const uint8_t kClient[4] = {10, 0, 0, 1}, kServer[4] = {192, 0, 2, 80};
  constexpr uint32_t kFlows = 64, kChunk = 256, kUnits = 1024;
  std::vector<Unit> units;
  for (uint32_t i = 0; i < 2 * kUnits; ++i) {
    Unit u;
    u.pkt.proto = 6, u.pkt.src = kClient, u.pkt.dst = kServer, u.pkt.dport = 80;
    u.pkt.tcp_flags = 0x18, u.pkt.has_flow = true, u.pkt.established = true;
    u.packet = i + 1;
    if (i < kUnits) {  // packets
      u.pkt.sport = uint16_t(1024 + i), u.pkt.dsize = 1500;
      u.data = trace.data() + (size_t(i) * 1500) % (trace.size() - 1500), u.len = 1500;
      u.flow = i + 1;
    } else {  // stream chunks
      const uint32_t k = i - kUnits, flow = k % kFlows;
      const uint64_t end   = uint64_t(k / kFlows + 1) * kChunk;
      const uint64_t start = end - kChunk - std::min<uint64_t>(end - kChunk, kStreamLookback);
      u.pkt.sport = uint16_t(1024 + flow), u.pkt.dsize = kChunk;
      u.buffer = Buffer::kStream;
      u.data = trace.data() + size_t(flow) * 8192 + start, u.len = uint32_t(end - start);
      u.new_from = uint32_t(end - kChunk - start), u.at_stream_start = start == 0;
      u.flow = kUnits + flow + 1;
    }
    units.push_back(u);
  }
  auto cpu = make_detector("cpu.nids", *image);
  ASSERT_TRUE(cpu.is_ok());
  std::vector<std::vector<Hit>> want(units.size());
  for (size_t i = 0; i < units.size(); ++i) ASSERT_TRUE((*cpu)->inspect(units[i], want[i]).is_ok());
  size_t packet_hits = 0, stream_hits = 0;
  for (size_t i = 0; i < want.size(); ++i)
    (i < kUnits ? packet_hits : stream_hits) += want[i].size();
  EXPECT_GT(packet_hits, 0u);
  EXPECT_GT(stream_hits, 0u);
  // The opportunistic offload (a group's batch under the threshold scanned by the fallback
  // engine, the rest by cpu.ac standing in for cuda.ac): the same hits at
  // every threshold, the scans split as the threshold says. 2 KiB sends single units and a
  // batch of 7 packets' groups (up to 10.5 KB) apart from the large batches.
  for (const uint64_t threshold : {uint64_t(0), uint64_t(2048), ~uint64_t(0)}) {
    uint64_t offloaded = 0, on_cpu = 0;
    for (uint32_t batch : {1u, 7u, uint32_t(units.size())}) {
      // The fallback cuda.nids uses (best_cpu_pattern_engine: cpu.hs where built) at 2 KiB,
      // another Aho-Corasick unbounded.
      const std::string fallback =
          threshold == 2048 ? detail::best_cpu_pattern_engine() : "cpu.ac.full";
      auto block = threshold == 0 ? make_engine("block:cpu.ac", *image)
                                  : detail::make_block_detector(*image, "offload", "cpu.ac",
                                                                {fallback, threshold});
      ASSERT_TRUE(block.is_ok());
      std::vector<std::vector<Hit>> got(units.size());
      for (size_t at = 0; at < units.size(); at += batch) {
        const uint32_t n = uint32_t(std::min<size_t>(batch, units.size() - at));
        ASSERT_TRUE((*block)->inspect_batch(units.data() + at, n, got.data() + at).is_ok());
      }
      for (size_t i = 0; i < units.size(); ++i)
        ASSERT_EQ(got[i], want[i])
            << "threshold " << threshold << ", batch " << batch << ", unit " << i;
      const DetectCounters c = (*block)->counters();
      EXPECT_GT(c.scans_offloaded + c.scans_on_cpu, 0u);
      if (batch == 1 && threshold == 2048) EXPECT_EQ(c.scans_offloaded, 0u);  // no unit is 2 KiB
      if (batch == units.size() && threshold == 2048) EXPECT_EQ(c.scans_on_cpu, 0u);
      offloaded += c.scans_offloaded, on_cpu += c.scans_on_cpu;
    }
    if (threshold == 0) EXPECT_EQ(on_cpu, 0u);  // no fallback: every scan on the engine
    if (threshold == 2048) {
      EXPECT_GT(offloaded, 0u);
      EXPECT_GT(on_cpu, 0u);
    }
    if (threshold == ~uint64_t(0)) EXPECT_EQ(offloaded, 0u);
  }
}

TEST(NidsDetect, OffloadThresholdFromTheEnvironment) {
  ::unsetenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES");
  EXPECT_EQ(detail::offload_min_bytes_from_env(), detail::kDefaultOffloadMinBytes);
  ::setenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES", "0", 1);
  EXPECT_EQ(detail::offload_min_bytes_from_env(), 0u);
  ::setenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES", "123456", 1);
  EXPECT_EQ(detail::offload_min_bytes_from_env(), 123456u);
  for (const char* bad :
       {"12k", "-1", " 5", "0x10"}) {  // not a byte count: the default (and a warning)
    ::setenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES", bad, 1);
    EXPECT_EQ(detail::offload_min_bytes_from_env(), detail::kDefaultOffloadMinBytes) << bad;
  }
  ::unsetenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES");
}

}  // namespace
}  // namespace warpath::nids
