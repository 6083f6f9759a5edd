// warpath bench classify: every classifier engine beside DPDK rte_acl on one rule set and trace.
//
//   warpath bench classify (--rules FILE [--trace FILE] [--format classbench|openflow]
//                           | --synthetic N,C,F,Cm,f [--tuples T] [--seed S])
//                          [--engines LIST] [--batch N] [--gpu-batch N] [--repeat N] [--cpu N]
//                          [--max-keys N] [--min-keys N] [--max-acl-mb MB] [--linear-max N]
//                          [--updates N] [--json FILE] [--note TEXT]
//
// Every engine of the classify registry (default: each available one but ref.linear; ref.* and
// *.linear engines are left out of the default list on sets of more than --linear-max rules,
// 20,000, since they are O(rules) per key) and, when built with DPDK, rte_acl with each
// classify function this CPU has (rte_acl.scalar/sse/avx2/avx512x16/avx512x32, one build shared
// by all), classify the same keys on the same pinned core, one engine at a time. Per engine:
// Mpps, ns per key, build time, memory (ClassifierStats::memory_bytes; rte_acl: DPDK heap
// growth), the build's peak RSS growth, classes and entries, and the ratio to the best rte_acl
// variant. An engine that cannot be built (kNotSupported, kCapacity, ...) or fails is reported as
// skipped with its message; the run goes on. Each CPU engine is built and timed in a child
// process (fork), so one that crashes or runs past --engine-timeout (600 s) is reported as skipped
// too; CUDA engines run in this process.
//
// Keys: the trace's keys (the first --max-keys of them), tiled to at least --min-keys
// (1,000,000) so a pass is long enough to time. rte_acl reads them as the packet-like byte
// buffers it expects (bench/anchors/classify_anchor.hpp), built once before any timing.
// Timing: a warm-up pass (whose answers are checked), then --repeat passes over the whole key
// array (steady_clock), the best counts; --rounds (default 2) runs every engine that many
// times, later rounds in reverse order (rte_acl first), so that the machine's drift over the
// run reaches all engines alike (engines run in child processes, so passes cannot interleave); CPU
// engines and rte_acl alike get --batch keys per call (default 64, rte_acl's usual burst), GPU
// engines --gpu-batch. Cross-check: every engine's answers must equal the first engine's, and, for
// WUSTL traces with a first-match column (ClassBench sets: the answer is the first match in file
// order), the trace's. Any difference is printed (first key, both answers) and the command exits 1.
// Updates (--updates N, default 20,000; 0: none): on each engine that inserts and erases rules
// in place (Classifier::insert/erase; the others answer kNotSupported and are listed so), N
// pairs of erase(i) + insert(i, rule i) of random rules (seeded by --seed) are timed alone
// (updates/s counting a pair as 2, per-update latency) and again while a second thread on
// another core classifies the keys without pause (its Mpps). The set is then the loaded one
// again, so every key is classified once more and must give the warm-up's answer.
#include <fmt/core.h>
#include <sched.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <ctime>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <random>
#include <optional>
#include <set>
#include <sstream>
#include <thread>

#include "bench_util.hpp"
#include "harness/isolated_run.hpp"
#include "commands.hpp"
#if defined(WARPATH_HAVE_DPDK)
#include "classify_anchor.hpp"  // bench/anchors: declarations only, no DPDK header
#endif
#include "warpath/classify/check.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule.hpp"
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/version.hpp"
#include "warpath/io/classbench.hpp"

namespace warpath::cli {
namespace {

using classify::KeyBatch;
using classify::KeyBuffer;
using classify::KeyLayout;
using classify::kNoMatch;
using classify::RuleSet;
using Clock = std::chrono::steady_clock;

const char* const kAclVariants[] = {"rte_acl.scalar", "rte_acl.sse", "rte_acl.avx2",
                                    "rte_acl.avx512x16", "rte_acl.avx512x32"};

struct BenchClassifyOptions {
  std::string rules, trace, format = "classbench", synthetic, engines = "warpath,dpdk", json, note;
  uint32_t tuples           = 100000;
  uint64_t seed             = 1;
  unsigned repeat           = 5;
  unsigned rounds           = 2;  // runs over all engines, the second in reverse order
  uint32_t batch            = 64;
  uint32_t gpu_batch        = 65536;
  int cpu                   = -1;
  uint32_t max_keys         = 0;  // 0: every trace key
  uint32_t min_keys         = 1'000'000;
  uint64_t max_acl_mb       = 12000;
  uint32_t linear_max       = 20000;
  uint32_t updates          = 20000;  // erase + insert pairs per phase (0: no update benchmark)
  double slow_pass_s        = 10;     // a warm-up longer than this: one timed pass only
  unsigned engine_timeout_s = 600;    // per warpath engine, build + timing (0: run in-process)
  std::string command_line;
};

std::vector<std::string> split(const std::string& s, char sep) {
  std::vector<std::string> out;
  std::stringstream ss(s);
  std::string item;
  while (std::getline(ss, item, sep))
    if (!item.empty()) out.push_back(item);
  return out;
}

bool is_acl_name(const std::string& s) {
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
  double best_s = 0, build_ms = 0, engine_build_ms = 0, ratio = 0;
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
                                   p99_us, max_us, reader_keys, reader_s, reader_cpu,
                                   after_checked, after_mismatches)
NLOHMANN_DEFINE_TYPE_NON_INTRUSIVE(Row, skipped, note, detail, build_ms, engine_build_ms, best_s,
                                   pass_s, count, memory_bytes, peak_bytes, entries, classes,
                                   batch, has_stats, updates)

std::string answer(uint32_t a) { return a == kNoMatch ? "no match" : std::to_string(a); }

std::string format_key(const KeyBatch& keys, uint32_t i) {
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
    u.pairs = o.updates;
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

  void ratios() {
    double best = 0;
    for (const auto& r : rows)
      if (r.kind == "dpdk" && r.skipped.empty()) best = std::max(best, r.mpps());
    for (auto& r : rows)
      if (r.skipped.empty() && best > 0) r.ratio = r.mpps() / best;
  }
};

void print_table(const std::vector<Row>& rows, const std::string& title) {
  fmt::print("\n{}\n", title);
  fmt::print("{:<18} {:>8} {:>8} {:>7} {:>10} {:>9} {:>9} {:>7} {:>9}  {}\n", "engine", "Mpps",
             "ns/key", "vs ACL", "build ms", "mem MiB", "peak MiB", "classes", "entries", "check");
  for (const auto& r : rows) {
    if (!r.skipped.empty()) {
      fmt::print("{:<18} skipped: {}\n", r.engine, r.skipped);
      continue;
    }
    std::string check = r.reference ? "reference" : "ok";
    if (r.mismatches) check = fmt::format("{} MISMATCHES", r.mismatches);
    if (r.trace_mismatches) check += fmt::format(", {} vs TRACE", r.trace_mismatches);
    fmt::print("{:<18} {:>8.2f} {:>8.1f} {:>7} {:>10.1f} {:>9.1f} {:>9.1f} {:>7} {:>9}  {}\n",
               r.engine, r.mpps(), r.best_s * 1e9 / double(r.count),
               r.ratio > 0 ? fmt::format("{:.2f}x", r.ratio) : std::string("-"), r.build_ms,
               mib(r.memory_bytes), mib(r.peak_bytes),
               r.has_stats ? std::to_string(r.classes) : std::string("-"),
               r.has_stats ? group_thousands(r.entries) : std::string("-"), check);
  }
}

/// The --updates section: engines that measured updates, and those that cannot update.
void print_updates(const std::vector<Row>& rows, uint32_t pairs) {
  bool any = false;
  for (const auto& r : rows) any = any || r.updates.ran || !r.updates.skipped.empty();
  if (!any) return;
  fmt::print(
      "\nupdates: {} erase + insert pairs of random rules (2 updates each), alone and while "
      "another thread classifies\n",
      group_thousands(pairs));
  fmt::print("{:<18} {:>11} {:>8} {:>8} {:>9} {:>11} {:>9} {:>8}  {}\n", "engine", "upd/s",
             "p50 us", "p99 us", "max us", "upd/s+cls", "cls Mpps", "vs idle", "check");
  for (const auto& r : rows) {
    const Updates& u = r.updates;
    if (!u.ran) {
      if (!u.skipped.empty()) fmt::print("{:<18} skipped: {}\n", r.engine, u.skipped);
      continue;
    }
    const std::string check =
        u.after_mismatches ? fmt::format("{} MISMATCHES after", u.after_mismatches)
                           : fmt::format("ok ({} answers after)", group_thousands(u.after_checked));
    fmt::print("{:<18} {:>11} {:>8.1f} {:>8.1f} {:>9.1f} {:>11} {:>9.2f} {:>8}  {}\n", r.engine,
               group_thousands(uint64_t(u.per_s(u.alone_s))), u.p50_us, u.p99_us, u.max_us,
               group_thousands(uint64_t(u.per_s(u.concurrent_s))), u.reader_mpps(),
               r.mpps() > 0 ? fmt::format("{:.2f}x", u.reader_mpps() / r.mpps()) : std::string("-"),
               check);
  }
  // The anchor takes an update only by a rebuild: its rate is one per build.
  for (const auto& r : rows)
    if (r.engine.rfind("rte_acl", 0) == 0 && r.build_ms > 0) {
      fmt::print("{:<18} {:>11} {:>8.1f} {:>8.1f} {:>9.1f}  (every update a full rebuild)\n",
                 "rte_acl rebuild", group_thousands(uint64_t(1000.0 / r.build_ms)),
                 r.build_ms * 1e3, r.build_ms * 1e3, r.build_ms * 1e3);
      break;
    }
}

Result<classify::SyntheticParams> parse_synthetic(const std::string& s) {
  const auto parts = split(s, ',');
  if (parts.size() != 5)
    return Status(Errc::kInvalidArgument,
                  "--synthetic wants N,C,F,Cm,f (rules, classes, full classes, classes each "
                  "tuple matches, fields 5 or 12), got '" +
                      s + "'");
  uint32_t v[5];
  for (size_t i = 0; i < 5; ++i) {
    char* end             = nullptr;
    errno                 = 0;
    const unsigned long x = std::strtoul(parts[i].c_str(), &end, 10);
    if (errno || *end || x == 0 || x > (1ul << 22))
      return Status(Errc::kInvalidArgument, "--synthetic: bad number '" + parts[i] + "'");
    v[i] = uint32_t(x);
  }
  if (v[4] != 5 && v[4] != 12)
    return Status(Errc::kInvalidArgument, "--synthetic: f must be 5 or 12");
  classify::SyntheticParams p;
  p.rules    = v[0];
  p.classes  = v[1];
  p.full     = v[2];
  p.matching = v[3];
  p.fields   = v[4];
  return p;
}

// One result row of the JSON: the engine's speed, build and memory, its check, its updates.
nlohmann::json row_json(const Row& r) {
  nlohmann::json x = {{"engine", r.engine}, {"kind", r.kind}};
  if (!r.skipped.empty()) {
    x["skipped"] = r.skipped;
    if (r.build_ms > 0) x["build_ms"] = r.build_ms;
  } else {
    x["count"]                = r.count;
    x["batch"]                = r.batch;
    x["mpps"]                 = r.mpps();
    x["ns_per_key"]           = r.best_s * 1e9 / double(r.count);
    x["best_s"]               = r.best_s;
    x["pass_s"]               = r.pass_s;
    x["build_ms"]             = r.build_ms;
    x["memory_bytes"]         = r.memory_bytes;
    x["build_peak_rss_bytes"] = r.peak_bytes;
    x["ratio_to_best_acl"]    = r.ratio > 0 ? nlohmann::json(r.ratio) : nlohmann::json(nullptr);
    x["reference"]            = r.reference;
    x["mismatches"]           = r.mismatches;
    x["trace_mismatches"]     = r.trace_mismatches;
    if (!r.note.empty()) x["note"] = r.note;
    const Updates& u = r.updates;
    if (u.ran) {
      x["updates"] = {{"pairs", u.pairs},
                      {"updates_per_s", u.per_s(u.alone_s)},
                      {"alone_s", u.alone_s},
                      {"p50_us", u.p50_us},
                      {"p99_us", u.p99_us},
                      {"max_us", u.max_us},
                      {"concurrent_updates_per_s", u.per_s(u.concurrent_s)},
                      {"concurrent_s", u.concurrent_s},
                      {"reader_mpps", u.reader_mpps()},
                      {"reader_keys", u.reader_keys},
                      {"reader_cpu", u.reader_cpu},
                      {"after_checked", u.after_checked},
                      {"after_mismatches", u.after_mismatches}};
    } else if (!u.skipped.empty()) {
      x["updates"] = {{"skipped", u.skipped}};
    }
    if (r.kind == "warpath") {
      x["engine_build_ms"] = r.engine_build_ms;
      x["classes"]         = r.classes;
      x["entries"]         = r.entries;
      x["detail"]          = r.detail;
    } else {
      x["config"] = r.config;
    }
  }
  return x;
}

// The rules and the trace's keys (a synthetic set, or files), with the trace's first matches
// when it has them and what the JSON says of the data.
struct BenchInputs {
  RuleSet rules;
  KeyBuffer trace_keys;
  std::vector<int64_t> first_match;  // per trace key; empty when the trace has no such column
  nlohmann::json dataset;
};

Result<BenchInputs> load_bench_inputs(const BenchClassifyOptions& o,
                                      const std::optional<classify::SyntheticParams>& synthetic) {
  BenchInputs in;
  RuleSet& rules                   = in.rules;
  KeyBuffer& trace_keys            = in.trace_keys;
  std::vector<int64_t>& first_match = in.first_match;
  nlohmann::json& dataset          = in.dataset;
  if (!o.synthetic.empty()) {
    classify::SyntheticParams params = *synthetic;
    classify::SyntheticParams* p     = &params;
    p->tuples = o.tuples;
    p->seed   = o.seed;
    fmt::print(stderr, "bench: generating synthetic set {} ({} tuples, seed {})\n", o.synthetic,
               o.tuples, o.seed);
    auto set = classify::synthetic_rules(*p);
    if (!set.is_ok()) return set.status();
    rules      = std::move(set->rules);
    trace_keys = std::move(set->keys);
    dataset    = {{"source", "synthetic"},
                  {"name", rules.name},
                  {"synthetic",
                   {{"rules", p->rules},
                    {"classes", p->classes},
                    {"full", p->full},
                    {"matching", p->matching},
                    {"fields", p->fields},
                    {"tuples", p->tuples},
                    {"seed", p->seed}}}};
  } else {
    fmt::print(stderr, "bench: loading {}\n", o.rules);
    auto r = classify::load_rules(o.rules, o.format);
    if (!r.is_ok()) return r.status();
    rules = std::move(*r);
    if (o.trace.empty()) return Status(Errc::kInvalidArgument, "--trace is required with --rules (or use --synthetic)");
    fmt::print(stderr, "bench: loading {}\n", o.trace);
    if (rules.layout == KeyLayout::kFiveTuple) {
      auto t = io::load_trace(o.trace);
      if (!t.is_ok()) return t.status();
      trace_keys = classify::keys_from_trace(*t);
      bool all   = !t->empty();
      for (const auto& e : *t) all = all && e.first_match >= 0;
      if (all) {
        // A 0-based first match is the answer when the file's order is the priority order.
        first_match.reserve(t->size());
        for (const auto& e : *t) first_match.push_back(e.first_match);
      }
    } else {
      auto t = classify::load_keys(o.trace, rules.layout);
      if (!t.is_ok()) return t.status();
      trace_keys = std::move(*t);
    }
    dataset = {{"source", "file"},
               {"name", base_name(o.rules)},
               {"rules_file", o.rules},
               {"trace_file", o.trace},
               {"format", o.format}};
  }
  return in;
}

// ---- the command ---------------------------------------------------------------------------

int run_bench_classify(const BenchClassifyOptions& o) {
  const auto t_start           = Clock::now();
  const std::string load_start = read_first_line("/proc/loadavg");
  const int cpu                = o.cpu >= 0 ? o.cpu : sched_getcpu();
  auto pin                     = [cpu] {
    cpu_set_t set;
    CPU_ZERO(&set);
    CPU_SET(cpu, &set);
    return sched_setaffinity(0, sizeof set, &set);
  };
  if (pin() != 0) return fail(fmt::format("cannot pin to cpu {}: {}", cpu, std::strerror(errno)));

  // Rules and keys.
  std::optional<classify::SyntheticParams> synthetic;
  if (!o.synthetic.empty()) {
    auto p = parse_synthetic(o.synthetic);
    if (!p.is_ok()) {
      fmt::print(stderr, "warpath: {}\n", p.status().message());
      return 2;
    }
    synthetic = *p;
  }
  auto loaded = load_bench_inputs(o, synthetic);
  if (!loaded.is_ok()) return fail(loaded.status());
  RuleSet& rules                    = loaded->rules;
  KeyBuffer& trace_keys             = loaded->trace_keys;
  std::vector<int64_t>& first_match = loaded->first_match;
  nlohmann::json& dataset           = loaded->dataset;
  if (rules.rules.empty()) return fail("the rule set is empty");
  if (trace_keys.size() == 0) return fail("no keys to classify");
  const bool five = rules.layout == KeyLayout::kFiveTuple;

  // The timed array: the first --max-keys keys, tiled to at least --min-keys.
  const uint32_t distinct =
      o.max_keys ? std::min(o.max_keys, trace_keys.size()) : trace_keys.size();
  uint64_t total = distinct;
  if (total < o.min_keys) total = (uint64_t(o.min_keys) + distinct - 1) / distinct * distinct;
  if (total > (1ull << 30)) return fail("too many keys");
  KeyBuffer keys(rules.layout, uint32_t(total));
  {
    uint32_t k[classify::kMaxKeyWords];
    for (uint32_t i = 0; i < total; ++i) {
      trace_keys.get(i % distinct, k);
      keys.set(i, k);
    }
  }
  if (first_match.size() > distinct) first_match.resize(distinct);
  dataset["layout"]            = five ? "5-tuple" : "openflow";
  dataset["rules"]             = rules.rules.size();
  dataset["trace_keys"]        = trace_keys.size();
  dataset["keys_distinct"]     = distinct;
  dataset["keys_timed"]        = total;
  dataset["first_match_check"] = !first_match.empty();

  // Engines.
  const auto registry = classify::classifier_engines();
  std::vector<std::string> warpath_ids, acl_ids, notes;
  std::set<std::string> seen;
  bool want_dpdk = false;
  for (const auto& r : split(o.engines, ',')) {
    if (r == "warpath") {
      for (const auto& e : registry) {
        const std::string id(e.id);
        if (id == "ref.linear" || !e.available()) continue;
        const bool linear = id.rfind("ref.", 0) == 0 || id.find(".linear") != std::string::npos;
        if (linear && rules.rules.size() > o.linear_max) {
          if (seen.insert(id).second)
            notes.push_back(fmt::format(
                "{} left out: O(rules) per key on {} rules (more than "
                "--linear-max {}); name it in --engines to run it",
                id, group_thousands(rules.rules.size()), group_thousands(o.linear_max)));
          continue;
        }
        if (seen.insert(id).second) warpath_ids.push_back(id);
      }
      continue;
    }
    if (r == "dpdk") {
      want_dpdk = true;
      for (const char* v : kAclVariants)
        if (seen.insert(v).second) acl_ids.push_back(v);
      continue;
    }
    if (is_acl_name(r)) {
      want_dpdk = true;
      if (seen.insert(r).second) acl_ids.push_back(r);
      continue;
    }
    bool validating    = false;
    const auto base_id = strip_validate(r, validating);
    const bool known   = std::any_of(registry.begin(), registry.end(),
                                     [&](const EngineInfo& e) { return e.id == base_id; });
    if (!known && base_id != "auto") {
      std::string names;
      for (const auto& e : registry) names += std::string(e.id) + ", ";
      for (const char* v : kAclVariants) names += std::string(v) + ", ";
      fmt::print(stderr,
                 "warpath: unknown engine '{}' (engines: {}warpath, dpdk)\nRun 'warpath bench "
                 "classify --help'.\n",
                 r, names);
      return 2;
    }
    if (seen.insert(r).second) warpath_ids.push_back(r);
  }
  if (warpath_ids.empty() && acl_ids.empty()) {
    fmt::print(stderr, "warpath: --engines names no engine\n");
    return 2;
  }
  for (const auto& n : notes) fmt::print(stderr, "bench: note: {}\n", n);

  // rte_acl's build memory: --max-acl-mb, bounded by what the machine has free now.
  const uint64_t avail_mb   = bench::proc_kb_field("/proc/meminfo", "MemAvailable") >> 20;
  const uint64_t acl_cap_mb = avail_mb > 1024 ? std::min(o.max_acl_mb, avail_mb - 1024)
                                              : std::min<uint64_t>(o.max_acl_mb, 256);

  // DPDK.
  nlohmann::json dpdk_j = {{"available", false}};
#if defined(WARPATH_HAVE_DPDK)
  if (want_dpdk) {
    bench::DpdkOptions d;
    d.lcore     = cpu;
    d.memory_mb = bench::acl_memory_mb_for(rules);
    fmt::print(stderr, "bench: starting DPDK EAL ({} MB)\n", d.memory_mb);
    const Status s = bench::dpdk_start(d);
    pin();  // EAL pins its main thread to the lcore; keep our pin whatever it did
    dpdk_j = {{"available", s.is_ok()},
              {"version", bench::dpdk_version()},
              {"eal_args", bench::dpdk_eal_args()},
              {"pages", bench::dpdk_pages_text()},
              {"max_acl_mb", o.max_acl_mb},
              {"mem_available_mb", avail_mb},
              {"build_cap_mb", acl_cap_mb},
              {"variants", nlohmann::json::array()}};
    if (!s.is_ok()) {
      dpdk_j["why_not"] = s.message();
      fmt::print(stderr, "bench: DPDK anchors unavailable: {}\n", s.message());
    }
    for (const auto& v : bench::acl_variants())
      dpdk_j["variants"].push_back(
          {{"name", v.name}, {"available", v.available}, {"why_not", v.why_not}});
  }
#else
  if (want_dpdk) {
    dpdk_j["why_not"] = "built without DPDK (libdpdk-dev not found by CMake)";
    fmt::print(stderr, "bench: DPDK anchors unavailable: built without DPDK\n");
  }
#endif

  // One round: warpath engines in `order`, the rte_acl variants before or after them.
  auto run_round = [&](Bench& bench, const std::vector<std::string>& order, bool acl_first) {
    auto acl = [&] {
#if defined(WARPATH_HAVE_DPDK)
      if (acl_ids.empty()) return;
      // Unavailable variants are reported without a build; the others share one.
      std::vector<std::string> run;
      for (const auto& v : acl_ids) {
        std::string why;
        for (const auto& av : bench::acl_variants())
          if (av.name == v && !av.available) why = av.why_not;
        if (why.empty()) {
          run.push_back(v);
        } else {
          Row r;
          r.engine  = v;
          r.kind    = "dpdk";
          r.skipped = why;
          bench.rows.push_back(r);
        }
      }
      if (!run.empty()) bench.run_acl(run, acl_cap_mb);
#else
      for (const auto& v : acl_ids) {
        Row r;
        r.engine  = v;
        r.kind    = "dpdk";
        r.skipped = "anchors unavailable: built without DPDK";
        bench.rows.push_back(r);
      }
#endif
    };
    if (acl_first) acl();
    for (const auto& id : order) bench.run_warpath(id);
    if (!acl_first) acl();
  };
  Bench b{o, rules, keys.view(), first_match, distinct, {}, {}, {}, false};
  run_round(b, warpath_ids, false);
  // Later rounds (--rounds, default 2): every engine again in the reverse order (rte_acl
  // first), updates left out, the passes merged into the first round's rows (the best counts),
  // so that drift in the machine's speed over a run of minutes reaches the engines alike.
  for (unsigned round = 1; round < o.rounds; ++round) {
    BenchClassifyOptions again = o;
    again.updates              = 0;
    Bench b2{again, rules, keys.view(), first_match, distinct, {}, {}, {}, false};
    fmt::print(stderr, "bench: round {} of {}, engines in reverse order\n", round + 1, o.rounds);
    std::vector<std::string> reversed(warpath_ids.rbegin(), warpath_ids.rend());
    run_round(b2, reversed, true);
    b.failed = b.failed || b2.failed;
    for (const Row& r2 : b2.rows) {
      auto it = std::find_if(b.rows.begin(), b.rows.end(),
                             [&](const Row& r) { return r.engine == r2.engine; });
      if (it == b.rows.end() || !it->skipped.empty() || !r2.skipped.empty()) continue;
      it->pass_s.insert(it->pass_s.end(), r2.pass_s.begin(), r2.pass_s.end());
      it->best_s = std::min(it->best_s, r2.best_s);
      it->mismatches += r2.mismatches;
      it->trace_mismatches += r2.trace_mismatches;
    }
  }
  b.ratios();

  // Report.
  const std::string name  = o.synthetic.empty() ? base_name(o.rules) : "synthetic " + o.synthetic;
  const std::string title = fmt::format(
      "{} ({}): {} rules, {} keys ({} distinct{}), batch {}, best of {}, cpu {}", name,
      five ? "5-tuple" : "OpenFlow", group_thousands(rules.rules.size()), group_thousands(total),
      group_thousands(distinct), o.synthetic.empty() ? " from " + base_name(o.trace) : "",
      o.batch ? std::to_string(o.batch) : std::string("all"), o.repeat, cpu);
  print_table(b.rows, title);
  print_updates(b.rows, o.updates);
  for (const auto& n : notes) fmt::print("note: {}\n", n);
  for (const auto& r : b.rows)
    if (!r.note.empty()) fmt::print("note: {}: {}\n", r.engine, r.note);
  uint64_t mismatches = 0, trace_mismatches = 0;
  for (const auto& r : b.rows) mismatches += r.mismatches, trace_mismatches += r.trace_mismatches;
  for (const auto& r : b.rows)
    if (r.updates.after_mismatches) b.failed = true;
  const bool compared = std::count_if(b.rows.begin(), b.rows.end(),
                                      [](const Row& r) { return r.skipped.empty(); }) > 0;
  fmt::print("\ncheck: {}\n",
             b.failed ? fmt::format(
                            "FAILED ({} answers differ from {}, {} from the trace{})", mismatches,
                            b.reference_id, trace_mismatches,
                            std::any_of(b.rows.begin(), b.rows.end(),
                                        [](const Row& r) { return r.updates.after_mismatches > 0; })
                                ? "; answers changed by --updates"
                                : "")
             : !compared ? std::string("no engine ran")
                         : std::string("every engine gave the same answers") +
                               (first_match.empty() ? "" : ", equal to the trace's first match"));

  if (!o.json.empty()) {
    nlohmann::json j = result_header("warpath bench classify", o.command_line, cpu, load_start);
    j["machine"]["mem_total_mb"]           = bench::proc_kb_field("/proc/meminfo", "MemTotal") >> 20;
    j["machine"]["mem_available_mb_start"] = avail_mb;
    if (!o.note.empty()) j["note"] = o.note;
    j["dataset"] = dataset;
    j["params"]  = {{"repeat", o.repeat},
                    {"rounds", o.rounds},
                    {"batch", o.batch},
                    {"gpu_batch", o.gpu_batch},
                    {"engines", o.engines},
                    {"max_keys", o.max_keys},
                    {"min_keys", o.min_keys},
                    {"max_acl_mb", o.max_acl_mb},
                    {"linear_max", o.linear_max},
                    {"engine_timeout_s", o.engine_timeout_s},
                    {"updates", o.updates},
                    {"timing", "steady_clock over the whole key array per pass, best pass"}};
    j["notes"]   = notes;
    j["dpdk"]    = dpdk_j;
    j["results"] = nlohmann::json::array();
    for (const auto& r : b.rows) j["results"].push_back(row_json(r));
    j["check"]                  = {{"passed", !b.failed},
                                   {"compared", compared},
                                   {"mismatches", mismatches},
                                   {"trace_mismatches", trace_mismatches},
                                   {"trace_first_match_checked", !first_match.empty()},
                                   {"reference", b.reference_id}};
    j["machine"]["loadavg_end"] = read_first_line("/proc/loadavg");
    j["wall_s"]                 = seconds_since(t_start);
    std::ofstream f(o.json);
    f << j.dump(2) << "\n";
    if (!f) return fail(fmt::format("{}: cannot write", o.json));
  }
  return b.failed ? 1 : 0;
}

}  // namespace

void add_bench_classify(CLI::App& bench, Runner& run) {
  auto o    = std::make_shared<BenchClassifyOptions>();
  auto* cmd = bench.add_subcommand(
      "classify", "Packet classification: every classifier engine and DPDK rte_acl");
  auto* rules_opt = cmd->add_option("--rules", o->rules, "Rule file (.gz/.xz read directly)");
  cmd->add_option("--trace", o->trace,
                  "Trace file (ClassBench trace for 5-tuple sets, OpenFlow trace otherwise)");
  cmd->add_option("--format", o->format, "Rule file format")
      ->check(CLI::IsMember({"classbench", "openflow"}))
      ->capture_default_str();
  auto* syn = cmd->add_option("--synthetic", o->synthetic,
                              "GSwitch's generator instead of files: N,C,F,Cm,f (rules, classes, "
                              "full classes, classes each tuple matches, fields 5 or 12)");
  rules_opt->excludes(syn);
  cmd->add_option("--tuples", o->tuples, "Tuples the generator makes (--synthetic)")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 24))
      ->capture_default_str();
  cmd->add_option("--seed", o->seed, "Generator seed (--synthetic)")->capture_default_str();
  cmd->add_option("--engines", o->engines,
                  "Comma-separated engine ids, rte_acl variants (rte_acl.scalar, .sse, .avx2, "
                  ".avx512x16, .avx512x32), 'warpath' (every available engine but ref.linear; "
                  "linear ones only up to --linear-max rules) and 'dpdk' (every rte_acl "
                  "variant); default warpath,dpdk. The first engine is the reference.");
  cmd->add_option("--repeat", o->repeat, "Timed passes after a warm-up; the best counts")
      ->check(CLI::Range(1u, 1000u))
      ->capture_default_str();
  cmd->add_option("--rounds", o->rounds,
                  "Runs over all engines (later ones in reverse order, rte_acl first, without "
                  "updates); each engine's best pass over all rounds counts")
      ->check(CLI::Range(1u, 10u))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch,
                  "Keys per classify call for CPU engines and rte_acl (0 = all at once)")
      ->capture_default_str();
  cmd->add_option("--gpu-batch", o->gpu_batch, "Keys per call for GPU engines")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 30))
      ->capture_default_str();
  cmd->add_option("--cpu", o->cpu, "Core to pin to (default: the current one)")
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  cmd->add_option("--max-keys", o->max_keys, "Trace keys used (default: all)");
  cmd->add_option("--min-keys", o->min_keys,
                  "Tile the keys to at least this many, so a pass is long enough to time")
      ->capture_default_str();
  cmd->add_option("--max-acl-mb", o->max_acl_mb,
                  "Cap on rte_acl's build memory (MB; also bounded by MemAvailable - 1 GB): a "
                  "set whose build needs more is reported as skipped")
      ->capture_default_str();
  cmd->add_option("--linear-max", o->linear_max,
                  "Largest set the default engine list runs O(rules) engines (ref.*, *.linear) on")
      ->capture_default_str();
  cmd->add_option("--engine-timeout", o->engine_timeout_s,
                  "Seconds a warpath engine may take (build + timing) before it is reported as "
                  "skipped; each CPU engine runs in a child process (0: in this process, no "
                  "limit)")
      ->capture_default_str();
  cmd->add_option("--updates", o->updates,
                  "Update benchmark: erase + re-insert this many random rules (seeded by --seed), "
                  "alone and beside a classifying thread, on each engine that updates in place "
                  "(cpu.tuple, cpu.bloom, ...); 0: none")
      ->capture_default_str();
  cmd->add_option("--json", o->json, "Write the results as JSON to this file");
  cmd->add_option("--note", o->note,
                  "Free text stored in the JSON (e.g. how busy the machine was)");
  cmd->callback([o, &run] {
    if (o->synthetic.empty() && o->rules.empty())
      throw CLI::RequiredError("--rules FILE --trace FILE or --synthetic N,C,F,Cm,f");
    o->command_line = command_line();
    run             = [o] { return run_bench_classify(*o); };
  });
}

}  // namespace warpath::cli
