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
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <set>
#include <sstream>

#include "bench_util.hpp"
#include "commands.hpp"
#if defined(WARPATH_HAVE_DPDK)
#include "lookup_anchor.hpp"  // bench/anchors: declarations only, no DPDK header
#endif
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/version.hpp"
#include "warpath/lookup/fib.hpp"

namespace warpath::cli {

/// `warpath bench classify` (cmd_bench_classify.cpp).
void add_bench_classify(CLI::App& bench, Runner& run);

namespace {

using lookup::Ip6;
using lookup::kNoRoute;
using lookup::NextHop;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kDefaultCount4 = 2'000'000;
constexpr uint32_t kDefaultCount6 = 1'000'000;
constexpr uint32_t kGpuBatches[]  = {256, 1024, 4096, 16384, 65536};

struct BenchLookupOptions {
  std::string fib, addrs, mix = "mixed", engines = "warpath,dpdk", json, note, family = "both";
  uint32_t count     = 0;  // 0: the per-family defaults
  uint64_t seed      = 1;
  unsigned repeat    = 5;
  uint32_t batch     = 64;
  uint32_t gpu_batch = 65536;
  int cpu            = -1;
  std::string command_line;
};

// ---- addresses -----------------------------------------------------------------------------

/// Deterministic on every platform: raw mt19937_64 bits, no std distributions.
struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint64_t bits() { return g(); }
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)g() * n >> 64); }
};

uint32_t random4(Rng& r) { return uint32_t(r.bits() >> 32); }
/// Uniform in 2000::/3, the global unicast space every IPv6 table routes.
Ip6 random6(Rng& r) { return Ip6{(r.bits() >> 3) | 0x2000'0000'0000'0000ull, r.bits()}; }
uint32_t in_prefix4(Rng& r, const lookup::Route4& rt) {
  const uint32_t host = rt.len == 32 ? 0u : random4(r) & (0xFFFF'FFFFu >> rt.len);
  return rt.prefix | host;
}
Ip6 in_prefix6(Rng& r, const lookup::Route6& rt) {
  const Ip6 mask = lookup::mask6(Ip6{~0ull, ~0ull}, rt.len);
  return Ip6{rt.prefix.hi | (r.bits() & ~mask.hi), rt.prefix.lo | (r.bits() & ~mask.lo)};
}

template <class A, class Route, class Rand, class In>
std::vector<A> generate(const std::vector<Route>& routes, uint32_t count, const std::string& mix,
                        Rng& rng, Rand random, In in_prefix) {
  std::vector<A> out(count);
  const uint32_t from_table = routes.empty()    ? 0
                              : mix == "prefix" ? count
                              : mix == "random" ? 0
                                                : count / 2;
  for (uint32_t i = 0; i < count; ++i)
    out[i] = i < from_table ? in_prefix(rng, routes[rng.below(routes.size())]) : random(rng);
  for (uint32_t i = count; i > 1; --i) std::swap(out[i - 1], out[rng.below(i)]);  // shuffle
  return out;
}

// ---- engines -------------------------------------------------------------------------------

struct EngineSpec {
  std::string id;
  bool anchor = false;
  bool gpu    = false;
};

/// What one engine measured on one family.
struct Row {
  std::string family, engine, kind, config, skipped;
  double best_s = 0, build_ms = 0, engine_build_ms = 0;
  std::vector<double> pass_s;
  uint64_t image_bytes = 0, total_bytes = 0, mismatches = 0;
  bool reference = false;
  double mlps() const { return best_s > 0 ? 1e-6 / best_s * double(count) : 0; }
  uint64_t count = 0;
  double ratio   = 0;  // to the best DPDK variant of the family, best pass against best pass
  double paired  = 0;  // the median over rounds of that variant's pass time / this row's
};

/// The median over rounds k of base[k] / row[k]: each round's passes of two engines ran
/// back to back, so a shared VM's drift, which moves best-of ratios by 20-40%, mostly cancels.
double paired_median(const std::vector<double>& base, const std::vector<double>& row) {
  std::vector<double> r;
  for (size_t k = 0; k < base.size() && k < row.size(); ++k)
    if (row[k] > 0) r.push_back(base[k] / row[k]);
  if (r.empty()) return 0;
  std::sort(r.begin(), r.end());
  const size_t h = r.size() / 2;
  return r.size() % 2 ? r[h] : (r[h - 1] + r[h]) / 2;
}

struct GpuRow {
  std::string family, engine;
  uint32_t batch = 0;
  double best_s  = 0;
  uint64_t count = 0;
};

struct Mismatch {
  uint64_t count = 0;
  std::string first;
};

template <class A, class Fmt>
Mismatch compare(const std::vector<NextHop>& got, const std::vector<NextHop>& want,
                 const std::vector<A>& addrs, Fmt format) {
  Mismatch m;
  for (size_t i = 0; i < got.size(); ++i)
    if (got[i] != want[i]) {
      if (m.count++ == 0)
        m.first =
            fmt::format("{} -> {} (reference: {})", format(addrs[i]),
                        got[i] == kNoRoute ? std::string("no route") : std::to_string(got[i]),
                        want[i] == kNoRoute ? std::string("no route") : std::to_string(want[i]));
    }
  return m;
}

/// One family's run: the addresses, the table, every engine.
template <bool V6>
struct FamilyBench {
  using Addr  = std::conditional_t<V6, Ip6, uint32_t>;
  using Route = std::conditional_t<V6, lookup::Route6, lookup::Route4>;

  const BenchLookupOptions& o;
  const lookup::RouteTable& table;  // this family only
  const std::vector<Addr>& addrs;
  std::vector<Row>& rows;
  std::vector<GpuRow>& gpu_rows;
  bool& failed;

  const char* family() const { return V6 ? "ipv6" : "ipv4"; }
  const std::vector<Route>& routes() const {
    if constexpr (V6)
      return table.v6;
    else
      return table.v4;
  }
  static std::string format(const Addr& a) {
    if constexpr (V6)
      return lookup::format_ipv6(a);
    else
      return lookup::format_ipv4(a);
  }

  std::vector<NextHop> reference;
  std::string reference_id;

  // Engines built, warmed up and checked, waiting for their timed passes. The passes run
  // round-robin (pass k of every engine before pass k + 1 of any), so that drift in the
  // machine's speed (a shared VM: other tenants, the other vCPU) reaches every engine alike
  // and the ratios within a run hold.
  struct Timed {
    size_t row;
    uint32_t batch;
    std::function<void()> prepare;  // before each pass, untimed (select a DPDK variant)
    std::function<void(uint64_t, uint32_t)> call;
    bool gpu = false;
  };
  std::vector<Timed> timed;
  std::vector<std::shared_ptr<void>> keep;  // what the calls use, alive until the passes end

  void time_all() {
    for (unsigned pass = 0; pass < o.repeat; ++pass)
      for (const Timed& t : timed) {
        if (t.prepare) t.prepare();
        // An untimed pass first: the timed one then finds the caches holding this engine's
        // tables, as back-to-back passes of one engine do, not the previous engine's.
        time_passes(addrs.size(), t.batch, 1, t.call);
        rows[t.row].pass_s.push_back(time_passes(addrs.size(), t.batch, 1, t.call).front());
      }
    for (const Timed& t : timed) {
      Row& row   = rows[t.row];
      row.best_s = *std::min_element(row.pass_s.begin(), row.pass_s.end());
      if (!t.gpu) continue;
      if (t.prepare) t.prepare();
      for (const uint32_t b : kGpuBatches) {
        const auto p = time_passes(addrs.size(), b, o.repeat, t.call);
        gpu_rows.push_back({family(), row.engine, b, *std::min_element(p.begin(), p.end()),
                            uint64_t(addrs.size())});
      }
    }
    timed.clear();
    keep.clear();
  }

  void check(Row& row, const std::vector<NextHop>& out) {
    if (reference.empty()) {
      reference     = out;
      reference_id  = row.engine;
      row.reference = true;
      return;
    }
    const Mismatch m = compare(out, reference, addrs, format);
    row.mismatches   = m.count;
    if (m.count) {
      failed = true;
      fmt::print(stderr, "warpath: MISMATCH {} {}: {} of {} answers differ from {}; first: {}\n",
                 family(), row.engine, group_thousands(m.count), group_thousands(out.size()),
                 reference_id, m.first);
    }
  }

  void run_warpath(const EngineSpec& e) {
    Row row;
    row.family = family();
    row.engine = e.id;
    row.kind   = "warpath";
    row.count  = addrs.size();
    fmt::print(stderr, "bench: {} {}: building ({} routes)\n", family(), e.id,
               group_thousands(routes().size()));
    const auto t0 = Clock::now();
    auto fib      = lookup::make_fib(e.id, table);
    row.build_ms  = seconds_since(t0) * 1e3;
    if (!fib.is_ok()) {
      row.skipped = fib.status().message();
      fmt::print(stderr, "bench: {} {}: skipped: {}\n", family(), e.id, row.skipped);
      rows.push_back(row);
      return;
    }
    const lookup::FibStats st = (*fib)->stats();
    row.engine_build_ms       = st.build_ms;
    row.image_bytes           = st.memory_bytes;
    row.total_bytes           = st.memory_bytes + st.rib_bytes;
    row.config = V6 ? fmt::format("v6_lengths={} v6_markers={}", st.v6_lengths, st.v6_markers)
                    : fmt::format("entry_bits={} tbl8_groups={}", st.entry_bits, st.tbl8_groups);
    struct State {
      std::unique_ptr<lookup::Fib> fib;
      ExecContext ctx;
      std::vector<NextHop> out;
      Status status;
    };
    auto st_ = std::make_shared<State>();
    st_->fib = std::move(fib).value();
    st_->out.assign(addrs.size(), kNoRoute);
    State* sp      = st_.get();
    const Addr* ap = addrs.data();
    auto call      = [sp, ap](uint64_t off, uint32_t n) {
      Status s;
      if constexpr (V6)
        s = sp->fib->lookup6({ap + off, n}, {sp->out.data() + off, n}, sp->ctx);
      else
        s = sp->fib->lookup4({ap + off, n}, {sp->out.data() + off, n}, sp->ctx);
      if (!s.is_ok() && sp->status.is_ok()) sp->status = s;
    };
    const uint32_t batch = e.gpu ? o.gpu_batch : o.batch;
    fmt::print(stderr, "bench: {} {}: {} lookups x (1 + {})\n", family(), e.id,
               group_thousands(addrs.size()), o.repeat);
    time_passes(addrs.size(), batch, 1, call);  // warm-up; its answers are checked
    if (!sp->status.is_ok()) {
      row.skipped = sp->status.message();
      failed      = true;
      fmt::print(stderr, "warpath: {} {}: lookup failed: {}\n", family(), e.id, row.skipped);
      rows.push_back(row);
      return;
    }
    check(row, sp->out);
    timed.push_back({rows.size(), batch, nullptr, call, e.gpu});
    keep.push_back(st_);
    rows.push_back(row);
  }

#if defined(WARPATH_HAVE_DPDK)
  /// The variants of one DPDK structure, built once.
  void run_anchor_structure(const std::vector<std::string>& variants,
                            const std::vector<bench::Ip6Net>& net) {
    auto made = bench::make_anchor(variants.front());
    std::shared_ptr<bench::LookupAnchor> anchor;
    Status built;
    if (!made.is_ok()) {
      built = made.status();
    } else {
      anchor = std::shared_ptr<bench::LookupAnchor>(std::move(made).value());
      fmt::print(stderr, "bench: {} {}: building ({} routes)\n", family(), anchor->structure(),
                 group_thousands(routes().size()));
      if constexpr (V6)
        built = anchor->build6(routes());
      else
        built = anchor->build4(routes());
    }
    for (const auto& v : variants) {
      Row row;
      row.family = family();
      row.engine = v;
      row.kind   = "dpdk";
      row.count  = addrs.size();
      Status s   = built;
      if (s.is_ok()) s = anchor->select(v);
      if (!s.is_ok()) {
        row.skipped = s.message();
        fmt::print(stderr, "bench: {} {}: skipped: {}\n", family(), v, row.skipped);
        rows.push_back(row);
        continue;
      }
      bench::LookupAnchor* a  = anchor.get();
      row.build_ms            = a->build_ms();
      row.image_bytes         = a->image_bytes();
      row.total_bytes         = a->memory_bytes();
      row.config              = a->config();
      auto out                = std::make_shared<std::vector<NextHop>>(addrs.size(), kNoRoute);
      NextHop* op             = out->data();
      const bench::Ip6Net* np = net.data();
      const Addr* ap          = addrs.data();
      auto call               = [a, op, np, ap](uint64_t off, uint32_t n) {
        if constexpr (V6)
          a->lookup6(np + off, op + off, n);
        else
          a->lookup4(ap + off, op + off, n);
      };
      fmt::print(stderr, "bench: {} {}: {} lookups x (1 + {})\n", family(), v,
                 group_thousands(addrs.size()), o.repeat);
      time_passes(addrs.size(), o.batch, 1, call);
      check(row, *out);
      timed.push_back({rows.size(), o.batch, [a, v] { (void)a->select(v); }, call, false});
      keep.push_back(out);
      keep.push_back(anchor);
      rows.push_back(row);
    }
  }
#endif

  void run(const std::vector<EngineSpec>& engines) {
    const size_t first = rows.size();
    for (const auto& e : engines)
      if (!e.anchor) run_warpath(e);
#if defined(WARPATH_HAVE_DPDK)
    std::vector<bench::Ip6Net> net;
    if constexpr (V6) net = bench::to_network(addrs);  // once, outside the timed loops
    // Group the requested variants by structure, keeping the order.
    std::vector<std::pair<std::string, std::vector<std::string>>> groups;
    for (const auto& e : engines) {
      if (!e.anchor) continue;
      std::string structure;
      for (const auto& v : bench::anchor_variants())
        if (v.name == e.id && v.v6 == V6) structure = v.structure;
      if (structure.empty()) continue;  // the other family's anchor
      auto it = std::find_if(groups.begin(), groups.end(),
                             [&](const auto& g) { return g.first == structure; });
      if (it == groups.end()) it = groups.insert(groups.end(), {structure, {}});
      it->second.push_back(e.id);
    }
    for (const auto& g : groups) run_anchor_structure(g.second, net);
    if (!timed.empty())
      fmt::print(stderr, "bench: {}: {} timed passes of {} engines, round-robin\n", family(),
                 o.repeat, timed.size());
    time_all();  // before `net` goes
#else
    time_all();
#endif
    // Ratios to the best DPDK variant of the family.
    const Row* best_dpdk = nullptr;
    for (size_t i = first; i < rows.size(); ++i)
      if (rows[i].kind == "dpdk" && rows[i].skipped.empty() &&
          (!best_dpdk || rows[i].mlps() > best_dpdk->mlps()))
        best_dpdk = &rows[i];
    if (!best_dpdk || best_dpdk->mlps() <= 0) return;
    for (size_t i = first; i < rows.size(); ++i) {
      if (!rows[i].skipped.empty()) continue;
      rows[i].ratio  = rows[i].mlps() / best_dpdk->mlps();
      rows[i].paired = paired_median(best_dpdk->pass_s, rows[i].pass_s);
    }
  }
};

// ---- output --------------------------------------------------------------------------------

void print_table(const std::vector<Row>& rows, const std::string& family,
                 const std::string& title) {
  fmt::print("\n{}\n", title);
  fmt::print("{:<18} {:>11} {:>9} {:>9} {:>9} {:>11} {:>9} {:>9}  {}\n", "engine",
             "Mlookups/s", "ns/lookup", "vs DPDK", "paired", "build ms", "image MiB",
             "total MiB", "check");
  for (const auto& r : rows) {
    if (r.family != family) continue;
    if (!r.skipped.empty()) {
      fmt::print("{:<18} skipped: {}\n", r.engine, r.skipped);
      continue;
    }
    const std::string check = r.reference         ? "reference"
                              : r.mismatches == 0 ? "ok"
                                                  : fmt::format("{} MISMATCHES", r.mismatches);
    const auto x = [](double v) { return v > 0 ? fmt::format("{:.2f}x", v) : std::string("-"); };
    fmt::print("{:<18} {:>11.1f} {:>9.2f} {:>9} {:>9} {:>11.1f} {:>9.1f} {:>9.1f}  {}\n",
               r.engine, r.mlps(), r.best_s * 1e9 / double(r.count), x(r.ratio), x(r.paired),
               r.build_ms, mib(r.image_bytes), mib(r.total_bytes), check);
  }
}

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

Status write_json(const BenchLookupOptions& o, int cpu, const std::string& load_start,
                  Clock::time_point t_start, const lookup::RouteTable& full,
                  const Addresses& addrs, const nlohmann::json& dpdk_j, const Outcome& out) {
  nlohmann::json j = result_header("warpath bench lookup", o.command_line, cpu, load_start);
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
  j["machine"]["loadavg_end"] = read_first_line("/proc/loadavg");
  j["wall_s"]                 = seconds_since(t_start);
  std::ofstream f(o.json);
  f << j.dump(2) << "\n";
  if (!f) return Status(Errc::kIoError, fmt::format("{}: cannot write", o.json));
  return Status::ok();
}

int run_bench_lookup(const BenchLookupOptions& o) {
  const auto t_start           = Clock::now();
  const std::string load_start = read_first_line("/proc/loadavg");
  // Pin first: the table, the addresses and every engine's memory are touched on this core.
  const int cpu = o.cpu >= 0 ? o.cpu : sched_getcpu();
  if (!pin_to(cpu)) return fail(fmt::format("cannot pin to cpu {}: {}", cpu, std::strerror(errno)));

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
    const Status s = write_json(o, cpu, load_start, t_start, full, *addrs, dpdk_j, out);
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
