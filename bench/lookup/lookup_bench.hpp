// bench/lookup/lookup_bench.hpp: the IP lookup benchmark (`warpath bench lookup` is its front).
//
// It builds every lookup engine of this build (warpath's registry engines and, when built with
// DPDK, rte_lpm / rte_lpm6 / rte_fib / rte_fib6 with each lookup function this CPU has) from
// one route file, looks up the same addresses on the same pinned core, one engine at a time,
// and reports lookups per second, ns per lookup, build time, memory and the ratio to the best
// DPDK variant of the family (bench/harness/report.hpp: the table and the JSON every bench
// writes). Every engine's answers are compared with the first warpath engine's; a difference
// is printed and the run fails.
//
// Timing: a warm-up pass (whose answers are the ones checked), then `repeat` timed passes over
// the whole address array, each timed with steady_clock; the best pass counts. Every engine is
// built and checked first; the timed passes then run round-robin over the engines (pass k of
// each before pass k + 1 of any), so drift in the machine's speed reaches them alike; each
// timed pass follows an untimed one of the same engine, so it starts with warm caches. CPU
// engines, warpath's and DPDK's alike, are called `batch` addresses at a time (default 64,
// DPDK's bulk size and a typical burst; 0 = the whole array in one call). GPU engines are
// called with `gpu_batch` addresses and, in a second table, at batch sizes 256..65,536, end to
// end (copies in, kernel, copies out): the Fib API offers no kernel-only timing.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath::bench::bench_lookup {

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

/// Runs the benchmark: the tables on stdout, progress on stderr, the JSON to `o.json` when
/// set. The exit code (0: every engine agreed; 1: an engine's answers differed), or an error:
/// kNotFound for an unknown engine or an empty --engines (a usage error), others for a file
/// that cannot be read or written.
Result<int> run_bench_lookup(const BenchLookupOptions& o);

}  // namespace warpath::bench::bench_lookup
