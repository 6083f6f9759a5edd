// warpath bench classify: the front of the classification benchmark (bench/classify/
// classify_bench.hpp says what it measures and how):
//
//   warpath bench classify (--rules FILE [--trace FILE] [--format classbench|openflow]
//                           | --synthetic N,C,F,Cm,f [--tuples T] [--seed S])
//                          [--engines LIST] [--batch N] [--gpu-batch N] [--repeat N] [--cpu N]
//                          [--max-keys N] [--min-keys N] [--max-acl-mb MB] [--linear-max N]
//                          [--updates N] [--json FILE] [--note TEXT]
#include <sched.h>

#include <memory>

#include "classify/classify_bench.hpp"
#include "commands.hpp"
#include "result_file.hpp"

namespace warpath::cli {

void add_bench_classify(CLI::App& bench, Runner& run) {
  auto o    = std::make_shared<bench::bench_classify::BenchClassifyOptions>();
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
    run             = [o] { return exit_code(bench::bench_classify::run_bench_classify(*o)); };
  });
}

}  // namespace warpath::cli
