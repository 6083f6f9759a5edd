// warpath run: the main job, the packet pipeline (include/warpath/runtime/pipeline.hpp).
//
//   warpath run [CONFIG.toml] [--app A] [--port NAME=SPEC]... [--engine cpu|gpu|auto] ...
//
// Settings come from the TOML file (schema: include/warpath/runtime/run_config.hpp), then the
// flags given override them; --port replaces the file's ports. Without a config file and
// without --port, the built-in default runs: a generator to the router plus ACL to a null sink,
// with a built-in FIB and ACL. Everything is loaded and checked before the first packet moves:
// the config (errors "file:line: key: reason"), the engine choice (`--engine gpu` needs a
// GPU), the tables and the ports. SIGINT and SIGTERM stop the run: the pipeline stops RX,
// drains every chunk in flight and reports; a second signal kills the process the default way.
// SIGHUP reloads the modules' files (Module::reload: the esp modules' SA files, the switch's flow
// file) while it runs.
// Exit status: 0 when the final counters add up (RunReport::check), 1 otherwise or on any
// error, 2 for usage errors. Printing lives in run_print.cpp.
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <csignal>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "commands.hpp"
#include "output_file.hpp"
#include "result_file.hpp"
#include "run_print.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/version.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/lookup/route.hpp"
#include "warpath/modules/builtin.hpp"
#include "warpath/openflow/session.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/runtime/metrics.hpp"
#include "warpath/runtime/openflow_agent.hpp"
#include "warpath/runtime/pipeline.hpp"
#include "warpath/runtime/port.hpp"
#include "warpath/runtime/run_config.hpp"

namespace warpath::cli {
namespace {

/// The built-in default: a second or two of generated traffic on a small machine.
constexpr const char* kDefaultGenSpec = "gen:max:5000000";

/// Every core of --cpus (or the config's cpus) must be one this process may run on: pinning to
/// another failed, or wrapped around to one not asked for, without a word.
Status check_cpus(const std::vector<int>& cpus) {
  if (cpus.empty()) return Status::ok();
  cpu_set_t allowed;
  CPU_ZERO(&allowed);
  if (sched_getaffinity(0, sizeof allowed, &allowed) != 0) return Status::ok();
  std::string list;  // "0-1", "0,2-5"
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &allowed) || (c > 0 && CPU_ISSET(c - 1, &allowed))) continue;
    int e = c;
    while (e + 1 < CPU_SETSIZE && CPU_ISSET(e + 1, &allowed)) ++e;
    list += (list.empty() ? "" : ",") + std::to_string(c) + (e > c ? "-" + std::to_string(e) : "");
  }
  for (int c : cpus)
    if (c < 0 || c >= CPU_SETSIZE || !CPU_ISSET(c, &allowed))
      return Status(Errc::kInvalidArgument, "--cpus: CPU " + std::to_string(c) +
                                                " is not one this process may run on (" + list +
                                                "; --no-pin runs unpinned)");
  return Status::ok();
}

/// Flag values; a flag overrides the config only when given (its Option's count() > 0).
struct RunOptions {
  std::string config;
  std::string app, chain, rules, format, algo, fib, neighbors, sa, flows, lookup, engine, offload_device,
      json, slow_path, metrics, schedule, match_action, default_action, ipv6_action,
      nonip_action, of_key, of_cert, of_ca;
  std::vector<std::string> ports, openflow;
  uint32_t workers = 1, batch = 1024, delay_us = 200, offload_depth = 4, offload_delay_us = 0;
  double openflow_probe = 5;  ///< seconds; 0 = off
  double duration = 0;
  uint64_t seed   = 1;
  bool no_pin = false, no_progress = false, strict = false, copy = false;
  double stats_interval = 0;  ///< seconds between JSON lines on standard output; 0 = none
  std::vector<int> cpus;
  std::string gen_profile;
  std::map<std::string, CLI::Option*> given;
  bool has(const std::string& flag) const {
    auto it = given.find(flag);
    return it != given.end() && it->second->count() > 0;
  }
};

/// The flags that set a preset's settings (config keys: the modules library's PresetCatalog).
struct PresetFlag {
  const char* flag;
  const char* key;
  std::string RunOptions::*value;
};
constexpr PresetFlag kPresetFlags[] = {
    {"--rules", "acl.rules", &RunOptions::rules},
    {"--format", "acl.format", &RunOptions::format},
    {"--algo", "acl.algo", &RunOptions::algo},
    {"--fib", "router.fib", &RunOptions::fib},
    {"--neighbors", "router.neighbors", &RunOptions::neighbors},
    {"--sa", "sa", &RunOptions::sa},
    {"--flows", "flows", &RunOptions::flows},
    {"--lookup", "router.lookup", &RunOptions::lookup},
    {"--match-action", "acl.match", &RunOptions::match_action},
    {"--default-action", "acl.default", &RunOptions::default_action},
    {"--ipv6-action", "acl.ipv6", &RunOptions::ipv6_action},
    {"--non-ip-action", "acl.nonip", &RunOptions::nonip_action},
};

// --- signals: the first SIGINT/SIGTERM asks the pipeline to drain; SA_RESETHAND leaves the
// second to the default action.
std::atomic<bool> g_stop{false};
volatile std::sig_atomic_t g_signal = 0;
static_assert(std::atomic<bool>::is_always_lock_free, "set from a signal handler");

extern "C" void on_stop_signal(int sig) {
  g_signal = sig;
  g_stop.store(true);
}

// SIGHUP: the modules read their files again (SA files, flow files), as daemons do.
std::atomic<bool> g_reload{false};
extern "C" void on_reload_signal(int) { g_reload.store(true); }

class StopSignals {
 public:
  StopSignals() {
    struct sigaction sa {};
    sa.sa_handler = on_stop_signal;
    sigemptyset(&sa.sa_mask);
    sa.sa_flags = SA_RESETHAND;
    sigaction(SIGINT, &sa, &old_int_);
    sigaction(SIGTERM, &sa, &old_term_);
    struct sigaction hup {};
    hup.sa_handler = on_reload_signal;
    sigemptyset(&hup.sa_mask);
    hup.sa_flags = SA_RESTART;
    sigaction(SIGHUP, &hup, &old_hup_);
  }
  ~StopSignals() {
    sigaction(SIGINT, &old_int_, nullptr);
    sigaction(SIGTERM, &old_term_, nullptr);
    sigaction(SIGHUP, &old_hup_, nullptr);
  }
  StopSignals(const StopSignals&)            = delete;
  StopSignals& operator=(const StopSignals&) = delete;

 private:
  struct sigaction old_int_ {};
  struct sigaction old_hup_ {};
  struct sigaction old_term_ {};
};

/// The config file, then the flags given, then the built-in ports when none were named.
Result<runtime::RunConfig> build_config(const RunOptions& o, bool& builtin_ports) {
  runtime::RunConfig c;
  if (!o.config.empty()) WARPATH_TRY(runtime::load_run_config(o.config, c));
  if (o.has("--app")) c.app = o.app;  // one of the catalog's (the flag's check)
  if (o.has("--chain")) {
    auto parsed = runtime::parse_chain(o.chain);
    if (!parsed) return Status(parsed.status().code(), "--" + parsed.status().message());
    c.chain = std::move(*parsed);
    for (auto& m : c.chain) m.where = "--chain";
    if (!c.preset_where.empty())
      return Status(Errc::kInvalidArgument,
                    "--chain: " + c.preset_where +
                        " sets app, [router] or [acl], which a chain would ignore; remove them "
                        "or use [[module]] tables in the file");
  }
  if (!c.chain.empty()) {  // the presets' settings have no place in a chain
    std::vector<const char*> flags = {"--app"};
    for (const PresetFlag& p : kPresetFlags) flags.push_back(p.flag);
    for (const char* flag : flags)
      if (o.has(flag))
        return Status(Errc::kInvalidArgument,
                      std::string(flag) + ": not with a chain of modules (" +
                          (o.has("--chain") ? "--chain" : o.config + ": [[module]]") +
                          "); give it as an argument of the module (warpath modules lists them)");
  }
  if (o.has("--engine") && !runtime::parse_offload(o.engine, c.engine))
    return Status(Errc::kInvalidArgument, "--engine: unknown policy '" + o.engine + "'");
  auto set = [&](const char* flag, std::string& field, const std::string& value) {
    if (o.has(flag)) field = value;
  };
  for (const PresetFlag& p : kPresetFlags)
    if (o.has(p.flag)) c.set_setting(p.key, o.*p.value);
  if (o.has("--openflow")) c.openflow = o.openflow;
  if (o.has("--openflow-probe"))  // a positive interval never rounds to 0 (off)
    c.openflow_probe_ms = o.openflow_probe > 0 ? std::max(1u, uint32_t(o.openflow_probe * 1000 + 0.5)) : 0;
  set("--openflow-private-key", c.openflow_private_key, o.of_key);
  set("--openflow-certificate", c.openflow_certificate, o.of_cert);
  set("--openflow-ca-cert", c.openflow_ca_cert, o.of_ca);
  set("--offload-device", c.offload_device, o.offload_device);
  set("--json", c.json, o.json);
  set("--slow-path", c.slow_path, o.slow_path);
  set("--metrics", c.metrics, o.metrics);
  if (o.has("--metrics"))
    if (auto address = runtime::parse_listen_address(o.metrics); !address)
      return Status(Errc::kInvalidArgument,
                    "--metrics " + o.metrics + ": " + address.status().message());
  set("--schedule", c.schedule, o.schedule);
  if (o.has("--workers")) c.workers = o.workers;
  if (o.has("--batch")) c.batch = o.batch;
  if (o.has("--delay-us")) c.delay_us = o.delay_us;
  if (o.has("--offload-depth")) c.offload_depth = o.offload_depth;
  if (o.has("--offload-delay-us")) c.offload_delay_us = o.offload_delay_us;
  if (o.has("--duration")) c.duration_s = o.duration;
  if (o.has("--stats-interval")) c.stats_interval_s = o.stats_interval;
  if (o.has("--seed")) c.seed = o.seed;
  if (o.no_pin) c.pin_threads = false;
  if (o.copy) c.zero_copy = false;
  if (!o.cpus.empty()) c.cpus = o.cpus;
  if (!o.gen_profile.empty()) c.gen_profile = o.gen_profile;
  if (o.no_progress) c.progress = false;
  if (o.has("--port")) {
    c.ports.clear();
    for (const std::string& p : o.ports) {
      const size_t eq = p.find('=');
      c.ports.emplace_back(p.substr(0, eq), p.substr(eq + 1));
    }
  }
  builtin_ports = c.ports.empty();
  if (builtin_ports) c.ports = {{"gen", kDefaultGenSpec}, {"sink", "null"}};
  WARPATH_TRY(c.validate());
  if (c.pin_threads) WARPATH_TRY(check_cpus(c.cpus));
  return c;
}

// The OpenFlow agent, when the chain has a switch (runtime/openflow_agent.hpp).
Result<std::shared_ptr<void>> attach_openflow(const runtime::RunConfig& c, const runtime::Chain& chain,
                                              const std::vector<runtime::Port*>& ports) {
  const openflow::SwitchControl* sw = nullptr;
  for (size_t m = 0; m < chain.size() && !sw; ++m)  // a module the controller programs
    sw = dynamic_cast<const openflow::SwitchControl*>(&chain.module(m));
  std::vector<std::string> targets = c.openflow;
  const bool by_default            = targets.empty();
  if (!sw) {
    if (!by_default && targets != std::vector<std::string>{"none"})
      return Status(Errc::kInvalidArgument, "--openflow: the chain has no switch module");
    return std::shared_ptr<void>();
  }
  if (by_default) targets = {"ptcp:127.0.0.1:6653"};
  if (targets == std::vector<std::string>{"none"}) return std::shared_ptr<void>();
  openflow::SwitchInfo info;
  for (size_t p = 0; p < ports.size(); ++p) {
    openflow::PortInfo pi;
    pi.port_no = uint16_t(p + 1);
    pi.name    = ports[p]->name();
    pi.mac     = ports[p]->link().mac;
    if (pi.mac == std::array<uint8_t, 6>{}) pi.mac = {0x02, 0, 0, 0, 0, uint8_t(p + 1)};
    info.ports.push_back(pi);
  }
  info.port_counters = [ports] {
    std::vector<openflow::PortCounters> out;
    for (size_t p = 0; p < ports.size(); ++p) {
      const runtime::PortStats s = ports[p]->stats();
      out.push_back({uint16_t(p + 1), s.rx, s.tx, s.rx_bytes, s.tx_bytes, s.rx_dropped, s.tx_errors});
    }
    return out;
  };
  info.software = "warpath " + std::string(version());
  auto agent    = runtime::OpenflowAgent::start(
      *sw, std::move(info), targets,
      [](const std::string& line) { std::fprintf(stderr, "warpath run: %s\n", line.c_str()); },
      runtime::OpenflowAgentOptions{
          c.openflow_probe_ms,
          {c.openflow_private_key, c.openflow_certificate, c.openflow_ca_cert}});
  if (!agent.is_ok()) {
    if (!by_default) return agent.status();
    std::fprintf(stderr, "warpath run: warning: no OpenFlow agent: %s (--openflow picks another)\n",
                 agent.status().message().c_str());
    return std::shared_ptr<void>();
  }
  for (const std::string& a : (*agent)->listening())
    std::fprintf(stderr, "warpath run: openflow: listening on %s\n", a.c_str());
  for (const std::string& w : (*agent)->warnings())
    std::fprintf(stderr, "warpath run: warning: %s\n", w.c_str());
  return std::shared_ptr<void>(std::move(*agent));
}

/// The loaded tables RunInputs points into, with a line each for the summary.
struct Tables {
  lookup::RouteTable fib;
  forward::RouterConfig neighbors;
  classify::RuleSet rules;
  std::string fib_text, rules_text;
  bool router = false;  ///< the preset has a router (its tables loaded here)
  bool acl    = false;  ///< the preset has an acl with a rule file (loaded here)
};

/// Loads the tables of the preset's router and acl modules (a chain's modules load their own).
Status load_tables(const runtime::RunConfig& c, bool builtin_ports, Tables& t) {
  if (!c.chain.empty()) return Status::ok();
  bool acl = false;
  for (const runtime::ModuleSpec& m : runtime::preset_chain(c, {})) {
    t.router = t.router || m.kind == "router";
    acl      = acl || m.kind == "acl";
  }
  // A rule file is loaded here (its summary line and errors before the ports open); the
  // built-in ACL is left to the module, as a chain's is: the preset then lets IPv6 through it
  // (presets.cpp), which it cannot tell for rules handed in.
  t.acl = acl && !c.setting("acl.rules").empty();
  if (t.router) {
    const std::string fib = c.setting("router.fib"), neighbors = c.setting("router.neighbors");
    if (fib.empty()) {
      t.fib      = runtime::builtin_fib(c.seed);
      t.fib_text = "built-in synthetic table";
    } else {
      WARPATH_ASSIGN_OR_RETURN(t.fib, lookup::load_routes(fib));
      t.fib_text = fib;
    }
    t.fib_text += " (" + std::to_string(t.fib.v4.size()) + " IPv4 + " +
                  std::to_string(t.fib.v6.size()) + " IPv6 routes)";
    if (!neighbors.empty()) {
      WARPATH_ASSIGN_OR_RETURN(std::string text, io::read_text_file(neighbors));
      WARPATH_ASSIGN_OR_RETURN(t.neighbors, forward::parse_neighbors(neighbors, text, t.fib));
    } else if (builtin_ports) {
      t.neighbors = runtime::neighbors_to_port(t.fib, 1);  // the sink
    } else {
      t.neighbors = forward::default_neighbors(t.fib, uint16_t(c.ports.size()));
    }
  }
  if (acl) {
    const std::string rules  = c.setting("acl.rules"),
                      format = c.setting("acl.format", "classbench");
    if (rules.empty()) {
      t.rules      = runtime::builtin_acl(c.seed);
      t.rules_text = "built-in random 5-tuple ACL: deny ICMP, every 8th rule denies";
    } else {
      WARPATH_ASSIGN_OR_RETURN(t.rules, classify::load_rules(rules, format));
      t.rules_text = rules + " (" + format + ")";
    }
    t.rules_text += " (" + std::to_string(t.rules.rules.size()) + " rules)";
  }
  return Status::ok();
}

int run_pipeline(const RunOptions& o) {
  // From the start: a signal while the tables load makes run() return at once, drained.
  StopSignals signals;
  RunContext ctx;
  ctx.command        = command_line();
  ctx.load_start     = read_first_line("/proc/loadavg");
  bool builtin_ports = false;
  auto config        = build_config(o, builtin_ports);
  if (!config.is_ok()) return fail(config.status().message());
  runtime::RunConfig& c = *config;
  if (c.engine == runtime::Offload::kGpu && c.offload_device == "cuda" && cuda_device_count() == 0)
    return fail(std::string(o.has("--engine") ? "--engine gpu" : o.config + ": engine = \"gpu\"") +
                ": " + cuda_unavailable_reason() +
                "; use --engine cpu or --engine auto (auto runs everything on CPU engines "
                "without a GPU)");

  Tables tables;
  if (Status s = load_tables(c, builtin_ports, tables); !s.is_ok()) return fail(s.message());
  ctx.fib   = tables.fib_text;
  ctx.rules = tables.rules_text;
  runtime::RunInputs in;
  runtime::set_file_loaders(in);
  if (tables.router) {  // a chain's modules load theirs
    in.preload("router.fib", &tables.fib);
    in.preload("router.neighbors", &tables.neighbors);
  }
  if (tables.acl) in.preload("acl.rules", &tables.rules);
  if (Status s = runtime::open_run_ports(c, in); !s.is_ok()) return fail(s.message());
  OutputFile json(c.json);
  if (!c.json.empty())
    if (Status s = json.open(); !s.is_ok()) return fail(s.message());

  std::unique_ptr<runtime::MetricsServer> metrics;
  if (!c.metrics.empty()) {
    auto m = runtime::MetricsServer::start(c.metrics);
    if (!m.is_ok()) return fail(m.status().message());
    metrics = std::move(*m);
    const std::string host = c.metrics.substr(0, c.metrics.rfind(':'));
    std::fprintf(stderr, "warpath run: metrics at http://%s:%u/metrics\n", host.c_str(),
                 unsigned(metrics->port()));
  }

  c.progress = c.progress && isatty(STDERR_FILENO);
  ProgressLine progress(stderr);
  runtime::RunHooks hooks;
  hooks.stop   = &g_stop;
  hooks.reload = &g_reload;
  hooks.notice = [&progress](const std::string& line) {
    progress.finish();  // the line, not over the progress display
    std::fprintf(stderr, "warpath run: %s\n", line.c_str());
  };
  // --stats-interval: JSON lines on standard output while running (no TTY needed).
  std::optional<runtime::RunReport> last_stats;
  const double stats_interval = c.stats_interval_s;
  double next_stats           = stats_interval;
  if (stats_interval > 0) hooks.progress_interval_s = std::min(0.5, stats_interval / 4);
  if (c.progress || metrics || stats_interval > 0)
    hooks.progress = [&](const runtime::RunReport& r) {
      if (c.progress) progress.update(r);
      if (metrics) metrics->publish(runtime::prometheus_text(r, version()));
      if (stats_interval > 0 && r.seconds >= next_stats) {
        std::fprintf(stdout, "%s\n",
                     run_stats_line(r, last_stats ? &*last_stats : nullptr).dump().c_str());
        std::fflush(stdout);
        last_stats = r;
        while (next_stats <= r.seconds) next_stats += stats_interval;  // on its own grid
      }
    };
  hooks.attach = [&c](const runtime::Chain& chain, const std::vector<runtime::Port*>& ports) {
    return attach_openflow(c, chain, ports);
  };
  Result<runtime::RunReport> report = runtime::run(c, in, hooks);
  progress.finish();
  if (!report.is_ok()) return fail(report.status().message());
  if (metrics) metrics->publish(runtime::prometheus_text(*report, version()));
  if (g_signal) ctx.stopped_by = g_signal == SIGINT ? "SIGINT" : "SIGTERM";

  print_run_summary(c, *report, ctx);
  std::fflush(stdout);
  if (!c.json.empty()) {
    std::fprintf(json.get(), "%s\n", run_report_json(c, *report, ctx).dump(2).c_str());
    if (Status s = json.commit(); !s.is_ok()) return fail(s.message());
  }
  print_warnings(report->warnings);
  if (!report->errors.empty()) {
    for (size_t i = 0; i + 1 < report->errors.size(); ++i)
      std::fprintf(stderr, "warpath: %s\n", report->errors[i].c_str());
    return fail(report->errors.back());
  }
  if (Status s = report->check(); !s.is_ok()) return fail("counters: " + s.message());
  if (int rc = strict_exit(o.strict, report->warnings)) return rc;
  // Stopped by a signal after a complete report: 128 + the signal, as shells and supervisors
  // (systemd, runit) expect of a process that a signal ended.
  if (g_signal) return 128 + int(g_signal);
  return 0;
}

// The pipeline's own flags: the offload policy and its master, the workers, the frames and the
// run's length.
template <class Flag>
void add_pipeline_flags(const Flag& flag, RunOptions& o) {
  flag("--engine", o.engine, "Offload policy: cpu, gpu (error without a GPU), auto")
      ->check(CLI::IsMember({"cpu", "gpu", "auto"}));
  flag("--offload-device", o.offload_device,
       "Test aid: 'cpu' runs the master/offload path on CPU engines (default cuda)")
      ->check(CLI::IsMember({"cuda", "cpu"}));
  flag("--offload-depth", o.offload_depth,
       "Launches each offload master lane keeps in flight (1: wait for each)")
      ->check(CLI::Range(1u, 64u));
  flag("--offload-delay-us", o.offload_delay_us,
       "Test aid with --offload-device cpu: launches complete no sooner than this, us (a "
       "device's round trip, emulated)")
      ->check(CLI::Range(0u, 1000000u));
  flag("--workers", o.workers, "Worker threads")->check(CLI::Range(1u, 256u));
  flag("--batch", o.batch, "Maximum packets per chunk")->check(CLI::Range(1u, 65536u));
  flag("--delay-us", o.delay_us, "Maximum wait of a packet for its chunk to fill, us")
      ->check(CLI::Range(0u, 1'000'000u));
  flag("--duration", o.duration, "Seconds to run; 0 = until every source ends")
      ->check(CLI::Validator(
          [](std::string& s) {
            char* end      = nullptr;
            const double d = std::strtod(s.c_str(), &end);
            return end != s.c_str() && *end == 0 && d >= 0 && d <= 1e9
                       ? std::string()
                       : "must be a number of seconds from 0 to 1e9, got '" + s + "'";
          },
          "SECONDS"));
}

}  // namespace

void add_run(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<RunOptions>();
  auto* cmd = app.add_subcommand(
      "run",
      "Run the packet pipeline: ports and a chain of modules (router, ACL, ...) on CPU and GPU "
      "engines");
  cmd->footer(
      "Flags override the config file (TOML; keys and defaults: "
      "include/warpath/runtime/run_config.hpp); --port replaces its ports. Configs that run as "
      "they are: examples/router.toml, firewall.toml, router-acl.toml, chain.toml, flows.toml, "
      "ipsec.toml, switch.toml.\n"
      "Port specs: pcap:IN.pcap:OUT.pcap (either side may be empty), afpacket:IFACE, "
      "afxdp:IFACE, gen:RATE[:COUNT] (RATE like 1000, 2.5M or max), null, dpdk:VDEV[,KEY=VAL...] "
      "(a DPDK virtual device: net_pcap, net_ring, net_af_packet, net_af_xdp).\n"
      "Without a config file and without --port: gen=" +
      std::string(kDefaultGenSpec) +
      " and sink=null, app router+acl, a built-in 240,000-route FIB whose next hops all leave "
      "through the sink, and a built-in 1,000-rule ACL.\n"
      "Neighbour file lines: '<nexthop> <port> <mac>', 'port <port> <mac>|- [<addr>...]', "
      "'router <addr>...'; without one, next hop N leaves on port N % ports.\n"
      "On real interfaces (the README's quick start): a router between eth0 and eth1, a "
      "firewall in front that denies what no rule permits (IPv6 too: the rules are IPv4):\n"
      "  ip addr add 10.1.0.1/24 dev eth0; ip addr add 10.2.0.1/24 dev eth1\n"
      "  routes.txt:     0.0.0.0/0 10.1.0.254   and   10.3.0.0/16 10.2.0.254\n"
      "  neighbors.txt:  10.1.0.254 0 MAC   and   10.2.0.254 1 MAC   (MACs from ip neigh)\n"
      "  warpath run --app router+acl --fib routes.txt --neighbors neighbors.txt --rules fw.rules "
      "--default-action deny --port wan=afpacket:eth0 --port lan=afpacket:eth1\n"
      "The interfaces' own addresses are the router's: packets for them, ARP and expired TTLs go "
      "to the host's stack (slow path); frames for other MACs are dropped (not_for_us). With "
      "afxdp:IFACE ports add --slow-path tap:NAME.\n"
      "Counters add up at the end: rx = tx + dropped + slow_path (exit 1 when not). SIGINT or "
      "SIGTERM stops the run after draining what is in flight, reports, and exits 130 or 143; a "
      "second one kills it.");
  cmd->add_option("config", o->config, "TOML config file (optional)");
  auto flag = [&](const std::string& name, auto& field, const std::string& help) {
    CLI::Option* opt = cmd->add_option(name, field, help);
    o->given[name]   = opt;
    return opt;
  };
  flag("--app", o->app, "Application: " + runtime::preset_app_list())
      ->check(CLI::IsMember(runtime::presets().apps));
  flag("--chain", o->chain,
       "Modules to run instead of an app, e.g. \"acl(rules=fw.rules, default=permit) -> "
       "router(fib=t.fib)\" (warpath modules lists them)");
  flag("--rules", o->rules, "ACL rule file (default: a built-in 1,000-rule ACL)");
  flag("--format", o->format, "Rule file format")->check(CLI::IsMember({"classbench", "openflow"}));
  flag("--algo", o->algo, "Classification algorithm")
      ->check(CLI::IsMember(classify::classifier_algorithms()));
  flag("--fib", o->fib, "Route file: <prefix>/<len> [<nexthop>] per line (default: built-in)");
  flag("--neighbors", o->neighbors,
       "Neighbour file for the router: lines '<nexthop> <port> <dst_mac>' (a neighbour), "
       "'port <port> <mac>|- [<addr>...]' (a port's MAC and addresses) and 'router <addr>...' "
       "(the router's own addresses). Packets for the router's addresses go to the slow path "
       "(to_router), never back out; on live ports (afpacket, afxdp) the interfaces' own "
       "addresses are the router's too");
  flag("--sa", o->sa, "IPsec SA file ([[sa]] and [[policy]] with ip xfrm's fields) for --app ipsec");
  flag("--flows", o->flows, "OpenFlow flow file (ovs-ofctl syntax, one flow per line) for --app switch");
  flag("--openflow", o->openflow,
       "OpenFlow 1.0 agent of the switch: ptcp:[IP:]PORT (listen; default ptcp:127.0.0.1:6653), "
       "tcp:HOST:PORT (a controller), pssl:[IP:]PORT and ssl:HOST:PORT (the same over TLS, "
       "with --openflow-private-key, --openflow-certificate and --openflow-ca-cert), or none; "
       "repeatable. A plain ptcp: listener beyond loopback is warned about: anyone who reaches "
       "the port can program the switch (pssl: asks for the peer's certificate)");
  flag("--openflow-probe", o->openflow_probe,
       "Seconds of silence before the OpenFlow agent probes a peer with an ECHO_REQUEST and, "
       "after as many again without a reply, closes it; a peer that sends no HELLO within them "
       "is closed too (Open vSwitch's inactivity probe; 0: off)")
      ->check(CLI::Range(0.0, 3600.0));
  flag("--openflow-private-key", o->of_key,
       "PEM private key of the agent's pssl: and ssl: targets (TLS; as ovs-vswitchd's "
       "--private-key)");
  flag("--openflow-certificate", o->of_cert, "PEM certificate of that key (--certificate)");
  flag("--openflow-ca-cert", o->of_ca,
       "PEM CA certificate every peer's certificate must chain to; a peer without one is "
       "refused (--ca-cert)");
  flag("--lookup", o->lookup, "CPU-side lookup engine id (cpu.lpm, ref.lpm, ...) or auto");
  flag("--port", o->ports, "NAME=SPEC, repeatable, in port-number order (replaces the config's)")
      ->check(CLI::Validator(
          [](std::string& s) {
            const size_t eq = s.find('=');
            return eq == std::string::npos || eq == 0 ? std::string("expected NAME=SPEC")
                                                      : std::string();
          },
          "NAME=SPEC"));
  add_pipeline_flags(flag, *o);
  flag("--seed", o->seed, "Seed of the generator and the built-in tables");
  flag("--json", o->json, "Also write the report as JSON to this file");
  flag("--slow-path", o->slow_path,
       "Where slow-path packets go besides the counters: a pcap file, or tap:IFACE to hand them "
       "to the host's stack (for afxdp and dpdk ports, whose traffic the kernel does not see)");
  flag("--metrics", o->metrics,
       "Serve Prometheus metrics at http://ADDR:PORT/metrics while running (e.g. 127.0.0.1:9100)");
  flag("--match-action", o->match_action,
       "Action of a matching rule that names none: permit, deny, drop, output:N");
  flag("--default-action", o->default_action, "Action when no rule matches");
  flag("--ipv6-action", o->ipv6_action,
       "Action for IPv6 packets under a 5-tuple ACL, whose rules are IPv4 (default: the default "
       "action, so a deny-by-default firewall fails closed; a deny counts them as acl_ipv6; "
       "permit with the built-in ACL)");
  flag("--non-ip-action", o->nonip_action,
       "Action for frames neither IPv4 nor IPv6 (ARP, MPLS, PPPoE) under a 5-tuple ACL "
       "(default: the default action; a deny counts them as acl_non_ip)");
  flag("--schedule", o->schedule,
       "Packet scheduling before the modules: none (arrival order) or sort (grouped by traffic "
       "class, context and length; TX keeps arrival order)")
      ->check(CLI::IsMember({"none", "sort"}));
  cmd->add_flag("--no-pin", o->no_pin, "Do not pin threads to cores");
  cmd->add_flag("--copy", o->copy,
                "Copy received packets into frames and out again (dpdk ports hold them where "
                "they arrived by default: zero copy)");
  cmd->add_flag("--strict", o->strict,
                "Exit 1 when the run had warnings (a damaged capture: by default its packets "
                "before the damage are processed, reported and the exit status is 0)");
  cmd->add_option("--gen-profile", o->gen_profile,
                  "Traffic of gen: ports: default, imix, uniform, min (64-byte frames), max, "
                  "ipv4, ipv6, novlan, tcp, udp, joined by '+' (e.g. ipv4+udp+min)");
  cmd->add_option("--cpus", o->cpus,
                  "Cores to pin to, e.g. 2,3,1,4: worker w on the w-th, then the offload "
                  "master's lanes, a core each (default: workers on 1..W, lanes on 0 and W+1)")
      ->delimiter(',')
      ->check(CLI::Range(0, 65535));
  cmd->add_flag("--no-progress", o->no_progress, "No live progress line");
  flag("--stats-interval", o->stats_interval,
                  "Every S seconds, one JSON line of live counters on standard output (totals, "
                  "rates, drops by reason, ports, modules), for logs and scripts without a TTY")
      ->check(CLI::Range(0.05, 86400.0));
  cmd->callback([o, &run] { run = [o] { return run_pipeline(*o); }; });
}

}  // namespace warpath::cli
