// The HTTP app layer: rules with HTTP buffers (sticky, legacy modifiers, pcre flags, bsize,
// urilen, which side a buffer is), libhtp's transactions and the buffers made of them (exact
// bytes, as Suricata builds them), detection on transactions by every engine against ref.nids,
// and the bounds (pipelined floods, gaps, garbage, decompression).
#include <gtest/gtest.h>
#include <zlib.h>

#include <random>
#include <string>
#include <vector>

#include "nids/app/app_flow.hpp"
#include "nids/app/dns_parse.hpp"
#include "nids/app/tls_flow.hpp"
#include "nids/cpu/port_groups.hpp"
#include "nids/app/http_flow.hpp"
#include "nids/detector_base.hpp"
#include "warpath/nids/app_layer.hpp"
#include "warpath/nids/detect.hpp"

namespace warpath::nids {
namespace {

Rule parse_ok(const std::string& text) {
  auto r = parse_rule(text, Vars{}, "t:1");
  EXPECT_TRUE(r.is_ok()) << text << ": " << r.status().message();
  return r.is_ok() ? *r : Rule{};
}

std::vector<AppBuffer> buffers_of(const Rule& r) {
  std::vector<AppBuffer> out;
  for (const Item& it : r.items) out.push_back(it.buffer);
  return out;
}

TEST(NidsAppRules, BuffersAreStickyLegacyOrPcreFlags) {
  using B = AppBuffer;
  Rule r = parse_ok(R"(alert http any any -> any any (http.method; content:"GET"; http.uri; content:"/a"; content:"b"; distance:0; sid:1;))");
  EXPECT_EQ(r.app, AppLayer::kHttp);
  EXPECT_EQ(r.proto, Proto::kTcp);
  EXPECT_EQ(buffers_of(r), (std::vector<B>{B::kHttpMethod, B::kHttpUri, B::kHttpUri}));
  // Legacy modifiers move the content before them; contents after stay in the payload.
  r = parse_ok(R"(alert tcp any any -> any any (content:"x"; http_uri; content:"y"; http_raw_uri; content:"POST"; http_method; sid:1;))");
  EXPECT_EQ(r.app, AppLayer::kHttp);
  EXPECT_EQ(buffers_of(r), (std::vector<B>{B::kHttpUri, B::kHttpUriRaw, B::kHttpMethod}));
  r = parse_ok(R"(alert http any any -> any any (pcre:"/^\/x/U"; pcre:"/Mozilla/V"; pcre:"/a/P"; sid:1;))");
  EXPECT_EQ(buffers_of(r), (std::vector<B>{B::kHttpUri, B::kHttpUserAgent, B::kHttpRequestBody}));
  // bsize looks at the sticky buffer; urilen at http.uri (or raw).
  r = parse_ok(R"(alert http any any -> any any (http.host; content:"a.b"; bsize:3; urilen:>5,raw; sid:1;))");
  ASSERT_EQ(r.items.size(), 3u);
  EXPECT_EQ(r.items[1].kind, Item::kBsize);
  EXPECT_EQ(r.items[1].buffer, B::kHttpHost);
  EXPECT_EQ(r.items[2].buffer, B::kHttpUriRaw);
  EXPECT_TRUE(r.items[2].size.matches(6));
  EXPECT_FALSE(r.items[2].size.matches(5));
  // A rule with no buffer but alert http: the payload, for HTTP flows only.
  r = parse_ok(R"(alert http any any -> any any (content:"x"; sid:1;))");
  EXPECT_EQ(r.app, AppLayer::kHttp);
  EXPECT_FALSE(r.has_app_buffers());
}

TEST(NidsAppRules, BothSidesBuffersFollowTheRulesDirection) {
  using B = AppBuffer;
  // http.header, file_data, http.cookie: the request's unless the rule is to_client or names a
  // response buffer; file_data defaults to the response.
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (http.header; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpRequestHeader}));
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (flow:to_client; http.header; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpResponseHeader}));
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (http.stat_code; content:"200"; http.header; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpStatCode, B::kHttpResponseHeader}));
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (file_data; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpResponseBody}));
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (flow:established,to_server; file.data; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpRequestBody}));
  EXPECT_EQ(buffers_of(parse_ok(R"(alert http any any -> any any (flow:to_client; http.cookie; content:"a"; sid:1;))")),
            (std::vector<B>{B::kHttpResponseCookie}));
}

TEST(NidsAppRules, MalformedBufferUseIsASyntaxError) {
  const char* bad[] = {
      // request-only and response-only buffers in one rule (Suricata: conflicting directions)
      R"(alert http any any -> any any (http.uri; content:"a"; http.stat_code; content:"200"; sid:1;))",
      R"(alert http any any -> any any (bsize:3; sid:1;))",               // no sticky buffer
      R"(alert http any any -> any any (http_uri; sid:1;))",              // no content before
      R"(alert http any any -> any any (http.uri: x; content:"a"; sid:1;))",  // a value
      R"(alert udp any any -> any any (http.uri; content:"a"; sid:1;))",   // not TCP
      R"(alert http any any -> any any (pcre:"/a/UV"; sid:1;))",           // two buffers
      R"(alert http any any -> any any (urilen:1,sideways; sid:1;))",
  };
  for (const char* text : bad) {
    auto r = parse_rule(text, Vars{}, "t:1");
    ASSERT_FALSE(r.is_ok()) << text;
    EXPECT_EQ(r.status().code(), Errc::kParseError) << text << ": " << r.status().message();
  }
  // A sticky buffer outside the subset skips the rule by its name; its bsize is no syntax error.
  auto r = parse_rule(R"(alert tls any any -> any any (tls.random; content:"a"; bsize:>1; sid:1;))", Vars{}, "t:1");
  ASSERT_FALSE(r.is_ok());
  EXPECT_EQ(r.status().code(), Errc::kNotSupported) << r.status().message();
}

TEST(NidsAppRules, BufferNamesAndSides) {
  EXPECT_STREQ(app_buffer_name(AppBuffer::kHttpUri), "http.uri");
  EXPECT_STREQ(app_buffer_name(AppBuffer::kHttpResponseHeader), "http.header");
  EXPECT_STREQ(app_buffer_name(AppBuffer::kPayload), "payload");
  for (size_t b = 1; b < kAppBuffers; ++b)
    EXPECT_STRNE(app_buffer_name(AppBuffer(b)), "?") << b;
  EXPECT_FALSE(app_buffer_is_response(AppBuffer::kHttpRequestBody));
  EXPECT_TRUE(app_buffer_is_response(AppBuffer::kHttpResponseBody));
  BufferKeyword kw;
  EXPECT_FALSE(find_pcre_buffer('K', kw));  // Suricata has no K
  EXPECT_TRUE(find_buffer_keyword("http_content_type", kw));
  EXPECT_TRUE(kw.sticky);  // a sticky buffer since 4.1, never a content modifier
  EXPECT_TRUE(find_buffer_keyword("http_uri", kw));
  EXPECT_FALSE(kw.sticky);
}

// A flow's parser, fed a whole conversation.
struct Conversation {
  AppConfig cfg;
  AppCounters counters;
  detail::HttpConfig http{cfg};
  detail::HttpFlow flow{http, counters};
  std::vector<AppTx> txs;
  void client(const std::string& s) { flow.feed(0, reinterpret_cast<const uint8_t*>(s.data()), s.size(), 1, txs); }
  void server(const std::string& s) { flow.feed(1, reinterpret_cast<const uint8_t*>(s.data()), s.size(), 2, txs); }
  static std::string buf(const AppTx& t, AppBuffer b) {
    return t.has[size_t(b)] ? t.buf[size_t(b)] : std::string("<none>");
  }
};

std::string gzip(const std::string& in) {
  z_stream z{};
  deflateInit2(&z, 9, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
  std::string out(in.size() + 256, '\0');
  z.next_in   = reinterpret_cast<Bytef*>(const_cast<char*>(in.data()));
  z.avail_in  = uInt(in.size());
  z.next_out  = reinterpret_cast<Bytef*>(out.data());
  z.avail_out = uInt(out.size());
  deflate(&z, Z_FINISH);
  out.resize(z.total_out);
  deflateEnd(&z);
  return out;
}

TEST(NidsHttp, RequestBuffersAreSuricatas) {
  using B = AppBuffer;
  Conversation c;
  c.client("GET /a/./b/../c%2Ed?x=%41+b#frag HTTP/1.1\r\nHost: WWW.Example.COM\r\n"
           "User-Agent: Mozilla/5.0\r\nCookie: s=1\r\nAccept: */*\r\n\r\n");
  ASSERT_EQ(c.txs.size(), 1u);
  const AppTx& t = c.txs[0];
  EXPECT_FALSE(t.response);
  EXPECT_EQ(Conversation::buf(t, B::kHttpMethod), "GET");
  EXPECT_EQ(Conversation::buf(t, B::kHttpUriRaw), "/a/./b/../c%2Ed?x=%41+b#frag");
  EXPECT_EQ(Conversation::buf(t, B::kHttpUri), "/a/c.d?x=A+b#frag");  // normalised, '+' kept
  EXPECT_EQ(Conversation::buf(t, B::kHttpHost), "www.example.com");
  EXPECT_EQ(Conversation::buf(t, B::kHttpHostRaw), "WWW.Example.COM");
  EXPECT_EQ(Conversation::buf(t, B::kHttpUserAgent), "Mozilla/5.0");
  EXPECT_EQ(Conversation::buf(t, B::kHttpCookie), "s=1");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestProtocol), "HTTP/1.1");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestLine), "GET /a/./b/../c%2Ed?x=%41+b#frag HTTP/1.1");
  // http.header: no Cookie, no closing empty line; header_names and start: every header.
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestHeader),
            "Host: WWW.Example.COM\r\nUser-Agent: Mozilla/5.0\r\nAccept: */*\r\n");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestHeaderNames), "\r\nHost\r\nUser-Agent\r\nCookie\r\nAccept\r\n\r\n");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestStart),
            "GET /a/./b/../c%2Ed?x=%41+b#frag HTTP/1.1\r\nHost: WWW.Example.COM\r\nUser-Agent: "
            "Mozilla/5.0\r\nCookie: s=1\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestHeaderRaw),
            "Host: WWW.Example.COM\r\nUser-Agent: Mozilla/5.0\r\nCookie: s=1\r\nAccept: */*\r\n\r\n");
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestBody), "<none>");
  // http.request_header: each header an instance, "Name: value".
  EXPECT_EQ(Conversation::buf(t, B::kHttpRequestHeaderEach), "Host: WWW.Example.COM");
  ASSERT_EQ(t.more.size(), 3u);
  EXPECT_EQ(t.more[1].second, "Cookie: s=1");
  EXPECT_EQ(c.counters.http_txs, 1u);
}

TEST(NidsHttp, BodiesAreDechunkedAndDecompressedAndPipelinedRequestsPair) {
  using B = AppBuffer;
  Conversation c;
  // Two pipelined requests, the first with a chunked body, split at odd places.
  const std::string reqs = "POST /up HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n"
                           "5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n"
                           "GET /two HTTP/1.1\r\nHost: h\r\n\r\n";
  for (size_t i = 0; i < reqs.size(); i += 7) c.client(reqs.substr(i, 7));
  ASSERT_EQ(c.txs.size(), 2u);
  EXPECT_EQ(Conversation::buf(c.txs[0], B::kHttpRequestBody), "hello world");
  EXPECT_EQ(Conversation::buf(c.txs[1], B::kHttpUri), "/two");
  const std::string page = "<html>" + std::string(3000, 'x') + "evil()</html>";
  const std::string z = gzip(page);
  c.server("HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\nContent-Encoding: gzip\r\n"
           "Set-Cookie: id=7\r\nContent-Length: " + std::to_string(z.size()) + "\r\n\r\n" + z);
  c.server("HTTP/1.1 404 Not Found\r\nServer: nginx\r\nContent-Length: 0\r\n\r\n");
  ASSERT_EQ(c.txs.size(), 4u);
  const AppTx& r1 = c.txs[2];
  EXPECT_TRUE(r1.response && r1.last);
  EXPECT_EQ(r1.id, 0u);
  EXPECT_EQ(Conversation::buf(r1, B::kHttpStatCode), "200");
  EXPECT_EQ(Conversation::buf(r1, B::kHttpStatMsg), "OK");
  EXPECT_EQ(Conversation::buf(r1, B::kHttpResponseBody), page);  // decoded
  EXPECT_EQ(Conversation::buf(r1, B::kHttpResponseContentType), "text/html; charset=utf-8");
  EXPECT_EQ(Conversation::buf(r1, B::kHttpResponseCookie), "id=7");
  EXPECT_EQ(Conversation::buf(r1, B::kHttpResponseHeader).find("Set-Cookie"), std::string::npos);
  EXPECT_EQ(r1.response_len, int64_t(z.size()));
  EXPECT_EQ(Conversation::buf(r1, B::kHttpUri), "/up");  // the response phase keeps its request
  const AppTx& r2 = c.txs[3];
  EXPECT_EQ(r2.id, 1u);
  EXPECT_EQ(Conversation::buf(r2, B::kHttpStatCode), "404");
  EXPECT_EQ(Conversation::buf(r2, B::kHttpServer), "nginx");
}

TEST(NidsHttp, BoundsHoldOnHostileTraffic) {
  {  // A pipelined flood: past max_txs unanswered requests the flow's parser stops, counted.
    Conversation c;
    c.cfg.max_txs = 8;
    detail::HttpConfig cfg{c.cfg};
    detail::HttpFlow f{cfg, c.counters};
    std::string flood;
    for (int i = 0; i < 100; ++i) flood += "GET /" + std::to_string(i) + " HTTP/1.1\r\nHost: h\r\n\r\n";
    f.feed(0, reinterpret_cast<const uint8_t*>(flood.data()), flood.size(), 1, c.txs);
    EXPECT_EQ(c.txs.size(), 8u);
    EXPECT_EQ(c.counters.tx_limit, 1u);
    EXPECT_TRUE(f.stopped());
  }
  {  // A body past its limit is cut there, counted.
    Conversation c;
    c.cfg.request_body_limit = 100;
    detail::HttpConfig cfg{c.cfg};
    detail::HttpFlow f{cfg, c.counters};
    const std::string req = "POST / HTTP/1.1\r\nContent-Length: 5000\r\n\r\n" + std::string(5000, 'b');
    f.feed(0, reinterpret_cast<const uint8_t*>(req.data()), req.size(), 1, c.txs);
    ASSERT_EQ(c.txs.size(), 1u);
    EXPECT_EQ(c.txs[0].buf[size_t(AppBuffer::kHttpRequestBody)].size(), 100u);
    EXPECT_EQ(c.counters.body_truncated, 1u);
  }
  {  // A gzip bomb: the decoded body stays within the response body limit.
    Conversation c;
    const std::string z = gzip(std::string(50 << 20, 'A'));
    c.client("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    c.server("HTTP/1.1 200 OK\r\nContent-Encoding: gzip\r\nContent-Length: " + std::to_string(z.size()) +
             "\r\n\r\n" + z);
    c.flow.close(3, c.txs);
    ASSERT_GE(c.txs.size(), 1u);
    for (const AppTx& t : c.txs)
      EXPECT_LE(t.buf[size_t(AppBuffer::kHttpResponseBody)].size(), c.cfg.response_body_limit);
  }
  {  // Random bytes after a request line: no crash, bounded, the flow ends cleanly.
    std::mt19937_64 rng(7);
    for (int round = 0; round < 50; ++round) {
      Conversation c;
      std::string junk = "GET / HTTP/1.1\r\n";
      for (int i = 0; i < 2000; ++i) junk.push_back(char(rng()));
      for (size_t i = 0; i < junk.size(); i += 1 + rng() % 300) c.client(junk.substr(i, 1 + rng() % 300));
      c.server(junk);
      c.flow.close(3, c.txs);
      EXPECT_LE(c.txs.size(), 2u * c.cfg.max_txs);
    }
  }
  {  // A gap stops the parser: nothing after it is parsed.
    Conversation c;
    c.flow.gap();
    c.client("GET / HTTP/1.1\r\nHost: h\r\n\r\n");
    EXPECT_TRUE(c.txs.empty());
  }
}

// A response libhtp cannot match to a request (a capture that starts mid-conversation) is still
// a transaction, and a request inspected but never answered is logged when the flow ends.
TEST(NidsHttp, UnmatchedResponsesAndUnansweredRequests) {
  using B = AppBuffer;
  Conversation c;
  c.server("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nabc");
  ASSERT_FALSE(c.txs.empty());
  const AppTx& r = c.txs.back();
  EXPECT_TRUE(r.response && r.last);
  EXPECT_EQ(r.layer, AppLayer::kHttp);
  EXPECT_EQ(Conversation::buf(r, B::kHttpStatCode), "200");
  EXPECT_EQ(Conversation::buf(r, B::kHttpResponseBody), "abc");
  Conversation d;
  d.client("GET /never HTTP/1.1\r\nHost: h\r\n\r\n");
  ASSERT_EQ(d.txs.size(), 1u);
  EXPECT_FALSE(d.txs[0].last);  // inspected, waiting for its response
  d.flow.close(3, d.txs);
  ASSERT_EQ(d.txs.size(), 2u);
  EXPECT_TRUE(d.txs[1].last && d.txs[1].log_only);  // logged, not inspected again
  EXPECT_EQ(Conversation::buf(d.txs[1], B::kHttpUri), "/never");
}

TEST(NidsHttp, DetectionIsByContentNotPort) {
  using detail::Probe;
  auto probe = [](uint8_t dir, const std::string& s) {
    return detail::probe_http(dir, reinterpret_cast<const uint8_t*>(s.data()), s.size());
  };
  EXPECT_EQ(probe(0, "GET / HTTP/1.1\r\n"), Probe::kYes);
  EXPECT_EQ(probe(0, "post /x HTTP/1.0"), Probe::kYes);  // caseless, as Suricata's patterns
  EXPECT_EQ(probe(0, "PROPFIND\t/"), Probe::kYes);
  EXPECT_EQ(probe(0, "GE"), Probe::kMore);
  EXPECT_EQ(probe(0, "GETX / HTTP/1.1"), Probe::kNo);
  EXPECT_EQ(probe(0, "\x16\x03\x01"), Probe::kNo);
  EXPECT_EQ(probe(1, "HTTP/1.1 200 OK"), Probe::kYes);
  EXPECT_EQ(probe(1, "HTTP/1"), Probe::kMore);
  EXPECT_EQ(probe(1, "SSH-2.0-OpenSSH"), Probe::kNo);
  // A flow: the client's first bytes decide, across deliveries; an SSH flow is not HTTP.
  AppConfig cfg;
  detail::AppParsers parsers(cfg);
  detail::AppFlow http, ssh;
  const std::string a = "GE", b = "T / HTTP/1.1\r\nHost: x\r\n\r\n";
  parsers.take(http, 0, reinterpret_cast<const uint8_t*>(a.data()), a.size(), false, 1);
  EXPECT_FALSE(http.decided);
  parsers.take(http, 0, reinterpret_cast<const uint8_t*>(b.data()), b.size(), false, 1);
  EXPECT_EQ(http.layer, AppLayer::kHttp);
  ASSERT_EQ(http.ready.size(), 1u);
  EXPECT_EQ(http.ready[0].buf[size_t(AppBuffer::kPayload)], a + b);  // the raw stream, for payload items
  const std::string s1 = "SSH-2.0-x\r\n", s0 = "SSH-2.0-y\r\n";
  parsers.take(ssh, 1, reinterpret_cast<const uint8_t*>(s1.data()), s1.size(), false, 1);
  parsers.take(ssh, 0, reinterpret_cast<const uint8_t*>(s0.data()), s0.size(), false, 1);
  EXPECT_TRUE(ssh.decided);
  EXPECT_EQ(ssh.layer, AppLayer::kSsh);  // detected, not parsed: no transactions
  EXPECT_TRUE(ssh.ready.empty());
  EXPECT_EQ(parsers.counters().http_flows, 1u);
  EXPECT_EQ(parsers.counters().app_bytes, a.size() + b.size());  // only the parsed flow's
  // The protocols warpath only detects, by Suricata's patterns; what none claims stays none.
  struct Case {
    std::string server, client;
    AppLayer layer;
  } cases[] = {
      {"220 ProFTPD ready\r\n", "user anonymous\r\n", AppLayer::kFtp},
      {"220 (vsFTPd 3.0.3)\r\n", "", AppLayer::kFtp},
      {"220 mail.example ESMTP\r\n", "EHLO client\r\n", AppLayer::kSmtp},
      {"", std::string("\0\0\0\x2f\xffSMBr", 9), AppLayer::kSmb},
      {std::string("\0\0\0\x40\xfeSMB", 8), "", AppLayer::kSmb},
      {"+OK POP3 ready\r\n", "USERX\r\n", AppLayer::kNone},
      {"", std::string("\0\0\0\x2f\xffSMX", 8), AppLayer::kNone},
  };
  for (const Case& c : cases) {
    detail::AppFlow f;
    if (!c.server.empty()) parsers.take(f, 1, reinterpret_cast<const uint8_t*>(c.server.data()), c.server.size(), false, 1);
    if (!c.client.empty()) parsers.take(f, 0, reinterpret_cast<const uint8_t*>(c.client.data()), c.client.size(), false, 1);
    if (c.layer == AppLayer::kNone) {  // a side still silent could yet say: the other one says no
      const std::string more = "more bytes of no protocol at all\r\n";
      parsers.take(f, c.server.empty() ? 1 : 0, reinterpret_cast<const uint8_t*>(more.data()), more.size(), false, 1);
    }
    EXPECT_TRUE(f.decided) << c.server << " / " << c.client;
    EXPECT_EQ(f.layer, c.layer) << c.server << " / " << c.client;
  }
}

// Transaction rules on every engine, against ref.nids.
struct TxHarness {
  std::shared_ptr<const DetectImage> image;
  uint8_t a[4] = {10, 0, 0, 1}, b[4] = {192, 0, 2, 9};
  explicit TxHarness(const std::string& rules) {
    RuleSet set;
    add_rules_text(set, rules, "t", Vars{});
    for (const FileReport& f : set.files)
      for (const RuleProblem& p : f.problems) ADD_FAILURE() << p.where << ": " << p.reason;
    auto img = compile_rules(set);
    EXPECT_TRUE(img.is_ok()) << img.status().message();
    image = *img;
  }
  std::vector<uint32_t> sids(Detector& d, const AppTx& tx) {
    Unit u;
    u.buffer = Buffer::kApp;
    u.tx     = &tx;
    u.flow   = 1;
    u.dir    = tx.response ? 1 : 0;
    u.pkt.proto = 6;
    u.pkt.src = tx.response ? b : a, u.pkt.dst = tx.response ? a : b;
    u.pkt.sport = tx.response ? 80 : 40000, u.pkt.dport = tx.response ? 40000 : 80;
    u.pkt.has_flow = u.pkt.established = true;
    u.pkt.to_server = !tx.response;
    u.pkt.app_layer = tx.layer;
    std::vector<Hit> hits;
    EXPECT_TRUE(d.inspect(u, hits).is_ok());
    std::vector<uint32_t> out;
    for (const Hit& h : hits) out.push_back(image->rules()[h.rule].sid);
    std::sort(out.begin(), out.end());
    return out;
  }
};

AppTx request(const std::string& method, const std::string& uri, const std::string& ua) {
  AppTx t;
  t.layer = AppLayer::kHttp;
  t.set(AppBuffer::kHttpMethod, method);
  t.set(AppBuffer::kHttpUri, uri);
  t.set(AppBuffer::kHttpUriRaw, uri);
  if (!ua.empty()) t.set(AppBuffer::kHttpUserAgent, ua);
  t.set(AppBuffer::kPayload, method + " " + uri + " HTTP/1.1\r\nUser-Agent: " + ua + "\r\n\r\n");
  return t;
}

TEST(NidsHttpDetect, TransactionRulesOnEveryEngine) {
  TxHarness h(
      "alert http any any -> any any (msg:\"a\"; http.method; content:\"POST\"; http.uri; content:\"/gate.php\"; endswith; sid:1;)\n"
      "alert http any any -> any any (msg:\"b\"; http.uri; content:\"/gate\"; content:\".php\"; distance:0; within:4; sid:2;)\n"
      "alert http any any -> any any (msg:\"c\"; http.user_agent; content:\"curl\"; nocase; startswith; sid:3;)\n"
      "alert http any any -> any any (msg:\"d\"; http.user_agent; content:!\"Mozilla\"; sid:4;)\n"
      "alert http any any -> any any (msg:\"e\"; urilen:<10; http.method; content:\"GET\"; bsize:3; sid:5;)\n"
      "alert http any any -> any any (msg:\"f\"; flow:to_client; http.stat_code; content:\"404\"; sid:6;)\n"
      "alert http any any -> any any (msg:\"g\"; content:\"HTTP/1.1\"; http.method; content:\"POST\"; sid:7;)\n"
      "alert http any any -> any any (msg:\"h\"; pcre:\"/^\\/gate\\.php$/U\"; sid:8;)\n"
      "alert http any any -> any any (msg:\"i\"; http.uri; content:\"/x\"; sid:9;)\n");
  const AppTx post = request("POST", "/gate.php", "curl/8.0");
  const AppTx get  = request("GET", "/x", "Mozilla/5.0");
  AppTx no_ua      = request("GET", "/x", "");
  AppTx resp       = get;
  resp.response    = true;
  resp.set(AppBuffer::kHttpStatCode, "404");
  for (const char* engine : {"ref.nids", "cpu.nids", "validate:cpu.nids"}) {
    auto d = make_detector(engine, h.image);
    ASSERT_TRUE(d.is_ok()) << d.status().message();
    EXPECT_EQ(h.sids(**d, post), (std::vector<uint32_t>{1, 2, 3, 4, 7, 8})) << engine;
    EXPECT_EQ(h.sids(**d, get), (std::vector<uint32_t>{5, 9})) << engine;
    EXPECT_EQ(h.sids(**d, no_ua), (std::vector<uint32_t>{5, 9})) << engine;  // no buffer: no match
    EXPECT_EQ(h.sids(**d, resp), (std::vector<uint32_t>{6})) << engine;      // its phase only
    EXPECT_GE((*d)->counters().app_units, 4u);
  }
  // cuda.nids's detector (its prefilter over cpu.ac) takes transactions the same way.
  auto block = detail::make_block_detector(h.image, "block:cpu.ac", "cpu.ac");
  ASSERT_TRUE(block.is_ok());
  EXPECT_EQ(h.sids(**block, post), (std::vector<uint32_t>{1, 2, 3, 4, 7, 8}));
  // ... and in a batch beside packet units (its batch path sends transactions to the per-buffer
  // prefilter too).
  Unit units[3];
  for (int k = 0; k < 3; ++k) {
    units[k].buffer = Buffer::kApp;
    units[k].tx     = k == 1 ? &get : &post;
    units[k].pkt.proto = 6;
    units[k].pkt.src = h.a, units[k].pkt.dst = h.b;
    units[k].pkt.sport = 40000, units[k].pkt.dport = 80;
    units[k].pkt.has_flow = units[k].pkt.established = true;
    units[k].pkt.app_layer = AppLayer::kHttp;
  }
  std::vector<Hit> hits[3];
  ASSERT_TRUE((*block)->inspect_batch(units, 3, hits).is_ok());
  EXPECT_EQ(hits[0].size(), 6u);
  EXPECT_EQ(hits[1].size(), 2u);
  EXPECT_EQ(hits[2].size(), 6u);
}

// Generated transaction rules and transactions: cpu.nids's per-buffer prefilter gives ref.nids's
// matches for every transaction (0, 1 and many rules; empty, short and long buffers).
TEST(NidsHttpDetect, PrefilterAgreesWithTheReferenceOnGeneratedRules) {
  std::mt19937_64 rng(11);
  const char* words[] = {"admin", "php", "gate", "x", "AbC", "/", "login", "..", "%00", "curl"};
  const char* bufs[] = {"http.uri", "http.method", "http.user_agent", "http.host", "http.header",
                        "http.request_body", "http.cookie"};
  for (int rules_n : {0, 1, 40, 300}) {
    std::string rules;
    for (int i = 0; i < rules_n; ++i) {
      std::string opts;
      const int items = 1 + int(rng() % 3);
      for (int k = 0; k < items; ++k) {
        opts += std::string(bufs[rng() % 7]) + "; content:\"" + words[rng() % 10] + "\"; ";
        if (rng() % 3 == 0) opts += "nocase; ";
        if (rng() % 5 == 0) opts += "fast_pattern; ";
      }
      rules += "alert http any any -> any any (msg:\"r\"; " + opts + "sid:" + std::to_string(i + 1) + ";)\n";
    }
    // fast_pattern twice in one rule is an error: drop those rules' second fast_pattern.
    std::string cleaned;
    size_t start = 0;
    while (start < rules.size()) {
      size_t end = rules.find('\n', start);
      std::string line = rules.substr(start, end - start);
      size_t first = line.find("fast_pattern; ");
      if (first != std::string::npos)
        for (size_t more = line.find("fast_pattern; ", first + 1); more != std::string::npos;
             more = line.find("fast_pattern; ", first + 1))
          line.erase(more, 14);
      cleaned += line + "\n";
      start = end + 1;
    }
    TxHarness h(cleaned);
    auto ref = make_detector("ref.nids", h.image);
    auto cpu = make_detector("cpu.nids", h.image);
    ASSERT_TRUE(ref.is_ok() && cpu.is_ok());
    for (int t = 0; t < 200; ++t) {
      AppTx tx;
      tx.layer = AppLayer::kHttp;
      for (AppBuffer b : {AppBuffer::kHttpUri, AppBuffer::kHttpMethod, AppBuffer::kHttpUserAgent,
                          AppBuffer::kHttpHost, AppBuffer::kHttpRequestHeader, AppBuffer::kHttpRequestBody,
                          AppBuffer::kHttpCookie}) {
        if (rng() % 4 == 0) continue;  // a buffer the transaction does not have
        std::string v;
        const int n = int(rng() % 6);
        for (int k = 0; k < n; ++k) v += words[rng() % 10];
        tx.set(b, v);
      }
      EXPECT_EQ(h.sids(**ref, tx), h.sids(**cpu, tx)) << "rules " << rules_n << " tx " << t;
    }
    // A second cpu.nids detector of the image clones the app groups' databases the first
    // compiled at its first transaction (the image's group cache), and answers alike.
    auto& groups      = static_cast<const detail::Image&>(*h.image).group_cache();
    const size_t made = groups.size();
    auto again        = make_detector("cpu.nids", h.image);
    ASSERT_TRUE(again.is_ok());
    AppTx tx;
    tx.layer = AppLayer::kHttp;
    tx.set(AppBuffer::kHttpUri, std::string(words[0]) + words[1]);
    EXPECT_EQ(h.sids(**ref, tx), h.sids(**again, tx));
    EXPECT_EQ(groups.size(), made) << "rules " << rules_n;
  }
}

// DNS through ldns: each question an instance of dns.query (labels joined by '.'), a response
// the response phase; compression loops, truncations and junk are refused.
TEST(NidsDns, QuestionsAreQueryInstances) {
  auto bytes = [](const char* hexs) {
    std::vector<uint8_t> v;
    for (const char* p = hexs; p[0] && p[1]; p += 2) v.push_back(uint8_t(std::stoi(std::string(p, 2), nullptr, 16)));
    return v;
  };
  // Two questions: www.example.com A, then mail.example.com (compressed onto the first) AAAA.
  const auto two = bytes("abcd0100000200000000000003777777076578616d706c6503636f6d00000100010"
                         "46d61696cc010001c0001");
  AppTx t;
  ASSERT_TRUE(detail::parse_dns(two.data(), two.size(), t));
  EXPECT_EQ(t.layer, AppLayer::kDns);
  EXPECT_FALSE(t.response);
  EXPECT_EQ(t.buf[size_t(AppBuffer::kDnsQuery)], "www.example.com");
  ASSERT_EQ(t.more.size(), 1u);
  EXPECT_EQ(t.more[0].second, "mail.example.com");
  ASSERT_TRUE(t.dns);
  EXPECT_EQ(t.dns->questions[1].type, "AAAA");
  EXPECT_TRUE(detail::probe_dns(two.data(), two.size()));
  const auto loop = bytes("abcd01000001000000000000c00c00010001");  // a name pointing at itself
  AppTx l;
  EXPECT_FALSE(detail::parse_dns(loop.data(), loop.size(), l));
  EXPECT_FALSE(detail::probe_dns(loop.data(), loop.size()));
  for (size_t cut = 0; cut < two.size(); ++cut) {  // every truncation refused, none crashes
    AppTx c;
    EXPECT_FALSE(detail::parse_dns(two.data(), cut, c)) << cut;
  }
  // Over TCP: two messages in one delivery, a third split across two.
  detail::DnsTcpStream st;
  std::vector<AppTx> out;
  uint64_t id = 0;
  std::string wire;
  for (int i = 0; i < 3; ++i) {
    wire.push_back(char(two.size() >> 8));
    wire.push_back(char(two.size() & 0xff));
    wire.append(two.begin(), two.end());
  }
  const size_t split = wire.size() - 10;
  EXPECT_TRUE(st.feed(reinterpret_cast<const uint8_t*>(wire.data()), split, out, id));
  EXPECT_EQ(out.size(), 2u);
  EXPECT_TRUE(st.feed(reinterpret_cast<const uint8_t*>(wire.data()) + split, 10, out, id));
  EXPECT_EQ(out.size(), 3u);
  EXPECT_EQ(out[2].id, 2u);
  const std::string junk = std::string("\x00\x05hello", 7);
  EXPECT_FALSE(st.feed(reinterpret_cast<const uint8_t*>(junk.data()), junk.size(), out, id));
}

// JA3 as its specification says: GREASE values left out of ciphers, extensions and groups.
TEST(NidsTls, Ja3LeavesGreaseOut) {
  std::string body = std::string("\x03\x03", 2) + std::string(32, '\0') + std::string("\x00", 1);
  body += std::string("\x00\x06\x0a\x0a\xc0\x2f\x00\x9c", 8);            // ciphers: GREASE, c02f, 009c
  body += std::string("\x01\x00", 2);                                    // compression: null
  std::string ext;
  ext += std::string("\x2a\x2a\x00\x00", 4);                                 // a GREASE extension
  ext += std::string("\x00\x00\x00\x0e\x00\x0c\x00\x00\x09", 9) + "a.example";  // server_name
  ext += std::string("\x00\x0a\x00\x06\x00\x04\x1a\x1a\x00\x1d", 10);          // groups: GREASE, x25519
  ext += std::string("\x00\x0b\x00\x02\x01\x00", 6);                          // point formats: 0
  body += char(ext.size() >> 8);
  body += char(ext.size() & 0xff);
  body += ext;
  detail::TlsHello h;
  ASSERT_TRUE(detail::parse_client_hello(reinterpret_cast<const uint8_t*>(body.data()), body.size(), h));
  EXPECT_EQ(h.sni, "a.example");
  EXPECT_EQ(h.ja3, "771,49199-156,0-10-11,29,0");
  EXPECT_EQ(h.version, "TLS 1.2");
  EXPECT_EQ(detail::md5_hex("771,49199-156,0-10-11,29,0").size(), 32u);
  for (size_t cut = 0; cut + 1 < body.size(); ++cut) {  // truncations: refused, never read past
    detail::TlsHello t;
    (void)detail::parse_client_hello(reinterpret_cast<const uint8_t*>(body.data()), cut, t);
  }
  bool more = false;
  EXPECT_TRUE(detail::probe_tls(reinterpret_cast<const uint8_t*>("\x16\x03\x01"), 3, more));
  EXPECT_FALSE(detail::probe_tls(reinterpret_cast<const uint8_t*>("\x16\x03"), 2, more));
  EXPECT_TRUE(more);
  EXPECT_FALSE(detail::probe_tls(reinterpret_cast<const uint8_t*>("GET"), 3, more));
}

// dotprefix and multi-instance buffers on every engine: ref.nids, cpu.nids (its per-buffer
// prefilter scans each instance and the dot-prefixed text).
TEST(NidsHttpDetect, DotprefixAndInstancesOnEveryEngine) {
  TxHarness h(
      "alert dns any any -> any any (msg:\"dom\"; dns.query; dotprefix; content:\".evil.example\"; endswith; sid:1;)\n"
      "alert dns any any -> any any (msg:\"exact\"; dns.query; content:\"evil.example\"; bsize:12; sid:2;)\n"
      "alert dns any any -> any any (msg:\"two\"; dns.query; content:\"mail.\"; startswith; sid:3;)\n"
      "alert tls any any -> any any (msg:\"cert\"; tls.certs; content:\"BAD\"; sid:4;)\n");
  auto query = [](std::vector<std::string> names) {
    AppTx t;
    t.layer = AppLayer::kDns;
    for (const std::string& n : names) t.add(AppBuffer::kDnsQuery, n);
    return t;
  };
  AppTx certs;
  certs.layer    = AppLayer::kTls;
  certs.response = true;
  certs.add(AppBuffer::kTlsCerts, "GOOD");
  certs.add(AppBuffer::kTlsCerts, "xxBADxx");
  for (const char* engine : {"ref.nids", "cpu.nids", "validate:cpu.nids"}) {
    auto d = make_detector(engine, h.image);
    ASSERT_TRUE(d.is_ok());
    EXPECT_EQ(h.sids(**d, query({"www.evil.example"})), (std::vector<uint32_t>{1})) << engine;
    EXPECT_EQ(h.sids(**d, query({"evil.example"})), (std::vector<uint32_t>{1, 2})) << engine;
    EXPECT_EQ(h.sids(**d, query({"notevil.example"})), (std::vector<uint32_t>{})) << engine;
    EXPECT_EQ(h.sids(**d, query({"a.test", "mail.evil.example"})), (std::vector<uint32_t>{1, 3})) << engine;
    EXPECT_EQ(h.sids(**d, certs), (std::vector<uint32_t>{4})) << engine;
  }
}

}  // namespace
}  // namespace warpath::nids
