// bench/lookup/lookup_bench.cpp: the IP lookup benchmark (lookup_bench.hpp): the engines asked
// for, the addresses, DPDK's EAL, the per-family runs (lookup_family.hpp) and the report.
#include "lookup/lookup_bench.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>

#include "lookup/lookup_family.hpp"

namespace warpath::bench::bench_lookup {
namespace {

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

/// --engines: warpath ids, DPDK variant names, or the groups "warpath" and "dpdk"; kNotFound
/// (a usage error) on an unknown name or an empty list.
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
      return Status(Errc::kNotFound, fmt::format("unknown engine '{}' (engines: {}warpath, "
                                                 "dpdk)\nRun 'warpath bench lookup --help'.",
                                                 r, names));
    }
    add({r, false, base_id.substr(0, 5) == "cuda."});
  }
  if (c.engines.empty()) return Status(Errc::kNotFound, "--engines names no engine");
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

/// Starts DPDK's EAL on `cpu` when an anchor was asked for; what it says goes in the JSON
/// ("dpdk.available", "dpdk.variants", ...).
Fields start_dpdk(bool want_dpdk, int cpu, const lookup::RouteTable& full, bool run4, bool run6) {
  Fields f = {{"dpdk.available", false}};
  if (!want_dpdk) return f;
#if defined(WARPATH_HAVE_DPDK)
  bench::DpdkOptions d;
  d.lcore     = cpu;
  d.memory_mb = bench::dpdk_memory_mb_for(run4 ? full.v4 : std::vector<lookup::Route4>{},
                                          run6 ? full.v6 : std::vector<lookup::Route6>{});
  fmt::print(stderr, "bench: starting DPDK EAL ({} MB)\n", d.memory_mb);
  const Status s = bench::dpdk_start(d);
  pin_to(cpu);  // EAL pins its main thread to the lcore; keep our pin whatever it did.
  f = {{"dpdk.available", s.is_ok()},
       {"dpdk.version", bench::dpdk_version()},
       {"dpdk.eal_args", bench::dpdk_eal_args()},
       {"dpdk.pages", bench::dpdk_pages_text()}};
  if (!s.is_ok()) {
    f.emplace_back("dpdk.why_not", s.message());
    fmt::print(stderr, "bench: DPDK anchors unavailable: {}\n", s.message());
  }
  nlohmann::json variants = nlohmann::json::array();
  for (const auto& v : bench::anchor_variants())
    variants.push_back({{"name", v.name},
                        {"structure", v.structure},
                        {"family", v.v6 ? "ipv6" : "ipv4"},
                        {"available", v.available},
                        {"why_not", v.why_not}});
  f.emplace_back("dpdk.variants", Json{variants.dump()});
#else
  (void)cpu, (void)full, (void)run4, (void)run6;
  f.emplace_back("dpdk.why_not",
                 std::string("built without DPDK (libdpdk-dev not found by CMake)"));
  fmt::print(stderr, "bench: DPDK anchors unavailable: built without DPDK\n");
#endif
  return f;
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

// ---- the report (bench/harness/report.hpp) -------------------------------------------------

/// An engine's measurement as the harness's row: the family is the workload, the DPDK
/// variants its anchors; then the bench's own fields.
bench::Row report_row(const Row& r) {
  bench::Row x;
  x.workload = r.family;
  x.engine   = r.engine;
  x.anchor   = r.kind == "dpdk";
  x.unit     = "lookups";
  x.skipped  = r.skipped;
  x.with("family", r.family).with("kind", r.kind);
  if (!r.skipped.empty()) return x;
  x.rate   = r.best_s > 0 ? double(r.count) / r.best_s : 0;
  x.pass_s = r.pass_s;
  x.with("count", int64_t(r.count))
      .with("best_s", r.best_s)
      .with("build_ms", r.build_ms)
      .with("image_bytes", int64_t(r.image_bytes))
      .with("memory_bytes", int64_t(r.total_bytes))
      .with("config", r.config)
      .with("reference", r.reference)
      .with("mismatches", int64_t(r.mismatches));
  if (r.kind == "warpath") x.with("engine_build_ms", r.engine_build_ms);
  return x;
}

bench::Row report_row(const GpuRow& g) {
  bench::Row x;
  x.workload = g.family;
  x.engine   = g.engine;
  x.unit     = "lookups";
  x.rate     = g.best_s > 0 ? double(g.count) / g.best_s : 0;
  x.with("family", g.family).with("batch", int64_t(g.batch)).with("mode", "end_to_end");
  return x;
}

std::vector<bench::Row> report_rows(const Outcome& out) {
  std::vector<bench::Row> rows;
  for (const Row& r : out.rows) rows.push_back(report_row(r));
  ratios_to_best_anchor(rows);  // to the best DPDK variant of the family, best pass against best
  paired_to_best_anchor(rows);  // and as the median over rounds of the paired passes
  return rows;
}

Column mib_column(const std::string& title, const std::string& key) {
  return {title, [key](const bench::Row& r) {
            const Value* v = r.field(key);
            return v ? fmt::format("{:.1f}", mib(uint64_t(std::get<int64_t>(*v)))) : "-";
          }};
}

void print_report(const BenchLookupOptions& o, int cpu, const lookup::RouteTable& full,
                  const Addresses& addrs, const Outcome& out, const std::vector<bench::Row>& rows) {
  const std::string mixed =
      o.addrs.empty() ? fmt::format("{}, seed {}", o.mix, o.seed) : "from " + base_name(o.addrs);
  const std::string how =
      fmt::format("batch {}, best of {}, cpu {}",
                  o.batch ? std::to_string(o.batch) : std::string("all"), o.repeat, cpu);
  const Column check                = {"check",
                                       [](const bench::Row& r) {
                          if (!r.skipped.empty()) return std::string();  // the reason says it
                          const Value* ref = r.field("reference");
                          const Value* mis = r.field("mismatches");
                          if (ref && std::get<bool>(*ref)) return std::string("reference");
                          const int64_t n = mis ? std::get<int64_t>(*mis) : 0;
                          return n == 0 ? std::string("ok") : fmt::format("{} MISMATCHES", n);
                        },
                                       true};
  const std::vector<Column> columns = {engine_column(),
                                       rate_column("Mlookups/s"),
                                       ns_column("ns/lookup"),
                                       ratio_column("vs DPDK"),
                                       paired_column("paired"),
                                       field_column("build ms", "build_ms", 1),
                                       mib_column("image MiB", "image_bytes"),
                                       mib_column("total MiB", "memory_bytes"),
                                       check};
  for (const char* family : {"ipv4", "ipv6"}) {
    std::vector<bench::Row> of;
    for (const bench::Row& r : rows)
      if (r.workload == family) of.push_back(r);
    if (of.empty()) continue;
    const bool v6 = family[3] == '6';
    fmt::print("\n{}  {}: {} routes, {} addresses ({}), {}\n\n", v6 ? "IPv6" : "IPv4",
               base_name(o.fib), group_thousands(v6 ? full.v6.size() : full.v4.size()),
               group_thousands(v6 ? addrs.v6.size() : addrs.v4.size()), mixed, how);
    std::fflush(stdout);
    print_table(stdout, columns, of);
  }
  if (!out.gpu_rows.empty()) {
    std::vector<bench::Row> gpu;
    for (const GpuRow& g : out.gpu_rows) gpu.push_back(report_row(g));
    fmt::print("\nGPU end to end (copies + kernel; the Fib API has no kernel-only timing)\n\n");
    std::fflush(stdout);
    print_table(stdout,
                {workload_column("family"), engine_column(), field_column("batch", "batch"),
                 rate_column("Mlookups/s"), ns_column("ns/lookup")},
                gpu);
  }
  fmt::print("\ncheck: {}\n", out.failed
                                  ? fmt::format("FAILED ({} mismatching answers)", out.mismatches())
                                  : std::string("every engine gave the same answers"));
}

Status write_json(const BenchLookupOptions& o, const RunStart& start, const Fields& start_head,
                  const lookup::RouteTable& full, const Addresses& addrs, const Fields& dpdk,
                  const Outcome& out, const std::vector<bench::Row>& rows) {
  Fields head = start_head;
  head.emplace_back("machine.loadavg_end", first_line("/proc/loadavg"));
  head.emplace_back("wall_s", seconds_since(start.t));
  if (!o.note.empty()) head.emplace_back("note", o.note);
  const Fields data = {{"dataset.file", o.fib},
                       {"dataset.name", base_name(o.fib)},
                       {"dataset.routes4", int64_t(full.v4.size())},
                       {"dataset.routes6", int64_t(full.v6.size())},
                       {"addresses.source", std::string(o.addrs.empty() ? "generated" : "file")},
                       {"addresses.file", o.addrs},
                       {"addresses.count4", int64_t(addrs.v4.size())},
                       {"addresses.count6", int64_t(addrs.v6.size())},
                       {"addresses.mix", o.addrs.empty() ? o.mix : "file"},
                       {"addresses.seed", int64_t(o.seed)},
                       {"addresses.ipv6_random_space", std::string("2000::/3")}};
  head.insert(head.end(), data.begin(), data.end());
  head.insert(head.end(), dpdk.begin(), dpdk.end());
  std::string gpu;  // the table's rows, as the file's rows are written
  for (const GpuRow& g : out.gpu_rows) gpu += (gpu.empty() ? "" : ", ") + row_line(report_row(g));
  head.emplace_back("gpu", Json{"[" + gpu + "]"});
  head.emplace_back("check.passed", !out.failed);
  head.emplace_back("check.mismatches", int64_t(out.mismatches()));
  head.emplace_back("check.reference.ipv4", out.ref4);
  head.emplace_back("check.reference.ipv6", out.ref6);
  const Fields params = {
      {"repeat", int64_t(o.repeat)},
      {"batch", int64_t(o.batch)},
      {"gpu_batch", int64_t(o.gpu_batch)},
      {"engines", o.engines},
      {"timing", std::string("steady_clock over the whole address array per pass, best pass")}};
  std::string why;
  if (!write_results(o.json, head, params, {}, rows, &why)) return Status(Errc::kIoError, why);
  return Status::ok();
}

}  // namespace

Result<int> run_bench_lookup(const BenchLookupOptions& o) {
  if (!o.json.empty())  // before minutes of passes, not after
    if (std::string why = unwritable(o.json); !why.empty()) return Status(Errc::kIoError, why);
  // Pin first: the table, the addresses and every engine's memory are touched on this core.
  WARPATH_ASSIGN_OR_RETURN(const RunStart start, pin_run(o.cpu));
  // The provenance now: its load average is the one at the start.
  const Fields start_head = provenance("warpath bench lookup", o.command_line, start.cpu);
  WARPATH_ASSIGN_OR_RETURN(const EngineChoice choice, choose_engines(o.engines));

  fmt::print(stderr, "bench: loading {}\n", o.fib);
  WARPATH_ASSIGN_OR_RETURN(const lookup::RouteTable full, lookup::load_routes(o.fib));
  const bool want4 = o.family != "ipv6" && !full.v4.empty();
  const bool want6 = o.family != "ipv4" && !full.v6.empty();
  WARPATH_ASSIGN_OR_RETURN(const Addresses addrs, make_addresses(o, full, want4, want6));
  const bool run4 = want4 && !addrs.v4.empty();
  const bool run6 = want6 && !addrs.v6.empty();
  if (!run4 && !run6)
    return Status(Errc::kInvalidArgument,
                  o.fib + ": no family with both routes and addresses to look up");

  const Fields dpdk = start_dpdk(choice.want_dpdk, start.cpu, full, run4, run6);
  Outcome out       = measure(o, choice.engines, full, addrs, run4, run6);
  if (choice.want_dpdk) add_skipped_anchors(choice.engines, run4, run6, out.rows);

  const std::vector<bench::Row> rows = report_rows(out);
  print_report(o, start.cpu, full, addrs, out, rows);
  if (!o.json.empty()) WARPATH_TRY(write_json(o, start, start_head, full, addrs, dpdk, out, rows));
  return out.failed ? 1 : 0;
}

}  // namespace warpath::bench::bench_lookup
