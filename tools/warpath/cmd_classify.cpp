// warpath classify: the best matching rule for every line of a trace.
//
//   warpath classify --rules FILE --trace FILE [--format classbench|openflow]
//                    [--algo linear|tuple|bloom|rfc|tic|split|tuplemerge|overlay|auto] [--engine
//                    cpu|gpu|ref|auto|<id>]
//                    [--threads N] [--batch N] [--out FILE] [--stats FILE]
//                    [--updates FILE [--update-rate N] [--reader-cpu N --updater-cpu N]]
//
// Writes one line per trace line: the 0-based index of the matched rule in the rule file, or
// -1. --stats: JSON with rules, packets, algo, engine, threads, build_ms, memory_bytes and mpps
// (classification only: file parsing and the image build are excluded from mpps).
//
// --updates FILE (classify/rule_updates.hpp: '+ PRIORITY RULE', '- PRIORITY'): one thread
// applies the updates, one at a time and timed, while another classifies the trace over and
// over; then the trace is classified once more and --out gets the final rule set's answers
// (rule priorities, -1 for none); --update-rate paces them (a sweep of rates gives the lookup
// rate against the update rate: bench/classify/update_sweep.py). The engine must take updates (--algo auto picks the best
// that does); --stats adds updates, updates_per_s, update_p50_us/p99_us/max_us,
// mpps_before_updates (the reader alone on the initial set, 0.2 s), mpps_during_updates (its
// rate while the updates ran) and reader_passes.
#include <fmt/core.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <thread>

#include "commands.hpp"
#include "output_file.hpp"
#include "result_file.hpp"
#include "runtime/thread_util.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/classify/rule_updates.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/core/version.hpp"

namespace warpath::cli {
namespace {

struct ClassifyOptions {
  std::string rules, trace, format = "classbench", algo = "auto", engine = "auto", out, stats;
  std::string updates;
  uint32_t threads = 1, batch = 65536;
  int reader_cpu = -1, updater_cpu = -1;
  double update_rate = 0;  ///< updates per second; 0: as fast as they go
  bool show_rule = false;
};

/// One line of --show-rule: the rule's index, where it is written and the rule itself with its
/// action (ClassBench: the trailing word, or "(match action)" without one; OpenFlow: actions=).
std::string rule_line(const classify::RuleSet& set, uint32_t r) {
  if (r == classify::kNoMatch) return "-1\tno match (default action)";
  const classify::Rule& rule = set.rules[r];
  std::string text;
  if (set.layout == classify::KeyLayout::kFiveTuple) {
    auto cb = classify::format_classbench(rule);
    text    = cb.is_ok() ? *cb : "(rule " + std::to_string(r) + ")";
    text += "\t" + (rule.action.empty() ? std::string("(match action)") : rule.action);
  } else {
    text = classify::format_openflow_rule(rule);
  }
  return std::to_string(r) + "\t" + set.name + ":" + std::to_string(rule.line) + "\t" + text;
}

using Clock = std::chrono::steady_clock;

/// --algo and --engine as one registry id (--engine's words named as the option).
Result<std::string> engine_id(const ClassifyOptions& o) {
  auto id = classify::classifier_id(o.algo, o.engine);
  if (!id.is_ok() && id.status().code() == Errc::kNotFound)
    return Status(Errc::kNotFound, "unknown --engine '" + o.engine + "' (cpu, gpu, ref, auto or an id)");
  return id;
}

/// One pass over the trace in batches of o.batch.
Status classify_all(const classify::Classifier& c, const classify::KeyBatch& keys,
                    PinnedVector<uint32_t>& result, const ClassifyOptions& o, ExecContext& ctx) {
  for (uint32_t off = 0; off < keys.count; off += o.batch) {
    const uint32_t k = std::min(o.batch, keys.count - off);
    WARPATH_TRY(c.classify(keys.slice(off, k), {result.data() + off, k}, ctx));
  }
  return Status::ok();
}

/// What --updates measured.
struct UpdateRun {
  uint64_t updates = 0, reader_keys = 0, reader_passes = 0;
  double seconds = 0, reader_seconds = 0, p50_us = 0, p99_us = 0, max_us = 0;
  double mpps_before = 0;  ///< the reader alone on the initial rule set
};

/// --updates: the updates on this thread (pinned to --updater-cpu), the trace classified over
/// and over on another (--reader-cpu) until they are done (at least one whole pass).
Status run_updates(classify::Classifier& c, const std::vector<classify::RuleUpdate>& updates,
                   const classify::KeyBatch& keys, const ClassifyOptions& o, UpdateRun& run) {
  std::atomic<bool> done{false}, ready{false};
  Status reader_status = Status::ok();
  std::thread reader([&] {
    if (o.reader_cpu >= 0) (void)runtime::pin_current_thread(o.reader_cpu);
    PinnedVector<uint32_t> out(keys.count);
    ExecContext ctx;
    ctx.threads = o.threads;
    // Alone first: passes for at least 0.2 s, the rate before any update.
    uint64_t alone = 0;
    const auto a0  = Clock::now();
    double alone_s = 0;
    while (reader_status.is_ok() && (alone_s < 0.2 || alone == 0)) {
      reader_status = classify_all(c, keys, out, o, ctx);
      alone += keys.count;
      alone_s = std::chrono::duration<double>(Clock::now() - a0).count();
    }
    run.mpps_before = alone_s > 0 ? double(alone) / alone_s / 1e6 : 0.0;
    ready.store(true, std::memory_order_release);
    if (!reader_status.is_ok()) return;
    const auto t0 = Clock::now();
    do {
      if (Status s = classify_all(c, keys, out, o, ctx); !s.is_ok()) {
        reader_status = s;
        break;
      }
      run.reader_keys += keys.count;
      ++run.reader_passes;
    } while (!done.load(std::memory_order_acquire));
    run.reader_seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  });
  if (o.updater_cpu >= 0) (void)runtime::pin_current_thread(o.updater_cpu);
  while (!ready.load(std::memory_order_acquire)) std::this_thread::yield();
  std::vector<double> lat;
  lat.reserve(updates.size());
  Status status  = Status::ok();
  const auto t0  = Clock::now();
  for (size_t i = 0; i < updates.size(); ++i) {
    const classify::RuleUpdate& u = updates[i];
    if (o.update_rate > 0) {  // paced: update i not before t0 + i / rate
      const auto due = t0 + std::chrono::duration_cast<Clock::duration>(
                                std::chrono::duration<double>(double(i) / o.update_rate));
      for (auto now = Clock::now(); now < due; now = Clock::now())
        if (due - now > std::chrono::microseconds(100))
          std::this_thread::sleep_for(due - now - std::chrono::microseconds(50));
    }
    const auto a = Clock::now();
    status       = u.insert ? c.insert(u.priority, u.rule) : c.erase(u.priority);
    lat.push_back(std::chrono::duration<double, std::micro>(Clock::now() - a).count());
    if (!status.is_ok()) {
      status = Status(status.code(), o.updates + ":" + std::to_string(u.line) + ": " +
                                          status.message());
      break;
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  done.store(true, std::memory_order_release);
  reader.join();
  WARPATH_TRY(status);
  WARPATH_TRY(reader_status);
  run.updates       = lat.size();
  const Latencies l = latencies(lat);
  run.p50_us = l.p50, run.p99_us = l.p99, run.max_us = l.max;
  return Status::ok();
}

int run_classify(const ClassifyOptions& o) {
  auto rules = classify::load_rules(o.rules, o.format);
  if (!rules.is_ok()) return fail(rules.status());
  auto keys = classify::load_keys(o.trace, rules->layout);
  if (!keys.is_ok()) return fail(keys.status());
  auto id = engine_id(o);
  if (!id.is_ok()) return fail(id.status());
  std::vector<classify::RuleUpdate> updates;
  classify::ClassifyParams params;
  if (!o.updates.empty()) {
    // Ranks by priority number: ClassBench rules all get the same priority, so the index
    // (file position, or the update's PRIORITY) decides.
    if (rules->layout == classify::KeyLayout::kFiveTuple)
      for (auto& r : rules->rules) r.priority = 0;
    auto u = classify::load_rule_updates(o.updates, o.format, uint32_t(rules->rules.size()));
    if (!u.is_ok()) return fail(u.status());
    updates = std::move(u).value();
    if (rules->layout == classify::KeyLayout::kFiveTuple)
      for (auto& x : updates) x.rule.priority = 0;
    params.updates = true;
    // An engine this build lacks (cuda.* without CUDA) is left to make_classifier's error.
    bool validating = false, in_build = false;
    const std::string_view plain = strip_validate(*id, validating);
    for (const EngineInfo& e : classify::classifier_engines()) in_build |= e.id == plain;
    if (in_build && !classify::takes_updates(*id))
      return fail(Status(Errc::kNotSupported,
                         *id + " cannot update rules in place; --updates needs an engine that "
                               "can (overlay, tuplemerge, tuple, bloom, or auto)"));
  }
  const auto t_build = Clock::now();
  auto engine = classify::make_classifier(*id, *rules, params);
  if (!engine.is_ok()) return fail(engine.status());
  const double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_build).count();

  const uint32_t n = keys->size();
  // Answers in page-locked memory, and for an engine on a GPU the keys too (a copy), so it
  // copies them straight as in the benchmark (warpath/core/memory.hpp).
  PinnedVector<uint32_t> result(n);
  ExecContext ctx;
  ctx.threads              = o.threads;
  classify::KeyBatch batch = keys->view();
  PinnedVector<uint32_t> pinned_keys;
  if ((*engine)->takes_device_memory()) batch = classify::pinned_copy(batch, pinned_keys);
  UpdateRun urun;
  if (!o.updates.empty())
    if (Status s = run_updates(**engine, updates, batch, o, urun); !s.is_ok()) return fail(s);
  const auto t0 = Clock::now();
  if (Status s = classify_all(**engine, batch, result, o, ctx); !s.is_ok()) return fail(s);
  const double seconds = std::chrono::duration<double>(Clock::now() - t0).count();

  OutputFile out(o.out);
  if (Status s = out.open({o.rules, o.trace}); !s.is_ok()) return fail(s);
  if (Status s = out.guarded([&](std::FILE* f) {
        for (uint32_t r : result) {
          if (o.show_rule)
            fmt::print(f, "{}\n", rule_line(*rules, r));
          else
            fmt::print(f, "{}\n", r == classify::kNoMatch ? -1 : int64_t(r));
        }
      });
      !s.is_ok())
    return fail(s);
  if (Status s = out.commit(); !s.is_ok()) return fail(s);
  if (!o.stats.empty()) {
    const classify::ClassifierStats st = (*engine)->stats();
    uint64_t matched                   = 0;
    for (uint32_t r : result) matched += r != classify::kNoMatch;
    nlohmann::ordered_json j;
    j["rules_file"]   = o.rules;
    j["trace_file"]   = o.trace;
    j["format"]       = o.format;
    j["rules"]        = rules->rules.size();
    j["packets"]      = n;
    j["matched"]      = matched;
    j["algo"]         = o.algo;
    j["engine"]       = std::string((*engine)->id());
    j["threads"]      = o.threads;
    j["batch"]        = o.batch;
    j["build_ms"]     = build_ms;
    j["memory_bytes"] = st.memory_bytes;
    j["entries"]      = st.entries;
    j["classes"]      = st.classes;
    j["detail"]       = st.detail;
    j["seconds"]      = seconds;
    j["mpps"]         = seconds > 0 ? double(n) / seconds / 1e6 : 0.0;
    if (!o.updates.empty()) {
      j["updates_file"]        = o.updates;
      j["updates"]             = urun.updates;
      j["update_seconds"]      = urun.seconds;
      j["updates_per_s"]       = urun.seconds > 0 ? double(urun.updates) / urun.seconds : 0.0;
      j["update_p50_us"]       = urun.p50_us;
      j["update_p99_us"]       = urun.p99_us;
      j["update_max_us"]       = urun.max_us;
      j["mpps_before_updates"] = urun.mpps_before;
      j["mpps_during_updates"] =
          urun.reader_seconds > 0 ? double(urun.reader_keys) / urun.reader_seconds / 1e6 : 0.0;
      j["reader_passes"] = urun.reader_passes;
    }
    j["commit"]       = build_info().git_commit;
    OutputFile stats(o.stats);
    if (Status s = stats.open({o.rules, o.trace}); !s.is_ok()) return fail(s);
    std::fputs((j.dump(2) + "\n").c_str(), stats.get());
    if (Status s = stats.commit(); !s.is_ok()) return fail(s);
  }
  return 0;
}

}  // namespace

void add_classify(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<ClassifyOptions>();
  auto* cmd = app.add_subcommand("classify", "Classify a trace against a rule set");
  cmd->add_option("--rules", o->rules, "Rule file (ClassBench or ovs-ofctl flows)")->required();
  cmd->add_option("--trace", o->trace,
                  "Trace: ClassBench 'sip dip sport dport proto ...' or 12-field OpenFlow lines")
      ->required();
  cmd->add_option("--format", o->format, "Rule file format")
      ->check(CLI::IsMember({"classbench", "openflow"}))
      ->capture_default_str();
  cmd->add_option("--algo", o->algo, classify::classifier_algorithm_list())
      ->check(CLI::IsMember(classify::classifier_algorithms()))
      ->capture_default_str();
  cmd->add_option("--engine", o->engine,
                  "cpu, gpu, ref, auto, or an engine id (validate:<id> checks against ref.linear)")
      ->capture_default_str();
  cmd->add_option("--threads", o->threads, "CPU threads per batch")
      ->check(CLI::Range(1u, 256u))
      ->capture_default_str();
  cmd->add_option("--batch", o->batch, "Keys per classify call")
      ->check(CLI::Range(1u, 1u << 24))
      ->capture_default_str();
  cmd->add_option("--out", o->out, "Write the matches here instead of standard output");
  cmd->add_option("--stats", o->stats, "Write JSON statistics here");
  cmd->add_option("--updates", o->updates,
                  "Apply these rule updates ('+ PRIORITY RULE', '- PRIORITY') on one thread while "
                  "another classifies the trace; --out gives the final rule set's answers");
  cmd->add_option("--update-rate", o->update_rate,
                  "With --updates: apply them at this many per second (default: as fast as they go)")
      ->check(CLI::Range(0.0, 1e9));
  cmd->add_option("--reader-cpu", o->reader_cpu, "With --updates: pin the classifying thread")
      ->check(CLI::Range(0, 4095));
  cmd->add_option("--updater-cpu", o->updater_cpu, "With --updates: pin the updating thread")
      ->check(CLI::Range(0, 4095));
  cmd->add_flag("--show-rule", o->show_rule,
                "Per key, the matching rule: index, file:line and the rule with its action "
                "(instead of the index alone)");
  cmd->callback([o, &run] { run = [o] { return run_classify(*o); }; });
}

}  // namespace warpath::cli
