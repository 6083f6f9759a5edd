// bench/classify/classify_engines.hpp: the classification bench's insides (classify_bench.cpp):
// what one engine measured (speed, build, memory, the check, the updates), the engine runner
// (Bench: each engine built and timed, in a child process for CPU engines) and the updates
// table. Included by classify_bench.cpp only.
#pragma once
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "classify/classify_bench.hpp"
#include "harness/isolated_run.hpp"
#include "harness/report.hpp"
#include "harness/timing.hpp"
#if defined(WARPATH_HAVE_DPDK)
#include "classify_anchor.hpp"  // bench/anchors: declarations only, no DPDK header
#endif
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule.hpp"
#include "warpath/core/cpu_features.hpp"

namespace warpath::bench::bench_classify {

using classify::KeyBatch;
using classify::KeyBuffer;
using classify::KeyLayout;
using classify::kNoMatch;
using classify::RuleSet;
using Clock = std::chrono::steady_clock;

const char* const kAclVariants[] = {"rte_acl.scalar", "rte_acl.sse", "rte_acl.avx2",
                                    "rte_acl.avx512x16", "rte_acl.avx512x32"};

inline std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

inline bool is_acl_name(const std::string& s) {
  return std::any_of(std::begin(kAclVariants), std::end(kAclVariants),
                     [&](const char* v) { return s == v; });
}

// ---- rows ----------------------------------------------------------------------------------

/// The --updates measurement of one engine: `pairs` erase + re-insert pairs of random rules
/// of the loaded set, alone and while a second thread classifies the keys.
struct Updates {
  bool ran = false;
  std::string skipped;                        // why not (e.g. the engine cannot update in place)
  uint64_t pairs = 0;                         // erase + insert pairs per phase (2 updates each)
  double alone_s = 0, concurrent_s = 0;       // writer's time for the pairs
  double p50_us = 0, p99_us = 0, max_us = 0;  // one update (alone)
  uint64_t reader_keys   = 0;                 // classified by the reader during the writer's run
  double reader_s        = 0;
  int reader_cpu         = -1;
  uint64_t after_checked = 0, after_mismatches = 0;  // answers after both phases vs before
  double per_s(double s) const { return s > 0 ? 2.0 * double(pairs) / s : 0; }
  double reader_mpps() const { return reader_s > 0 ? 1e-6 * double(reader_keys) / reader_s : 0; }
};

struct Row {
  std::string engine, kind, config, detail, skipped, note;
  double best_s = 0, build_ms = 0, engine_build_ms = 0;
  std::vector<double> pass_s;
  uint64_t count = 0, memory_bytes = 0, peak_bytes = 0, entries = 0, mismatches = 0,
           trace_mismatches = 0;
  uint32_t classes = 0, batch = 0;
  bool reference = false, has_stats = false;
  Updates updates;
  double mpps() const { return best_s > 0 ? 1e-6 * double(count) / best_s : 0; }
};

// What a child process sends back of its row (the fields an engine's run sets).
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Updates, ran, skipped, pairs, alone_s, concurrent_s, p50_us,
                                   p99_us, max_us, reader_keys, reader_s, reader_cpu, after_checked,
                                   after_mismatches)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Row, skipped, note, detail, build_ms, engine_build_ms, best_s,
                                   pass_s, count, memory_bytes, peak_bytes, entries, classes, batch,
                                   has_stats, updates)

std::string answer(uint32_t a) { return a == kNoMatch ? "no match" : std::to_string(a); }

inline std::string format_key(const KeyBatch& keys, uint32_t i) {
  uint32_t k[classify::kMaxKeyWords];
  for (unsigned w = 0; w < classify::key_words(keys.layout); ++w) k[w] = keys.word(w, i);
  if (keys.layout == KeyLayout::kOpenFlow) return classify::format_openflow_key(k);
  return fmt::format("{}.{}.{}.{} {}.{}.{}.{} {} {} {}", k[0] >> 24, k[0] >> 16 & 255,
                     k[0] >> 8 & 255, k[0] & 255, k[1] >> 24, k[1] >> 16 & 255, k[1] >> 8 & 255,
                     k[1] & 255, k[2] >> 16, k[2] & 0xFFFF, k[3]);
}

/// The run: keys, reference answers, rows.
struct Bench {
  const BenchClassifyOptions& o;
  const RuleSet& rules;
  const KeyBatch keys;                      // the timed array (tiled)
  const std::vector<int64_t>& first_match;  // per distinct key, or empty
  uint32_t distinct = 0;                    // keys before tiling
  std::vector<Row> rows;
  std::vector<uint32_t> reference;
  std::string reference_id;
  bool failed = false;

  void check(Row& row, const std::vector<uint32_t>& out) {
    // Against the trace's first-match column (the distinct keys; tiles repeat them).
    if (!first_match.empty()) {
      std::string first;
      for (uint32_t i = 0; i < keys.count; ++i) {
        const int64_t fm    = first_match[i % distinct];
        const uint32_t want = fm < 0 ? kNoMatch : uint32_t(fm);
        if (out[i] != want && row.trace_mismatches++ == 0)
          first = fmt::format("key {} ({}) -> {} (trace: {})", i, format_key(keys, i),
                              answer(out[i]), answer(want));
      }
      if (row.trace_mismatches) {
        failed = true;
        fmt::print(stderr,
                   "warpath: MISMATCH {}: {} of {} answers differ from the trace's first-match "
                   "column; first: {}\n",
                   row.engine, group_thousands(row.trace_mismatches), group_thousands(keys.count),
                   first);
      }
    }
    if (reference.empty()) {
      reference     = out;
      reference_id  = row.engine;
      row.reference = true;
      return;
    }
    std::string first;
    for (uint32_t i = 0; i < keys.count; ++i)
      if (out[i] != reference[i] && row.mismatches++ == 0)
        first = fmt::format("key {} ({}) -> {} ({}: {})", i, format_key(keys, i), answer(out[i]),
                            reference_id, answer(reference[i]));
    if (row.mismatches) {
      failed = true;
      fmt::print(stderr, "warpath: MISMATCH {}: {} of {} answers differ from {}; first: {}\n",
                 row.engine, group_thousands(row.mismatches), group_thousands(keys.count),
                 reference_id, first);
    }
  }

  /// A warm-up pass (its answers stay in the caller's array, to be checked), then the timed
  /// passes. False (row.skipped set) when a classify call failed.
  template <class Call>
  bool time_engine(Row& row, uint32_t batch, Call&& call, const Status& status) {
    row.count = keys.count;
    row.batch = batch;
    fmt::print(stderr, "bench: {}: {} keys x (1 + {})\n", row.engine, group_thousands(keys.count),
               o.repeat);
    const auto warm = time_passes(keys.count, batch, 1, call);
    if (!status.is_ok()) {
      row.skipped = "classify failed: " + status.message();
      fmt::print(stderr, "warpath: {}: {}\n", row.engine, row.skipped);
      return false;
    }
    unsigned repeat = o.repeat;
    if (warm[0] > o.slow_pass_s && repeat > 1) {
      repeat   = 1;
      row.note = fmt::format("one timed pass: the warm-up took {:.1f} s", warm[0]);
      fmt::print(stderr, "bench: {}: {}\n", row.engine, row.note);
    }
    row.pass_s = time_passes(keys.count, batch, repeat, call);
    row.best_s = *std::min_element(row.pass_s.begin(), row.pass_s.end());
    return true;
  }

  /// Builds and times warpath engine `id` in this process; false when it did not run.
  bool engine_in_process(const std::string& id, Row& row, std::vector<uint32_t>& out) {
    std::unique_ptr<classify::Classifier> engine;
    {
      const bench::PeakRss peak;
      const auto t0 = Clock::now();
      auto made     = classify::make_classifier(id, rules);
      row.build_ms  = seconds_since(t0) * 1e3;
      if (!made.is_ok()) {
        row.skipped = made.status().message();
        return false;
      }
      engine         = std::move(*made);
      row.peak_bytes = peak.growth();
    }
    const classify::ClassifierStats st = engine->stats();
    row.has_stats                      = true;
    row.engine_build_ms                = st.build_ms;
    row.memory_bytes                   = st.memory_bytes;
    row.classes                        = st.classes;
    row.entries                        = st.entries;
    row.detail                         = st.detail;
    const classify::Classifier& c      = *engine;
    ExecContext ctx;
    out.assign(keys.count, kNoMatch);
    Status status;
    bool warm = true;  // the first pass writes `out`; later passes a scratch array
    std::vector<uint32_t> scratch(keys.count);
    auto call = [&](uint64_t off, uint32_t n) {
      uint32_t* dst  = (warm ? out.data() : scratch.data()) + off;
      const Status s = c.classify(keys.slice(uint32_t(off), n), Span<uint32_t>{dst, n}, ctx);
      if (!s.is_ok() && status.is_ok()) status = s;
      if (off + n == keys.count) warm = false;
    };
    const bool gpu = id.rfind("cuda.", 0) == 0;
    if (!time_engine(row, gpu ? o.gpu_batch : o.batch, call, status)) return false;
    if (o.updates > 0) measure_updates(*engine, row, gpu ? o.gpu_batch : o.batch, out);
    return true;
  }

  /// --updates: o.updates pairs of erase(i) + insert(i, rule i) of random rules i (seeded), so
  /// the set is the loaded one after every pair. Phase 1 times them alone (and each update's
  /// latency); phase 2 times them again while a second thread, on another core where there is
  /// one, classifies the keys in --batch calls without pause. Afterwards every key is
  /// classified again and compared with `before` (the warm-up answers, which check() compares
  /// with the reference). Engines that answer kNotSupported are reported as such.
  void measure_updates(classify::Classifier& c, Row& row, uint32_t batch,
                       const std::vector<uint32_t>& before) {
    Updates& u = row.updates;
    std::mt19937_64 rng(o.seed * 0x9e37'79b9'7f4a'7c15ull + 17);
    const uint32_t n = uint32_t(rules.rules.size());
    auto pair        = [&](std::vector<double>* lat) -> Status {
      const uint32_t i = uint32_t(rng() % n);
      auto t0          = Clock::now();
      WARPATH_TRY(c.erase(i));
      auto t1 = Clock::now();
      WARPATH_TRY(c.insert(i, rules.rules[i]));
      if (lat) {
        const auto t2 = Clock::now();
        lat->push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        lat->push_back(std::chrono::duration<double, std::micro>(t2 - t1).count());
      }
      return Status::ok();
    };
    auto run = [&](std::vector<double>* lat, double& seconds) -> bool {
      const auto t0 = Clock::now();
      for (uint32_t p = 0; p < o.updates; ++p) {
        const Status s = pair(lat);
        if (!s.is_ok()) {
          u.skipped =
              s.code() == Errc::kNotSupported ? s.message() : "update failed: " + s.message();
          return false;
        }
      }
      seconds = seconds_since(t0);
      return true;
    };
    fmt::print(stderr, "bench: {}: updates: {} erase + insert pairs, alone\n", row.engine,
               group_thousands(o.updates));
    std::vector<double> lat;
    lat.reserve(size_t(o.updates) * 2);
    if (!run(&lat, u.alone_s)) {
      fmt::print(stderr, "bench: {}: updates skipped: {}\n", row.engine, u.skipped);
      return;
    }
    u.pairs           = o.updates;
    const Latencies l = latencies(lat);
    u.p50_us = l.p50, u.p99_us = l.p99, u.max_us = l.max;

    // Phase 2: a reader classifying without pause, on another core where there is one.
    const int here  = sched_getcpu();
    const long cpus = sysconf(_SC_NPROCESSORS_ONLN);
    const int other = cpus > 1 ? int((here + 1) % cpus) : -1;
    std::atomic<bool> stop{false};
    std::atomic<uint64_t> done{0};
    std::atomic<bool> reader_failed{false};
    int reader_cpu = -1;  // written by the reader before its first batch
    Status reader_status;
    std::thread reader([&] {
      int pinned = -1;
      if (other >= 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(other, &set);
        if (sched_setaffinity(0, sizeof set, &set) == 0) pinned = other;
      }
      reader_cpu = pinned;
      ExecContext ctx;
      const uint32_t step = batch ? batch : keys.count;
      std::vector<uint32_t> got(step);
      for (uint64_t off = 0; !stop.load(std::memory_order_relaxed);) {
        const uint32_t m = uint32_t(std::min<uint64_t>(step, keys.count - off));
        const Status s   = c.classify(keys.slice(uint32_t(off), m), {got.data(), m}, ctx);
        if (!s.is_ok()) {
          reader_status = s;
          reader_failed = true;
          break;
        }
        done.fetch_add(m, std::memory_order_relaxed);
        off = off + m == keys.count ? 0 : off + m;
      }
    });
    while (done.load() == 0 && !reader_failed.load()) std::this_thread::yield();
    const uint64_t d0 = done.load();
    const auto t0     = Clock::now();
    const bool ok     = run(nullptr, u.concurrent_s);
    u.reader_s        = seconds_since(t0);
    u.reader_keys     = done.load() - d0;
    stop              = true;
    reader.join();
    u.reader_cpu = reader_cpu;
    if (!ok) return;
    if (!reader_status.is_ok()) {
      u.skipped = "concurrent classify failed: " + reader_status.message();
      return;
    }

    // The set is the loaded one again: every answer as before.
    std::vector<uint32_t> after(keys.count, kNoMatch);
    ExecContext ctx;
    for (uint32_t off = 0; off < keys.count;) {
      const uint32_t m = std::min<uint32_t>(batch ? batch : keys.count, keys.count - off);
      const Status s   = c.classify(keys.slice(off, m), {after.data() + off, m}, ctx);
      if (!s.is_ok()) {
        u.skipped = "classify after the updates failed: " + s.message();
        return;
      }
      off += m;
    }
    u.after_checked = keys.count;
    for (uint32_t i = 0; i < keys.count; ++i) u.after_mismatches += after[i] != before[i];
    u.ran = true;
    fmt::print(stderr,
               "bench: {}: {:.0f} updates/s alone, {:.0f} with a classifying thread ({:.2f} "
               "Mpps); {} answers differ afterwards\n",
               row.engine, u.per_s(u.alone_s), u.per_s(u.concurrent_s), u.reader_mpps(),
               u.after_mismatches);
  }

  /// Runs engine_in_process in a child process (bench/harness/isolated_run.hpp), so an engine
  /// that hangs (--engine-timeout) or crashes is reported as skipped and the run goes on. The
  /// child sends its row and answers.
  bool engine_in_child(const std::string& id, Row& row, std::vector<uint32_t>& out) {
    const bench::IsolatedResult r = bench::run_isolated(
        [&](nlohmann::json& head, std::vector<uint8_t>& payload) {
          const bool ran = engine_in_process(id, row, out);
          head           = row;
          head["ran"]    = ran;
          if (ran && out.size() == keys.count)
            payload.assign(reinterpret_cast<const uint8_t*>(out.data()),
                           reinterpret_cast<const uint8_t*>(out.data() + out.size()));
        },
        std::chrono::seconds(o.engine_timeout_s), uint64_t(keys.count) * sizeof(uint32_t));
    if (r.ok && r.in_process) return r.head["ran"];  // row and out are this process's own
    if (r.ok) {
      from_json(r.head, row);  // the fields the child set; engine and kind stay
      if (!r.head["ran"]) return false;
      if (r.payload.size() == size_t(keys.count) * sizeof(uint32_t)) {
        out.resize(keys.count);
        std::memcpy(out.data(), r.payload.data(), r.payload.size());
        return true;
      }
    }
    Row fresh;
    fresh.engine = row.engine;
    fresh.kind   = row.kind;
    row          = fresh;
    row.skipped  = r.timed_out ? fmt::format("gave up after --engine-timeout {} s (build + timing)",
                                             o.engine_timeout_s)
                   : r.ok      ? std::string("the engine's process sent no answers")
                               : r.why;
    return false;
  }

  void run_warpath(const std::string& id) {
    Row row;
    row.engine = id;
    row.kind   = "warpath";
    fmt::print(stderr, "bench: {}: building ({} rules)\n", id, group_thousands(rules.rules.size()));
    std::vector<uint32_t> out;
    // CUDA cannot be used in a child forked after the parent touched it: those run here.
    const bool isolate = o.engine_timeout_s > 0 && id.find("cuda.") == std::string::npos;
    const bool ran     = isolate ? engine_in_child(id, row, out) : engine_in_process(id, row, out);
    if (!ran) {
      fmt::print(stderr, "bench: {}: skipped: {}\n", id, row.skipped);
      rows.push_back(row);
      return;
    }
    check(row, out);
    rows.push_back(row);
  }

#if defined(WARPATH_HAVE_DPDK)
  void run_acl(const std::vector<std::string>& variants, uint64_t max_build_mb) {
    fmt::print(stderr, "bench: rte_acl: building ({} rules; build memory capped at {} MB)\n",
               group_thousands(rules.rules.size()), max_build_mb);
    bench::AclBuildOptions bo;
    bo.max_build_mb = max_build_mb;
    auto built      = bench::AclAnchor::build(rules, bo);
    if (built.is_ok())
      fmt::print(stderr, "bench: rte_acl: built in {:.0f} ms\n", (*built)->build_ms());
    else
      fmt::print(stderr, "bench: rte_acl: skipped: {}\n", built.status().message());
    bench::AclKeys acl_keys;
    if (built.is_ok()) acl_keys = bench::AclKeys(keys);  // once, outside the timed loops
    for (const auto& v : variants) {
      Row row;
      row.engine = v;
      row.kind   = "dpdk";
      Status s   = built.status();
      if (s.is_ok()) s = (*built)->select(v);
      if (!s.is_ok()) {
        row.skipped = s.message();
        if (built.is_ok()) fmt::print(stderr, "bench: {}: skipped: {}\n", v, row.skipped);
        rows.push_back(row);
        continue;
      }
      const bench::AclAnchor& a = **built;
      row.build_ms              = a.build_ms();
      row.memory_bytes          = a.memory_bytes();
      row.peak_bytes            = a.build_peak_bytes();
      row.config                = a.config();
      std::vector<uint32_t> out(keys.count, kNoMatch), scratch(keys.count);
      bool warm = true;  // the first pass writes `out`, later passes a scratch array
      auto call = [&](uint64_t off, uint32_t n) {
        a.classify(acl_keys, uint32_t(off), n, (warm ? out.data() : scratch.data()) + off);
        if (off + n == keys.count) warm = false;
      };
      if (time_engine(row, o.batch ? o.batch : keys.count, call, Status::ok())) check(row, out);
      rows.push_back(row);
    }
  }
#endif
};

/// The --updates section: engines that measured updates, and those that cannot update.
inline void print_updates(const std::vector<Row>& rows, uint32_t pairs) {
  // One harness row per engine (bench/harness/report.hpp): the updates a second alone are its
  // rate; its other cells are text.
  std::vector<bench::Row> table;
  for (const auto& r : rows) {
    const Updates& u = r.updates;
    if (!u.ran && u.skipped.empty()) continue;
    bench::Row x;
    x.engine  = r.engine;
    x.skipped = u.ran ? "" : u.skipped;
    x.rate    = u.per_s(u.alone_s);
    x.with("p50", u.p50_us).with("p99", u.p99_us).with("max", u.max_us);
    x.with("with_reader", group_thousands(uint64_t(u.per_s(u.concurrent_s))))
        .with("reader_mpps", u.reader_mpps())
        .with("vs_idle", times(r.mpps() > 0 ? u.reader_mpps() / r.mpps() : 0))
        .with("check", !u.ran               ? std::string()
                       : u.after_mismatches ? fmt::format("{} MISMATCHES after", u.after_mismatches)
                                            : fmt::format("ok ({} answers after)",
                                                          group_thousands(u.after_checked)));
    table.push_back(x);
  }
  if (table.empty()) return;
  // The anchor takes an update only by a rebuild: its rate is one per build.
  for (const auto& r : rows)
    if (r.engine.rfind("rte_acl", 0) == 0 && r.build_ms > 0) {
      bench::Row x;
      x.engine = "rte_acl rebuild";
      x.rate   = 1000.0 / r.build_ms;
      x.with("p50", r.build_ms * 1e3).with("p99", r.build_ms * 1e3).with("max", r.build_ms * 1e3);
      x.with("check", std::string("every update a full rebuild"));
      table.push_back(x);
      break;
    }
  fmt::print(
      "\nupdates: {} erase + insert pairs of random rules (2 updates each), alone and while "
      "another thread classifies\n\n",
      group_thousands(pairs));
  std::fflush(stdout);
  print_table(
      stdout,
      {engine_column(),
       {"upd/s", [](const bench::Row& r) { return group_thousands(uint64_t(r.rate)); }},
       field_column("p50 us", "p50", 1),
       field_column("p99 us", "p99", 1),
       field_column("max us", "max", 1),
       field_column("upd/s+cls", "with_reader"),
       field_column("cls Mpps", "reader_mpps"),
       field_column("vs idle", "vs_idle"),
       {"check", [](const bench::Row& r) { return std::get<std::string>(*r.field("check")); },
        true}},  // left: a skipped row shows it, empty
      table);
}

}  // namespace warpath::bench::bench_classify
