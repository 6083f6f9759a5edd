// tests/runtime/run_config_test.cpp: the run configuration: TOML loading (every key, every
// error naming file:line:key, port order, relative paths), validate() and the name tables.
#include "warpath/runtime/run_config.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <string>

#include "support/test_support.hpp"

namespace warpath::runtime {
namespace {

// The example of run_config.hpp's header comment, with every key set to a non-default value.
constexpr const char* kFull = R"(# a full config
app       = "router"
engine    = "cpu"
offload_device = "cpu"
offload_depth = 7
offload_delay_us = 300
workers   = 2
batch     = 512
delay_us  = 150
duration  = 10.5
seed      = 7
json      = "/abs/run.json"
slow_path = "/abs/slow.pcap"
pin_threads = false
cpus      = [3, 1, 0]
gen_profile = "ipv4+min"
[ports]
in  = "pcap:/abs/in.pcap:/abs/out.pcap"
out = "null"
[router]
fib       = "/abs/routes.txt.xz"
neighbors = "/abs/neighbors.txt"
lookup    = "cpu.lpm"
[acl]
rules     = "/abs/acl1_10K"
format    = "openflow"
algo      = "tuple"
match     = "output:3"
default   = "drop"
ipv6      = "deny"
)";

RunConfig parsed(const std::string& text, Status* status = nullptr) {
  RunConfig c;
  Status s = parse_run_config(text, "cfg.toml", c);
  if (status)
    *status = s;
  else
    EXPECT_TRUE(s.is_ok()) << s.message();
  return c;
}

/// The error of parsing `text` as "cfg.toml".
Status parse_error(const std::string& text) {
  Status s;
  parsed(text, &s);
  EXPECT_FALSE(s.is_ok()) << text;
  return s;
}

RunConfig with_ports() {
  RunConfig c;
  c.ports = {{"gen", "gen:max:100"}, {"sink", "null"}};
  return c;
}

void expect_invalid(const RunConfig& c, const std::string& prefix) {
  const Status s = c.validate();
  ASSERT_FALSE(s.is_ok()) << prefix;
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_EQ(s.message().rfind(prefix, 0), 0u) << s.message();
}

TEST(RunConfigNames, RoundTripAndReject) {
  // The presets the chain modules' library registers (src/modules/presets.cpp).
  EXPECT_EQ(presets().apps,
            (std::vector<std::string>{"acl", "router", "router+acl", "ipsec", "switch"}));
  EXPECT_EQ(preset_app_list(), "acl, router, router+acl, ipsec, switch");
  for (const char* bad : {"hub", "", "ACL"}) {
    RunConfig c = with_ports();
    c.app       = bad;
    expect_invalid(c, "app: must be one of acl, router, router+acl, ipsec, switch");
  }
  for (Offload o : {Offload::kCpu, Offload::kGpu, Offload::kAuto}) {
    Offload back = Offload::kAuto;
    ASSERT_TRUE(parse_offload(offload_name(o), back));
    EXPECT_EQ(back, o);
  }
  Offload o = Offload::kCpu;
  EXPECT_FALSE(parse_offload("cuda", o));
  EXPECT_EQ(o, Offload::kCpu);
}

TEST(RunConfigToml, FullExample) {
  const RunConfig c = parsed(kFull);
  EXPECT_EQ(c.app, "router");
  EXPECT_EQ(c.engine, Offload::kCpu);
  EXPECT_EQ(c.offload_device, "cpu");
  EXPECT_EQ(c.offload_depth, 7u);
  EXPECT_EQ(c.offload_delay_us, 300u);
  EXPECT_EQ(c.workers, 2u);
  EXPECT_EQ(c.batch, 512u);
  EXPECT_EQ(c.delay_us, 150u);
  EXPECT_DOUBLE_EQ(c.duration_s, 10.5);
  EXPECT_EQ(c.seed, 7u);
  EXPECT_EQ(c.json, "/abs/run.json");
  EXPECT_EQ(c.slow_path, "/abs/slow.pcap");
  EXPECT_FALSE(c.pin_threads);
  EXPECT_EQ(c.cpus, (std::vector<int>{3, 1, 0}));
  EXPECT_EQ(c.gen_profile, "ipv4+min");
  ASSERT_EQ(c.ports.size(), 2u);
  EXPECT_EQ(c.ports[0],
            (std::pair<std::string, std::string>{"in", "pcap:/abs/in.pcap:/abs/out.pcap"}));
  EXPECT_EQ(c.ports[1], (std::pair<std::string, std::string>{"out", "null"}));
  EXPECT_EQ(c.setting("router.fib"), "/abs/routes.txt.xz");
  EXPECT_EQ(c.setting("router.neighbors"), "/abs/neighbors.txt");
  EXPECT_EQ(c.setting("router.lookup"), "cpu.lpm");
  EXPECT_EQ(c.setting("acl.rules"), "/abs/acl1_10K");
  EXPECT_EQ(c.setting("acl.format"), "openflow");
  EXPECT_EQ(c.setting("acl.algo"), "tuple");
  EXPECT_EQ(c.setting("acl.match"), "output:3");
  EXPECT_EQ(c.setting("acl.default"), "drop");
  EXPECT_EQ(c.setting("acl.ipv6"), "deny");
  EXPECT_EQ(c.settings.size(), 9u) << "each key once";
  EXPECT_TRUE(c.validate().is_ok()) << c.validate().message();
}

TEST(RunConfigToml, EmptyFileKeepsDefaultsAndAbsentKeysKeepValues) {
  const RunConfig d = parsed("");
  const RunConfig fresh;
  EXPECT_EQ(d.app, fresh.app);
  EXPECT_EQ(d.batch, fresh.batch);
  EXPECT_TRUE(d.ports.empty()) << "no [ports]: the CLI fills defaults";

  RunConfig c = with_ports();
  c.batch     = 64;
  c.set_setting("router.fib", "/keep/fib.txt");
  ASSERT_TRUE(
      parse_run_config("workers = 3\n[router]\nlookup = \"ref.lpm\"\n", "x.toml", c).is_ok());
  EXPECT_EQ(c.workers, 3u);
  EXPECT_EQ(c.batch, 64u);
  EXPECT_EQ(c.setting("router.fib"), "/keep/fib.txt");
  EXPECT_EQ(c.setting("router.lookup"), "ref.lpm");
  EXPECT_EQ(c.ports.size(), 2u) << "ports not in the file are kept";
  ASSERT_TRUE(parse_run_config("[ports]\nonly = \"gen:0\"\n", "x.toml", c).is_ok());
  ASSERT_EQ(c.ports.size(), 1u) << "[ports] replaces the ports";
  EXPECT_EQ(c.ports[0].first, "only");
}

TEST(RunConfigToml, DurationTakesIntegersAndFloats) {
  EXPECT_DOUBLE_EQ(parsed("duration = 3\n").duration_s, 3.0);
  EXPECT_DOUBLE_EQ(parsed("duration = 0.25\n").duration_s, 0.25);
}

TEST(RunConfigToml, SwitchFlowsAndOpenflowTargets) {
  RunConfig c;
  ASSERT_TRUE(parse_run_config("app = \"switch\"\nflows = \"/f.txt\"\nopenflow = \"ptcp:6000\"\n", "x.toml", c).is_ok());
  EXPECT_EQ(c.app, "switch");
  EXPECT_EQ(c.setting("flows"), "/f.txt");
  EXPECT_EQ(c.openflow, (std::vector<std::string>{"ptcp:6000"}));
  ASSERT_TRUE(parse_run_config("openflow = [\"ptcp:6000\", \"tcp:10.0.0.1:6653\"]\n", "x.toml", c).is_ok());
  EXPECT_EQ(c.openflow.size(), 2u);
  ASSERT_TRUE(parse_run_config("openflow = \"pssl:6000\"\nopenflow_private_key = \"/k.pem\"\n"
                               "openflow_certificate = \"/c.pem\"\nopenflow_ca_cert = \"/ca.pem\"\n"
                               "openflow_probe = 0.5\n",
                               "x.toml", c)
                  .is_ok());
  EXPECT_EQ(c.openflow_private_key, "/k.pem");
  EXPECT_EQ(c.openflow_certificate, "/c.pem");
  EXPECT_EQ(c.openflow_ca_cert, "/ca.pem");
  EXPECT_EQ(c.openflow_probe_ms, 500u);
  EXPECT_FALSE(parse_run_config("openflow_probe = 7200\n", "x.toml", c).is_ok());
  Status bad = parse_run_config("openflow = 6653\n", "x.toml", c);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.message().find("x.toml:1: openflow"), std::string::npos) << bad.message();
}

TEST(RunConfigToml, PortsKeepFileOrder) {
  const RunConfig c = parsed(
      "[ports]\nzeta = \"gen:1000\"\nalpha = \"null\"\nmid = \"pcap::/o.pcap\"\n"
      "b = \"null\"\n\"a.1\" = \"null\"\n");
  ASSERT_EQ(c.ports.size(), 5u);
  const char* want[] = {"zeta", "alpha", "mid", "b", "a.1"};
  for (size_t i = 0; i < 5; ++i) EXPECT_EQ(c.ports[i].first, want[i]) << i;
  // Inline tables keep their order too.
  const RunConfig d = parsed("ports = { z = \"gen:0\", a = \"null\" }\n");
  ASSERT_EQ(d.ports.size(), 2u);
  EXPECT_EQ(d.ports[0].first, "z");
  EXPECT_EQ(d.ports[1].first, "a");
}

TEST(RunConfigToml, RelativePathsResolveAgainstTheConfigDirectory) {
  const std::string dir  = testing::temp_dir();
  const std::string path = dir + "/sub/run.toml";
  std::filesystem::create_directories(dir + "/sub");
  std::ofstream(path) << "json = \"out/run.json\"\nslow_path = \"slow.pcap\"\n"
                         "[ports]\nin = \"pcap:caps/in.pcap:caps/out.pcap\"\n"
                         "tx = \"pcap::tx.pcap\"\nrx = \"pcap:/abs/in.pcap:\"\n"
                         "g = \"gen:1M:100\"\nn = \"null\"\nro = \"pcap:ro.pcap\"\n"
                         "[router]\nfib = \"../fib.txt\"\nneighbors = \"/abs/n.txt\"\n"
                         "[acl]\nrules = \"acl.txt\"\n";
  RunConfig c;
  Status s = load_run_config(path, c);
  ASSERT_TRUE(s.is_ok()) << s.message();
  const std::string base = dir + "/sub/";
  EXPECT_EQ(c.json, base + "out/run.json");
  EXPECT_EQ(c.slow_path, base + "slow.pcap");
  EXPECT_EQ(c.setting("router.fib"), base + "../fib.txt");
  EXPECT_EQ(c.setting("router.neighbors"), "/abs/n.txt");
  EXPECT_EQ(c.setting("acl.rules"), base + "acl.txt");
  ASSERT_EQ(c.ports.size(), 6u);
  EXPECT_EQ(c.ports[0].second, "pcap:" + base + "caps/in.pcap:" + base + "caps/out.pcap");
  EXPECT_EQ(c.ports[1].second, "pcap::" + base + "tx.pcap");
  EXPECT_EQ(c.ports[2].second, "pcap:/abs/in.pcap:");
  EXPECT_EQ(c.ports[3].second, "gen:1M:100");
  EXPECT_EQ(c.ports[4].second, "null");
  EXPECT_EQ(c.ports[5].second, "pcap:" + base + "ro.pcap");

  // A name without a directory leaves relative paths as they are.
  EXPECT_EQ(parsed("[acl]\nrules = \"acl.txt\"\n").setting("acl.rules"), "acl.txt");
}

TEST(RunConfigToml, MissingFileIsAnIoError) {
  RunConfig c;
  Status s = load_run_config(testing::temp_dir() + "/nope.toml", c);
  EXPECT_EQ(s.code(), Errc::kIoError);
  EXPECT_NE(s.message().find("nope.toml"), std::string::npos) << s.message();
}

TEST(RunConfigToml, SyntaxErrorsNameFileAndLine) {
  Status s = parse_error("batch = 1\nworkers = \n");
  EXPECT_EQ(s.code(), Errc::kParseError);
  EXPECT_EQ(s.message().rfind("cfg.toml:2: ", 0), 0u) << s.message();
  s = parse_error("a = 1\n\n[ports\n");
  EXPECT_EQ(s.message().rfind("cfg.toml:3: ", 0), 0u) << s.message();
  s = parse_error("batch = 1\nbatch = 2\n");  // duplicate key
  EXPECT_EQ(s.message().rfind("cfg.toml:2: ", 0), 0u) << s.message();
  // Non-ASCII in a string as an escape is fine.
  RunConfig esc = with_ports();
  ASSERT_TRUE(parse_run_config("# resume\njson = \"r\\u00e9sum\\u00e9.json\"\n",
                               "cfg.toml", esc)
                  .is_ok());
  EXPECT_EQ(esc.json, "r\xc3\xa9sum\xc3\xa9.json");
  s = parse_error("batch = 1\nbatch = 2\n");
  EXPECT_EQ(s.message().rfind("cfg.toml:2: ", 0), 0u) << s.message();
}

struct BadCase {
  const char* text;
  const char* where;  ///< "cfg.toml:LINE: key: " the message must start with
  const char* why;    ///< and contain
};

class RunConfigTomlBad : public ::testing::TestWithParam<BadCase> {};

TEST_P(RunConfigTomlBad, NamesFileLineAndKey) {
  const BadCase& b       = GetParam();
  RunConfig c            = with_ports();
  const RunConfig before = c;
  Status s               = parse_run_config(b.text, "cfg.toml", c);
  ASSERT_FALSE(s.is_ok()) << b.text;
  EXPECT_EQ(s.message().rfind(b.where, 0), 0u) << s.message();
  EXPECT_NE(s.message().find(b.why), std::string::npos) << s.message();
  EXPECT_TRUE(s.code() == Errc::kParseError || s.code() == Errc::kInvalidArgument);
  EXPECT_EQ(c.batch, before.batch) << "a failed load changes nothing";
  EXPECT_EQ(c.ports, before.ports);
}

INSTANTIATE_TEST_SUITE_P(
    Errors, RunConfigTomlBad,
    ::testing::Values(
        // raw non-ASCII outside comments (toml++ reaches __builtin_unreachable on some: found
        // by fuzz/readers_fuzz.cpp; upstream issues #190, #295)
        BadCase{"# ok\n\xcc\xaa\n", "cfg.toml:2: ", "non-ASCII character"},
        BadCase{"batch = 8 # caf\xc3\xa9\n", "cfg.toml:1: ", "non-ASCII character"},
        BadCase{"json = \"r\xc3\xa9sum\xc3\xa9.json\"\n", "cfg.toml:1: ", "\\uXXXX escape"},
        BadCase{"s = \"\"\"\\\n\xc2\xa7\"\"\"\n", "cfg.toml:2: ", "non-ASCII character"},
        // metrics addresses are checked with the file and line
        BadCase{"batch = 8\nmetrics = \"bogus\"\n", "cfg.toml:2: metrics: ", "expected ADDR:PORT"},
        // unknown keys
        BadCase{"batch = 8\nbatchsize = 8\n", "cfg.toml:2: batchsize: ", "unknown key"},
        BadCase{"[router]\nfib = \"f\"\nfibs = \"f\"\n", "cfg.toml:3: router.fibs: ", "unknown"},
        BadCase{"[acl]\n\nrule = \"r\"\n", "cfg.toml:3: acl.rule: ", "unknown key"},
        BadCase{"\n[switch]\nx = 1\n", "cfg.toml:2: switch: ", "unknown key"},
        // wrong types
        BadCase{"batch = \"1024\"\n", "cfg.toml:1: batch: ", "expected an integer, got a string"},
        BadCase{"workers = 1.5\n", "cfg.toml:1: workers: ", "expected an integer, got a float"},
        BadCase{"duration = \"10s\"\n", "cfg.toml:1: duration: ", "expected a number"},
        BadCase{"app = 1\n", "cfg.toml:1: app: ", "expected a string"},
        BadCase{"pin_threads = \"yes\"\n", "cfg.toml:1: pin_threads: ", "expected a boolean"},
        BadCase{"cpus = 3\n", "cfg.toml:1: cpus: ", "expected an array"},
        BadCase{"cpus = [1, -2]\n", "cfg.toml:1: cpus: ", "core numbers must be 0..65535"},
        BadCase{"router = 5\n", "cfg.toml:1: router: ", "expected a table, got an integer"},
        BadCase{"[[ports]]\nx = 1\n", "cfg.toml:1: ports: ", "expected a table, got an array"},
        BadCase{"[ports]\nin = 1\n", "cfg.toml:2: ports.in: ", "expected a string"},
        BadCase{"[acl]\nrules = [\"a\"]\n", "cfg.toml:2: acl.rules: ", "expected a string"},
        BadCase{"[router]\nfib = true\n", "cfg.toml:2: router.fib: ", "got a boolean"},
        BadCase{"seed = 1979-05-27\n", "cfg.toml:1: seed: ", "got a date"},
        // bad values
        BadCase{"\nbatch = 0\n", "cfg.toml:2: batch: ", "must be 1..65536, got 0"},
        BadCase{"batch = 65537\n", "cfg.toml:1: batch: ", "got 65537"},
        BadCase{"workers = 0\n", "cfg.toml:1: workers: ", "must be 1..256"},
        BadCase{"workers = 257\n", "cfg.toml:1: workers: ", "got 257"},
        BadCase{"workers = -1\n", "cfg.toml:1: workers: ", "out of range"},
        BadCase{"batch = 9999999999\n", "cfg.toml:1: batch: ", "out of range"},
        BadCase{"delay_us = 1000001\n", "cfg.toml:1: delay_us: ", "1000000"},
        BadCase{"offload_depth = 0\n", "cfg.toml:1: offload_depth: ", "1..64"},
        BadCase{"offload_depth = 65\n", "cfg.toml:1: offload_depth: ", "1..64"},
        BadCase{"offload_device = \"cpu\"\noffload_delay_us = 1000001\n",
                "cfg.toml:2: offload_delay_us: ", "1000000"},
        BadCase{"offload_delay_us = 5\n",
                "cfg.toml:1: offload_delay_us: ", "only with offload_device = \"cpu\""},
        BadCase{"duration = -1\n", "cfg.toml:1: duration: ", ">= 0"},
        BadCase{"duration = nan\n", "cfg.toml:1: duration: ", "finite"},
        BadCase{"duration = inf\n", "cfg.toml:1: duration: ", "finite"},
        BadCase{"seed = -3\n", "cfg.toml:1: seed: ", ">= 0"},
        BadCase{"app = \"hub\"\n", "cfg.toml:1: app: ", "acl, router, router+acl, ipsec, switch"},
        BadCase{"engine = \"cuda\"\n", "cfg.toml:1: engine: ", "cpu, gpu, auto"},
        BadCase{"offload_device = \"tpu\"\n", "cfg.toml:1: offload_device: ", "cuda, cpu"},
        BadCase{"[router]\nlookup = \"\"\n", "cfg.toml:2: router.lookup: ", "empty"},
        BadCase{"[acl]\nformat = \"snort\"\n", "cfg.toml:2: acl.format: ", "classbench"},
        BadCase{"[acl]\nalgo = \"hicuts\"\n", "cfg.toml:2: acl.algo: ", "got 'hicuts'"},
        BadCase{"[acl]\nmatch = \"allow\"\n", "cfg.toml:2: acl.match: ", "permit, deny, drop"},
        BadCase{"[acl]\ndefault = \"output:65536\"\n", "cfg.toml:2: acl.default: ", "output:N"},
        BadCase{"[acl]\nipv6 = \"output:\"\n", "cfg.toml:2: acl.ipv6: ", "got 'output:'"},
        BadCase{"[ports]\nin = \"gen:0\"\n\"bad name\" = \"null\"\n",
                "cfg.toml:3: ports.bad name: ", "A-Z a-z 0-9"},
        BadCase{"[ports]\n\"\" = \"gen:0\"\n", "cfg.toml:2: ports.: ", "non-empty"},
        BadCase{"[ports]\nin = \"gen:0\"\nout = \"\"\n", "cfg.toml:3: ports.out: ", "empty"},
        BadCase{"[ports]\nin = \"teleport:x\"\n", "cfg.toml:2: ports.in: ", ""},
        BadCase{"[ports]\na = \"null\"\n\nb = \"pcap::o.pcap\"\n",
                "cfg.toml:1: ports: ", "no port receives packets"},
        BadCase{"[ports]\n", "cfg.toml:1: ports: ", "no ports"}));

TEST(RunConfigValidate, DefaultsWithPortsAreValid) {
  EXPECT_TRUE(with_ports().validate().is_ok()) << with_ports().validate().message();
  RunConfig c  = with_ports();
  c.batch      = 1;
  c.workers    = 256;
  c.delay_us   = 1'000'000;
  c.duration_s = 0;
  EXPECT_TRUE(c.validate().is_ok());
  c.batch = 65536;
  EXPECT_TRUE(c.validate().is_ok());
}

TEST(RunConfigValidate, RangesNameTheKey) {
  RunConfig c = with_ports();
  c.batch     = 0;
  expect_invalid(c, "batch: must be 1..65536, got 0");
  c         = with_ports();
  c.workers = 0;
  expect_invalid(c, "workers: must be 1..256, got 0");
  c          = with_ports();
  c.delay_us = 1'000'001;
  expect_invalid(c, "delay_us: ");
  c            = with_ports();
  c.duration_s = -0.5;
  expect_invalid(c, "duration: ");
  c                = with_ports();
  c.offload_device = "gpu";
  expect_invalid(c, "offload_device: ");
  c               = with_ports();
  c.offload_depth = 0;
  expect_invalid(c, "offload_depth: must be 1..64, got 0");
  c                  = with_ports();
  c.offload_delay_us = 10;  // with the cuda device
  expect_invalid(c, "offload_delay_us: emulates a device's round trip");
  c.offload_device = "cpu";
  EXPECT_TRUE(c.validate().is_ok());
  c              = with_ports();
  c.set_setting("acl.format", "ClassBench");
  expect_invalid(c, "acl.format: ");
  c = with_ports();
  c.set_setting("acl.algo", "");
  expect_invalid(c, "acl.algo: ");
  c = with_ports();
  c.set_setting("router.lookup", "");
  expect_invalid(c, "router.lookup: ");
  c = with_ports();
  c.set_setting("acl.rulez", "x");
  expect_invalid(c, "acl.rulez: not a setting of any app");
  c     = with_ports();
  c.app = "ipsec";
  expect_invalid(c, "sa: app ipsec needs the SA file");
}

TEST(RunConfigValidate, Actions) {
  for (const char* ok : {"permit", "deny", "drop", "output:0", "output:65535", "output:007"}) {
    RunConfig c = with_ports();
    c.set_setting("acl.match", ok);
    EXPECT_TRUE(c.validate().is_ok()) << ok;
  }
  for (const char* bad : {"", "Permit", "output:", "output:65536", "output:-1", "output:1x",
                          "output:999999", "output 1", "forward"}) {
    RunConfig c = with_ports();
    c.set_setting("acl.default", bad);
    expect_invalid(c, "acl.default: ");
    c = with_ports();
    c.set_setting("acl.ipv6", bad);
    if (*bad)
      expect_invalid(c, "acl.ipv6: ");
    else
      EXPECT_TRUE(c.validate().is_ok()) << "empty ipv6: the default action's";
  }
}

TEST(RunConfigValidate, Ports) {
  RunConfig c;
  expect_invalid(c, "ports: ");
  c.ports = {{"a", "gen:0"}, {"a", "null"}};
  expect_invalid(c, "ports.a: ");
  c.ports = {{"a", "gen:0"}, {"b/c", "null"}};
  expect_invalid(c, "ports.b/c: ");
  c.ports = {{"", "gen:0"}};
  expect_invalid(c, "ports.: ");
  c.ports = {{"x", ""}};
  expect_invalid(c, "ports.x: ");
  c.ports = {{"sink", "null"}, {"tx", "pcap::out.pcap"}};
  expect_invalid(c, "ports: no port receives packets");
  c.ports = {{"A-z_0.9", "pcap:in.pcap:"}, {"sink", "null"}};
  EXPECT_TRUE(c.validate().is_ok()) << c.validate().message();
}

}  // namespace
}  // namespace warpath::runtime
