// bench/classify/classify_bench.cpp: the classification benchmark (classify_bench.hpp): the
// inputs, the engines asked for, DPDK's EAL, the rounds and the report.
#include "classify/classify_bench.hpp"

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
#include <optional>
#include <random>
#include <set>
#include <sstream>
#include <thread>

#include "classify/classify_engines.hpp"
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
#include "warpath/core/version.hpp"
#include "warpath/io/classbench.hpp"

namespace warpath::bench::bench_classify {
namespace {

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

// One engine's measurement as the harness's row (bench/harness/report.hpp): the rule set is
// the workload, the rte_acl variants its anchors; then the engine's build and memory, its
// check and its updates.
bench::Row report_row(const Row& r, const std::string& workload) {
  bench::Row x;
  x.workload = workload;
  x.engine   = r.engine;
  x.anchor   = r.kind == "dpdk";
  x.unit     = "keys";
  x.skipped  = r.skipped;
  x.with("kind", r.kind);
  if (!r.skipped.empty()) {
    if (r.build_ms > 0) x.with("build_ms", r.build_ms);
    return x;
  }
  x.rate   = r.best_s > 0 ? double(r.count) / r.best_s : 0;
  x.pass_s = r.pass_s;
  x.with("count", int64_t(r.count))
      .with("batch", int64_t(r.batch))
      .with("best_s", r.best_s)
      .with("build_ms", r.build_ms)
      .with("memory_bytes", int64_t(r.memory_bytes))
      .with("build_peak_rss_bytes", int64_t(r.peak_bytes))
      .with("reference", r.reference)
      .with("mismatches", int64_t(r.mismatches))
      .with("trace_mismatches", int64_t(r.trace_mismatches));
  if (!r.note.empty()) x.with("note", r.note);
  const Updates& u = r.updates;
  if (u.ran) {
    x.with("updates.pairs", int64_t(u.pairs))
        .with("updates.updates_per_s", u.per_s(u.alone_s))
        .with("updates.alone_s", u.alone_s)
        .with("updates.p50_us", u.p50_us)
        .with("updates.p99_us", u.p99_us)
        .with("updates.max_us", u.max_us)
        .with("updates.concurrent_updates_per_s", u.per_s(u.concurrent_s))
        .with("updates.concurrent_s", u.concurrent_s)
        .with("updates.reader_mpps", u.reader_mpps())
        .with("updates.reader_keys", int64_t(u.reader_keys))
        .with("updates.reader_cpu", int64_t(u.reader_cpu))
        .with("updates.after_checked", int64_t(u.after_checked))
        .with("updates.after_mismatches", int64_t(u.after_mismatches));
  } else if (!u.skipped.empty()) {
    x.with("updates.skipped", u.skipped);
  }
  if (r.kind == "warpath") {
    x.with("engine_build_ms", r.engine_build_ms)
        .with("classes", int64_t(r.classes))
        .with("entries", int64_t(r.entries))
        .with("detail", r.detail);
  } else {
    x.with("config", r.config);
  }
  if (r.has_stats) x.with("has_stats", true);
  return x;
}

/// Every row for the report, with its ratio to the best rte_acl variant (best pass against
/// best pass). No paired ratio: each engine's passes run back to back in its own process, so
/// pass k of two engines did not run side by side as lookup's round-robin passes do.
std::vector<bench::Row> report_rows(const std::vector<Row>& rows, const std::string& workload) {
  std::vector<bench::Row> out;
  for (const Row& r : rows) out.push_back(report_row(r, workload));
  ratios_to_best_anchor(out);
  return out;
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
  RuleSet& rules                    = in.rules;
  KeyBuffer& trace_keys             = in.trace_keys;
  std::vector<int64_t>& first_match = in.first_match;
  nlohmann::json& dataset           = in.dataset;
  if (!o.synthetic.empty()) {
    classify::SyntheticParams params = *synthetic;
    classify::SyntheticParams* p     = &params;
    p->tuples                        = o.tuples;
    p->seed                          = o.seed;
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
    if (o.trace.empty())
      return Status(Errc::kInvalidArgument,
                    "--trace is required with --rules (or use --synthetic)");
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
  in.dataset["layout"]        = in.rules.layout == KeyLayout::kFiveTuple ? "5-tuple" : "openflow";
  in.dataset["rules"]         = in.rules.rules.size();
  in.dataset["trace_keys"]    = in.trace_keys.size();
  in.dataset["keys_distinct"] = distinct;
  in.dataset["keys_timed"]    = total;
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
      return Status(Errc::kNotFound,
                    fmt::format("unknown engine '{}' (engines: {}warpath, dpdk)\nRun 'warpath "
                                "bench classify --help'.",
                                r, names));
    }
    if (seen.insert(r).second) c.warpath_ids.push_back(r);
  }
  if (c.warpath_ids.empty() && c.acl_ids.empty())
    return Status(Errc::kNotFound, "--engines names no engine");
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
                  const EngineChoice& c, const CheckSummary& sum,
                  const std::vector<bench::Row>& rows) {
  const bool five        = b.rules.layout == KeyLayout::kFiveTuple;
  const std::string name = o.synthetic.empty() ? base_name(o.rules) : "synthetic " + o.synthetic;
  fmt::print("\n{} ({}): {} rules, {} keys ({} distinct{}), batch {}, best of {}, cpu {}\n\n", name,
             five ? "5-tuple" : "OpenFlow", group_thousands(b.rules.rules.size()),
             group_thousands(t.total), group_thousands(t.distinct),
             o.synthetic.empty() ? " from " + base_name(o.trace) : "",
             o.batch ? std::to_string(o.batch) : std::string("all"), o.repeat, cpu);
  std::fflush(stdout);
  const auto count = [](const bench::Row& r, const char* key) {
    const Value* v = r.field(key);
    return v ? std::get<int64_t>(*v) : int64_t(0);
  };
  const auto mib_of = [count](const char* key) {
    return [count, key](const bench::Row& r) { return fmt::format("{:.1f}", mib(count(r, key))); };
  };
  const auto stat = [count](const char* key) {
    return [count, key](const bench::Row& r) {
      return r.field("has_stats") ? group_thousands(count(r, key)) : std::string("-");
    };
  };
  const Column check = {"check",
                        [count](const bench::Row& r) {
                          if (!r.skipped.empty()) return std::string();  // the reason says it
                          const Value* ref = r.field("reference");
                          std::string text = ref && std::get<bool>(*ref) ? "reference" : "ok";
                          if (count(r, "mismatches"))
                            text = fmt::format("{} MISMATCHES", count(r, "mismatches"));
                          if (count(r, "trace_mismatches"))
                            text += fmt::format(", {} vs TRACE", count(r, "trace_mismatches"));
                          return text;
                        },
                        true};
  print_table(stdout,
              {engine_column(),
               rate_column("Mpps", 1e-6, 2),
               ns_column("ns/key", 1),
               ratio_column("vs ACL"),
               field_column("build ms", "build_ms", 1),
               {"mem MiB", mib_of("memory_bytes")},
               {"peak MiB", mib_of("build_peak_rss_bytes")},
               {"classes", stat("classes")},
               {"entries", stat("entries")},
               check},
              rows);
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

Status write_json(const BenchClassifyOptions& o, const RunStart& start, const Fields& start_head,
                  const BenchInputs& in, const Bench& b, const EngineChoice& c,
                  const AclMemory& mem, const nlohmann::json& dpdk_j, const CheckSummary& sum,
                  const std::vector<bench::Row>& rows) {
  Fields head = start_head;
  head.emplace_back("machine.loadavg_end", first_line("/proc/loadavg"));
  head.emplace_back("machine.mem_total_mb",
                    int64_t(bench::proc_kb_field("/proc/meminfo", "MemTotal") >> 20));
  head.emplace_back("machine.mem_available_mb_start", int64_t(mem.avail_mb));
  head.emplace_back("wall_s", seconds_since(start.t));
  if (!o.note.empty()) head.emplace_back("note", o.note);
  head.emplace_back("dataset", Json{in.dataset.dump()});
  head.emplace_back("dpdk", Json{dpdk_j.dump()});
  head.emplace_back("check.passed", !b.failed);
  head.emplace_back("check.compared", sum.compared);
  head.emplace_back("check.mismatches", int64_t(sum.mismatches));
  head.emplace_back("check.trace_mismatches", int64_t(sum.trace_mismatches));
  head.emplace_back("check.trace_first_match_checked", !in.first_match.empty());
  head.emplace_back("check.reference", b.reference_id);
  const Fields params = {
      {"repeat", int64_t(o.repeat)},
      {"rounds", int64_t(o.rounds)},
      {"batch", int64_t(o.batch)},
      {"gpu_batch", int64_t(o.gpu_batch)},
      {"engines", o.engines},
      {"max_keys", int64_t(o.max_keys)},
      {"min_keys", int64_t(o.min_keys)},
      {"max_acl_mb", int64_t(o.max_acl_mb)},
      {"linear_max", int64_t(o.linear_max)},
      {"engine_timeout_s", int64_t(o.engine_timeout_s)},
      {"updates", int64_t(o.updates)},
      {"timing", std::string("steady_clock over the whole key array per pass, best pass")}};
  std::string why;
  if (!write_results(o.json, head, params, c.notes, rows, &why)) return Status(Errc::kIoError, why);
  return Status::ok();
}

}  // namespace

Result<int> run_bench_classify(const BenchClassifyOptions& o) {
  if (!o.json.empty())  // before minutes of passes, not after
    if (std::string why = unwritable(o.json); !why.empty()) return Status(Errc::kIoError, why);
  WARPATH_ASSIGN_OR_RETURN(const RunStart start, pin_run(o.cpu));
  // The provenance now: its load average is the one at the start.
  const Fields start_head = provenance("warpath bench classify", o.command_line, start.cpu);
  const int cpu           = start.cpu;

  std::optional<classify::SyntheticParams> synthetic;
  if (!o.synthetic.empty()) {
    auto p = parse_synthetic(o.synthetic);
    if (!p.is_ok()) return Status(Errc::kNotFound, p.status().message());  // a usage error
    synthetic = *p;
  }
  WARPATH_ASSIGN_OR_RETURN(BenchInputs loaded, load_bench_inputs(o, synthetic));
  if (loaded.rules.rules.empty()) return Status(Errc::kInvalidArgument, "the rule set is empty");
  if (loaded.trace_keys.size() == 0) return Status(Errc::kInvalidArgument, "no keys to classify");
  WARPATH_ASSIGN_OR_RETURN(const TimedKeys timed, tile_keys(o, loaded));

  WARPATH_ASSIGN_OR_RETURN(const EngineChoice choice, choose_engines(o, loaded.rules));
  for (const auto& n : choice.notes) fmt::print(stderr, "bench: note: {}\n", n);
  const AclMemory mem         = acl_memory(o);
  const nlohmann::json dpdk_j = start_dpdk(o, choice.want_dpdk, cpu, loaded.rules, mem);

  const auto& rules       = loaded.rules;
  const auto& first_match = loaded.first_match;
  const auto keys         = timed.keys.view();
  Bench b{o, rules, keys, first_match, timed.distinct, {}, {}, {}, false};
  run_round(b, choice, choice.warpath_ids, false, mem.cap_mb);
  // Later rounds (--rounds, default 2): every engine again in the reverse order (rte_acl
  // first), updates left out, so that drift in the machine's speed over a run of minutes
  // reaches the engines alike.
  for (unsigned round = 1; round < o.rounds; ++round) {
    BenchClassifyOptions again = o;
    again.updates              = 0;
    Bench b2{again, rules, keys, first_match, timed.distinct, {}, {}, {}, false};
    fmt::print(stderr, "bench: round {} of {}, engines in reverse order\n", round + 1, o.rounds);
    const std::vector<std::string> reversed(choice.warpath_ids.rbegin(), choice.warpath_ids.rend());
    run_round(b2, choice, reversed, true, mem.cap_mb);
    merge_round(b, b2);
  }

  const CheckSummary sum = summarize(b);
  const std::string workload =
      o.synthetic.empty() ? base_name(o.rules) : "synthetic " + o.synthetic;
  const std::vector<bench::Row> rows = report_rows(b.rows, workload);
  print_report(o, cpu, b, timed, choice, sum, rows);
  if (!o.json.empty())
    WARPATH_TRY(write_json(o, start, start_head, loaded, b, choice, mem, dpdk_j, sum, rows));
  return b.failed ? 1 : 0;
}

}  // namespace warpath::bench::bench_classify
