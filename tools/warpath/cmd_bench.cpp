// warpath bench: benchmarks that measure warpath engines side by side with the field's tools.
//
//   warpath bench lookup --fib FILE [--addrs FILE | --count N --mix random|prefix|mixed --seed S]
//                        [--engines LIST] [--repeat N] [--batch N] [--cpu N] [--family F]
//                        [--json FILE] [--note TEXT]
//
// `bench lookup` builds every lookup engine of this build (warpath's registry engines and, when
// built with DPDK, rte_lpm / rte_lpm6 / rte_fib / rte_fib6 with each lookup function this CPU
// has) from one route file, looks up the same addresses on the same pinned core, one engine at a
// time, and prints lookups per second, ns per lookup, build time, memory and the ratio to the
// best DPDK variant of the family. Every engine's answers are compared with the first warpath
// engine's; any difference is printed and the command exits 1.
//
// Timing: a warm-up pass (whose answers are the ones checked), then --repeat timed passes over
// the whole address array, each timed with steady_clock; the best pass counts. Every engine is
// built and checked first; the timed passes then run round-robin over the engines (pass k of
// each before pass k + 1 of any), so drift in the machine's speed reaches them alike; each
// timed pass follows an untimed one of the same engine, so it starts with warm caches. CPU engines,
// warpath's and DPDK's alike, are called --batch addresses at a time (default 64, DPDK's bulk
// size and a typical burst; 0 = the whole array in one call). GPU engines are called with
// --gpu-batch addresses (default 65,536) and, in a second table, at batch sizes 256..65,536,
// end to end (copies in, kernel, copies out): the Fib API offers no kernel-only timing.
//
// `bench classify` (every classifier engine beside DPDK rte_acl) is in cmd_bench_classify.cpp.
#include <fmt/core.h>
#include <sched.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "bench_lookup_rows.hpp"
#include "commands.hpp"

namespace warpath::cli {

/// `warpath bench classify` (cmd_bench_classify.cpp).
void add_bench_classify(CLI::App& bench, Runner& run);
namespace {

using namespace bench_lookup;  // its options, rows, runner and names (Ip6, Rng, Clock, ...)

// ---- the command ---------------------------------------------------------------------------

/// The DPDK variants this build can name (without DPDK: their names, so that a request for one
/// gives a skipped row instead of "unknown engine").
std::vector<std::string> dpdk_variant_names() {
#if defined(WARPATH_HAVE_DPDK)
  std::vector<std::string> names;
  for (const auto& v : bench::anchor_variants()) names.push_back(v.name);
  return names;
#else
  return {"rte_lpm",        "rte_lpm.x4", "rte_fib.macro",   "rte_fib.inline", "rte_fib.uni",
          "rte_fib.avx512", "rte_lpm6",   "rte_fib6.scalar", "rte_fib6.avx512"};
#endif
}

struct EngineChoice {
  std::vector<EngineSpec> engines;
  bool want_dpdk = false;
};

/// --engines: warpath ids, DPDK variant names, or the groups "warpath" and "dpdk". Exit code 2
/// with a message on an unknown name or an empty list.
Result<EngineChoice> choose_engines(const std::string& list) {
  EngineChoice c;
  std::set<std::string> seen;
  const auto warpath_engines = lookup::fib_engines();
  const auto dpdk_names      = dpdk_variant_names();
  auto add                   = [&](const EngineSpec& e) {
    if (seen.insert(e.id).second) c.engines.push_back(e);
  };
  std::stringstream ss(list);
  std::string r;
  while (std::getline(ss, r, ',')) {
    if (r.empty()) continue;
    if (r == "warpath") {  // by priority: the headline engine first, and the reference
      auto by_priority = warpath_engines;
      std::stable_sort(
          by_priority.begin(), by_priority.end(),
          [](const EngineInfo& a, const EngineInfo& b) { return a.priority > b.priority; });
      for (const auto& e : by_priority)
        if (e.id != "ref.lpm" && e.available())
          add({std::string(e.id), false, e.id.substr(0, 5) == "cuda."});
      continue;
    }
    if (r == "dpdk") {
      c.want_dpdk = true;
      for (const auto& n : dpdk_names) add({n, true, false});
      continue;
    }
    if (std::find(dpdk_names.begin(), dpdk_names.end(), r) != dpdk_names.end()) {
      c.want_dpdk = true;
      add({r, true, false});
      continue;
    }
    bool validating    = false;
    const auto base_id = strip_validate(r, validating);
    const bool known   = std::any_of(warpath_engines.begin(), warpath_engines.end(),
                                     [&](const EngineInfo& e) { return e.id == base_id; });
    if (!known && base_id != "auto") {
      std::string names;
      for (const auto& e : warpath_engines) names += std::string(e.id) + ", ";
      for (const auto& n : dpdk_names) names += n + ", ";
      return Status(Errc::kInvalidArgument, fmt::format(
          "unknown engine '{}' (engines: {}warpath, dpdk)\nRun 'warpath bench lookup --help'.", r,
          names));
    }
    add({r, false, base_id.substr(0, 5) == "cuda."});
  }
  if (c.engines.empty()) return Status(Errc::kInvalidArgument, "--engines names no engine");
  return c;
}

/// The addresses of each family: the --addrs file's, or generated from the table.
struct Addresses {
  std::vector<uint32_t> v4;
  std::vector<Ip6> v6;
};

Result<Addresses> make_addresses(const BenchLookupOptions& o, const lookup::RouteTable& full,
                                 bool want4, bool want6) {
  Addresses a;
  if (!o.addrs.empty()) {
    WARPATH_ASSIGN_OR_RETURN(auto loaded, lookup::load_addresses(o.addrs));
    for (const auto& x : loaded) {
      if (x.is_v6)
        a.v6.push_back(x.v6);
      else
        a.v4.push_back(x.v4);
    }
    return a;
  }
  Rng rng(o.seed);
  if (want4)
    a.v4 = generate<uint32_t>(full.v4, o.count ? o.count : kDefaultCount4, o.mix, rng, random4,
                              in_prefix4);
  Rng rng6(o.seed ^ 0x6666'6666'6666'6666ull);
  if (want6)
    a.v6 = generate<Ip6>(full.v6, o.count ? o.count : kDefaultCount6, o.mix, rng6, random6,
                         in_prefix6);
  return a;
}

/// Starts DPDK's EAL on `cpu` when an anchor was asked for; what it says goes in the JSON.
nlohmann::json start_dpdk(bool want_dpdk, int cpu, const lookup::RouteTable& full, bool run4,
                          bool run6) {
  nlohmann::json dpdk_j = {{"available", false}};
  if (!want_dpdk) return dpdk_j;
#if defined(WARPATH_HAVE_DPDK)
  bench::DpdkOptions d;
  d.lcore     = cpu;
  d.memory_mb = bench::dpdk_memory_mb_for(run4 ? full.v4 : std::vector<lookup::Route4>{},
                                          run6 ? full.v6 : std::vector<lookup::Route6>{});
  fmt::print(stderr, "bench: starting DPDK EAL ({} MB)\n", d.memory_mb);
  const Status s = bench::dpdk_start(d);
  pin_to(cpu);  // EAL pins its main thread to the lcore; keep our pin whatever it did.
  dpdk_j = {{"available", s.is_ok()},
            {"version", bench::dpdk_version()},
            {"eal_args", bench::dpdk_eal_args()},
            {"pages", bench::dpdk_pages_text()},
            {"variants", nlohmann::json::array()}};
  if (!s.is_ok()) {
    dpdk_j["why_not"] = s.message();
    fmt::print(stderr, "bench: DPDK anchors unavailable: {}\n", s.message());
  }
  for (const auto& v : bench::anchor_variants())
    dpdk_j["variants"].push_back({{"name", v.name},
                                  {"structure", v.structure},
                                  {"family", v.v6 ? "ipv6" : "ipv4"},
                                  {"available", v.available},
                                  {"why_not", v.why_not}});
#else
  (void)cpu, (void)full, (void)run4, (void)run6;
  dpdk_j["why_not"] = "built without DPDK (libdpdk-dev not found by CMake)";
  fmt::print(stderr, "bench: DPDK anchors unavailable: built without DPDK\n");
#endif
  return dpdk_j;
}

/// Without DPDK, each anchor asked for is a skipped row of its family.
void add_skipped_anchors(const std::vector<EngineSpec>& engines, bool run4, bool run6,
                         std::vector<Row>& rows) {
#if !defined(WARPATH_HAVE_DPDK)
  for (const auto& fam : {std::string("ipv4"), std::string("ipv6")}) {
    if ((fam == "ipv4" && !run4) || (fam == "ipv6" && !run6)) continue;
    for (const auto& e : engines)
      if (e.anchor && (e.id.find('6') != std::string::npos) == (fam == "ipv6")) {
        Row r;
        r.family  = fam;
        r.engine  = e.id;
        r.kind    = "dpdk";
        r.skipped = "anchors unavailable: built without DPDK";
        rows.push_back(r);
      }
  }
#else
  (void)engines, (void)run4, (void)run6, (void)rows;
#endif
}

/// Everything one run measured, for the report and the JSON.
struct Outcome {
  std::vector<Row> rows;
  std::vector<GpuRow> gpu_rows;
  bool failed = false;
  std::string ref4, ref6;
  uint64_t mismatches() const {
    uint64_t n = 0;
    for (const auto& r : rows) n += r.mismatches;
    return n;
  }
};

Outcome measure(const BenchLookupOptions& o, const std::vector<EngineSpec>& engines,
                const lookup::RouteTable& full, const Addresses& addrs, bool run4, bool run6) {
  Outcome out;
  lookup::RouteTable t4, t6;
  t4.source = t6.source = full.source;
  t4.nexthop_names = t6.nexthop_names = full.nexthop_names;
  t4.v4                               = full.v4;
  t6.v6                               = full.v6;
  if (run4) {
    FamilyBench<false> fb{o, t4, addrs.v4, out.rows, out.gpu_rows, out.failed, {}, {}, {}, {}};
    fb.run(engines);
    out.ref4 = fb.reference_id;
  }
  if (run6) {
    FamilyBench<true> fb{o, t6, addrs.v6, out.rows, out.gpu_rows, out.failed, {}, {}, {}, {}};
    fb.run(engines);
    out.ref6 = fb.reference_id;
  }
  return out;
}

void print_report(const BenchLookupOptions& o, int cpu, const lookup::RouteTable& full,
                  const Addresses& addrs, bool run4, bool run6, const Outcome& out) {
  const std::string mixed =
      o.addrs.empty() ? fmt::format("{}, seed {}", o.mix, o.seed) : "from " + base_name(o.addrs);
  const std::string how =
      fmt::format("batch {}, best of {}, cpu {}",
                  o.batch ? std::to_string(o.batch) : std::string("all"), o.repeat, cpu);
  if (run4)
    print_table(
        out.rows, "ipv4",
        fmt::format("IPv4  {}: {} routes, {} addresses ({}), {}", base_name(o.fib),
                    group_thousands(full.v4.size()), group_thousands(addrs.v4.size()), mixed, how));
  if (run6)
    print_table(
        out.rows, "ipv6",
        fmt::format("IPv6  {}: {} routes, {} addresses ({}), {}", base_name(o.fib),
                    group_thousands(full.v6.size()), group_thousands(addrs.v6.size()), mixed, how));
  if (!out.gpu_rows.empty()) {
    fmt::print("\nGPU end to end (copies + kernel; the Fib API has no kernel-only timing)\n");
    fmt::print("{:<6} {:<12} {:>8} {:>11} {:>9}\n", "family", "engine", "batch", "Mlookups/s",
               "ns/lookup");
    for (const auto& g : out.gpu_rows)
      fmt::print("{:<6} {:<12} {:>8} {:>11.1f} {:>9.2f}\n", g.family, g.engine, g.batch,
                 1e-6 * double(g.count) / g.best_s, g.best_s * 1e9 / double(g.count));
  }
  fmt::print("\ncheck: {}\n",
             out.failed ? fmt::format("FAILED ({} mismatching answers)", out.mismatches())
                        : std::string("every engine gave the same answers"));
}

nlohmann::json row_json(const Row& r) {
  nlohmann::json x = {{"family", r.family}, {"engine", r.engine}, {"kind", r.kind}};
  if (!r.skipped.empty()) {
    x["skipped"] = r.skipped;
    return x;
  }
  auto ratio_or_null = [](double v) { return v > 0 ? nlohmann::json(v) : nlohmann::json(nullptr); };
  x["count"]                     = r.count;
  x["mlookups_per_s"]            = r.mlps();
  x["ns_per_lookup"]             = r.best_s * 1e9 / double(r.count);
  x["best_s"]                    = r.best_s;
  x["pass_s"]                    = r.pass_s;
  x["build_ms"]                  = r.build_ms;
  x["image_bytes"]               = r.image_bytes;
  x["memory_bytes"]              = r.total_bytes;
  x["config"]                    = r.config;
  x["ratio_to_best_dpdk"]        = ratio_or_null(r.ratio);
  x["paired_ratio_to_best_dpdk"] = ratio_or_null(r.paired);
  x["reference"]                 = r.reference;
  x["mismatches"]                = r.mismatches;
  if (r.kind == "warpath") x["engine_build_ms"] = r.engine_build_ms;
  return x;
}

Status write_json(const BenchLookupOptions& o, const RunStart& start,
                  const lookup::RouteTable& full, const Addresses& addrs,
                  const nlohmann::json& dpdk_j, const Outcome& out) {
  nlohmann::json j = result_header("warpath bench lookup", o.command_line, start);
  if (!o.note.empty()) j["note"] = o.note;
  j["dataset"]   = {{"file", o.fib},
                    {"name", base_name(o.fib)},
                    {"routes4", full.v4.size()},
                    {"routes6", full.v6.size()}};
  j["addresses"] = {{"source", o.addrs.empty() ? "generated" : "file"},
                    {"file", o.addrs},
                    {"count4", addrs.v4.size()},
                    {"count6", addrs.v6.size()},
                    {"mix", o.addrs.empty() ? o.mix : "file"},
                    {"seed", o.seed},
                    {"ipv6_random_space", "2000::/3"}};
  j["params"]    = {{"repeat", o.repeat},
                    {"batch", o.batch},
                    {"gpu_batch", o.gpu_batch},
                    {"engines", o.engines},
                    {"timing", "steady_clock over the whole address array per pass, best pass"}};
  j["dpdk"]      = dpdk_j;
  j["results"]   = nlohmann::json::array();
  for (const auto& r : out.rows) j["results"].push_back(row_json(r));
  j["gpu"] = nlohmann::json::array();
  for (const auto& g : out.gpu_rows)
    j["gpu"].push_back({{"family", g.family},
                        {"engine", g.engine},
                        {"batch", g.batch},
                        {"mode", "end_to_end"},
                        {"mlookups_per_s", 1e-6 * double(g.count) / g.best_s},
                        {"ns_per_lookup", g.best_s * 1e9 / double(g.count)}});
  j["check"]                  = {{"passed", !out.failed},
                                 {"mismatches", out.mismatches()},
                                 {"reference", {{"ipv4", out.ref4}, {"ipv6", out.ref6}}}};
  return write_result(j, start, o.json);
}

int run_bench_lookup(const BenchLookupOptions& o) {
  // Pin first: the table, the addresses and every engine's memory are touched on this core.
  auto start = pin_run(o.cpu);
  if (!start.is_ok()) return fail(start.status());
  const int cpu = start->cpu;

  auto choice = choose_engines(o.engines);
  if (!choice.is_ok()) {
    fmt::print(stderr, "warpath: {}\n", choice.status().message());
    return 2;
  }

  fmt::print(stderr, "bench: loading {}\n", o.fib);
  auto loaded = lookup::load_routes(o.fib);
  if (!loaded.is_ok()) return fail(loaded.status());
  const lookup::RouteTable& full = *loaded;
  const bool want4               = o.family != "ipv6" && !full.v4.empty();
  const bool want6               = o.family != "ipv4" && !full.v6.empty();
  auto addrs                     = make_addresses(o, full, want4, want6);
  if (!addrs.is_ok()) return fail(addrs.status());
  const bool run4 = want4 && !addrs->v4.empty();
  const bool run6 = want6 && !addrs->v6.empty();
  if (!run4 && !run6)
    return fail(fmt::format("{}: no family with both routes and addresses to look up", o.fib));

  const nlohmann::json dpdk_j = start_dpdk(choice->want_dpdk, cpu, full, run4, run6);
  Outcome out                 = measure(o, choice->engines, full, *addrs, run4, run6);
  if (choice->want_dpdk) add_skipped_anchors(choice->engines, run4, run6, out.rows);

  print_report(o, cpu, full, *addrs, run4, run6, out);
  if (!o.json.empty()) {
    const Status s = write_json(o, *start, full, *addrs, dpdk_j, out);
    if (!s.is_ok()) return fail(s);
  }
  return out.failed ? 1 : 0;
}

}  // namespace

void add_bench(CLI::App& app, Runner& run) {
  auto* bench = app.add_subcommand(
      "bench", "Benchmarks: warpath engines side by side with the field's tools (DPDK)");
  bench->require_subcommand(1);

  auto o    = std::make_shared<BenchLookupOptions>();
  auto* cmd = bench->add_subcommand(
      "lookup", "IP lookup: every warpath engine and DPDK rte_lpm/rte_lpm6/rte_fib/rte_fib6");
  cmd->add_option("--fib", o->fib, "Route file (IPv4 and/or IPv6; .gz/.xz read directly)")
      ->required();
  cmd->add_option("--addrs", o->addrs, "Address file (default: generated addresses)");
  cmd->add_option("--count", o->count,
                  "Generated addresses per family (default 2,000,000 IPv4, 1,000,000 IPv6)")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 30));
  cmd->add_option("--mix", o->mix,
                  "random (uniform; IPv6 in 2000::/3), prefix (a random route's prefix with "
                  "random host bits) or mixed (half each)")
      ->check(CLI::IsMember({"random", "prefix", "mixed"}));
  cmd->add_option("--seed", o->seed, "Seed of the generated addresses (default 1)");
  cmd->add_option("--engines", o->engines,
                  "Comma-separated engine ids, DPDK variants (rte_lpm, rte_fib.avx512, ...), "
                  "'warpath' (every available warpath engine but ref.lpm) and 'dpdk' (every "
                  "anchor); default warpath,dpdk. The first warpath engine is the reference.");
  cmd->add_option("--repeat", o->repeat, "Timed passes after a warm-up; the best counts")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--batch", o->batch,
                  "Addresses per lookup call for CPU engines (default 64; 0 = all at once)");
  cmd->add_option("--gpu-batch", o->gpu_batch, "Addresses per call for GPU engines")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 30));
  cmd->add_option("--cpu", o->cpu, "Core to pin to (default: the current one)")
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  cmd->add_option("--family", o->family, "ipv4, ipv6 or both (default: what the table has)")
      ->check(CLI::IsMember({"ipv4", "ipv6", "both"}));
  cmd->add_option("--json", o->json, "Write the results as JSON to this file");
  cmd->add_option("--note", o->note,
                  "Free text stored in the JSON (e.g. how busy the machine was)");
  cmd->callback([o, &run] {
    o->command_line = command_line();
    run             = [o] { return run_bench_lookup(*o); };
  });

  add_bench_classify(*bench, run);
}

}  // namespace warpath::cli
