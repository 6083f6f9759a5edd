// bench/pipeline/pipeline_bench.cpp: warpath-pipeline-bench, the forwarding pipeline's
// throughput and latency against batch size and delay bound (GSwitch Figures 9-10), for each
// offload policy this machine can run (cpu; gpu and auto where a CUDA device is present).
//
// Needs only the C++ standard library (built in every preset, the dependency-free GPU build
// included, so scripts/gpu-check.sh runs it on GPU machines). The data are warpath run's
// built-in ones: a synthetic Internet-shaped FIB (200K IPv4 + 40K IPv6 routes plus defaults),
// a 1,000-rule ACL (every rule permits), router+acl, the generator as source and a null sink.
//
//   throughput   gen:max source, delay bound 1 ms, batch 32 .. 8192: Mpps and latency
//   delay        offered load = half the cpu policy's best throughput (so queues stay short),
//                batch 8192, delay bound 10 us .. 5 ms: latency p50/p99/p99.9 and batch fill
//
// Usage: warpath-pipeline-bench [--duration S] [--workers N] [--engines cpu,gpu,auto]
//                               [--quick] [--schedule-ab ROUNDS] [--offload-depth N]
//                               [--sweep ROUNDS [--workers-list 1,2,4,...]
//                                               [--cases APP:PROFILE,...] [--data DIR]]
//   --schedule-ab  instead: router+acl throughput with packet scheduling off and on (GASPP
//                  Figure 10), per traffic mix and batch size, alternated ROUNDS times
//   --sweep        instead: Mpps against workers (issue 60's sweep), batch 1024, delay bound
//                  1 ms, gen:max, per chain and traffic: router+acl over IPv4 64 B and IMIX,
//                  the router over IPv6 64 B, and the acl app over ClassBench acl1_10K (from
//                  --data DIR/classbench/wustl_5tuple; left out without it; the generator's
//                  traffic, every action permit); at each worker count every engine in turn,
//                  the cpu policy beside the others in the same round, ROUNDS rounds (the
//                  engines' order rotated each round). Workers default to 1, 2, 4, 8, 12, ...
//                  up to the cores less two (the offload master's lanes).
//   --offload-depth  launches each offload master lane keeps in flight (default 4; 1 runs the
//                  master one launch a lane at a time, as before it was asynchronous)
//   --offload-device cpu [--offload-delay-us N]  the gpu and auto policies on CPU engines through
//                  the master, each launch held N us (a device's round trip, emulated): the
//                  sweep's machinery and the workers' frames tried where there is no GPU
// Prints one JSON object on stdout, the harness's result file (bench/harness/report.hpp): its
// provenance, the run's parameters and a row per point under "results" (workload, engine = the
// offload policy, anchor = the cpu policy, rate = packets the workers handled a second, then the
// point's own fields: latency_us, stages_ns_per_packet, rx/tx/dropped, ...); progress and each
// point, as one line of JSON as it completes, on stderr.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "harness/report.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/io/classbench.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/modules/builtin.hpp"
#include "warpath/runtime/pipeline.hpp"

namespace {

using namespace warpath;
using namespace warpath::runtime;

struct Point {
  std::string sweep, engine, schedule = "none", profile = "default";
  uint32_t batch = 0, delay_us = 0;
  double offered_pps = 0;
  RunReport report;
  std::string app = "router+acl";
  uint32_t workers = 0, round = 0;
};

uint32_t g_offload_depth = 4;  // --offload-depth: RunConfig::offload_depth of every point
// --offload-device cpu [--offload-delay-us N]: the gpu and auto policies through the master on
// CPU engines, each launch held N us as a device's round trip (RunConfig's test aids), so that
// a machine without a GPU runs every policy's points.
std::string g_offload_device = "cuda";
uint32_t g_offload_delay_us  = 0;

// What the points run on, as the reports say it: the built-in tables and the generator.
std::string builtin_data(const char* source) {
  return std::string(
             "built-in: synthetic_full_table(1, 200000, 40000) + defaults, "
             "random_rule_set(1, 5-tuple, 1000) all permit; ") +
         source + " (seed 1) -> null";
}

struct Data {
  lookup::RouteTable fib;
  forward::RouterConfig neighbors;
  classify::RuleSet acl;
};

Result<RunReport> run_point(const Data& d, Offload engine, uint32_t workers, uint32_t batch,
                            uint32_t delay_us, double rate, double seconds,
                            const std::string& schedule    = "none",
                            const std::string& profile     = "default",
                            const std::string& app         = "router+acl",
                            const classify::RuleSet* rules = nullptr) {
  RunConfig c;
  c.schedule            = schedule;
  c.gen_profile         = profile;
  c.app                 = app;
  c.engine              = engine;
  c.workers             = workers;
  c.batch               = batch;
  c.delay_us            = delay_us;
  c.offload_depth       = g_offload_depth;
  c.offload_device      = g_offload_device;
  c.offload_delay_us    = g_offload_delay_us;
  c.duration_s          = seconds;
  c.progress            = false;
  c.set_setting("acl.match", "permit");
  c.set_setting("acl.default", "permit");
  const std::string gen = rate > 0 ? "gen:" + std::to_string(uint64_t(rate)) : "gen:max";
  c.ports               = {{"gen", gen}, {"sink", "null"}};
  RunInputs in;
  for (uint16_t p = 0; p < 2; ++p) {
    PortOptions o;
    o.index     = p;
    o.rx_queues = workers;
    o.workers   = workers;
    o.seed      = 1;
    o.gen_profile = profile;
    WARPATH_ASSIGN_OR_RETURN(PortSpec spec, parse_port_spec(c.ports[p].first, c.ports[p].second));
    WARPATH_ASSIGN_OR_RETURN(std::unique_ptr<Port> port,
                             open_builtin_port(c.ports[p].first, spec, o));
    in.ports.push_back(std::move(port));
  }
  in.preload("router.fib", &d.fib);
  in.preload("router.neighbors", &d.neighbors);
  in.preload("acl.rules", rules ? rules : &d.acl);
  return run(c, in);
}

// Packets the source offered that its rx queues dropped before a worker saw them.
uint64_t rx_queue_full(const RunReport& r) {
  const auto ring = r.drops_by_reason.find("rx_queue_full");
  return ring == r.drops_by_reason.end() ? 0 : ring->second;
}

// A point's rate: the packets that reached the workers, in Mpps.
double handled_mpps(const RunReport& r) {
  return r.seconds > 0 ? double(r.rx - rx_queue_full(r)) / r.seconds / 1e6 : 0;
}

// A point as the harness's row (bench/harness/report.hpp): the workload is what the sweep
// varies (a worker count for a chain and traffic, a batch size, a delay bound, a schedule's
// traffic and batch), the engine the offload policy, the cpu policy the anchor (the CPU-only
// baseline beside the others); its rate the packets the workers handled a second. The bench's
// own fields follow, as the older "points" had them.
bench::Row point_row(const Point& p) {
  const RunReport& r = p.report;
  bench::Row x;
  x.workload = p.sweep == "workers"
                   ? p.app + " " + p.profile + " " + std::to_string(p.workers) + " workers"
               : p.sweep == "throughput" ? "batch " + std::to_string(p.batch)
               : p.sweep == "delay"      ? "delay " + std::to_string(p.delay_us) + " us"
                                         : p.profile + " batch " + std::to_string(p.batch);
  x.engine   = p.sweep == "schedule" ? "schedule " + p.schedule : p.engine;
  x.anchor   = p.sweep == "schedule" ? p.schedule == "none" : p.engine == "cpu";
  x.unit     = "packets";
  x.rate     = handled_mpps(r) * 1e6;
  x.with("sweep", p.sweep)
      .with("policy", p.engine)
      .with("batch", int64_t(p.batch))
      .with("delay_us", int64_t(p.delay_us))
      .with("offered_pps", p.offered_pps)
      .with("seconds", r.seconds)
      .with("rx", int64_t(r.rx))
      .with("tx", int64_t(r.tx))
      .with("dropped", int64_t(r.dropped))
      .with("slow_path", int64_t(r.slow_path))
      .with("rx_queue_full", int64_t(rx_queue_full(r)))
      .with("gbps", r.seconds > 0 ? double(r.tx_bytes) * 8 / r.seconds / 1e9 : 0)
      .with("batch_fill", r.batch_fill)
      .with("gpu_share", r.gpu_share)
      .with("gpu_launches", int64_t(r.gpu_launches))
      .with("frames.most", int64_t(r.frames.most))
      .with("frames.needed", int64_t(r.frames.needed))
      .with("frames.cap", int64_t(r.frames.cap))
      .with("frames.round_trip_us", r.frames.round_trip_us)
      .with("frames.interval_us", r.frames.interval_us)
      .with("frames.waits", int64_t(r.frames.waits))
      .with("latency_us.p50", r.latency.p50_us)
      .with("latency_us.p99", r.latency.p99_us)
      .with("latency_us.p999", r.latency.p999_us)
      .with("latency_us.max", r.latency.max_us)
      .with("stages_ns_per_packet.rx", r.stages.rx)
      .with("stages_ns_per_packet.parse", r.stages.parse)
      .with("stages_ns_per_packet.modules", r.stages.modules)
      .with("stages_ns_per_packet.tx", r.stages.tx)
      .with("stages_ns_per_packet.other", r.stages.other)
      .with("engines", r.engine)
      .with("offload_engines", r.offload_engine)
      .with("schedule", p.schedule)
      .with("profile", p.profile)
      .with("app", p.app)
      .with("workers", int64_t(p.workers))
      .with("round", int64_t(p.round));
  return x;
}

/// A point as it completes: one line of JSON on stderr, so that a run cut short keeps what it
/// measured (scripts/gpu-check.sh reads them back).
void log_point(const Point& p) {
  std::fprintf(stderr, "%s\n", bench::row_line(point_row(p)).c_str());
  std::fflush(stderr);
}

/// The report on stdout: the provenance, the run's parameters and every point's row, each with
/// its ratio to the fastest cpu row of its workload (a sweep's rounds are one workload: the
/// medians of the rounds and their ratios are plot_pipeline.py's).
int write_report(int argc, char** argv, const bench::Fields& params,
                 const std::vector<Point>& points, int status) {
  std::vector<bench::Row> rows;
  for (const Point& p : points) rows.push_back(point_row(p));
  bench::ratios_to_best_anchor(rows);
  bench::Fields head = bench::provenance("warpath-pipeline-bench", argc, argv);
  head.insert(head.end(), params.begin(), params.end());
  head.push_back({"offload_device", g_offload_device});
  head.push_back({"offload_delay_us", int64_t(g_offload_delay_us)});
  const std::string text = bench::results_text(head, {}, {}, rows);
  std::fwrite(text.data(), 1, text.size(), stdout);
  return std::fflush(stdout) == 0 ? status : 1;
}

// Worker counts for --sweep: the list given, else 1, 2, 4, 8, 12, 16, ... up to the cores less
// two (the offload master's two lanes), that bound itself last.
Result<std::vector<uint32_t>> sweep_workers(const std::string& list) {
  std::vector<uint32_t> out;
  if (!list.empty()) {
    size_t at = 0;
    while (at <= list.size()) {
      const size_t comma = std::min(list.find(',', at), list.size());
      const std::string item = list.substr(at, comma - at);
      char* end              = nullptr;
      const long n           = std::strtol(item.c_str(), &end, 10);
      if (item.empty() || *end != '\0' || n < 1 || n > 1024)
        return Status(Errc::kInvalidArgument, "--workers-list: '" + item +
                                        "' is not a worker count (1..1024)");
      out.push_back(uint32_t(n));
      at = comma + 1;
    }
    return out;
  }
  const uint32_t cores = std::max(1u, std::thread::hardware_concurrency());
  const uint32_t top   = cores > 3 ? cores - 2 : 1;
  for (uint32_t w = 1; w < top; w = w < 8 ? w * 2 : w + 4) out.push_back(w);
  out.push_back(top);
  return out;
}

// A ClassBench rule file (the minimal build has no warpath_io, so no classify::load_rules).
Result<classify::RuleSet> read_classbench(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(Errc::kNotFound, path + ": cannot open");
  std::ostringstream text;
  text << f.rdbuf();
  WARPATH_ASSIGN_OR_RETURN(auto rules, io::parse_classbench_rules(text.str(), path));
  return classify::from_classbench(rules, path);
}

struct SweepCase {
  const char* app_name;
  const char* profile;
  const classify::RuleSet* rules;  // nullptr: the built-in 1,000-rule ACL
};

// --sweep: Mpps against workers, per chain and traffic, every engine at each worker count in
// the same round (the cpu policy the baseline beside the others), the order rotated each round
// so that drift falls on every engine alike. JSON on stdout; each point and a closing table
// (median of the rounds, each engine's ratio to cpu) on stderr.
int sweep(const Data& d, const std::vector<std::pair<std::string, Offload>>& engines,
          uint32_t rounds, const std::string& workers_list, const std::string& data_dir,
          const std::string& only, double seconds, bool gpu, int argc, char** argv) {
  auto counts = sweep_workers(workers_list);
  if (!counts.is_ok()) {
    std::fprintf(stderr, "warpath-pipeline-bench: %s\n", counts.status().message().c_str());
    return 2;
  }
  std::string acl_note = "no --data: the acl1_10K case left out";
  classify::RuleSet acl10k;
  bool have_acl10k = false;
  if (!data_dir.empty()) {
    const std::string path = data_dir + "/classbench/wustl_5tuple/acl1_10K";
    auto rules             = read_classbench(path);
    if (rules.is_ok()) {
      acl10k      = std::move(*rules);
      have_acl10k = true;
      acl_note    = path + " (" + std::to_string(acl10k.rules.size()) + " rules)";
    } else {
      acl_note = "acl1_10K left out: " + rules.status().message();
    }
  }
  std::fprintf(stderr, "sweep: %s\n", acl_note.c_str());
  std::vector<SweepCase> cases = {{"router+acl", "ipv4+min", nullptr},
                                  {"router+acl", "imix", nullptr},
                                  {"router", "ipv6+min", nullptr}};
  if (have_acl10k) cases.push_back({"acl", "ipv4+min", &acl10k});
  if (!only.empty()) {  // --cases: the cases named APP:PROFILE, in the sweep's order
    auto id = [](const SweepCase& sc) { return std::string(sc.app_name) + ":" + sc.profile; };
    std::vector<std::string> wanted, known;
    for (const SweepCase& sc : cases) known.push_back(id(sc));
    for (size_t at = 0; at <= only.size();) {
      const size_t comma = std::min(only.find(',', at), only.size());
      wanted.push_back(only.substr(at, comma - at));
      at = comma + 1;
    }
    for (const std::string& name : wanted)
      if (std::find(known.begin(), known.end(), name) == known.end()) {
        std::string list;
        for (const std::string& k : known) list += (list.empty() ? "" : ", ") + k;
        std::fprintf(stderr, "warpath-pipeline-bench: --cases: no case '%s' (cases: %s)\n",
                     name.c_str(), list.c_str());
        return 2;
      }
    cases.erase(std::remove_if(cases.begin(), cases.end(),
                               [&](const SweepCase& sc) {
                                 return std::find(wanted.begin(), wanted.end(), id(sc)) ==
                                        wanted.end();
                               }),
                cases.end());
  }

  std::vector<Point> points;
  int status = 0;
  for (const SweepCase& sc : cases)
    for (uint32_t w : *counts)
      for (uint32_t round = 0; round < rounds; ++round)
        for (size_t k = 0; k < engines.size(); ++k) {
          const auto& [name, engine] = engines[(k + round) % engines.size()];
          auto r = run_point(d, engine, w, 1024, 1000, 0, seconds, "none", sc.profile, sc.app_name,
                             sc.rules);
          if (!r.is_ok()) {
            std::fprintf(stderr, "warpath-pipeline-bench: %s %s %s %u workers: %s\n",
                         sc.app_name, sc.profile, name.c_str(), w,
                         r.status().message().c_str());
            status = 1;
            continue;
          }
          Point p{"workers", name, "none", sc.profile, 1024, 1000, 0, *r};
          p.app     = sc.app_name;
          p.workers = w;
          p.round   = round + 1;
          log_point(p);
          points.push_back(std::move(p));
        }

  // The closing table: per case and worker count, each engine's median Mpps and its ratio to
  // the cpu policy's median.
  auto median = [&](const SweepCase& sc, uint32_t w, const std::string& engine) {
    std::vector<double> v;
    for (const Point& p : points)
      if (p.app == sc.app_name && p.profile == sc.profile && p.workers == w && p.engine == engine)
        v.push_back(handled_mpps(p.report));
    if (v.empty()) return 0.0;
    std::sort(v.begin(), v.end());
    return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
  };
  std::fprintf(stderr, "\n%-11s %-9s %7s", "chain", "traffic", "workers");
  for (const auto& e : engines) std::fprintf(stderr, " %8s", e.first.c_str());
  for (const auto& e : engines)
    if (e.second != Offload::kCpu) std::fprintf(stderr, " %7s/cpu", e.first.c_str());
  std::fprintf(stderr, "   (Mpps, median of %u rounds)\n", rounds);
  for (const SweepCase& sc : cases)
    for (uint32_t w : *counts) {
      std::fprintf(stderr, "%-11s %-9s %7u", sc.app_name, sc.profile, w);
      const double cpu = median(sc, w, "cpu");
      for (const auto& e : engines) std::fprintf(stderr, " %8.2f", median(sc, w, e.first));
      for (const auto& e : engines)
        if (e.second != Offload::kCpu)
          std::fprintf(stderr, " %11.2f", cpu > 0 ? median(sc, w, e.first) / cpu : 0.0);
      std::fprintf(stderr, "\n");
    }

  return write_report(argc, argv,
                      {{"bench", std::string("pipeline-sweep")},
                       {"duration_s", seconds},
                       {"rounds", int64_t(rounds)},
                       {"batch", int64_t(1024)},
                       {"delay_us", int64_t(1000)},
                       {"offload_depth", int64_t(g_offload_depth)},
                       {"gpu", gpu},
                       {"acl1_10K", acl_note},
                       {"data", builtin_data("gen:max")}},
                      points, status);
}

// --schedule-ab: packet scheduling A/B (GASPP Figure 10): router+acl throughput with sorting
// off and on, per traffic mix and batch size, the two alternated (the order swapped every
// round) so that drift cancels. JSON on stdout.
int schedule_ab(const Data& d, uint32_t workers, uint32_t rounds, double seconds, bool gpu,
                int argc, char** argv) {
  std::vector<Point> ab;
  for (const char* profile : {"default", "imix", "ipv4+udp"})
    for (uint32_t batch : {32u, 256u, 2048u, 8192u})
      for (uint32_t round = 0; round < rounds; ++round)
        for (int k = 0; k < 2; ++k) {
          const std::string sched = (k ^ (round & 1)) ? "sort" : "none";
          std::fprintf(stderr, "schedule %s %s batch %u round %u ...\n", sched.c_str(), profile,
                       batch, round + 1);
          auto r = run_point(d, Offload::kCpu, workers, batch, 1000, 0, seconds, sched, profile);
          if (!r.is_ok()) {
            std::fprintf(stderr, "warpath-pipeline-bench: %s\n", r.status().message().c_str());
            return 1;
          }
          Point p{"schedule", "cpu", sched, profile, batch, 1000, 0, *r};
          p.workers = workers;
          ab.push_back(std::move(p));
        }
  return write_report(argc, argv,
                      {{"bench", std::string("pipeline-schedule")},
                       {"app", std::string("router+acl")},
                       {"workers", int64_t(workers)},
                       {"duration_s", seconds},
                       {"rounds", int64_t(rounds)},
                       {"gpu", gpu}},
                      ab, 0);
}

// The offload policies of --engines (default: every one where a CUDA device or the CPU offload
// device is, else cpu),
// checked against the offload device: 0, or main's exit status with the reason on stderr.
int pick_policies(std::string engines_arg, std::vector<std::pair<std::string, Offload>>& engines) {
  if (g_offload_device != "cuda" && g_offload_device != "cpu") {
    std::fprintf(stderr, "warpath-pipeline-bench: --offload-device: cuda or cpu, got '%s'\n",
                 g_offload_device.c_str());
    return 2;
  }
  if (g_offload_delay_us && g_offload_device != "cpu") {
    std::fprintf(stderr,
                 "warpath-pipeline-bench: --offload-delay-us goes with --offload-device cpu\n");
    return 2;
  }
  // Whether the gpu and auto policies can run: a CUDA device, or the master on CPU engines.
  const bool gpu = cuda_device_count() > 0 || g_offload_device == "cpu";
  if (engines_arg.empty()) engines_arg = gpu ? "cpu,gpu,auto" : "cpu";
  for (const char* name : {"cpu", "gpu", "auto"})
    if (engines_arg.find(name) != std::string::npos) {
      Offload o;
      parse_offload(name, o);
      if (o != Offload::kCpu && !gpu) {
        std::fprintf(stderr, "warpath-pipeline-bench: %s needs a GPU (%s)\n", name,
                     cuda_unavailable_reason().c_str());
        return 1;
      }
      engines.push_back({name, o});
    }
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  double seconds   = 1.5;
  uint32_t workers = 1;
  std::string engines_arg;
  bool quick       = false;
  uint32_t ab_rounds = 0, sweep_rounds = 0;
  std::string workers_list, data_dir, cases_arg;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--duration" && i + 1 < argc)
      seconds = std::atof(argv[++i]);
    else if (a == "--workers" && i + 1 < argc)
      workers = uint32_t(std::atoi(argv[++i]));
    else if (a == "--engines" && i + 1 < argc)
      engines_arg = argv[++i];
    else if (a == "--quick")
      quick = true;
    else if (a == "--schedule-ab" && i + 1 < argc)
      ab_rounds = uint32_t(std::atoi(argv[++i]));
    else if (a == "--sweep" && i + 1 < argc) {
      char* end    = nullptr;
      const long n = std::strtol(argv[++i], &end, 10);
      if (*end != '\0' || n < 1 || n > 1000) {
        std::fprintf(stderr, "warpath-pipeline-bench: --sweep: '%s' is not a round count (1..1000)\n",
                     argv[i]);
        return 2;
      }
      sweep_rounds = uint32_t(n);
    }
    else if (a == "--offload-depth" && i + 1 < argc)
      g_offload_depth = uint32_t(std::max(1, std::min(64, std::atoi(argv[++i]))));
    else if (a == "--offload-device" && i + 1 < argc)
      g_offload_device = argv[++i];
    else if (a == "--offload-delay-us" && i + 1 < argc)
      g_offload_delay_us = uint32_t(std::max(0, std::min(1'000'000, std::atoi(argv[++i]))));
    else if (a == "--workers-list" && i + 1 < argc)
      workers_list = argv[++i];
    else if (a == "--data" && i + 1 < argc)
      data_dir = argv[++i];
    else if (a == "--cases" && i + 1 < argc)
      cases_arg = argv[++i];
    else {
      std::fprintf(stderr,
                   "usage: warpath-pipeline-bench [--duration S] [--workers N] "
                   "[--engines cpu,gpu,auto] [--quick] [--schedule-ab ROUNDS] "
                   "[--offload-depth N] [--offload-device cuda|cpu [--offload-delay-us N]] "
                   "[--sweep ROUNDS [--workers-list 1,2,4,...] [--cases APP:PROFILE,...] "
                   "[--data DIR]]\n");
      return 2;
    }
  }
  if (!sweep_rounds && (!workers_list.empty() || !cases_arg.empty() || !data_dir.empty())) {
    std::fprintf(stderr,
                 "warpath-pipeline-bench: --workers-list, --cases and --data belong to --sweep\n");
    return 2;
  }
  std::vector<std::pair<std::string, Offload>> engines;
  if (const int status = pick_policies(engines_arg, engines)) return status;

  Data d;
  d.fib       = builtin_fib(1);
  d.neighbors = neighbors_to_port(d.fib, 1);  // the sink
  d.acl       = classify::random_rule_set(1, classify::KeyLayout::kFiveTuple, 1000);

  const bool cuda = cuda_device_count() > 0;  // what the reports' "gpu" says
  if (ab_rounds) return schedule_ab(d, workers, ab_rounds, seconds, cuda, argc, argv);
  if (sweep_rounds)
    return sweep(d, engines, sweep_rounds, workers_list, data_dir, cases_arg, seconds, cuda, argc,
                 argv);

  const std::vector<uint32_t> batches =
      quick ? std::vector<uint32_t>{64, 1024} : std::vector<uint32_t>{32, 128, 512, 2048, 8192};
  const std::vector<uint32_t> delays =
      quick ? std::vector<uint32_t>{50, 1000} : std::vector<uint32_t>{10, 50, 200, 1000, 5000};
  std::vector<Point> points;
  double best_cpu_pps = 0;
  int status = 0;  // a failed point is reported and the others still run; the JSON always comes
  // Each point also goes to stderr as it completes, so a run cut short keeps what it measured.
  auto add = [&](Point p) {
    p.workers = workers;
    log_point(p);
    points.push_back(std::move(p));
  };
  for (auto& [name, engine] : engines) {
    for (uint32_t batch : batches) {
      std::fprintf(stderr, "throughput %s batch %u ...\n", name.c_str(), batch);
      auto r = run_point(d, engine, workers, batch, 1000, 0, seconds);
      if (!r.is_ok()) {
        std::fprintf(stderr, "warpath-pipeline-bench: %s batch %u: %s\n", name.c_str(), batch,
                     r.status().message().c_str());
        status = 1;
        continue;
      }
      const double pps = double(r->tx + r->dropped + r->slow_path) / r->seconds;
      if (engine == Offload::kCpu) best_cpu_pps = std::max(best_cpu_pps, pps);
      add({"throughput", name, "none", "default", batch, 1000, 0, *r});
    }
  }
  // Half the cpu policy's best rate (queues stay short); without a cpu point, half the best of
  // any engine; with none, the delay sweep is skipped (it would run at gen:max, saturated).
  double best_pps = best_cpu_pps;
  if (best_pps == 0)
    for (const Point& p : points)
      best_pps = std::max(best_pps, double(p.report.tx + p.report.dropped + p.report.slow_path) /
                                        std::max(p.report.seconds, 1e-9));
  const double offered = best_pps / 2;
  if (offered == 0)
    std::fprintf(stderr, "warpath-pipeline-bench: no throughput point: no delay sweep\n");
  for (auto& [name, engine] : engines) {
    for (uint32_t delay : offered > 0 ? delays : std::vector<uint32_t>{}) {
      std::fprintf(stderr, "delay %s %u us at %.2f Mpps ...\n", name.c_str(), delay, offered / 1e6);
      auto r = run_point(d, engine, workers, 8192, delay, offered, seconds);
      if (!r.is_ok()) {
        std::fprintf(stderr, "warpath-pipeline-bench: %s delay %u us: %s\n", name.c_str(), delay,
                     r.status().message().c_str());
        status = 1;
        continue;
      }
      add({"delay", name, "none", "default", 8192, delay, offered, *r});
    }
  }
  return write_report(argc, argv,
                      {{"bench", std::string("pipeline")},
                       {"app", std::string("router+acl")},
                       {"workers", int64_t(workers)},
                       {"duration_s", seconds},
                       {"gpu", cuda},
                       {"data", builtin_data("gen")}},
                      points, status);
}
