// bench/gpu/gpu_bench.cuh: what the parts of warpath-gpu-bench share (gpu_bench.cu has the
// table and main; each gpu_bench_<part>.cu one module's rows): the includes, pinned copies,
// the row types, the cudaEvent timer, and the parts' declarations.
#pragma once
#include <cuda_runtime.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include "classify/cuda/image_cuda.cuh"
#include "classify/cuda/image_lookups.cuh"
#include "classify/rfc_image.hpp"
#include "classify/split_image.hpp"
#include "classify/tic_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "flow/cuda/flow_launch.hpp"
#include "ipsec/core/esp_core.hpp"
#include "ipsec/cuda/ctr_launch.hpp"
#include "ipsec/cuda/esp_launch.hpp"
#include "lookup/bsl6_image.hpp"
#include "lookup/cuda/bsl6_cuda.hpp"
#include "lookup/cuda/dir24_8_cuda.hpp"
#include "lookup/dir24_8_image.hpp"
#include "lookup/rib.hpp"
#include "openflow/cuda/flowtable_launch.hpp"
#include "packet/cuda/parse_launch.hpp"
#include "pattern/ac_image.hpp"
#include "stream/cuda/chain_buffers.cuh"
#if defined(WARPATH_HAVE_NIDS)
#include "common/http_traffic.hpp"
#include "common/nids_config.hpp"
#include "warpath/nids/detect.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/packet/parser.hpp"
#endif
#include "pattern/cuda/ac_launch.hpp"
#include "pattern/cuda/dfa_launch.hpp"
#include "pattern/dfa_image.hpp"
#include "pattern/engines.hpp"
#include "runtime/core/schedule_key.hpp"
#include "runtime/schedule_device.hpp"
#include "warpath/classify/check.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/json_text.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/flow/conversations.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/classbench.hpp"
#include "warpath/ipsec/ipsec.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/openflow/flow_lookup.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/pattern/pattern.hpp"
#include "warpath/stream/generate.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::gpu_bench {

// End-to-end rows hand the engines page-locked memory, as the offload master's slabs do: a copy
// from pageable memory is synchronous and goes through the driver's bounce buffer, and the row
// would measure that rather than the engine.
template <class T>
PinnedVector<T> pinned(const std::vector<T>& v) {
  return PinnedVector<T>(v.begin(), v.end());
}

struct Row {
  std::string bench;
  uint32_t batch;
  double kernel_us, kernel_mpps, e2e_us, e2e_mpps;
};

// Launches timed back to back per round for a batch of n items: enough that a small batch's
// time is the kernel's and not the launch latency (a few microseconds, comparable to the
// kernel below some thousands of items), at most 64.
inline uint32_t launches_for(uint32_t n) {
  return std::clamp<uint32_t>((1u << 18) / std::max(n, 1u), 1, 64);
}

// Best-of-`repeat` time (ms) of one `launch`, with cudaEvents: after one untimed launch (lazy
// module loading, first-touch), each round times `burst` launches back to back on the stream and
// divides, so launch latency overlaps the previous kernel instead of adding to a small one.
template <class Launch>
Result<float> time_kernel(int repeat, const Launch& launch, uint32_t burst = 1) {
  cudaEvent_t start, stop;
  WARPATH_CUDA_TRY(cudaEventCreate(&start));
  WARPATH_CUDA_TRY(cudaEventCreate(&stop));
  WARPATH_TRY(launch());
  WARPATH_CUDA_TRY(cudaDeviceSynchronize());
  float best = 1e30f;
  for (int r = 0; r < repeat; ++r) {
    WARPATH_CUDA_TRY(cudaEventRecord(start));
    for (uint32_t k = 0; k < burst; ++k) WARPATH_TRY(launch());
    WARPATH_CUDA_TRY(cudaEventRecord(stop));
    WARPATH_CUDA_TRY(cudaEventSynchronize(stop));
    float ms = 0;
    WARPATH_CUDA_TRY(cudaEventElapsedTime(&ms, start, stop));
    best = std::min(best, ms / float(std::max(burst, 1u)));
  }
  cudaEventDestroy(start);
  cudaEventDestroy(stop);
  return best;
}

// One point of a GSwitch sweep: end-to-end classification throughput of one engine.
struct ClassifyRow {
  std::string engine, sweep;
  uint32_t rules, classes, full, matching, fields, batch;
  double e2e_us, e2e_mpps;
};

// The ClassBench sets: end-to-end Mpps of every CUDA classifier and kernel-only Mpps of the
// image engines, against batch size (GSwitch's "Mpps on the ClassBench sets"; the kernel-only
// target is 1 billion classifications per second on the 10K ACL sets).
struct ClassBenchRow {
  std::string set, engine, kind;  // kind: end_to_end, kernel, or skipped (detail says why)
  uint32_t batch = 0;
  double us = 0, mpps = 0, build_ms = 0;
  uint64_t memory = 0;
  std::string detail;
};

// The parts (one file each, gpu_bench_<part>.cu); main's table runs them by name.
Status run(uint32_t max_batch, int repeat, std::vector<Row>& rows);  // parse
Status run_lookup(uint32_t max_batch, int repeat, std::vector<Row>& rows);
Status run_flow(uint32_t max_batch, int repeat, std::vector<Row>& rows);
Status run_stream(int repeat, std::vector<Row>& rows);
Status run_classify(int repeat, std::vector<ClassifyRow>& rows);
Status run_classbench(const std::string& data, int repeat, std::vector<ClassBenchRow>& rows);
Status run_pattern(const std::string& data, int repeat, std::vector<Row>& rows);
Status run_pattern_dfa(const std::string& data, int repeat, std::vector<Row>& rows);
#if defined(WARPATH_HAVE_NIDS)
Status run_nids(const std::string& data, int repeat, std::vector<Row>& rows);
Status run_nids_inspector(const std::string& data, std::vector<Row>& rows);
#endif
Status run_esp(int repeat, std::vector<Row>& rows);
Status run_ctr(int repeat, std::vector<Row>& rows);
Status run_esp_schedule(int repeat, std::vector<Row>& rows);
Status run_flowtable(int repeat, std::vector<Row>& rows);

}  // namespace warpath::gpu_bench
