/*
 * bench/gpu/gpu_bench.cu: warpath-gpu-bench, the GPU benchmarks that scripts/gpu-check.sh runs.
 *
 * Needs only CUDA and the C++ standard library (GPU machines have no extra packages), so it
 * is a small cudaEvent-timed harness rather than nvbench. It measures, per batch size:
 *   kernel      the parse kernel alone on device-resident packets (min of several runs)
 *   end_to_end  cuda.parse as an engine call: H2D copy of cells and metadata from pinned memory,
 *               kernel, D2H of results, synchronise
 * and, for IP lookup (cuda.lpm) on synthetic tables shaped like the 2024 full tables (900K
 * IPv4, 160K IPv6 routes; GPU machines have no data directory), per batch size:
 *   kernel      the DIR-24-8 / binary-search-on-lengths kernel on device-resident addresses
 *   end_to_end  cuda.lpm's lookup4/lookup6: H2D of addresses, kernel, D2H of next hops
 * after checking the kernel's answers against cpu.lpm on the largest batch; and, for the
 * cuda.linear / cuda.tuple / cuda.bloom classifiers on GSwitch's synthetic sets (section 7:
 * batch size, N, C, F, Cm and f), end-to-end Mpps through Classifier::classify (keys copied in,
 * results out), each point first checked against ref.linear on 4,096 keys; and, on the WUSTL
 * ClassBench sets acl1/fw1/ipc1 10K with their traces (tiled to 1M keys) when --data DIR holds
 * them (GPU machines have no data directory: carry a copy, README "GPU checks"), every CUDA
 * classifier end to end at batch sizes 256 to 1M, and the image engines (rfc, tic, split)
 * kernel-only on device-resident keys, each first checked against the best CPU engine on all
 * 1M keys; and the ESP crypto (cuda.esp) and the OpenFlow switch's flow table
 * (cuda.flowtable, 1M exact flows and 16 wildcard subtables) kernel-only and end to end; and
 * TCP stream reassembly (cuda.stream: 1,024 and 16,384 generated connections, each a chain in
 * its slot) kernel-only, checked against the same chains on the host, and end to end; and
 * packet scheduling's A/B (ESP on mixed lengths in arrival order and sorted on the device as
 * the offload master does; kernel-only, their end-to-end columns 0); and, where the NIDS is
 * built (PCRE2: scripts/gpu-data.sh carries its packages), detection with ET Open's rules,
 * cuda.nids's batches beside cpu.nids unit by unit (end to end only, kernel columns 0; every
 * scan on the GPU, its small-batch CPU fallback off), and the whole inspector on HTTP-like
 * traffic with cuda.nids on the GPU only and opportunistic ("cuda+cpu": a rule group's batch
 * under WARPATH_NIDS_OFFLOAD_MIN_BYTES on the CPU), whose crossover sets that default.
 * End-to-end rows hand the engines page-locked inputs and outputs (as the offload master's
 * slabs do); kernel-only rows time back-to-back launches (launches_for), so a small batch's
 * figure is the kernel's and not the launch latency; the ClassBench rows add resident calls
 * (keys and answers already on the device: every CUDA classifier, linear/tuple/bloom/tuplemerge
 * included, without copies), checked on all 1M keys first.
 * Prints one JSON object on stdout; a part that fails is reported on stderr (and the exit
 * status is 1), the others' rows still come.
 *
 * Usage: warpath-gpu-bench [--max-batch N] [--repeat N] [--data DIR] [--only PART,...]
 *   PART: parse lookup flow pattern pattern.dfa nids nids.inspector esp esp.schedule ctr
 *         flowtable stream classify classbench. Each part prints its time and rows on stderr as it ends.
 */
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {
namespace {

std::string json_row(const Row& r) {
  char b[512];
  std::snprintf(b, sizeof b,
                "{\"bench\": \"%s\", \"batch\": %u, \"kernel_us\": %.2f, \"kernel_mpps\": %.1f, "
                "\"end_to_end_us\": %.2f, \"end_to_end_mpps\": %.1f}",
                r.bench.c_str(), r.batch, r.kernel_us, r.kernel_mpps, r.e2e_us, r.e2e_mpps);
  return b;
}

std::string json_row(const ClassifyRow& r) {
  char b[512];
  std::snprintf(b, sizeof b,
                "{\"engine\": \"%s\", \"sweep\": \"%s\", \"N\": %u, \"C\": %u, \"F\": %u, "
                "\"Cm\": %u, \"f\": %u, \"batch\": %u, \"end_to_end_us\": %.2f, "
                "\"end_to_end_mpps\": %.2f}",
                r.engine.c_str(), r.sweep.c_str(), r.rules, r.classes, r.full, r.matching, r.fields,
                r.batch, r.e2e_us, r.e2e_mpps);
  return b;
}

std::string json_row(const ClassBenchRow& r) {
  char b[512];
  std::snprintf(b, sizeof b,
                "{\"set\": \"%s\", \"engine\": \"%s\", \"kind\": \"%s\", \"batch\": %u, "
                "\"us\": %.2f, \"mpps\": %.2f, \"build_ms\": %.1f, \"memory_bytes\": %llu, "
                "\"detail\": \"",
                r.set.c_str(), r.engine.c_str(), r.kind.c_str(), r.batch, r.us, r.mpps, r.build_ms,
                static_cast<unsigned long long>(r.memory));
  return b + json_escape(r.detail) + "\"}";
}

// Progress on stderr as each part completes (its time and its new rows, one JSON object a
// line), so that a run cut short by its time limit still leaves every finished part's numbers
// in the log.
class Progress {
 public:
  Progress(const std::vector<Row>& rows, const std::vector<ClassifyRow>& crows,
           const std::vector<ClassBenchRow>& cbrows)
      : rows_(rows), crows_(crows), cbrows_(cbrows) {}

  void done(const char* part, const Status& s) {
    const auto now = std::chrono::steady_clock::now();
    const size_t added =
        rows_.size() - rows_at_ + crows_.size() - crows_at_ + cbrows_.size() - cbrows_at_;
    std::fprintf(stderr, "warpath-gpu-bench: %s %s in %.1f s (%zu rows)\n", part,
                 s.is_ok() ? "done" : "FAILED", std::chrono::duration<double>(now - last_).count(),
                 added);
    if (!s.is_ok()) std::fprintf(stderr, "warpath-gpu-bench: %s: %s\n", part, s.message().c_str());
    print(part, rows_, rows_at_);
    print(part, crows_, crows_at_);
    print(part, cbrows_, cbrows_at_);
    std::fflush(stderr);
    last_ = now;
  }

 private:
  template <class R>
  static void print(const char* part, const std::vector<R>& rows, size_t& at) {
    for (; at < rows.size(); ++at)
      std::fprintf(stderr, "row %s %s\n", part, json_row(rows[at]).c_str());
  }
  const std::vector<Row>& rows_;
  const std::vector<ClassifyRow>& crows_;
  const std::vector<ClassBenchRow>& cbrows_;
  size_t rows_at_ = 0, crows_at_ = 0, cbrows_at_ = 0;
  std::chrono::steady_clock::time_point last_ = std::chrono::steady_clock::now();
};

}  // namespace
}  // namespace warpath::gpu_bench

using namespace warpath;
using namespace warpath::gpu_bench;

int main(int argc, char** argv) {
  uint32_t max_batch   = 1u << 22;
  int repeat           = 20;
  const char* env_data = std::getenv("WARPATH_DATA");
  std::string data     = env_data ? env_data : "../shared/data";
  std::string only;  // --only PART,PART,...: run these parts alone (a rerun of what failed)
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--max-batch")
      max_batch = uint32_t(std::strtoul(argv[i + 1], nullptr, 10));
    else if (a == "--repeat")
      repeat = std::atoi(argv[i + 1]);
    else if (a == "--data")
      data = argv[i + 1];
    else if (a == "--only")
      only = argv[i + 1];
  }
  if (warpath::cuda_device_count() == 0) {
    std::fprintf(stderr, "warpath-gpu-bench: %s\n", warpath::cuda_unavailable_reason().c_str());
    return 1;
  }
  std::vector<Row> rows;
  std::vector<ClassifyRow> crows;
  std::vector<ClassBenchRow> cbrows;
  // The parts, in order. A `fatal` part's failure fails the run; another's is reported and the
  // remaining parts still run. Either way the JSON comes.
  struct Part {
    const char* name;
    bool fatal;
    std::function<Status()> run;
  };
  const std::vector<Part> parts = {
    {"parse", true, [&] { return run(max_batch, repeat, rows); }},
    // Lookups: up to 16M addresses (the kernel-only target is 10 billion lookups/s).
    {"lookup", true, [&] { return run_lookup(std::max(max_batch, 1u << 24), repeat, rows); }},
    // Flow keying: up to 4M packets.
    {"flow", false, [&] { return run_flow(std::min(max_batch, 1u << 22), repeat, rows); }},
    {"pattern", false, [&] { return run_pattern(data, repeat, rows); }},
    {"pattern.dfa", false, [&] { return run_pattern_dfa(data, repeat, rows); }},
#if defined(WARPATH_HAVE_NIDS)
    {"nids", false, [&] { return run_nids(data, repeat, rows); }},
    {"nids.inspector", false, [&] { return run_nids_inspector(data, rows); }},
#endif
    {"esp", false, [&] { return run_esp(repeat, rows); }},
    {"esp.schedule", false, [&] { return run_esp_schedule(repeat, rows); }},
    {"ctr", false, [&] { return run_ctr(repeat, rows); }},
    {"flowtable", false, [&] { return run_flowtable(repeat, rows); }},
    {"stream", false, [&] { return run_stream(repeat, rows); }},
    {"classify", true, [&] { return run_classify(repeat, crows); }},
    {"classbench", true, [&] { return run_classbench(data, repeat, cbrows); }},
  };
  // --only: every name must be a part of this build.
  std::vector<std::string> wanted;
  for (size_t b = 0; !only.empty() && b <= only.size();) {
    const size_t e = std::min(only.find(',', b), only.size());
    wanted.push_back(only.substr(b, e - b));
    b = e + 1;
  }
  for (const std::string& w : wanted)
    if (std::none_of(parts.begin(), parts.end(), [&](const Part& p) { return w == p.name; })) {
      std::string known;
      for (const Part& p : parts) known += std::string(" ") + p.name;
      std::fprintf(stderr, "warpath-gpu-bench: --only: no part '%s' in this build (parts:%s)\n",
                   w.c_str(), known.c_str());
      return 2;
    }
  int status = 0;  // a failed fatal part, or a mismatch row, fails the run after the JSON
  Progress progress(rows, crows, cbrows);
  for (const Part& p : parts) {
    if (!wanted.empty() && std::find(wanted.begin(), wanted.end(), p.name) == wanted.end())
      continue;
    const Status s = p.run();
    progress.done(p.name, s);
    if (p.fatal && !s.is_ok()) status = 1;
  }
  for (const ClassBenchRow& r : cbrows)
    if (r.kind == "mismatch") {
      std::fprintf(stderr, "warpath-gpu-bench: %s on %s: %s\n", r.engine.c_str(), r.set.c_str(),
                   r.detail.c_str());
      status = 1;
    }
  const auto dev = warpath::cuda_devices().front();
  std::printf(
      "{\"device\": \"%s\", \"cuda\": \"%s\", \"frame_bytes\": 64, \"unit\": "
      "\"mpps = million packets (parse) or lookups (lookup4/6) per second\", "
      "\"lookup_table\": \"synthetic_full_table(1, 900000, 160000)\", \"results\": [\n",
      dev.name.c_str(), warpath::cuda_versions().c_str());
  for (size_t i = 0; i < rows.size(); ++i)
    std::printf("  %s%s\n", json_row(rows[i]).c_str(), i + 1 < rows.size() ? "," : "");
  std::printf("], \"classify\": [\n");
  for (size_t i = 0; i < crows.size(); ++i)
    std::printf("  %s%s\n", json_row(crows[i]).c_str(), i + 1 < crows.size() ? "," : "");
  std::printf("], \"classbench_data\": \"%s\", \"classbench\": [\n", data.c_str());
  for (size_t i = 0; i < cbrows.size(); ++i)
    std::printf("  %s%s\n", json_row(cbrows[i]).c_str(), i + 1 < cbrows.size() ? "," : "");
  std::printf("]}\n");
  return status;
}
