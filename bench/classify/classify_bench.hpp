// bench/classify/classify_bench.hpp: the classification benchmark (`warpath bench classify` is
// its front): every classifier engine beside DPDK rte_acl on one rule set and trace.
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
// order), the trace's. Any difference is printed (first key, both answers) and the run fails.
// Updates (--updates N, default 20,000; 0: none): on each engine that inserts and erases rules
// in place (Classifier::insert/erase; the others answer kNotSupported and are listed so), N
// pairs of erase(i) + insert(i, rule i) of random rules (seeded by --seed) are timed alone
// (updates/s counting a pair as 2, per-update latency) and again while a second thread on
// another core classifies the keys without pause (its Mpps). The set is then the loaded one
// again, so every key is classified once more and must give the warm-up's answer.
#pragma once
#include <cstdint>
#include <string>

#include "warpath/core/status.hpp"

namespace warpath::bench::bench_classify {

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

/// Runs the benchmark: the tables on stdout, progress on stderr, the JSON (bench/harness/
/// report.hpp) to `o.json` when set. The exit code (0: every engine agreed; 1: answers
/// differed), or an error: kNotFound for a usage error (an unknown engine, an empty --engines,
/// a bad --synthetic), others for input that cannot be read or a file that cannot be written.
Result<int> run_bench_classify(const BenchClassifyOptions& o);

}  // namespace warpath::bench::bench_classify
