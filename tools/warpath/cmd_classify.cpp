// warpath classify: the best matching rule for every line of a trace.
//
//   warpath classify --rules FILE --trace FILE [--format classbench|openflow]
//                    [--algo linear|tuple|bloom|rfc|tic|split|auto] [--engine
//                    cpu|gpu|ref|auto|<id>]
//                    [--threads N] [--batch N] [--out FILE] [--stats FILE]
//
// Writes one line per trace line: the 0-based index of the matched rule in the rule file, or
// -1. --stats: JSON with rules, packets, algo, engine, threads, build_ms, memory_bytes and mpps
// (classification only: file parsing and the image build are excluded from mpps).
#include <fmt/core.h>

#include <cerrno>
#include <chrono>
#include <cstring>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>

#include "commands.hpp"
#include "output_file.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/version.hpp"

namespace warpath::cli {
namespace {

struct ClassifyOptions {
  std::string rules, trace, format = "classbench", algo = "auto", engine = "auto", out, stats;
  uint32_t threads = 1, batch = 65536;
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

/// --algo and --engine as one registry id.
Result<std::string> engine_id(const ClassifyOptions& o) {
  const std::string& e = o.engine;
  if (e.find('.') != std::string::npos) return e;  // a full id, or validate:<id>
  if (e == "ref") return std::string("ref.linear");
  if (e != "cpu" && e != "gpu" && e != "auto")
    return Status(Errc::kNotFound, "unknown --engine '" + e + "' (cpu, gpu, ref, auto or an id)");
  if (o.algo == "auto")
    return std::string(e == "auto" ? "auto" : e == "cpu" ? "auto:cpu." : "auto:cuda.");
  if (e == "cpu") return "cpu." + o.algo;
  if (e == "gpu") return "cuda." + o.algo;
  return (cuda_device_count() > 0 ? "cuda." : "cpu.") + o.algo;
}

int run_classify(const ClassifyOptions& o) {
  auto rules = classify::load_rules(o.rules, o.format);
  if (!rules.is_ok()) return fail(rules.status());
  auto keys = classify::load_keys(o.trace, rules->layout);
  if (!keys.is_ok()) return fail(keys.status());
  auto id = engine_id(o);
  if (!id.is_ok()) return fail(id.status());
  const auto t_build = Clock::now();
  // auto:<prefix>: the best engine of that device that builds (make_best_classifier).
  auto engine = id->rfind("auto:", 0) == 0
                    ? classify::make_best_classifier(*rules, std::string_view(*id).substr(5))
                    : classify::make_classifier(*id, *rules);
  if (!engine.is_ok()) return fail(engine.status());
  const double build_ms = std::chrono::duration<double, std::milli>(Clock::now() - t_build).count();

  const uint32_t n = keys->size();
  std::vector<uint32_t> result(n);
  ExecContext ctx;
  ctx.threads      = o.threads;
  const auto batch = keys->view();
  const auto t0    = Clock::now();
  for (uint32_t off = 0; off < n; off += o.batch) {
    const uint32_t k = std::min(o.batch, n - off);
    if (Status s = (*engine)->classify(batch.slice(off, k), {result.data() + off, k}, ctx);
        !s.is_ok())
      return fail(s);
  }
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
  cmd->add_flag("--show-rule", o->show_rule,
                "Per key, the matching rule: index, file:line and the rule with its action "
                "(instead of the index alone)");
  cmd->callback([o, &run] { run = [o] { return run_classify(*o); }; });
}

}  // namespace warpath::cli
