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
#include "bench_classify_rows.hpp"
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

using namespace bench_classify;  // its rows, runner and names (KeyBuffer, RuleSet, Clock, ...)

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

/// The timed array: the first --max-keys keys of the trace, tiled to at least --min-keys. What
/// the JSON says of the keys goes into the inputs' dataset.
struct TimedKeys {
  KeyBuffer keys;
  uint32_t distinct = 0;
  uint64_t total    = 0;
};

Result<TimedKeys> tile_keys(const BenchClassifyOptions& o, BenchInputs& in) {
  const uint32_t distinct =
      o.max_keys ? std::min(o.max_keys, in.trace_keys.size()) : in.trace_keys.size();
  uint64_t total = distinct;
  if (total < o.min_keys) total = (uint64_t(o.min_keys) + distinct - 1) / distinct * distinct;
  if (total > (1ull << 30)) return Status(Errc::kInvalidArgument, "too many keys");
  TimedKeys t{KeyBuffer(in.rules.layout, uint32_t(total)), distinct, total};
  uint32_t k[classify::kMaxKeyWords];
  for (uint32_t i = 0; i < total; ++i) {
    in.trace_keys.get(i % distinct, k);
    t.keys.set(i, k);
  }
  if (in.first_match.size() > distinct) in.first_match.resize(distinct);
  in.dataset["layout"]            = in.rules.layout == KeyLayout::kFiveTuple ? "5-tuple" : "openflow";
  in.dataset["rules"]             = in.rules.rules.size();
  in.dataset["trace_keys"]        = in.trace_keys.size();
  in.dataset["keys_distinct"]     = distinct;
  in.dataset["keys_timed"]        = total;
  in.dataset["first_match_check"] = !in.first_match.empty();
  return t;
}

/// --engines: registry ids, rte_acl variant names, or the groups "warpath" and "dpdk".
struct EngineChoice {
  std::vector<std::string> warpath_ids, acl_ids, notes;
  bool want_dpdk = false;
};

Result<EngineChoice> choose_engines(const BenchClassifyOptions& o, const RuleSet& rules) {
  const auto registry = classify::classifier_engines();
  EngineChoice c;
  std::set<std::string> seen;
  for (const auto& r : split(o.engines, ',')) {
    if (r == "warpath") {
      for (const auto& e : registry) {
        const std::string id(e.id);
        if (id == "ref.linear" || !e.available()) continue;
        const bool linear = id.rfind("ref.", 0) == 0 || id.find(".linear") != std::string::npos;
        if (linear && rules.rules.size() > o.linear_max) {
          if (seen.insert(id).second)
            c.notes.push_back(fmt::format(
                "{} left out: O(rules) per key on {} rules (more than "
                "--linear-max {}); name it in --engines to run it",
                id, group_thousands(rules.rules.size()), group_thousands(o.linear_max)));
          continue;
        }
        if (seen.insert(id).second) c.warpath_ids.push_back(id);
      }
      continue;
    }
    if (r == "dpdk") {
      c.want_dpdk = true;
      for (const char* v : kAclVariants)
        if (seen.insert(v).second) c.acl_ids.push_back(v);
      continue;
    }
    if (is_acl_name(r)) {
      c.want_dpdk = true;
      if (seen.insert(r).second) c.acl_ids.push_back(r);
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
      return Status(Errc::kInvalidArgument,
                    fmt::format("unknown engine '{}' (engines: {}warpath, dpdk)\nRun 'warpath "
                                "bench classify --help'.",
                                r, names));
    }
    if (seen.insert(r).second) c.warpath_ids.push_back(r);
  }
  if (c.warpath_ids.empty() && c.acl_ids.empty())
    return Status(Errc::kInvalidArgument, "--engines names no engine");
  return c;
}

/// rte_acl's build memory: --max-acl-mb, bounded by what the machine has free now.
struct AclMemory {
  uint64_t avail_mb = 0, cap_mb = 0;
};

AclMemory acl_memory(const BenchClassifyOptions& o) {
  AclMemory m;
  m.avail_mb = bench::proc_kb_field("/proc/meminfo", "MemAvailable") >> 20;
  m.cap_mb   = m.avail_mb > 1024 ? std::min(o.max_acl_mb, m.avail_mb - 1024)
                                 : std::min<uint64_t>(o.max_acl_mb, 256);
  return m;
}

/// Starts DPDK's EAL on `cpu` when an rte_acl variant was asked for; what it says goes in the
/// JSON.
nlohmann::json start_dpdk(const BenchClassifyOptions& o, bool want_dpdk, int cpu,
                          const RuleSet& rules, const AclMemory& mem) {
  nlohmann::json dpdk_j = {{"available", false}};
  if (!want_dpdk) return dpdk_j;
#if defined(WARPATH_HAVE_DPDK)
  bench::DpdkOptions d;
  d.lcore     = cpu;
  d.memory_mb = bench::acl_memory_mb_for(rules);
  fmt::print(stderr, "bench: starting DPDK EAL ({} MB)\n", d.memory_mb);
  const Status s = bench::dpdk_start(d);
  pin_to(cpu);  // EAL pins its main thread to the lcore; keep our pin whatever it did
  dpdk_j = {{"available", s.is_ok()},
            {"version", bench::dpdk_version()},
            {"eal_args", bench::dpdk_eal_args()},
            {"pages", bench::dpdk_pages_text()},
            {"max_acl_mb", o.max_acl_mb},
            {"mem_available_mb", mem.avail_mb},
            {"build_cap_mb", mem.cap_mb},
            {"variants", nlohmann::json::array()}};
  if (!s.is_ok()) {
    dpdk_j["why_not"] = s.message();
    fmt::print(stderr, "bench: DPDK anchors unavailable: {}\n", s.message());
  }
  for (const auto& v : bench::acl_variants())
    dpdk_j["variants"].push_back(
        {{"name", v.name}, {"available", v.available}, {"why_not", v.why_not}});
#else
  (void)o, (void)cpu, (void)rules, (void)mem;
  dpdk_j["why_not"] = "built without DPDK (libdpdk-dev not found by CMake)";
  fmt::print(stderr, "bench: DPDK anchors unavailable: built without DPDK\n");
#endif
  return dpdk_j;
}

/// The rte_acl variants of one round: unavailable ones as skipped rows, the others from one
/// shared build.
void run_acl_variants(Bench& bench, const std::vector<std::string>& acl_ids, uint64_t cap_mb) {
#if defined(WARPATH_HAVE_DPDK)
  if (acl_ids.empty()) return;
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
  if (!run.empty()) bench.run_acl(run, cap_mb);
#else
  (void)cap_mb;
  for (const auto& v : acl_ids) {
    Row r;
    r.engine  = v;
    r.kind    = "dpdk";
    r.skipped = "anchors unavailable: built without DPDK";
    bench.rows.push_back(r);
  }
#endif
}

/// One round: warpath engines in `order`, the rte_acl variants before or after them.
void run_round(Bench& bench, const EngineChoice& c, const std::vector<std::string>& order,
               bool acl_first, uint64_t cap_mb) {
  if (acl_first) run_acl_variants(bench, c.acl_ids, cap_mb);
  for (const auto& id : order) bench.run_warpath(id);
  if (!acl_first) run_acl_variants(bench, c.acl_ids, cap_mb);
}

/// A later round's passes merged into the first round's rows (the best counts).
void merge_round(Bench& b, const Bench& b2) {
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

/// What the check line and the JSON's check say.
struct CheckSummary {
  uint64_t mismatches = 0, trace_mismatches = 0;
  bool compared = false, updates_changed = false;
};

CheckSummary summarize(Bench& b) {
  CheckSummary c;
  for (const auto& r : b.rows) {
    c.mismatches += r.mismatches;
    c.trace_mismatches += r.trace_mismatches;
    c.compared        = c.compared || r.skipped.empty();
    c.updates_changed = c.updates_changed || r.updates.after_mismatches > 0;
  }
  if (c.updates_changed) b.failed = true;
  return c;
}

void print_report(const BenchClassifyOptions& o, int cpu, const Bench& b, const TimedKeys& t,
                  const EngineChoice& c, const CheckSummary& sum) {
  const bool five         = b.rules.layout == KeyLayout::kFiveTuple;
  const std::string name  = o.synthetic.empty() ? base_name(o.rules) : "synthetic " + o.synthetic;
  const std::string title = fmt::format(
      "{} ({}): {} rules, {} keys ({} distinct{}), batch {}, best of {}, cpu {}", name,
      five ? "5-tuple" : "OpenFlow", group_thousands(b.rules.rules.size()),
      group_thousands(t.total), group_thousands(t.distinct),
      o.synthetic.empty() ? " from " + base_name(o.trace) : "",
      o.batch ? std::to_string(o.batch) : std::string("all"), o.repeat, cpu);
  print_table(b.rows, title);
  print_updates(b.rows, o.updates);
  for (const auto& n : c.notes) fmt::print("note: {}\n", n);
  for (const auto& r : b.rows)
    if (!r.note.empty()) fmt::print("note: {}: {}\n", r.engine, r.note);
  fmt::print("\ncheck: {}\n",
             b.failed ? fmt::format("FAILED ({} answers differ from {}, {} from the trace{})",
                                    sum.mismatches, b.reference_id, sum.trace_mismatches,
                                    sum.updates_changed ? "; answers changed by --updates" : "")
             : !sum.compared
                 ? std::string("no engine ran")
                 : std::string("every engine gave the same answers") +
                       (b.first_match.empty() ? "" : ", equal to the trace's first match"));
}

Status write_json(const BenchClassifyOptions& o, const RunStart& start, const BenchInputs& in,
                  const Bench& b, const EngineChoice& c, const AclMemory& mem,
                  const nlohmann::json& dpdk_j, const CheckSummary& sum) {
  nlohmann::json j = result_header("warpath bench classify", o.command_line, start);
  j["machine"]["mem_total_mb"]           = bench::proc_kb_field("/proc/meminfo", "MemTotal") >> 20;
  j["machine"]["mem_available_mb_start"] = mem.avail_mb;
  if (!o.note.empty()) j["note"] = o.note;
  j["dataset"] = in.dataset;
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
  j["notes"]   = c.notes;
  j["dpdk"]    = dpdk_j;
  j["results"] = nlohmann::json::array();
  for (const auto& r : b.rows) j["results"].push_back(row_json(r));
  j["check"]                  = {{"passed", !b.failed},
                                 {"compared", sum.compared},
                                 {"mismatches", sum.mismatches},
                                 {"trace_mismatches", sum.trace_mismatches},
                                 {"trace_first_match_checked", !in.first_match.empty()},
                                 {"reference", b.reference_id}};
  return write_result(j, start, o.json);
}

int run_bench_classify(const BenchClassifyOptions& o) {
  auto start = pin_run(o.cpu);
  if (!start.is_ok()) return fail(start.status());
  const int cpu = start->cpu;

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
  if (loaded->rules.rules.empty()) return fail("the rule set is empty");
  if (loaded->trace_keys.size() == 0) return fail("no keys to classify");
  auto timed = tile_keys(o, *loaded);
  if (!timed.is_ok()) return fail(timed.status());

  auto choice = choose_engines(o, loaded->rules);
  if (!choice.is_ok()) {
    fmt::print(stderr, "warpath: {}\n", choice.status().message());
    return 2;
  }
  for (const auto& n : choice->notes) fmt::print(stderr, "bench: note: {}\n", n);
  const AclMemory mem         = acl_memory(o);
  const nlohmann::json dpdk_j = start_dpdk(o, choice->want_dpdk, cpu, loaded->rules, mem);

  const auto& rules       = loaded->rules;
  const auto& first_match = loaded->first_match;
  const auto keys         = timed->keys.view();
  Bench b{o, rules, keys, first_match, timed->distinct, {}, {}, {}, false};
  run_round(b, *choice, choice->warpath_ids, false, mem.cap_mb);
  // Later rounds (--rounds, default 2): every engine again in the reverse order (rte_acl
  // first), updates left out, so that drift in the machine's speed over a run of minutes
  // reaches the engines alike.
  for (unsigned round = 1; round < o.rounds; ++round) {
    BenchClassifyOptions again = o;
    again.updates              = 0;
    Bench b2{again, rules, keys, first_match, timed->distinct, {}, {}, {}, false};
    fmt::print(stderr, "bench: round {} of {}, engines in reverse order\n", round + 1, o.rounds);
    const std::vector<std::string> reversed(choice->warpath_ids.rbegin(),
                                            choice->warpath_ids.rend());
    run_round(b2, *choice, reversed, true, mem.cap_mb);
    merge_round(b, b2);
  }
  b.ratios();

  const CheckSummary sum = summarize(b);
  print_report(o, cpu, b, *timed, *choice, sum);
  if (!o.json.empty()) {
    const Status s = write_json(o, *start, *loaded, b, *choice, mem, dpdk_j, sum);
    if (!s.is_ok()) return fail(s);
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
