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
//                               [--quick] [--schedule-ab ROUNDS]
//   --schedule-ab  instead: router+acl throughput with packet scheduling off and on (GASPP
//                  Figure 10), per traffic mix and batch size, alternated ROUNDS times
// Prints one JSON object on stdout; progress on stderr.
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "warpath/classify/check.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/forward/router.hpp"
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
};

struct Data {
  lookup::RouteTable fib;
  forward::RouterConfig neighbors;
  classify::RuleSet acl;
};

Result<RunReport> run_point(const Data& d, Offload engine, uint32_t workers, uint32_t batch,
                            uint32_t delay_us, double rate, double seconds,
                            const std::string& schedule = "none",
                            const std::string& profile  = "default") {
  RunConfig c;
  c.schedule            = schedule;
  c.gen_profile         = profile;
  c.app                 = AppKind::kRouterAcl;
  c.engine              = engine;
  c.workers             = workers;
  c.batch               = batch;
  c.delay_us            = delay_us;
  c.duration_s          = seconds;
  c.progress            = false;
  c.match_action        = "permit";
  c.default_action      = "permit";
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
  in.fib       = &d.fib;
  in.neighbors = &d.neighbors;
  in.rules     = &d.acl;
  return run(c, in);
}

void print_point(std::FILE* out, const Point& p, bool last) {
  const RunReport& r   = p.report;
  const auto ring      = r.drops_by_reason.find("rx_queue_full");
  const uint64_t lost  = ring == r.drops_by_reason.end() ? 0 : ring->second;
  const double handled = double(r.rx - lost);  // what reached the worker
  std::fprintf(
      out,
      "  {\"sweep\": \"%s\", \"engine\": \"%s\", \"batch\": %u, \"delay_us\": %u, "
      "\"offered_pps\": %.0f, \"seconds\": %.3f, \"rx\": %llu, \"tx\": %llu, \"dropped\": %llu, "
      "\"slow_path\": %llu, \"rx_queue_full\": %llu, \"mpps\": %.3f, \"gbps\": %.3f, "
      "\"batch_fill\": %.3f, \"gpu_share\": %.3f, \"gpu_launches\": %llu, "
      "\"latency_us\": {\"p50\": %.1f, \"p99\": %.1f, \"p999\": %.1f, \"max\": %.1f}, "
      "\"stages_ns_per_packet\": {\"rx\": %.1f, \"parse\": %.1f, \"modules\": %.1f, \"tx\": %.1f, "
      "\"other\": %.1f}, "
      "\"engines\": \"%s\", \"offload_engines\": \"%s\", \"schedule\": \"%s\", "
      "\"profile\": \"%s\"}%s\n",
      p.sweep.c_str(), p.engine.c_str(), p.batch, p.delay_us, p.offered_pps, r.seconds,
      (unsigned long long)r.rx, (unsigned long long)r.tx, (unsigned long long)r.dropped,
      (unsigned long long)r.slow_path, (unsigned long long)lost,
      r.seconds > 0 ? handled / r.seconds / 1e6 : 0,
      r.seconds > 0 ? double(r.tx_bytes) * 8 / r.seconds / 1e9 : 0, r.batch_fill, r.gpu_share,
      (unsigned long long)r.gpu_launches, r.latency.p50_us, r.latency.p99_us, r.latency.p999_us,
      r.latency.max_us, r.stages.rx, r.stages.parse, r.stages.modules, r.stages.tx, r.stages.other,
      r.engine.c_str(), r.offload_engine.c_str(), p.schedule.c_str(),
      p.profile.c_str(), last ? "" : ",");
}

}  // namespace

int main(int argc, char** argv) {
  double seconds   = 1.5;
  uint32_t workers = 1;
  std::string engines_arg;
  bool quick       = false;
  uint32_t ab_rounds = 0;
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
    else {
      std::fprintf(stderr,
                   "usage: warpath-pipeline-bench [--duration S] [--workers N] "
                   "[--engines cpu,gpu,auto] [--quick] [--schedule-ab ROUNDS]\n");
      return 2;
    }
  }
  const bool gpu = cuda_device_count() > 0;
  std::vector<std::pair<std::string, Offload>> engines;
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

  Data d;
  d.fib       = builtin_fib(1);
  d.neighbors = neighbors_to_port(d.fib, 1);  // the sink
  d.acl       = classify::random_rule_set(1, classify::KeyLayout::kFiveTuple, 1000);

  if (ab_rounds) {
    // Packet scheduling A/B (GASPP Figure 10): throughput with and without sorting, per traffic
    // mix and batch size, the two alternated (order swapped every round) so drift cancels.
    std::vector<Point> ab;
    for (const char* profile : {"default", "imix", "ipv4+udp"})
      for (uint32_t batch : {32u, 256u, 2048u, 8192u})
        for (uint32_t round = 0; round < ab_rounds; ++round)
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
            ab.push_back(std::move(p));
          }
    std::printf("{\"bench\": \"pipeline-schedule\", \"app\": \"router+acl\", \"workers\": %u, "
                "\"duration_s\": %.2f, \"rounds\": %u, \"gpu\": %s, \"points\": [\n",
                workers, seconds, ab_rounds, gpu ? "true" : "false");
    for (size_t i = 0; i < ab.size(); ++i) print_point(stdout, ab[i], i + 1 == ab.size());
    std::printf("]}\n");
    return 0;
  }

  const std::vector<uint32_t> batches =
      quick ? std::vector<uint32_t>{64, 1024} : std::vector<uint32_t>{32, 128, 512, 2048, 8192};
  const std::vector<uint32_t> delays =
      quick ? std::vector<uint32_t>{50, 1000} : std::vector<uint32_t>{10, 50, 200, 1000, 5000};
  std::vector<Point> points;
  double best_cpu_pps = 0;
  int status = 0;  // a failed point is reported and the others still run; the JSON always comes
  // Each point also goes to stderr as it completes, so a run cut short keeps what it measured.
  auto add = [&](Point p) {
    print_point(stderr, p, true);
    std::fflush(stderr);
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
  std::printf(
      "{\"bench\": \"pipeline\", \"app\": \"router+acl\", \"workers\": %u, "
      "\"duration_s\": %.2f, \"gpu\": %s, \"data\": \"built-in: synthetic_full_table(1, "
      "200000, 40000) + defaults, random_rule_set(1, 5-tuple, 1000) all permit, "
      "gen (seed 1) -> null\", \"points\": [\n",
      workers, seconds, gpu ? "true" : "false");
  for (size_t i = 0; i < points.size(); ++i) print_point(stdout, points[i], i + 1 == points.size());
  std::printf("]}\n");
  return status;
}
