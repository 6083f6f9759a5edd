// tests/runtime/metrics_test.cpp: the Prometheus text of a run report (metrics.hpp) and the
// HTTP server that serves it. The CLI test (tests/cli/test_metrics.py) parses a live run's
// text with the Prometheus project's own Python parser.
#include "warpath/runtime/metrics.hpp"

#include <gtest/gtest.h>

#include "runtime/http_head.hpp"

#include <httplib.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <chrono>
#include <thread>
#include <vector>
#include <map>
#include <sstream>
#include <string>

namespace warpath::runtime {
namespace {

RunReport sample_report() {
  RunReport r;
  r.app     = "chain";
  r.chain   = "acl -> router";
  r.engine  = "cpu: cpu.rfc + cpu.lpm";
  r.seconds = 2.5;
  r.rx = 1000, r.tx = 900, r.dropped = 90, r.slow_path = 10;
  r.drops_by_reason     = {{"acl_deny", 80}, {"no_route", 10}};
  r.slow_path_by_reason = {{"ttl_expired", 10}};
  r.ports.push_back({"in \"0\"", "pcap", {}});
  r.ports[0].stats.rx = 1000;
  ModuleReport acl;
  acl.position = 1, acl.kind = "acl", acl.in = 1000, acl.out = 920, acl.drops = {{"acl_deny", 80}};
  ModuleReport router;
  router.position = 2, router.kind = "router", router.in = 920, router.forwarded = 900;
  router.drops = {{"no_route", 10}}, router.slow_path = {{"ttl_expired", 10}};
  router.ns_per_packet = 12.5;
  r.modules = {acl, router};
  r.latency.p50_us = 3, r.latency.p99_us = 7;
  r.stages         = {21.5, 30, 12.5, 18, 4};
  r.auto_cost_cpu_ns = 155.5, r.auto_cost_offload_ns = 62.25;
  return r;
}

// sample name + labels -> value, and family -> type, from the text.
struct Parsed {
  std::map<std::string, double> samples;
  std::map<std::string, std::string> types;
};

Parsed parse(const std::string& text) {
  Parsed p;
  std::istringstream in(text);
  std::string line;
  while (std::getline(in, line)) {
    EXPECT_FALSE(line.empty());
    if (line.rfind("# TYPE ", 0) == 0) {
      const std::string rest = line.substr(7);
      p.types[rest.substr(0, rest.find(' '))] = rest.substr(rest.find(' ') + 1);
      continue;
    }
    if (line[0] == '#') continue;
    const size_t sp = line.rfind(' ');
    p.samples[line.substr(0, sp)] = std::stod(line.substr(sp + 1));
  }
  return p;
}

TEST(Metrics, TextHasEveryFamilyWithTypesAndEscapedLabels) {
  const std::string text = prometheus_text(sample_report(), "1.2.3");
  const Parsed p         = parse(text);
  EXPECT_EQ(p.types.at("warpath_packets_total"), "counter");
  EXPECT_EQ(p.types.at("warpath_module_ns_per_packet"), "gauge");
  EXPECT_EQ(p.samples.at("warpath_packets_total{what=\"rx\"}"), 1000);
  EXPECT_EQ(p.samples.at("warpath_packets_total{what=\"slow_path\"}"), 10);
  EXPECT_EQ(p.samples.at("warpath_drops_total{reason=\"acl_deny\"}"), 80);
  EXPECT_EQ(p.samples.at("warpath_slow_path_total{reason=\"ttl_expired\"}"), 10);
  EXPECT_EQ(p.samples.at("warpath_module_packets_total{position=\"1\",module=\"acl\",what=\"out\"}"),
            920);
  EXPECT_EQ(p.samples.at(
                "warpath_module_drops_total{position=\"2\",module=\"router\",reason=\"no_route\"}"),
            10);
  EXPECT_EQ(p.samples.at("warpath_module_ns_per_packet{position=\"2\",module=\"router\"}"), 12.5);
  EXPECT_EQ(p.types.at("warpath_stage_ns_per_packet"), "gauge");
  EXPECT_EQ(p.samples.at("warpath_stage_ns_per_packet{stage=\"rx\"}"), 21.5);
  EXPECT_EQ(p.samples.at("warpath_stage_ns_per_packet{stage=\"parse\"}"), 30);
  EXPECT_EQ(p.samples.at("warpath_stage_ns_per_packet{stage=\"other\"}"), 4);
  EXPECT_EQ(p.types.at("warpath_auto_worker_ns_per_packet"), "gauge");
  EXPECT_EQ(p.samples.at("warpath_auto_worker_ns_per_packet{path=\"cpu\"}"), 155.5);
  EXPECT_EQ(p.samples.at("warpath_auto_worker_ns_per_packet{path=\"offload\"}"), 62.25);
  EXPECT_EQ(p.samples.count("warpath_latency_microseconds{quantile=\"0.99\"}"), 0u)
      << "a live snapshot has no latency summary, so it has no latency family";
  // A quote in a port name is escaped.
  EXPECT_EQ(p.samples.at("warpath_port_packets_total{port=\"in \\\"0\\\"\",what=\"rx\"}"), 1000);
  EXPECT_NE(text.find("warpath_info{version=\"1.2.3\",app=\"chain\",chain=\"acl -> router\""),
            std::string::npos);
  // Every family is declared once.
  size_t helps = 0;
  for (size_t pos = 0; (pos = text.find("# HELP ", pos)) != std::string::npos; ++pos) ++helps;
  EXPECT_EQ(helps, p.types.size());
}

TEST(Metrics, FinalReportHasTheLatencyQuantiles) {
  RunReport r = sample_report();
  r.final     = true;
  const Parsed p = parse(prometheus_text(r, "1.2.3"));
  EXPECT_EQ(p.types.at("warpath_latency_microseconds"), "gauge");
  EXPECT_EQ(p.samples.at("warpath_latency_microseconds{quantile=\"0.99\"}"), 7);
  EXPECT_EQ(p.samples.at("warpath_latency_microseconds{quantile=\"0.5\"}"), 3);
}

TEST(Metrics, ListenAddressesAreCheckedBeforeBinding) {
  auto v4 = parse_listen_address("127.0.0.1:9100");
  ASSERT_TRUE(v4.is_ok());
  EXPECT_EQ(v4->host, "127.0.0.1");
  EXPECT_EQ(v4->port, 9100);
  auto v6 = parse_listen_address("[::1]:0");
  ASSERT_TRUE(v6.is_ok());
  EXPECT_EQ(v6->host, "::1");
  for (const char* bad : {"bogus", ":9100", "127.0.0.1:", "127.0.0.1:70000", "::1:9100", "h:9x"})
    EXPECT_FALSE(parse_listen_address(bad).is_ok()) << bad;
}

TEST(Metrics, ServerAnswersMetricsAndNothingElse) {
  auto s = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  MetricsServer& server = **s;
  ASSERT_GT(server.port(), 0);
  server.publish("warpath_up_seconds 1\n");
  httplib::Client client("127.0.0.1", server.port());
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->status, 200);
  EXPECT_EQ(res->body, "warpath_up_seconds 1\n");
  EXPECT_NE(res->get_header_value("Content-Type").find("version=0.0.4"), std::string::npos);
  server.publish("warpath_up_seconds 2\n");
  EXPECT_EQ(client.Get("/metrics")->body, "warpath_up_seconds 2\n");
  EXPECT_EQ(client.Get("/")->status, 404);
  // The same port again is taken.
  auto again = MetricsServer::start("127.0.0.1:" + std::to_string(server.port()));
  ASSERT_FALSE(again.is_ok());
  EXPECT_NE(again.status().message().find("cannot listen"), std::string::npos);
}

TEST(Metrics, BadAddressesAreErrors) {
  for (const char* bad : {"", "9100", "127.0.0.1:", ":9100", "127.0.0.1:70000", "127.0.0.1:x"}) {
    auto s = MetricsServer::start(bad);
    ASSERT_FALSE(s.is_ok()) << bad;
    EXPECT_NE(s.status().message().find("--metrics"), std::string::npos) << bad;
  }
}

}  // namespace

// A connected TCP socket to 127.0.0.1:port (-1 when it cannot connect).
int connect_to(uint16_t port) {
  const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in sa{};
  sa.sin_family      = AF_INET;
  sa.sin_port        = htons(port);
  sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  if (::connect(fd, reinterpret_cast<sockaddr*>(&sa), sizeof sa) != 0) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Slowloris (hardening round 2, defect 6): clients that send a request a header at a time hold
// no scrape up, and are closed once their head has taken more than 2 s.
TEST(Metrics, SlowClientsDoNotBlockScrapes) {
  auto s = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  (*s)->publish("warpath_up_seconds 1\n");
  std::vector<int> slow;
  for (int i = 0; i < 32; ++i) {
    const int fd = connect_to((*s)->port());
    ASSERT_GE(fd, 0);
    const std::string part = "GET /metrics HTTP/1.1\r\nHost: x\r\n";
    ASSERT_EQ(::send(fd, part.data(), part.size(), 0), ssize_t(part.size()));
    slow.push_back(fd);
  }
  httplib::Client client("127.0.0.1", (*s)->port());
  client.set_read_timeout(1, 0);
  client.set_connection_timeout(1, 0);
  for (int round = 0; round < 3; ++round) {
    for (int fd : slow) (void)::send(fd, "X-a: b\r\n", 8, MSG_NOSIGNAL);  // one more header each
    const auto t0 = std::chrono::steady_clock::now();
    auto res      = client.Get("/metrics");
    ASSERT_TRUE(res) << "round " << round;
    EXPECT_EQ(res->status, 200);
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(1));
    std::this_thread::sleep_for(std::chrono::milliseconds(900));
  }
  // By now (2.7 s) each slow head took more than 2 s: closed (a read sees the end).
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  for (int fd : slow) {
    timeval tv{1, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    char b[64];
    EXPECT_EQ(::recv(fd, b, sizeof b, 0), 0);
    ::close(fd);
  }
}

TEST(Metrics, MoreConnectionsThanTheCapStillScrape) {
  auto s = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  (*s)->publish("x 1\n");
  std::vector<int> idle;
  for (int i = 0; i < 300; ++i) idle.push_back(connect_to((*s)->port()));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  httplib::Client client("127.0.0.1", (*s)->port());
  client.set_read_timeout(1, 0);
  auto res = client.Get("/metrics");
  ASSERT_TRUE(res);
  EXPECT_EQ(res->body, "x 1\n");
  for (int fd : idle) ::close(fd);
}

TEST(Metrics, PipelinedKeepAliveAndBadRequests) {
  auto s = MetricsServer::start("127.0.0.1:0");
  ASSERT_TRUE(s.is_ok()) << s.status().message();
  (*s)->publish("x 1\n");
  auto exchange = [&](const std::string& req) {
    const int fd = connect_to((*s)->port());
    EXPECT_EQ(::send(fd, req.data(), req.size(), 0), ssize_t(req.size()));
    ::shutdown(fd, SHUT_WR);
    std::string got;
    char b[4096];
    timeval tv{2, 0};
    setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
    for (ssize_t n; (n = ::recv(fd, b, sizeof b, 0)) > 0;) got.append(b, size_t(n));
    ::close(fd);
    return got;
  };
  const std::string two = exchange("GET /metrics HTTP/1.1\r\n\r\nHEAD /metrics HTTP/1.1\r\n\r\n");
  EXPECT_EQ(two.find("HTTP/1.1 200"), 0u) << two;
  EXPECT_NE(two.find("HTTP/1.1 200", 10), std::string::npos) << two;
  EXPECT_EQ(exchange("POST /metrics HTTP/1.1\r\nContent-Length: 3\r\n\r\nabc").find("HTTP/1.1 405"), 0u);
  EXPECT_EQ(exchange("GET /metrics\r\n\r\n").find("HTTP/1.1 400"), 0u);
  EXPECT_EQ(exchange(std::string(9000, 'A')).find("HTTP/1.1 400"), 0u);
  EXPECT_EQ(exchange("GET /?x HTTP/1.0\r\n\r\n").find("HTTP/1.1 404"), 0u);
}

TEST(HttpHead, ParsesWhatServersMustAndRefusesTheRest) {
  HttpHead h;
  size_t used = 0;
  std::string why;
  const std::string ok = "GET /metrics?x=1 HTTP/1.0\r\nConnection: Keep-Alive\r\nHost: a\r\n\r\nrest";
  ASSERT_EQ(parse_http_head(ok, h, used, why), HeadParse::kComplete) << why;
  EXPECT_EQ(h.method, "GET");
  EXPECT_EQ(h.target, "/metrics?x=1");
  EXPECT_EQ(h.minor, 0);
  EXPECT_TRUE(h.keep_alive);
  EXPECT_EQ(used, ok.size() - 4);
  EXPECT_EQ(parse_http_head("GET / HTTP/1.1\r\nHost:", h, used, why), HeadParse::kIncomplete);
  EXPECT_EQ(parse_http_head("", h, used, why), HeadParse::kIncomplete);
  ASSERT_EQ(parse_http_head("GET / HTTP/1.1\nConnection: close\n\n", h, used, why), HeadParse::kComplete);
  EXPECT_FALSE(h.keep_alive);
  for (const char* bad : {"GET / HTTP/2.0\r\n\r\n", "GET  / HTTP/1.1\r\n\r\n", "G(T / HTTP/1.1\r\n\r\n",
                          "GET / HTTP/1.1\r\n folded\r\n\r\n", "GET / HTTP/1.1\r\nNoColon\r\n\r\n",
                          "GET / HTTP/1.1\r\nContent-Length: 1\r\nContent-Length: 1\r\n\r\n",
                          "GET / HTTP/1.1\r\nContent-Length: -1\r\n\r\n", "GET /\r HTTP/1.1\r\n\r\n"})
    EXPECT_EQ(parse_http_head(bad, h, used, why), HeadParse::kBad) << bad;
  EXPECT_EQ(parse_http_head(std::string(kMaxHttpHead + 1, 'a'), h, used, why), HeadParse::kBad);
}

}  // namespace warpath::runtime
