// tests/runtime/metrics_test.cpp: the Prometheus text of a run report (metrics.hpp) and the
// HTTP server that serves it. The CLI test (tests/cli/test_metrics.py) parses a live run's
// text with the Prometheus project's own Python parser.
#include "warpath/runtime/metrics.hpp"

#include <gtest/gtest.h>

#include <httplib.h>

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
}  // namespace warpath::runtime
