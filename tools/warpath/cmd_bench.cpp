// warpath bench: benchmarks that measure warpath engines side by side with the field's tools.
// The benchmarks live under bench/ (bench/lookup, bench/classify) and report through its
// harness (bench/harness/report.hpp); these are their command-line fronts:
//
//   warpath bench lookup --fib FILE [--addrs FILE | --count N --mix random|prefix|mixed --seed S]
//                        [--engines LIST] [--repeat N] [--batch N] [--cpu N] [--family F]
//                        [--json FILE] [--note TEXT]
//
// (bench/lookup/lookup_bench.hpp says what it measures and how), and `bench classify`
// (cmd_bench_classify.cpp).
#include <sched.h>

#include <memory>

#include "commands.hpp"
#include "lookup/lookup_bench.hpp"
#include "result_file.hpp"

namespace warpath::cli {

/// `warpath bench classify` (cmd_bench_classify.cpp).
void add_bench_classify(CLI::App& bench, Runner& run);

/// A benchmark's exit code, or its error's (fail: 2 for a usage error, else 1).
int exit_code(Result<int> r) { return r.is_ok() ? *r : fail(r.status()); }

void add_bench(CLI::App& app, Runner& run) {
  auto* bench = app.add_subcommand(
      "bench", "Benchmarks: warpath engines side by side with the field's tools (DPDK)");
  bench->require_subcommand(1);

  auto o    = std::make_shared<bench::bench_lookup::BenchLookupOptions>();
  auto* cmd = bench->add_subcommand(
      "lookup", "IP lookup: every warpath engine and DPDK rte_lpm/rte_lpm6/rte_fib/rte_fib6");
  cmd->add_option("--fib", o->fib, "Route file (IPv4 and/or IPv6; .gz/.xz read directly)")
      ->required();
  cmd->add_option("--addrs", o->addrs, "Address file (default: generated addresses)");
  cmd->add_option("--count", o->count,
                  "Generated addresses per family (default 2,000,000 IPv4, 1,000,000 IPv6)")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 30));
  cmd->add_option("--mix", o->mix,
                  "random (uniform; IPv6 in 2000::/3), prefix (a random route's prefix with "
                  "random host bits) or mixed (half each)")
      ->check(CLI::IsMember({"random", "prefix", "mixed"}));
  cmd->add_option("--seed", o->seed, "Seed of the generated addresses (default 1)");
  cmd->add_option("--engines", o->engines,
                  "Comma-separated engine ids, DPDK variants (rte_lpm, rte_fib.avx512, ...), "
                  "'warpath' (every available warpath engine but ref.lpm) and 'dpdk' (every "
                  "anchor); default warpath,dpdk. The first warpath engine is the reference.");
  cmd->add_option("--repeat", o->repeat, "Timed passes after a warm-up; the best counts")
      ->check(CLI::Range(1u, 1000u));
  cmd->add_option("--batch", o->batch,
                  "Addresses per lookup call for CPU engines (default 64; 0 = all at once)");
  cmd->add_option("--gpu-batch", o->gpu_batch, "Addresses per call for GPU engines")
      ->check(CLI::Range(uint32_t(1), uint32_t(1) << 30));
  cmd->add_option("--cpu", o->cpu, "Core to pin to (default: the current one)")
      ->check(CLI::Range(0, CPU_SETSIZE - 1));
  cmd->add_option("--family", o->family, "ipv4, ipv6 or both (default: what the table has)")
      ->check(CLI::IsMember({"ipv4", "ipv6", "both"}));
  cmd->add_option("--json", o->json, "Write the results as JSON to this file");
  cmd->add_option("--note", o->note,
                  "Free text stored in the JSON (e.g. how busy the machine was)");
  cmd->callback([o, &run] {
    o->command_line = command_line();
    run             = [o] { return exit_code(bench::bench_lookup::run_bench_lookup(*o)); };
  });

  add_bench_classify(*bench, run);
}

}  // namespace warpath::cli
