// bench/lookup/lookup_family.hpp: the IP lookup bench's insides (lookup_bench.cpp): the
// generated addresses, what one engine measured, and the per-family runner (FamilyBench: every
// engine built, checked against the reference and timed round-robin). Included by
// lookup_bench.cpp only.
#pragma once
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

#include "harness/report.hpp"
#include "harness/timing.hpp"
#include "lookup/lookup_bench.hpp"
#if defined(WARPATH_HAVE_DPDK)
#include "lookup_anchor.hpp"  // bench/anchors: declarations only, no DPDK header
#endif
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/version.hpp"
#include "warpath/lookup/fib.hpp"

namespace warpath::bench::bench_lookup {

using lookup::Ip6;
using lookup::kNoRoute;
using lookup::NextHop;
using Clock = std::chrono::steady_clock;

constexpr uint32_t kDefaultCount4 = 2'000'000;
constexpr uint32_t kDefaultCount6 = 1'000'000;
constexpr uint32_t kGpuBatches[]  = {256, 1024, 4096, 16384, 65536};

// ---- addresses -----------------------------------------------------------------------------

/// Deterministic on every platform: raw mt19937_64 bits, no std distributions.
struct Rng {
  std::mt19937_64 g;
  explicit Rng(uint64_t seed) : g(seed) {}
  uint64_t bits() { return g(); }
  uint64_t below(uint64_t n) { return uint64_t((unsigned __int128)g() * n >> 64); }
};

inline uint32_t random4(Rng& r) { return uint32_t(r.bits() >> 32); }
/// Uniform in 2000::/3, the global unicast space every IPv6 table routes.
inline Ip6 random6(Rng& r) { return Ip6{(r.bits() >> 3) | 0x2000'0000'0000'0000ull, r.bits()}; }
inline uint32_t in_prefix4(Rng& r, const lookup::Route4& rt) {
  const uint32_t host = rt.len == 32 ? 0u : random4(r) & (0xFFFF'FFFFu >> rt.len);
  return rt.prefix | host;
}
inline Ip6 in_prefix6(Rng& r, const lookup::Route6& rt) {
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
};

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
  }
};

}  // namespace warpath::bench::bench_lookup
