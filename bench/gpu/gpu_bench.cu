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
 * results out), each point first checked against ref.linear on 4,096 keys. Prints one JSON
 * object on stdout.
 *
 * Usage: warpath-gpu-bench [--max-batch N] [--repeat N]
 */
#include <cuda_runtime.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "lookup/bsl6_image.hpp"
#include "lookup/cuda/bsl6_cuda.hpp"
#include "lookup/cuda/dir24_8_cuda.hpp"
#include "lookup/dir24_8_image.hpp"
#include "lookup/rib.hpp"
#include "packet/cuda/parse_launch.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/packet/parser.hpp"

namespace {

using namespace warpath;

struct Row {
  std::string bench;
  uint32_t batch;
  double kernel_us, kernel_mpps, e2e_us, e2e_mpps;
};

Status run(uint32_t max_batch, int repeat, std::vector<Row>& rows) {
  // Minimum-size frames (64 B on the wire) in 64-byte cells: the worst case for packet rate.
  gen::TrafficParams params;
  params.count = max_batch;
  params.sizes = gen::SizeMix::kFixed;
  params.min_size = params.max_size = 64;
  params.ipv6_share = 0.0;
  params.vlan_share = 0.0;
  WARPATH_ASSIGN_OR_RETURN(auto batch, packet::PacketBatch::create(max_batch, 128, 0, MemSpace::kPinned));
  WARPATH_TRY(gen::generate_traffic(params, batch));
  const auto view = batch.view();

  uint8_t* d_buf = nullptr;
  packet::PacketMeta* d_meta = nullptr;
  packet::PacketInfo* d_out = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_buf, batch.buffer_bytes()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_meta, max_batch * sizeof(packet::PacketMeta)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_out, max_batch * sizeof(packet::PacketInfo)));
  WARPATH_CUDA_TRY(cudaMemcpy(d_buf, view.buffer, batch.buffer_bytes(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_meta, view.metas, max_batch * sizeof(packet::PacketMeta),
                              cudaMemcpyHostToDevice));
  cudaEvent_t start, stop;
  WARPATH_CUDA_TRY(cudaEventCreate(&start));
  WARPATH_CUDA_TRY(cudaEventCreate(&stop));

  WARPATH_ASSIGN_OR_RETURN(auto engine, packet::make_parser("cuda.parse"));
  std::vector<packet::PacketInfo> host_out(max_batch);
  ExecContext ctx;
  for (uint32_t n = 256; n <= max_batch; n *= 4) {
    float best_kernel = 1e30f;
    for (int r = 0; r < repeat; ++r) {
      WARPATH_CUDA_TRY(cudaEventRecord(start));
      WARPATH_TRY(packet::detail::launch_parse(d_buf, d_meta, d_out, n, nullptr));
      WARPATH_CUDA_TRY(cudaEventRecord(stop));
      WARPATH_CUDA_TRY(cudaEventSynchronize(stop));
      float ms = 0;
      WARPATH_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
      best_kernel = std::min(best_kernel, ms);
    }
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(engine->parse({view.buffer, view.metas, n}, {host_out.data(), n}, ctx));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"parse", n, best_kernel * 1e3, n / (best_kernel * 1e3), best_e2e * 1e3,
                    n / (best_e2e * 1e3)});
  }
  cudaFree(d_buf);
  cudaFree(d_meta);
  cudaFree(d_out);
  return Status::ok();
}

// Best-of-`repeat` kernel time (ms) of `launch` with cudaEvents.
template <class Launch>
Result<float> time_kernel(int repeat, const Launch& launch) {
  cudaEvent_t start, stop;
  WARPATH_CUDA_TRY(cudaEventCreate(&start));
  WARPATH_CUDA_TRY(cudaEventCreate(&stop));
  float best = 1e30f;
  for (int r = 0; r < repeat; ++r) {
    WARPATH_CUDA_TRY(cudaEventRecord(start));
    WARPATH_TRY(launch());
    WARPATH_CUDA_TRY(cudaEventRecord(stop));
    WARPATH_CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    WARPATH_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms);
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

template <class Key, class Launch, class Call>
Status lookup_rows(const char* name, const std::vector<Key>& keys,
                   const std::vector<lookup::NextHop>& want, int repeat, const Launch& launch,
                   const Call& call, std::vector<Row>& rows) {
  const auto max_n = uint32_t(keys.size());
  Key* d_in        = nullptr;
  lookup::NextHop* d_out = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_in, keys.size() * sizeof(Key)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_out, keys.size() * sizeof(lookup::NextHop)));
  WARPATH_CUDA_TRY(cudaMemcpy(d_in, keys.data(), keys.size() * sizeof(Key), cudaMemcpyHostToDevice));
  // Correctness first: the kernel's answers on the whole array equal cpu.lpm's.
  WARPATH_TRY(launch(d_in, d_out, max_n));
  std::vector<lookup::NextHop> got(max_n);
  WARPATH_CUDA_TRY(cudaMemcpy(got.data(), d_out, max_n * sizeof(lookup::NextHop), cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < max_n; ++i)
    if (got[i] != want[i])
      return Status(Errc::kInvalidArgument, std::string(name) + ": kernel differs from cpu.lpm at " +
                                                std::to_string(i));
  for (uint32_t n = 256; n <= max_n; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float kernel_ms, time_kernel(repeat, [&] { return launch(d_in, d_out, n); }));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(call(n, got.data()));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(
                                        std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({name, n, kernel_ms * 1e3, n / (kernel_ms * 1e3), best_e2e * 1e3,
                    n / (best_e2e * 1e3)});
  }
  cudaFree(d_in);
  cudaFree(d_out);
  return Status::ok();
}

Status run_lookup(uint32_t max_batch, int repeat, std::vector<Row>& rows) {
  using namespace lookup;
  const RouteTable table = synthetic_full_table(1, 900000, 160000);
  std::vector<uint32_t> a4;
  std::vector<Ip6> a6;
  random_addresses(table, 2, max_batch, a4, a6);
  WARPATH_ASSIGN_OR_RETURN(auto cpu, make_fib("cpu.lpm", table));
  WARPATH_ASSIGN_OR_RETURN(auto gpu, make_fib("cuda.lpm", table));
  std::vector<NextHop> want4(max_batch), want6(max_batch);
  ExecContext ctx;
  WARPATH_TRY(cpu->lookup4({a4.data(), max_batch}, {want4.data(), max_batch}, ctx));
  WARPATH_TRY(cpu->lookup6({a6.data(), max_batch}, {want6.data(), max_batch}, ctx));
  detail::Rib4 rib;
  for (const Route4& r : table.v4) rib.insert(r);
  WARPATH_ASSIGN_OR_RETURN(auto img4, detail::Dir24_8Image::build(rib, 0, 1024));
  WARPATH_ASSIGN_OR_RETURN(auto dev4, detail::Dir24_8Device::upload(*img4));
  WARPATH_ASSIGN_OR_RETURN(auto img6, detail::Bsl6Image::build(table.v6));
  WARPATH_ASSIGN_OR_RETURN(auto dev6, detail::Bsl6Device::upload(*img6));
  WARPATH_TRY(lookup_rows(
      "lookup4", a4, want4, repeat,
      [&](const uint32_t* in, NextHop* out, uint32_t n) {
        return detail::launch_dir24_8_lookup(*dev4, in, out, n, nullptr);
      },
      [&](uint32_t n, NextHop* out) { return gpu->lookup4({a4.data(), n}, {out, n}, ctx); }, rows));
  WARPATH_TRY(lookup_rows(
      "lookup6", a6, want6, repeat,
      [&](const Ip6* in, NextHop* out, uint32_t n) {
        return detail::launch_bsl6_lookup(dev6->view(), in, out, n, nullptr);
      },
      [&](uint32_t n, NextHop* out) { return gpu->lookup6({a6.data(), n}, {out, n}, ctx); }, rows));
  return Status::ok();
}

// One point of a GSwitch sweep: end-to-end classification throughput of one engine.
struct ClassifyRow {
  std::string engine, sweep;
  uint32_t rules, classes, full, matching, fields, batch;
  double e2e_us, e2e_mpps;
};

Status classify_point(const std::string& engine, const std::string& sweep,
                      const classify::SyntheticParams& p, const std::vector<uint32_t>& batches,
                      int repeat, std::vector<ClassifyRow>& rows) {
  WARPATH_ASSIGN_OR_RETURN(auto set, classify::synthetic_rules(p));
  WARPATH_ASSIGN_OR_RETURN(auto gpu, classify::make_classifier(engine, set.rules));
  WARPATH_ASSIGN_OR_RETURN(auto ref, classify::make_classifier("ref.linear", set.rules));
  // Correctness first, on the first 4,096 keys.
  classify::KeyBuffer probe(set.keys.layout(), std::min<uint32_t>(4096, set.keys.size()));
  uint32_t key[classify::kMaxKeyWords];
  for (uint32_t i = 0; i < probe.size(); ++i) {
    set.keys.get(i, key);
    probe.set(i, key);
  }
  const std::string diff = classify::compare_classifier(*gpu, *ref, probe, {probe.size()});
  if (!diff.empty())
    return Status(Errc::kInvalidArgument, engine + " on " + set.rules.name + ": " + diff);
  std::vector<uint32_t> out(set.keys.size());
  ExecContext ctx;
  const classify::KeyBatch all = set.keys.view();
  for (uint32_t batch : batches) {
    batch         = std::min(batch, all.count);
    double best   = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(gpu->classify(all.slice(0, batch), {out.data(), batch}, ctx));
      best = std::min(best, std::chrono::duration<double, std::micro>(
                                std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({engine, sweep, p.rules, p.classes, p.full, p.matching, p.fields, batch, best,
                    batch / best});
  }
  return Status::ok();
}

// GSwitch Figures 5(b), 6(c), 7(a-c) and 8, with its defaults N = 1K, C = F = 128, Cm = 1,
// f = 12, 64K tuples per batch.
Status run_classify(int repeat, std::vector<ClassifyRow>& rows) {
  const std::vector<uint32_t> big = {65536};
  for (const std::string engine : {"cuda.linear", "cuda.tuple", "cuda.bloom"}) {
    classify::SyntheticParams base;
    base.rules = 1024, base.classes = 128, base.full = 128, base.matching = 1, base.fields = 12;
    base.tuples = 65536;
    WARPATH_TRY(classify_point(engine, "batch", base, {256, 1024, 4096, 16384, 65536}, repeat, rows));
    for (uint32_t c : {1u, 4u, 16u, 64u, 256u}) {  // Fig 6(c): full classes of 256 rules (to 64K)
      if (engine == "cuda.linear" && c > 64) continue;   // O(N) per key: the figure stops there
      auto p = base;
      p.classes = p.full = c, p.rules = 256 * c;
      WARPATH_TRY(classify_point(engine, "rules", p, big, repeat, rows));
    }
    for (uint32_t c : {128u, 256u, 512u, 1024u}) {  // Fig 7(a): N = 32K
      if (engine == "cuda.linear") break;
      auto p = base;
      p.rules = 32768, p.classes = p.full = c;
      WARPATH_TRY(classify_point(engine, "classes", p, big, repeat, rows));
    }
    for (uint32_t f : {4u, 16u, 64u, 128u}) {  // Fig 7(b)
      auto p = base;
      p.full = f;
      WARPATH_TRY(classify_point(engine, "full", p, big, repeat, rows));
    }
    for (uint32_t cm : {1u, 8u, 32u, 128u}) {  // Fig 7(c)
      auto p = base;
      p.matching = cm;
      WARPATH_TRY(classify_point(engine, "matching", p, big, repeat, rows));
    }
    for (uint32_t fields : {5u, 12u}) {  // Fig 8
      auto p = base;
      p.fields = fields;
      WARPATH_TRY(classify_point(engine, "fields", p, big, repeat, rows));
    }
  }
  return Status::ok();
}

}  // namespace

int main(int argc, char** argv) {
  uint32_t max_batch = 1u << 22;
  int repeat = 20;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--max-batch") max_batch = uint32_t(std::strtoul(argv[i + 1], nullptr, 10));
    else if (a == "--repeat") repeat = std::atoi(argv[i + 1]);
  }
  if (warpath::cuda_device_count() == 0) {
    std::fprintf(stderr, "warpath-gpu-bench: %s\n", warpath::cuda_unavailable_reason().c_str());
    return 1;
  }
  std::vector<Row> rows;
  if (warpath::Status s = run(max_batch, repeat, rows); !s.is_ok()) {
    std::fprintf(stderr, "warpath-gpu-bench: %s\n", s.message().c_str());
    return 1;
  }
  // Lookups: up to 16M addresses (the kernel-only target is 10 billion lookups/s).
  if (warpath::Status s = run_lookup(std::max(max_batch, 1u << 24), repeat, rows); !s.is_ok()) {
    std::fprintf(stderr, "warpath-gpu-bench: %s\n", s.message().c_str());
    return 1;
  }
  std::vector<ClassifyRow> crows;
  if (warpath::Status s = run_classify(repeat, crows); !s.is_ok()) {
    std::fprintf(stderr, "warpath-gpu-bench: %s\n", s.message().c_str());
    return 1;
  }
  const auto dev = warpath::cuda_devices().front();
  std::printf("{\"device\": \"%s\", \"cuda\": \"%s\", \"frame_bytes\": 64, \"unit\": "
              "\"mpps = million packets (parse) or lookups (lookup4/6) per second\", "
              "\"lookup_table\": \"synthetic_full_table(1, 900000, 160000)\", \"results\": [\n",
              dev.name.c_str(), warpath::cuda_versions().c_str());
  for (size_t i = 0; i < rows.size(); ++i) {
    const Row& r = rows[i];
    std::printf("  {\"bench\": \"%s\", \"batch\": %u, \"kernel_us\": %.2f, \"kernel_mpps\": %.1f, "
                "\"end_to_end_us\": %.2f, \"end_to_end_mpps\": %.1f}%s\n",
                r.bench.c_str(), r.batch, r.kernel_us, r.kernel_mpps, r.e2e_us, r.e2e_mpps,
                i + 1 < rows.size() ? "," : "");
  }
  std::printf("], \"classify\": [\n");
  for (size_t i = 0; i < crows.size(); ++i) {
    const ClassifyRow& r = crows[i];
    std::printf("  {\"engine\": \"%s\", \"sweep\": \"%s\", \"N\": %u, \"C\": %u, \"F\": %u, "
                "\"Cm\": %u, \"f\": %u, \"batch\": %u, \"end_to_end_us\": %.2f, "
                "\"end_to_end_mpps\": %.2f}%s\n",
                r.engine.c_str(), r.sweep.c_str(), r.rules, r.classes, r.full, r.matching,
                r.fields, r.batch, r.e2e_us, r.e2e_mpps, i + 1 < crows.size() ? "," : "");
  }
  std::printf("]}\n");
  return 0;
}
