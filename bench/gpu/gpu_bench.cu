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

namespace {

using namespace warpath;

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
uint32_t launches_for(uint32_t n) {
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

Status run(uint32_t max_batch, int repeat, std::vector<Row>& rows) {
  // Minimum-size frames (64 B on the wire) in 64-byte cells: the worst case for packet rate.
  gen::TrafficParams params;
  params.count    = max_batch;
  params.sizes    = gen::SizeMix::kFixed;
  params.min_size = params.max_size = 64;
  params.ipv6_share                 = 0.0;
  params.vlan_share                 = 0.0;
  WARPATH_ASSIGN_OR_RETURN(auto batch,
                           packet::PacketBatch::create(max_batch, 128, 0, MemSpace::kPinned));
  WARPATH_TRY(gen::generate_traffic(params, batch));
  const auto view = batch.view();

  uint8_t* d_buf             = nullptr;
  packet::PacketMeta* d_meta = nullptr;
  packet::PacketInfo* d_out  = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_buf, batch.buffer_bytes()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_meta, max_batch * sizeof(packet::PacketMeta)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_out, max_batch * sizeof(packet::PacketInfo)));
  WARPATH_CUDA_TRY(cudaMemcpy(d_buf, view.buffer, batch.buffer_bytes(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_meta, view.metas, max_batch * sizeof(packet::PacketMeta),
                              cudaMemcpyHostToDevice));
  WARPATH_ASSIGN_OR_RETURN(auto engine, packet::make_parser("cuda.parse"));
  PinnedVector<packet::PacketInfo> host_out(max_batch);
  ExecContext ctx;
  for (uint32_t n = 256; n <= max_batch; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(
        const float best_kernel,
        time_kernel(
            repeat, [&] { return packet::detail::launch_parse(d_buf, d_meta, d_out, n, nullptr); },
            launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(engine->parse({view.buffer, view.metas, n}, {host_out.data(), n}, ctx));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"parse", n, best_kernel * 1e3, n / (best_kernel * 1e3), best_e2e * 1e3,
                    n / (best_e2e * 1e3)});
  }
  cudaFree(d_buf);
  cudaFree(d_meta);
  cudaFree(d_out);
  return Status::ok();
}

template <class Key, class Launch, class Call>
Status lookup_rows(const char* name, const std::vector<Key>& keys,
                   const std::vector<lookup::NextHop>& want, int repeat, const Launch& launch,
                   const Call& call, std::vector<Row>& rows) {
  const auto max_n       = uint32_t(keys.size());
  Key* d_in              = nullptr;
  lookup::NextHop* d_out = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_in, keys.size() * sizeof(Key)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_out, keys.size() * sizeof(lookup::NextHop)));
  WARPATH_CUDA_TRY(
      cudaMemcpy(d_in, keys.data(), keys.size() * sizeof(Key), cudaMemcpyHostToDevice));
  // Correctness first: the kernel's answers on the whole array equal cpu.lpm's.
  WARPATH_TRY(launch(d_in, d_out, max_n));
  PinnedVector<lookup::NextHop> got(max_n);
  WARPATH_CUDA_TRY(
      cudaMemcpy(got.data(), d_out, max_n * sizeof(lookup::NextHop), cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < max_n; ++i)
    if (got[i] != want[i])
      return Status(Errc::kInvalidArgument,
                    std::string(name) + ": kernel differs from cpu.lpm at " + std::to_string(i));
  for (uint32_t n = 256; n <= max_n; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float kernel_ms,
                             time_kernel(
                                 repeat, [&] { return launch(d_in, d_out, n); }, launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(call(n, got.data()));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back(
        {name, n, kernel_ms * 1e3, n / (kernel_ms * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
  }
  cudaFree(d_in);
  cudaFree(d_out);
  return Status::ok();
}

// Flow keying (cuda.flow's GPU stage: make_key + key_hash per packet, GASPP's parallel hashing
// to flows) on generated conversations: kernel-only on device-resident parse results, and
// end to end (cuda.flow's track: upload, keys, download, the sequential policy on the CPU table).
Status run_flow(uint32_t max_batch, int repeat, std::vector<Row>& rows) {
  flow::ConversationParams p;
  p.packets     = max_batch;
  p.concurrent  = 4096;
  const flow::Conversations conv = flow::generate_conversations(p);
  const uint32_t total = uint32_t(conv.infos.size());
  packet::PacketInfo* d_infos = nullptr;
  flow::core::FlowKey* d_keys = nullptr;
  uint64_t* d_hashes          = nullptr;
  flow::Track* d_keyed        = nullptr;
  uint8_t* d_from             = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_infos, total * sizeof(packet::PacketInfo)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_keys, total * sizeof(flow::core::FlowKey)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_hashes, total * sizeof(uint64_t)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_keyed, total * sizeof(flow::Track)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_from, total));
  WARPATH_CUDA_TRY(cudaMemcpy(d_infos, conv.infos.data(), total * sizeof(packet::PacketInfo),
                              cudaMemcpyHostToDevice));
  const PinnedVector<packet::PacketInfo> infos = pinned(conv.infos);
  std::vector<flow::PacketFlow> out(total);
  std::vector<flow::FlowRecord> ended;
  for (uint32_t n = 256; n <= total; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(const float kernel_ms, time_kernel(
                                                        repeat,
                                                        [&] {
                                                          return flow::detail::launch_flow_keys(
                                                              d_infos, n, d_keys, d_hashes, d_keyed,
                                                              d_from, false, 0x9e3779b97f4a7c15ull,
                                                              nullptr);
                                                        },
                                                        launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      WARPATH_ASSIGN_OR_RETURN(auto tracker, flow::make_flow_tracker("cuda.flow"));
      ended.clear();
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(
          tracker->track({infos.data(), n}, {conv.metas.data(), n}, {out.data(), n}, ended));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"flow.key", n, kernel_ms * 1e3, n / (kernel_ms * 1e3), best_e2e * 1e3,
                    n / (best_e2e * 1e3)});
  }
  cudaFree(d_infos);
  cudaFree(d_keys);
  cudaFree(d_hashes);
  cudaFree(d_keyed);
  cudaFree(d_from);
  return Status::ok();
}

// Stream reassembly (cuda.stream) on generated connections (handshake, 1-to-300-byte segments
// both ways with ACKs, FINs), each flow one chain in its own slot. Kernel-only: every chain of
// the batch from a fresh slot (each launch reassembles every flow from its SYN, so launches
// repeat), on device-resident segments, first checked against the same chains run on the host
// (emu.stream's backend: results, counters, chunks and bytes); end to end: cuda.stream's
// segments() (admission, staging, upload, kernel, download, the merge in segment order) and
// close_all, a new engine each round (its slots allocated before the clock starts).
Status run_stream(int repeat, std::vector<Row>& rows) {
  using namespace stream;
  for (const uint32_t flows : {1024u, 16384u}) {
    StreamGenParams p;
    p.seed                   = flows;
    p.flows                  = flows;
    p.bytes                  = 1500;
    p.max_segment            = 300;
    const GeneratedStreams g = generate_streams(p);
    stream::detail::SlotBatch b;
    std::vector<int64_t> chain_of(flows, -1);
    std::vector<uint32_t> tail;
    for (const Segment& s : g.segments)
      stream::detail::add_to_chain(b, chain_of, tail, uint32_t(s.flow - 1), true, 0, s);
    stream::detail::place_chains(b, chain_of);
    const core::Limits lim = core::limits_of(StreamConfig{});
    const uint32_t n       = uint32_t(b.chains.size());
    const uint32_t segs    = uint32_t(b.segs.size());
    // The host's answer.
    stream::detail::SlotBatchOut want;
    WARPATH_TRY(stream::detail::make_host_slots(flows)->run(lim, b, want));
    DeviceArray d_slots;
    stream::detail::ChainBuffers d;  // the engine's buffers and launch, the batch resident
    WARPATH_TRY(d_slots.reserve(size_t(flows) * sizeof(core::SlotFlow)));
    WARPATH_TRY(d.upload(b, nullptr));
    // Each launch restarts the compact output (a memset of 16 bytes before the kernel).
    const auto launch = [&]() -> Status {
      return d.launch(lim, d_slots.as<core::SlotFlow>(), n, nullptr);
    };
    // Correctness first: the device's chains equal the host's.
    WARPATH_CUDA_TRY(cudaMemset(d.counters.ptr, 0, sizeof(StreamCounters)));
    WARPATH_TRY(launch());
    stream::detail::SlotBatchOut got;
    got.results.resize(n);
    got.chunks.resize(b.chunk_total);
    got.bytes.resize(b.byte_total);
    WARPATH_CUDA_TRY(cudaMemcpy(got.results.data(), d.results.ptr, n * sizeof(core::ChainResult),
                                cudaMemcpyDeviceToHost));
    WARPATH_CUDA_TRY(cudaMemcpy(got.chunks.data(), d.out_chunks.ptr,
                                b.chunk_total * sizeof(core::SlotChunk), cudaMemcpyDeviceToHost));
    WARPATH_CUDA_TRY(
        cudaMemcpy(got.bytes.data(), d.out_bytes.ptr, b.byte_total, cudaMemcpyDeviceToHost));
    WARPATH_CUDA_TRY(
        cudaMemcpy(&got.c, d.counters.ptr, sizeof(StreamCounters), cudaMemcpyDeviceToHost));
    const auto differs = [&](const std::string& what) {
      return Status(Errc::kInvalidArgument,
                    "stream.chains: the device differs from the host " + what);
    };
    if (!(got.c == want.c)) return differs("in the counters");
    for (uint32_t j = 0; j < n; ++j) {
      const core::ChainResult &x = got.results[j], &y = want.results[j];
      if (x.chunks != y.chunks || x.stopped != y.stopped || x.buffered != y.buffered ||
          x.held != y.held || x.bytes != y.bytes)
        return differs("at chain " + std::to_string(j));
      for (uint32_t k = 0; k < x.chunks; ++k) {
        const core::SlotChunk &u = got.chunks[x.chunk_first + k],
                              &v = want.chunks[y.chunk_first + k];
        if (u.flow != v.flow || u.offset != v.offset || u.len != v.len || u.seg != v.seg ||
            u.gap != v.gap ||
            (!u.gap && std::memcmp(got.bytes.data() + u.bytes, want.bytes.data() + v.bytes, u.len)))
          return differs("at chain " + std::to_string(j) + " chunk " + std::to_string(k));
      }
    }
    WARPATH_ASSIGN_OR_RETURN(const float kernel_ms, time_kernel(repeat, launch));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      WARPATH_ASSIGN_OR_RETURN(auto engine, make_reassembler("cuda.stream"));
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(engine->segments(g.segments.data(), segs, nullptr));
      WARPATH_TRY(engine->close_all(nullptr));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"stream.chains." + std::to_string(flows) + "flows", segs, kernel_ms * 1e3,
                    segs / (kernel_ms * 1e3), best_e2e * 1e3, segs / (best_e2e * 1e3)});
  }
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
  lookup::detail::Rib4 rib;
  for (const Route4& r : table.v4) rib.insert(r);
  WARPATH_ASSIGN_OR_RETURN(auto img4, lookup::detail::Dir24_8Image::build(rib, 0, 1024));
  WARPATH_ASSIGN_OR_RETURN(auto dev4, lookup::detail::Dir24_8Device::upload(*img4));
  WARPATH_ASSIGN_OR_RETURN(auto img6, lookup::detail::Bsl6Image::build(table.v6));
  WARPATH_ASSIGN_OR_RETURN(auto dev6, lookup::detail::Bsl6Device::upload(*img6));
  const PinnedVector<uint32_t> p4 = pinned(a4);
  const PinnedVector<Ip6> p6      = pinned(a6);
  WARPATH_TRY(lookup_rows(
      "lookup4", a4, want4, repeat,
      [&](const uint32_t* in, NextHop* out, uint32_t n) {
        return lookup::detail::launch_dir24_8_lookup(*dev4, in, out, n, nullptr);
      },
      [&](uint32_t n, NextHop* out) {
        return gpu->lookup4({p4.data(), n}, {out, n}, ctx);
      },
      rows));
  WARPATH_TRY(lookup_rows(
      "lookup6", a6, want6, repeat,
      [&](const Ip6* in, NextHop* out, uint32_t n) {
        return lookup::detail::launch_bsl6_lookup(dev6->view(), in, out, n, nullptr);
      },
      [&](uint32_t n, NextHop* out) {
        return gpu->lookup6({p6.data(), n}, {out, n}, ctx);
      },
      rows));
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
  PinnedVector<uint32_t> out(set.keys.size());
  ExecContext ctx;
  PinnedVector<uint32_t> words;
  const classify::KeyBatch all = classify::pinned_copy(set.keys.view(), words);
  for (uint32_t batch : batches) {
    batch       = std::min(batch, all.count);
    double best = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(gpu->classify(all.slice(0, batch), {out.data(), batch}, ctx));
      best = std::min(
          best,
          std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t0).count());
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
  for (const std::string engine : {"cuda.linear", "cuda.tuple", "cuda.bloom", "cuda.tuplemerge"}) {
    classify::SyntheticParams base;
    base.rules = 1024, base.classes = 128, base.full = 128, base.matching = 1, base.fields = 12;
    base.tuples = 65536;
    WARPATH_TRY(
        classify_point(engine, "batch", base, {256, 1024, 4096, 16384, 65536}, repeat, rows));
    for (uint32_t c : {1u, 4u, 16u, 64u, 256u}) {  // Fig 6(c): full classes of 256 rules (to 64K)
      if (engine == "cuda.linear" && c > 64) continue;  // O(N) per key: the figure stops there
      auto p    = base;
      p.classes = p.full = c, p.rules = 256 * c;
      WARPATH_TRY(classify_point(engine, "rules", p, big, repeat, rows));
    }
    for (uint32_t c : {128u, 256u, 512u, 1024u}) {  // Fig 7(a): N = 32K
      if (engine == "cuda.linear") break;
      auto p  = base;
      p.rules = 32768, p.classes = p.full = c;
      WARPATH_TRY(classify_point(engine, "classes", p, big, repeat, rows));
    }
    for (uint32_t f : {4u, 16u, 64u, 128u}) {  // Fig 7(b)
      auto p = base;
      p.full = f;
      WARPATH_TRY(classify_point(engine, "full", p, big, repeat, rows));
    }
    for (uint32_t cm : {1u, 8u, 32u, 128u}) {  // Fig 7(c)
      auto p     = base;
      p.matching = cm;
      WARPATH_TRY(classify_point(engine, "matching", p, big, repeat, rows));
    }
    for (uint32_t fields : {5u, 12u}) {  // Fig 8
      auto p   = base;
      p.fields = fields;
      WARPATH_TRY(classify_point(engine, "fields", p, big, repeat, rows));
    }
  }
  return Status::ok();
}

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

Result<std::string> read_text(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  if (!f) return Status(Errc::kNotFound, path + ": cannot open");
  std::ostringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

// The first b of n device-resident keys (columns of n words) as a batch of their own (columns
// of b words, the layout a resident call and launch_image read), in `compact` unless b == n.
Result<const uint32_t*> first_keys(const DeviceArray& keys, uint32_t n, uint32_t b,
                                   DeviceArray& compact) {
  if (b == n) return keys.as<uint32_t>();
  WARPATH_TRY(compact.reserve(size_t(b) * 16));
  WARPATH_CUDA_TRY(cudaMemcpy2D(compact.ptr, size_t(b) * 4, keys.ptr, size_t(n) * 4, size_t(b) * 4,
                                4, cudaMemcpyDeviceToDevice));
  return compact.as<uint32_t>();
}

// Kernel-only rows of one image engine: the image uploaded once, keys device-resident.
template <class Image, class View, class Lookup>
Status image_kernel_rows(const std::string& set, const char* engine, const classify::RuleSet& rules,
                         const DeviceArray& keys, uint32_t n, const std::vector<uint32_t>& want,
                         int repeat, std::vector<ClassBenchRow>& rows) {
  auto img = Image::build(rules, classify::detail::kRfcMaxImageBytes);
  if (!img.is_ok()) {
    rows.push_back({set, engine, "skipped", 0, 0, 0, 0, 0, img.status().message()});
    return Status::ok();
  }
  DeviceArray image, out, compact;
  WARPATH_TRY(image.reserve((*img)->bytes()));
  WARPATH_TRY(out.reserve(size_t(n) * sizeof(uint32_t)));
  WARPATH_CUDA_TRY(cudaMemcpy(image.ptr, (*img)->data(), (*img)->bytes(), cudaMemcpyHostToDevice));
  const View v = (*img)->view(image.as<uint8_t>());
  WARPATH_TRY((classify::detail::launch_image<View, Lookup>(v, keys.as<uint32_t>(), n,
                                                            out.as<uint32_t>(), nullptr)));
  std::vector<uint32_t> got(n);
  WARPATH_CUDA_TRY(cudaMemcpy(got.data(), out.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                      "kernel differs from the CPU at key " + std::to_string(i)});
      return Status::ok();
    }
  // A batch of b < n keys is the first b keys of each row, copied into rows of b words (the
  // layout launch_image reads); then the kernel alone is timed.
  for (uint32_t b = 1u << 16;; b = std::min(b * 4, n)) {
    WARPATH_ASSIGN_OR_RETURN(const uint32_t* k, first_keys(keys, n, b, compact));
    WARPATH_ASSIGN_OR_RETURN(float ms, time_kernel(
                                           repeat,
                                           [&] {
                                             return classify::detail::launch_image<View, Lookup>(
                                                 v, k, b, out.as<uint32_t>(), nullptr);
                                           },
                                           launches_for(b)));
    rows.push_back({set, engine, "kernel", b, ms * 1e3, b / (ms * 1e3), 0, (*img)->bytes(), ""});
    if (b == n) break;
  }
  return Status::ok();
}

// Resident rows of one engine: its classify call on keys and answers already in device memory
// (ExecContext::resident, the offload master's path: no copies; the launch and the wait
// included), the kernel-only figure for the engines whose kernels have no launch function of
// their own (linear, tuple, bloom, tuplemerge). First the resident answers to all n keys are
// checked against the CPU's: the resident path is not the one the end-to-end rows take.
Status resident_rows(const std::string& set, const std::string& engine,
                     const classify::Classifier& gpu, const DeviceArray& keys, uint32_t n,
                     const std::vector<uint32_t>& want, int repeat,
                     std::vector<ClassBenchRow>& rows) {
  if (!gpu.takes_device_memory()) return Status::ok();
  DeviceArray out, compact;
  WARPATH_TRY(out.reserve(size_t(n) * 4));
  ExecContext ctx;
  ctx.resident                     = true;
  const classify::KeyLayout layout = classify::KeyLayout::kFiveTuple;
  WARPATH_TRY(gpu.classify({keys.as<uint32_t>(), n, n, layout}, {out.as<uint32_t>(), n}, ctx));
  std::vector<uint32_t> got(n);
  WARPATH_CUDA_TRY(cudaMemcpy(got.data(), out.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost));
  for (uint32_t i = 0; i < n; ++i)
    if (got[i] != want[i]) {
      rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                      "resident call differs from the CPU at key " + std::to_string(i) + ": " +
                          std::to_string(got[i]) + " vs " + std::to_string(want[i])});
      return Status::ok();
    }
  for (uint32_t b = 256; b <= n; b *= 4) {
    WARPATH_ASSIGN_OR_RETURN(const uint32_t* k, first_keys(keys, n, b, compact));
    // cuda.linear is O(rules) per key: a few rounds are enough for a minimum.
    WARPATH_ASSIGN_OR_RETURN(
        float ms, time_kernel(
                      std::min(repeat, 5),
                      [&] {
                        return gpu.classify({k, b, b, layout}, {out.as<uint32_t>(), b}, ctx);
                      },
                      launches_for(b)));
    rows.push_back(
        {set, engine, "resident", b, ms * 1e3, b / (ms * 1e3), 0, gpu.stats().memory_bytes, ""});
  }
  return Status::ok();
}

Status run_classbench(const std::string& data, int repeat, std::vector<ClassBenchRow>& rows) {
  constexpr uint32_t kKeys = 1u << 20;
  for (const std::string set : {"acl1_10K", "fw1_10K", "ipc1_10K"}) {
    const std::string path = data + "/classbench/wustl_5tuple/" + set;
    auto rule_text         = read_text(path);
    auto trace_text        = read_text(path + "_trace");
    if (!rule_text.is_ok() || !trace_text.is_ok()) {
      rows.push_back({set, "-", "skipped", 0, 0, 0, 0, 0,
                      (rule_text.is_ok() ? trace_text : rule_text).status().message()});
      continue;
    }
    WARPATH_ASSIGN_OR_RETURN(auto cb, io::parse_classbench_rules(*rule_text, path));
    WARPATH_ASSIGN_OR_RETURN(auto trace, io::parse_trace(*trace_text, path + "_trace"));
    const classify::RuleSet rules  = classify::from_classbench(cb, set);
    const classify::KeyBuffer base = classify::keys_from_trace(trace);
    classify::KeyBuffer keys(classify::KeyLayout::kFiveTuple, kKeys);
    uint32_t key[classify::kMaxKeyWords];
    for (uint32_t i = 0; i < kKeys; ++i) {
      base.get(i % base.size(), key);
      keys.set(i, key);
    }
    // The answers: the best CPU engine (auto's pick among cpu.*).
    WARPATH_ASSIGN_OR_RETURN(auto cpu, classify::make_best_classifier(rules, "cpu."));
    std::vector<uint32_t> want(kKeys);
    PinnedVector<uint32_t> got(kKeys);
    PinnedVector<uint32_t> pinned_words;
    const classify::KeyBatch pk = classify::pinned_copy(keys.view(), pinned_words);
    ExecContext ctx;
    DeviceArray d_keys;  // the keys on the device, for the resident and kernel-only rows
    WARPATH_TRY(d_keys.reserve(size_t(kKeys) * 16));
    WARPATH_CUDA_TRY(cudaMemcpy2D(d_keys.ptr, size_t(kKeys) * 4, pk.words, size_t(pk.stride) * 4,
                                  size_t(kKeys) * 4, 4, cudaMemcpyHostToDevice));
    WARPATH_TRY(cpu->classify(keys.view(), {want.data(), kKeys}, ctx));
    for (const std::string engine :
         {"cuda.linear", "cuda.tuple", "cuda.bloom", "cuda.rfc", "cuda.tic", "cuda.split",
          "cuda.tuplemerge"}) {
      const auto t0 = std::chrono::steady_clock::now();
      auto gpu      = classify::make_classifier(engine, rules);
      const double build_ms =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
      if (!gpu.is_ok()) {
        rows.push_back({set, engine, "skipped", 0, 0, 0, 0, 0, gpu.status().message()});
        continue;
      }
      WARPATH_TRY((*gpu)->classify(pk, {got.data(), kKeys}, ctx));
      // A wrong answer is a row of its own (and a failed run), so the other engines still run.
      uint32_t bad = kKeys;
      for (uint32_t k = 0; k < kKeys && bad == kKeys; ++k)
        if (got[k] != want[k]) bad = k;
      if (bad != kKeys) {
        rows.push_back({set, engine, "mismatch", 0, 0, 0, 0, 0,
                        "differs from " + std::string(cpu->id()) + " at key " +
                            std::to_string(bad) + ": " + std::to_string(got[bad]) + " vs " +
                            std::to_string(want[bad])});
        continue;
      }
      for (uint32_t b = 256; b <= kKeys; b *= 4) {
        double best = 1e30;
        // cuda.linear is O(rules) per key: a few passes of 1M keys are enough for a minimum.
        for (int r = 0; r < std::min(repeat, 5); ++r) {
          const auto t1 = std::chrono::steady_clock::now();
          WARPATH_TRY((*gpu)->classify(pk.slice(0, b), {got.data(), b}, ctx));
          best = std::min(
              best, std::chrono::duration<double, std::micro>(std::chrono::steady_clock::now() - t1)
                        .count());
        }
        rows.push_back({set, engine, "end_to_end", b, best, b / best, build_ms,
                        (*gpu)->stats().memory_bytes, ""});
      }
      WARPATH_TRY(resident_rows(set, engine, **gpu, d_keys, kKeys, want, repeat, rows));
    }
    using namespace classify::detail;
    namespace core = classify::core;
    WARPATH_TRY((image_kernel_rows<RfcImage, core::RfcView, RfcLookup>(
        set, "cuda.rfc", rules, d_keys, kKeys, want, repeat, rows)));
    WARPATH_TRY((image_kernel_rows<TicImage, core::TicView, TicLookup>(
        set, "cuda.tic", rules, d_keys, kKeys, want, repeat, rows)));
    WARPATH_TRY((image_kernel_rows<SplitImage, core::SplitView, SplitLookup>(
        set, "cuda.split", rules, d_keys, kKeys, want, repeat, rows)));
  }
  return Status::ok();
}

// Literal matching (cuda.ac) on ET Open's 23,609 fast-pattern literals over 1,500-byte blocks of
// the ANMLZoo dotstar trace (repeated): kernel-only on device-resident blocks (the issue's goal:
// >= 100 Gbit/s on an H100), and end to end (cuda.ac's scan_blocks: copy in, scan, copy out,
// sort), checked against cpu.ac on the largest batch. batch = blocks; mpps = M blocks/s
// (Gbit/s = mpps x 12).
Status run_pattern(const std::string& data, int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kBlock = 1500;
  // The literal table read here (warpath_io, with its .gz/.xz readers, is not in minimal builds).
  const std::string lit_path = data + "/patterns/et-open/derived/et-open.mpm-literals.tsv";
  std::string text;
  if (std::FILE* t = std::fopen(lit_path.c_str(), "rb")) {
    char buf[1 << 16];
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, t)) > 0;) text.append(buf, k);
    std::fclose(t);
  } else {
    return Status(Errc::kIoError, lit_path + ": cannot open");
  }
  WARPATH_ASSIGN_OR_RETURN(auto lits, pattern::parse_pattern_text(text, lit_path));
  // The automaton is cpu.ac's (the reference for the check below), built once.
  WARPATH_ASSIGN_OR_RETURN(auto cpu, pattern::make_matcher("cpu.ac", lits));
  const pattern::detail::AcImage& img = pattern::detail::ac_image_of(*cpu);
  std::FILE* f = std::fopen((data + "/patterns/anmlzoo/dotstar/backdoor_1MB.input").c_str(), "rb");
  if (!f) return Status(Errc::kIoError, "the ANMLZoo dotstar trace is missing under " + data);
  std::vector<uint8_t> trace(1 << 20);
  trace.resize(std::fread(trace.data(), 1, trace.size(), f));
  std::fclose(f);
  const uint32_t max_blocks = 1u << 16;  // 98 MB
  std::vector<uint8_t> bytes(size_t(max_blocks) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = trace[i % trace.size()];
  std::vector<pattern::detail::AcSlice> slices;
  for (uint32_t b = 0; b < max_blocks; ++b)
    for (uint32_t o = 0; o < kBlock; o += pattern::detail::kAcSlice)
      slices.push_back({b, uint64_t(b) * kBlock, uint64_t(b) * kBlock + o,
                        uint64_t(b) * kBlock + std::min(o + pattern::detail::kAcSlice, kBlock)});
  auto up = [](const void* src, size_t n, auto** dst) -> Status {
    WARPATH_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(dst), std::max<size_t>(n, 1)));
    if (n) WARPATH_CUDA_TRY(cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice));
    return Status::ok();
  };
  pattern::core::AcView v = img.view();
  uint8_t *d_classes = nullptr, *d_lits = nullptr, *d_bytes = nullptr;
  uint32_t *d_next = nullptr, *d_begin = nullptr, *d_link = nullptr;
  unsigned long long* d_count = nullptr;
  pattern::core::AcOutput* d_outputs        = nullptr;
  pattern::detail::AcSlice* d_slices        = nullptr;
  pattern::detail::DeviceMatch* d_matches   = nullptr;
  const uint32_t capacity                   = 1u << 24;
  WARPATH_TRY(up(img.classes, 256, &d_classes));
  WARPATH_TRY(up(img.next.data(), img.next.size() * 4, &d_next));
  WARPATH_TRY(up(img.out_begin.data(), img.out_begin.size() * 4, &d_begin));
  WARPATH_TRY(up(img.out_link.data(), img.out_link.size() * 4, &d_link));
  WARPATH_TRY(up(img.outputs.data(), img.outputs.size() * sizeof(pattern::core::AcOutput), &d_outputs));
  WARPATH_TRY(up(img.literals.data(), img.literals.size(), &d_lits));
  uint32_t *d_sbegin = nullptr, *d_snext = nullptr, *d_fail = nullptr;
  uint8_t* d_sclass  = nullptr;
  WARPATH_TRY(up(img.sparse_begin.data(), img.sparse_begin.size() * 4, &d_sbegin));
  WARPATH_TRY(up(img.sparse_class.data(), img.sparse_class.size(), &d_sclass));
  WARPATH_TRY(up(img.sparse_next.data(), img.sparse_next.size() * 4, &d_snext));
  WARPATH_TRY(up(img.fail.data(), img.fail.size() * 4, &d_fail));
  WARPATH_TRY(up(bytes.data(), bytes.size(), &d_bytes));
  WARPATH_TRY(up(slices.data(), slices.size() * sizeof(pattern::detail::AcSlice), &d_slices));
  WARPATH_CUDA_TRY(cudaMalloc(&d_matches, size_t(capacity) * sizeof(pattern::detail::DeviceMatch)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_count, sizeof(unsigned long long)));
  v.classes = d_classes, v.next = d_next, v.out_begin = d_begin, v.out_link = d_link;
  v.outputs = d_outputs, v.literals = d_lits;
  v.sparse_begin = d_sbegin, v.sparse_class = d_sclass, v.sparse_next = d_snext, v.fail = d_fail;
  WARPATH_ASSIGN_OR_RETURN(auto gpu, pattern::make_matcher("cuda.ac", lits));
  std::vector<pattern::Block> blocks(max_blocks);
  for (uint32_t b = 0; b < max_blocks; ++b) blocks[b] = {bytes.data() + size_t(b) * kBlock, kBlock};
  std::vector<std::vector<pattern::Match>> out(max_blocks), want(max_blocks);
  const uint32_t per_block = (kBlock + pattern::detail::kAcSlice - 1) / pattern::detail::kAcSlice;
  for (uint32_t n = 64; n <= max_blocks; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(
        const float kernel_ms,
        time_kernel(
            repeat,
            [&]() -> Status {
              WARPATH_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(unsigned long long)));
              return pattern::detail::launch_ac_scan(v, d_bytes, d_slices, n * per_block, d_matches,
                                                     capacity, d_count, nullptr);
            },
            launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(gpu->scan_blocks(blocks.data(), n, out.data()));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"pattern.ac", n, kernel_ms * 1e3, n / (kernel_ms * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    if (n * 4 > max_blocks) {
      WARPATH_TRY(cpu->scan_blocks(blocks.data(), n, want.data()));
      for (uint32_t b = 0; b < n; ++b)
        if (out[b] != want[b])
          return Status(Errc::kInvalidArgument, "cuda.ac differs from cpu.ac on block " + std::to_string(b));
    }
  }
  for (void* p : {(void*)d_classes, (void*)d_lits, (void*)d_bytes, (void*)d_next, (void*)d_begin,
                  (void*)d_link, (void*)d_count, (void*)d_outputs, (void*)d_slices, (void*)d_matches,
                  (void*)d_sbegin, (void*)d_sclass, (void*)d_snext, (void*)d_fail})
    cudaFree(p);
  return Status::ok();
}

#if defined(WARPATH_HAVE_NIDS)
// A whole file (warpath_io, with its readers, is not in minimal builds).
Result<std::string> read_whole(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(Errc::kIoError, path + ": cannot open");
  std::string text;
  char buf[1 << 16];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, k);
  std::fclose(f);
  return text;
}

// cuda.nids's opportunistic offload threshold (WARPATH_NIDS_OFFLOAD_MIN_BYTES) for a scope:
// "0" gives the device's own rows (every scan on the GPU); null restores what the process was
// started with (the default threshold when unset).
class OffloadThreshold {
 public:
  explicit OffloadThreshold(const char* value) {
    if (const char* v = std::getenv(kVar)) had_ = true, saved_ = v;
    if (value) ::setenv(kVar, value, 1);
  }
  ~OffloadThreshold() {
    if (had_)
      ::setenv(kVar, saved_.c_str(), 1);
    else
      ::unsetenv(kVar);
  }
  OffloadThreshold(const OffloadThreshold&)            = delete;
  OffloadThreshold& operator=(const OffloadThreshold&) = delete;

 private:
  static constexpr const char* kVar = "WARPATH_NIDS_OFFLOAD_MIN_BYTES";
  bool had_                         = false;
  std::string saved_;
};

// Detection (cuda.nids beside cpu.nids) with ET Open's rules on units of the ANMLZoo dotstar
// trace to port 80 of established flows: 1,500-byte packet payloads, one flow each, and
// (".stream" rows) 256-byte stream chunks of 1,024 flows after their lookback: cpu.nids
// inspects unit by unit (its prefilter: cpu.ac in this minimal build, Vectorscan in full ones),
// cuda.nids a batch per inspect_batch call (a cuda.ac launch per rule group, candidates
// evaluated on the CPU). End to end only: batch = units; mpps = M units/s (Gbit/s = mpps x 12
// for packets, x 2.048 for stream chunks' new bytes).
// Checked first: both give the same hits on the largest batch (ET Open and 256 rules cut from
// the trace, so that something matches).
Status run_nids(const std::string& data, int repeat, std::vector<Row>& rows) {
  const OffloadThreshold all_on_gpu("0");  // the device's rows: no CPU fallback
  constexpr uint32_t kBlock = 1500;
  const std::string dir     = data + "/patterns/et-open/rules";
  WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules({dir}, nids::Vars{}, read_whole));
  WARPATH_ASSIGN_OR_RETURN(const std::string trace,
                           read_whole(data + "/patterns/anmlzoo/dotstar/backdoor_1MB.input"));
  if (trace.size() < (1u << 19))
    return Status(Errc::kIoError, "the ANMLZoo dotstar trace is too short");
  // ET Open's rules rarely match these bytes: 256 rules with 8-byte contents cut from the trace
  // make the check below compare hits, not only empty answers.
  std::string cut;
  for (uint32_t r = 0; r < 256; ++r) {
    char hex[4];
    cut += "alert tcp any any -> any any (msg:\"cut\"; content:\"|";
    for (uint32_t k = 0; k < 8; ++k) {
      std::snprintf(hex, sizeof hex, "%02x ", uint8_t(trace[size_t(r) * 2039 + 100 + k]));
      cut += hex;
    }
    cut += "|\"; sid:" + std::to_string(9200000 + r) + ";)\n";
  }
  nids::add_rules_text(set, cut, "cut.rules", nids::Vars{});
  WARPATH_ASSIGN_OR_RETURN(auto image, nids::compile_rules(set));
  const uint32_t max_units = 1u << 14;  // 24 MB
  std::vector<uint8_t> bytes(size_t(max_units) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(trace[i % trace.size()]);
  static const uint8_t kClient[4] = {10, 0, 0, 1}, kServer[4] = {192, 0, 2, 80};
  // Packet units: 1,500-byte payloads, one flow each. Stream units: 1,024 flows' streams in
  // 256-byte chunks, the flows interleaved (unit i is flow i % 1,024's chunk i / 1,024), each
  // buffer its chunk after up to 4 KiB of the stream before it, as the inspector gives them.
  constexpr uint32_t kFlows = 1024, kChunk = 256;
  std::vector<nids::Unit> packets(max_units), streams(max_units);
  for (uint32_t i = 0; i < max_units; ++i) {
    for (nids::Unit* u : {&packets[i], &streams[i]}) {
      u->pkt.proto       = 6;
      u->pkt.src         = kClient;
      u->pkt.dst         = kServer;
      u->pkt.dport       = 80;
      u->pkt.tcp_flags   = 0x18;
      u->pkt.has_flow    = true;
      u->pkt.established = true;
      u->packet          = i + 1;
    }
    nids::Unit& p         = packets[i];
    p.pkt.sport           = uint16_t(1024 + i % 60000);
    p.pkt.dsize           = kBlock;
    p.data                = bytes.data() + size_t(i) * kBlock;
    p.len                 = kBlock;
    p.flow                = i + 1;
    nids::Unit& s         = streams[i];
    const uint32_t flow   = i % kFlows;
    const uint64_t end    = uint64_t(i / kFlows + 1) * kChunk;  // in the flow's stream
    const uint64_t start  = end - kChunk - std::min<uint64_t>(end - kChunk, nids::kStreamLookback);
    const uint8_t* stream = bytes.data() + size_t(flow) * (bytes.size() / kFlows);
    s.pkt.sport           = uint16_t(1024 + flow);
    s.pkt.dsize           = kChunk;
    s.buffer              = nids::Buffer::kStream;
    s.data                = stream + start;
    s.len                 = uint32_t(end - start);
    s.new_from            = uint32_t(end - kChunk - start);
    s.at_stream_start     = start == 0;
    s.flow                = flow + 1;
  }
  for (const std::vector<nids::Unit>* units : {&packets, &streams}) {
    const std::string suffix = units == &streams ? ".stream" : "";
    auto hits_of             = [&](nids::Detector& d, uint32_t n, bool batch,
                       std::vector<std::vector<nids::Hit>>& hits) -> Status {
      for (uint32_t i = 0; i < n; ++i) hits[i].clear();
      if (batch) return d.inspect_batch(units->data(), n, hits.data());
      for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(d.inspect((*units)[i], hits[i]));
      return Status::ok();
    };
    std::vector<std::vector<nids::Hit>> got(max_units), want(max_units);
    {
      WARPATH_ASSIGN_OR_RETURN(auto cpu, nids::make_detector("cpu.nids", image));
      WARPATH_ASSIGN_OR_RETURN(auto gpu, nids::make_detector("cuda.nids", image));
      WARPATH_TRY(hits_of(*cpu, max_units, false, want));
      WARPATH_TRY(hits_of(*gpu, max_units, true, got));
      size_t hits = 0;
      for (const auto& w : want) hits += w.size();
      if (hits == 0)
        return Status(Errc::kInvalidArgument,
                      "no rule matched the " + (suffix.empty() ? std::string("packet") : "stream") +
                          " units: the check proves nothing");
      for (uint32_t i = 0; i < max_units; ++i)
        if (got[i] != want[i])
          return Status(Errc::kInvalidArgument,
                        "cuda.nids differs from cpu.nids on " +
                            (suffix.empty() ? std::string("packet") : "stream") + " unit " +
                            std::to_string(i));
    }
    for (const char* engine : {"cpu.nids", "cuda.nids"}) {
      const bool batch = std::string_view(engine) == "cuda.nids";
      for (uint32_t n = 64; n <= max_units; n *= 4) {
        double best = 1e30;
        for (int r = 0; r < std::min(repeat, 5); ++r) {
          // A fresh detector each run: flowbits and stream state from the one before do not count.
          WARPATH_ASSIGN_OR_RETURN(auto d, nids::make_detector(engine, image));
          const auto t0 = std::chrono::steady_clock::now();
          WARPATH_TRY(hits_of(*d, n, batch, got));
          best = std::min(
              best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
        }
        rows.push_back({std::string("nids.") + (batch ? "cuda" : "cpu") + suffix, n, 0, 0,
                        best * 1e3, n / (best * 1e3)});
      }
    }
  }
  return Status::ok();
}

// The whole NIDS (`warpath nids`'s data path: parse, flows, reassembly, detection) with ET
// Open's rules and four that the traffic matches, on generated HTTP-like connections
// (bench/common/http_traffic.hpp: 1,448-byte and 200-byte response segments), cuda.nids
// (buffers gathered per call, one inspect_batch) beside cpu.nids, the frames handed to the
// inspector `batch` at a time. The alerts (packet, rule) of every row are checked against
// cpu.nids's at 256 first. End to end only: batch = frames per call; mpps = M frames/s.
Status run_nids_inspector(const std::string& data, std::vector<Row>& rows) {
  WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules({data + "/patterns/et-open/rules"},
                                                               nids::Vars{}, read_whole));
  nids::add_rules_text(set,
                       "alert tcp any any -> any 80 (msg:\"pw\"; flow:to_server; "
                       "content:\"password \"; sid:9300001;)\n"
                       "alert tcp any 80 -> any any (msg:\"exe\"; flow:to_client; "
                       "content:\"file.exe \"; content:\"download \"; distance:0; sid:9300002;)\n"
                       "alert tcp any any -> any any (msg:\"sql\"; content:\"SELECT \"; "
                       "content:\"admin \"; within:40; sid:9300003;)\n"
                       "alert tcp any any -> any any (msg:\"js\"; content:\"function(a,b)\"; "
                       "pcre:\"/return a\\+b/\"; sid:9300004;)\n",
                       "matching.rules", nids::Vars{});
  WARPATH_ASSIGN_OR_RETURN(auto image, nids::compile_rules(set));
  const std::pair<const char*, bench::TrafficShape> workloads[] = {{"http", {400, 100, 20, 1448}},
                                                                   {"small", {800, 200, 10, 200}}};
  for (const auto& [name, shape] : workloads) {
    const bench::Frames frames = bench::build_http_traffic(shape, 1);
    auto run                   = [&](const std::string& engine, uint32_t batch_size,
                   std::vector<std::pair<uint64_t, uint32_t>>& alerts,
                   nids::DetectCounters* counters = nullptr) -> Result<double> {
      WARPATH_ASSIGN_OR_RETURN(
                            auto ins, nids::Inspector::make(image, bench::offline_inspector_config(engine)));
      WARPATH_ASSIGN_OR_RETURN(auto parser, packet::make_parser("cpu.parse"));
      WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch b,
                                                 packet::PacketBatch::create(batch_size, 2048));
      std::vector<packet::PacketInfo> infos(batch_size);
      std::vector<nids::Alert> out;
      std::vector<nids::FlowEvent> ended;
      ExecContext ctx;
      alerts.clear();
      double seconds = 0;
      for (size_t next = 0; next < frames.size();) {
        b.clear();
        for (uint32_t k = 0; k < batch_size && next < frames.size(); ++k, ++next)
          b.append(frames.bytes.data() + frames.off[next], frames.len[next], frames.len[next],
                                     frames.ts[next], 0);
        const auto t0 = std::chrono::steady_clock::now();
        WARPATH_TRY(parser->parse(b.view(), {infos.data(), b.size()}, ctx));
        WARPATH_TRY(ins->process(b.view(), infos.data(), b.size(), out, ended));
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(ins->finish(out, ended));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const nids::Alert& a : out) alerts.push_back({a.packet, a.rule});
      if (counters) *counters = ins->detect_counters();
      return seconds;
    };
    std::vector<std::pair<uint64_t, uint32_t>> want, got;
    WARPATH_TRY(run("cpu.nids", 256, want).status());
    if (want.empty())
      return Status(Errc::kInvalidArgument,
                    std::string(name) + ": no alert: the check proves nothing");
    // cuda.nids twice: every scan on the GPU, and opportunistic (a rule group's batch under
    // the threshold scanned on the CPU: the process's WARPATH_NIDS_OFFLOAD_MIN_BYTES, else
    // the default; threshold null); the share of scans each side took goes to stderr.
    struct Variant {
      const char* row;
      const char* engine;
      const char* threshold;
    };
    for (const Variant& x : {Variant{"cpu.", "cpu.nids", "0"}, Variant{"cuda.", "cuda.nids", "0"},
                             Variant{"cuda+cpu.", "cuda.nids", nullptr}})
      for (uint32_t batch : {64u, 256u, 1024u}) {
        const OffloadThreshold threshold(x.threshold);
        nids::DetectCounters split;
        WARPATH_ASSIGN_OR_RETURN(const double seconds, run(x.engine, batch, got, &split));
        if (!x.threshold)
          std::fprintf(
              stderr,
              "nids.inspect.%s%s at %u frames per call: %llu scans on the GPU, %llu on the CPU\n",
              x.row, name, batch, (unsigned long long)split.scans_offloaded,
              (unsigned long long)split.scans_on_cpu);
        if (got != want)
          return Status(Errc::kInvalidArgument,
                        std::string("nids.inspect.") + x.row + name + " at batch " +
                            std::to_string(batch) + ": " + std::to_string(got.size()) +
                            " alerts, cpu.nids " + std::to_string(want.size()));
        const double calls = double((frames.size() + batch - 1) / batch);
        rows.push_back({std::string("nids.inspect.") + x.row + name, batch, 0, 0,
                        seconds * 1e6 / calls, double(frames.size()) / seconds / 1e6});
      }
  }
  return Status::ok();
}
#endif

// Regex matching (cuda.dfa) on ANMLZoo PowerEN's 2,858 regexes (4,096-state DFA groups) over
// 1,500-byte blocks of its trace: kernel-only (a thread per block and group) and end to end
// (cuda.dfa's scan_blocks), checked against cpu.dfa at 1,024 blocks.
Status run_pattern_dfa(const std::string& data, int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kBlock = 1500;
  const std::string set_path = data + "/patterns/anmlzoo/poweren/complx_01000_00123.1chip.regex";
  std::string text, trace;
  for (auto [path, into] : {std::pair{set_path, &text},
                            std::pair{data + "/patterns/anmlzoo/poweren/poweren_1MB.input", &trace}}) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return Status(Errc::kIoError, path + ": cannot open");
    char buf[1 << 16];
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) into->append(buf, k);
    std::fclose(f);
  }
  WARPATH_ASSIGN_OR_RETURN(auto ps, pattern::parse_pattern_text(text, set_path));
  // The groups are cpu.dfa's (the reference for the check below), built once.
  WARPATH_ASSIGN_OR_RETURN(auto cpu, pattern::make_matcher("cpu.dfa", ps));
  const pattern::detail::DfaSet& set = pattern::detail::dfa_set_of(*cpu);
  const uint32_t groups = uint32_t(set.groups.size());
  const uint32_t max_blocks = 1u << 14;
  std::vector<uint8_t> bytes(size_t(max_blocks) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(trace[i % trace.size()]);
  std::vector<uint64_t> starts(max_blocks + 1);
  for (uint32_t b = 0; b <= max_blocks; ++b) starts[b] = uint64_t(b) * kBlock;
  std::vector<void*> owned;
  auto up = [&owned](const void* src, size_t n) -> Result<void*> {
    void* d = nullptr;
    WARPATH_CUDA_TRY(cudaMalloc(&d, std::max<size_t>(n, 4)));
    owned.push_back(d);
    // src null: an output buffer, allocated only (a copy from null fails: cudaErrorInvalidValue,
    // seen on the H200 run of 2026-11-26).
    if (n && src) WARPATH_CUDA_TRY(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice));
    return d;
  };
  std::vector<pattern::core::DfaView> views;
  for (const auto& g : set.groups) {
    pattern::core::DfaView v = g.view();
    WARPATH_ASSIGN_OR_RETURN(void* c, up(g.classes, 256));
    WARPATH_ASSIGN_OR_RETURN(void* nx, up(g.next.data(), g.next.size() * 4));
    WARPATH_ASSIGN_OR_RETURN(void* ab, up(g.accept_begin.data(), g.accept_begin.size() * 4));
    WARPATH_ASSIGN_OR_RETURN(void* ac, up(g.accepts.data(), g.accepts.size() * 4));
    v.classes = static_cast<uint8_t*>(c), v.next = static_cast<uint32_t*>(nx);
    v.accept_begin = static_cast<uint32_t*>(ab), v.accepts = static_cast<uint32_t*>(ac);
    views.push_back(v);
  }
  WARPATH_ASSIGN_OR_RETURN(void* d_views, up(views.data(), views.size() * sizeof(pattern::core::DfaView)));
  WARPATH_ASSIGN_OR_RETURN(void* d_bytes, up(bytes.data(), bytes.size()));
  WARPATH_ASSIGN_OR_RETURN(void* d_starts, up(starts.data(), starts.size() * 8));
  const uint32_t capacity = 1u << 24;
  WARPATH_ASSIGN_OR_RETURN(void* d_matches, up(nullptr, size_t(capacity) * sizeof(pattern::detail::DeviceMatch)));
  WARPATH_ASSIGN_OR_RETURN(void* d_count, up(nullptr, 8));
  WARPATH_ASSIGN_OR_RETURN(auto gpu, pattern::make_matcher("cuda.dfa", ps));
  std::vector<pattern::Block> blocks(max_blocks);
  for (uint32_t b = 0; b < max_blocks; ++b) blocks[b] = {bytes.data() + size_t(b) * kBlock, kBlock};
  std::vector<std::vector<pattern::Match>> out(max_blocks), want(max_blocks);
  Status status;
  for (uint32_t n = 64; n <= max_blocks && status.is_ok(); n *= 4) {
    auto kernel = time_kernel(
        repeat,
        [&]() -> Status {
          WARPATH_CUDA_TRY(cudaMemsetAsync(d_count, 0, 8));
          return pattern::detail::launch_dfa_scan(
              static_cast<pattern::core::DfaView*>(d_views), groups, static_cast<uint8_t*>(d_bytes),
              static_cast<uint64_t*>(d_starts), n,
              static_cast<pattern::detail::DeviceMatch*>(d_matches), capacity,
              static_cast<unsigned long long*>(d_count), nullptr);
        },
        launches_for(n));
    if (!kernel.is_ok()) {
      (void)(status = kernel.status());
      break;
    }
    double best_e2e = 1e30;
    for (int r = 0; r < repeat && status.is_ok(); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      (void)(status = gpu->scan_blocks(blocks.data(), n, out.data()));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"pattern.dfa", n, *kernel * 1e3, n / (*kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    // Checked at 1,024 blocks (1.5 MB): cpu.dfa runs every group over every byte, so the
    // largest batch's check alone took longer than the part's time on the GPU machine.
    if (status.is_ok() && n == 1024) {
      (void)(status = cpu->scan_blocks(blocks.data(), n, want.data()));
      for (uint32_t b = 0; b < n && status.is_ok(); ++b)
        if (out[b] != want[b])
          (void)(status = Status(Errc::kInvalidArgument, "cuda.dfa differs from cpu.dfa on block " + std::to_string(b)));
    }
  }
  for (void* p : owned) cudaFree(p);
  return status;
}

// ESP crypto (cuda.esp): sealing 1,420-byte inner packets with AES-128-GCM and with AES-128-CTR
// + HMAC-SHA1-96, kernel-only (packets resident on the device) and end to end (cuda.esp's seal:
// gather, copy up, kernel, copy down, scatter), at growing batches. Gbit/s = mpps * 1420 * 8 /
// 1000 (the issue's goal: >= 400 Gbit/s AES-128-GCM kernel-only on an H100). The largest batch
// is opened again and must verify.
Status run_esp(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kInner = 1420, kMax = 65536;
  for (const bool gcm : {true, false}) {
    ipsec::SaKeys k;
    k.cipher         = gcm ? ipsec::Cipher::kAesGcm : ipsec::Cipher::kAesCtr;
    k.integrity      = gcm ? ipsec::Integrity::kNone : ipsec::Integrity::kHmacSha1;
    k.auth_key_bytes = gcm ? 0 : 20;
    k.icv_bytes      = gcm ? 16 : 12;
    for (int i = 0; i < 32; ++i) k.key[size_t(i)] = uint8_t(i * 7 + 1);
    for (int i = 0; i < 20; ++i) k.auth_key[size_t(i)] = uint8_t(i + 1);
    const uint32_t text = ipsec::core::text_bytes(kInner);
    const uint32_t span = (ipsec::core::kEspHead + text + 16 + 15) / 16 * 16;
    std::vector<uint8_t> host(size_t(span) * kMax);
    std::vector<ipsec::detail::EspDeviceOp> ops(kMax);
    std::vector<ipsec::CryptoOp> host_ops(kMax);
    for (uint32_t p = 0; p < kMax; ++p) {
      uint8_t* e = host.data() + size_t(p) * span;
      ipsec::core::write_esp_header(e, 0x2001, p + 1);
      ipsec::core::write_trailer(e + ipsec::core::kEspHead, kInner, ipsec::core::kNextIpv4);
      ops[p]      = {p * span, text, 0, 0};
      host_ops[p] = {e, text, 0, 0};
    }
    void *d_sas = nullptr, *d_data = nullptr, *d_ops = nullptr;
    WARPATH_CUDA_TRY(cudaMalloc(&d_sas, sizeof(ipsec::core::DeviceSa)));
    WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
    WARPATH_CUDA_TRY(cudaMalloc(&d_ops, ops.size() * sizeof(ops[0])));
    WARPATH_TRY(ipsec::detail::prepare_device_sas(&k, 1, static_cast<ipsec::core::DeviceSa*>(d_sas)));
    WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
    WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), ops.size() * sizeof(ops[0]), cudaMemcpyHostToDevice));
    WARPATH_ASSIGN_OR_RETURN(auto engine, ipsec::make_esp_crypto("cuda.esp", {&k, 1}));
    const std::string name = gcm ? "esp.gcm128.seal.1420B" : "esp.ctr128-sha1.seal.1420B";
    for (uint32_t n = 256; n <= kMax; n *= 4) {
      WARPATH_ASSIGN_OR_RETURN(
          float kernel,
          time_kernel(
              repeat,
              [&] {
                return ipsec::detail::launch_esp(
                    static_cast<ipsec::core::DeviceSa*>(d_sas), static_cast<uint8_t*>(d_data),
                    static_cast<ipsec::detail::EspDeviceOp*>(d_ops), n, nullptr, nullptr);
              },
              launches_for(n)));
      double best_e2e = 1e30;
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        WARPATH_TRY(engine->seal({host_ops.data(), n}));
        best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      rows.push_back({name, n, kernel * 1e3, n / (kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    }
    // What was sealed last opens again (the ICVs verify).
    std::vector<uint8_t> ok(kMax);
    WARPATH_TRY(engine->open({host_ops.data(), kMax}, ok.data()));
    for (uint32_t p = 0; p < kMax; ++p)
      if (!ok[p]) return Status(Errc::kInvalidArgument, name + ": packet " + std::to_string(p) + " did not open");
    cudaFree(d_sas);
    cudaFree(d_data);
    cudaFree(d_ops);
  }
  return Status::ok();
}

// GASPP's AES application (cuda.ctr, the flow-aes module's GPU engine): AES-128-CTR over the
// 1,392-byte payloads of 1,420-byte packets of 1,024 flows (a key each), each range starting at
// a random byte of its block, kernel-only (ranges resident) and end to end (cuda.ctr's apply:
// gather, copy up, kernel, copy down, scatter). The end-to-end output must equal ref.ctr's.
Status run_ctr(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kLen = 1392, kMax = 65536, kKeys = 1024;
  WARPATH_ASSIGN_OR_RETURN(auto engine, ipsec::make_ctr_cipher("cuda.ctr"));
  std::vector<ipsec::core::AesKey> keys(kKeys);
  std::vector<uint32_t> handles(kKeys);
  ipsec::core::AesTable table;
  ipsec::core::aes_table_build(table);
  std::vector<std::array<uint8_t, 16>> raw(kKeys);
  for (uint32_t k = 0; k < kKeys; ++k) {
    for (int b = 0; b < 16; ++b) raw[k][size_t(b)] = uint8_t(k * 13 + b * 7 + 1);
    ipsec::core::aes_expand(raw[k].data(), 16, table, keys[k]);
    WARPATH_ASSIGN_OR_RETURN(handles[k], engine->add_key(raw[k].data(), 16));
  }
  std::vector<uint8_t> host(size_t(kLen + 16) * kMax);
  std::vector<ipsec::detail::CtrDeviceOp> ops(kMax);
  std::vector<ipsec::CtrOp> host_ops(kMax);
  for (uint32_t p = 0; p < kMax; ++p) {
    const uint32_t key            = p % kKeys;
    ipsec::detail::CtrDeviceOp& d = ops[p];
    d.offset = p * (kLen + 16), d.len = kLen, d.key = key, d.skip = (p * 7) % 16;
    for (int b = 0; b < 16; ++b) d.counter[b] = uint8_t(p >> (b % 4 * 8));
    host_ops[p].key  = handles[key];
    host_ops[p].skip = uint8_t(d.skip);
    std::memcpy(host_ops[p].counter, d.counter, 16);
    host_ops[p].data = host.data() + d.offset;
    host_ops[p].len  = kLen;
  }
  for (size_t b = 0; b < host.size(); ++b) host[b] = uint8_t(b * 31);
  void *d_keys = nullptr, *d_data = nullptr, *d_ops = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_keys, sizeof(keys[0]) * kKeys));
  WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_ops, sizeof(ops[0]) * kMax));
  WARPATH_CUDA_TRY(
      cudaMemcpy(d_keys, keys.data(), sizeof(keys[0]) * kKeys, cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), sizeof(ops[0]) * kMax, cudaMemcpyHostToDevice));
  const std::string name = "ctr.aes128.1392B";
  for (uint32_t n = 256; n <= kMax; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float kernel,
                             time_kernel(
                                 repeat,
                                 [&] {
                                   return ipsec::detail::launch_ctr(
                                       static_cast<ipsec::core::AesKey*>(d_keys),
                                       static_cast<uint8_t*>(d_data),
                                       static_cast<ipsec::detail::CtrDeviceOp*>(d_ops), n, nullptr);
                                 },
                                 launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(engine->apply({host_ops.data(), n}));
      best_e2e = std::min(
          best_e2e,
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back(
        {name, n, kernel * 1e3, n / (kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
  }
  // The engine's output against ref.ctr's on fresh copies of the first 4,096 ranges.
  auto ref = ipsec::make_ctr_cipher("ref.ctr");
  if (ref.is_ok()) {
    constexpr uint32_t kCheck = 4096;
    std::vector<uint8_t> a(host.begin(), host.begin() + long(kCheck * (kLen + 16))), b = a;
    std::vector<ipsec::CtrOp> oa(host_ops.begin(), host_ops.begin() + kCheck), ob      = oa;
    std::vector<uint32_t> ref_handles(kKeys);
    for (uint32_t k = 0; k < kKeys; ++k) {
      WARPATH_ASSIGN_OR_RETURN(ref_handles[k], ref.value()->add_key(raw[k].data(), 16));
    }
    for (uint32_t p = 0; p < kCheck; ++p) {
      oa[p].data = a.data() + size_t(p) * (kLen + 16);
      ob[p].data = b.data() + size_t(p) * (kLen + 16);
      ob[p].key  = ref_handles[p % kKeys];
    }
    WARPATH_TRY(engine->apply({oa.data(), kCheck}));
    WARPATH_TRY(ref.value()->apply({ob.data(), kCheck}));
    if (a != b) return Status(Errc::kInvalidArgument, name + ": cuda.ctr differs from ref.ctr");
  }
  cudaFree(d_keys);
  cudaFree(d_data);
  cudaFree(d_ops);
  return Status::ok();
}

// Packet scheduling on the GPU (GASPP section 5.3, its Figure 10): AES-128-GCM sealing of
// packets whose inner lengths are spread uniformly over 40-1,500 bytes, kernel-only, in arrival
// order ("esp.gcm128.seal.mixed.arrival") and scheduled as the offload master does it: the
// ops sorted by core::length_key with CUB's radix sort, gathered, then sealed
// ("esp.gcm128.seal.mixed.scheduled", the sort and gather included in its time). Scheduling
// pays where the second row beats the first; the master sorts only when the chain asks
// (Chain::set_schedule_sort, `warpath run --schedule`).
Status run_esp_schedule(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kMax = 65536;
  ipsec::SaKeys k;
  k.cipher    = ipsec::Cipher::kAesGcm;
  k.integrity = ipsec::Integrity::kNone;
  k.icv_bytes = 16;
  for (int i = 0; i < 32; ++i) k.key[size_t(i)] = uint8_t(i * 5 + 3);
  std::vector<ipsec::detail::EspDeviceOp> ops(kMax);
  std::vector<uint16_t> keys(kMax);
  std::vector<uint8_t> host;
  uint64_t x = 0x9E3779B97F4A7C15ull;
  for (uint32_t p = 0; p < kMax; ++p) {
    x ^= x << 13, x ^= x >> 7, x ^= x << 17;
    const uint32_t inner = 40 + uint32_t(x % 1461);
    const uint32_t text  = ipsec::core::text_bytes(inner);
    const uint32_t span  = (ipsec::core::kEspHead + text + 16 + 15) / 16 * 16;
    const size_t at      = host.size();
    host.resize(at + span);
    ipsec::core::write_esp_header(host.data() + at, 0x2002, p + 1);
    ipsec::core::write_trailer(host.data() + at + ipsec::core::kEspHead, inner,
                               ipsec::core::kNextIpv4);
    ops[p]  = {uint32_t(at), text, 0, 0};
    keys[p] = runtime::core::length_key(ipsec::core::kEspHead + text + 16);
  }
  void *d_sas = nullptr, *d_data = nullptr, *d_ops = nullptr, *d_sorted = nullptr,
       *d_keys = nullptr, *d_order = nullptr;
  WARPATH_CUDA_TRY(cudaMalloc(&d_sas, sizeof(ipsec::core::DeviceSa)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_data, host.size()));
  WARPATH_CUDA_TRY(cudaMalloc(&d_ops, kMax * sizeof(ops[0])));
  WARPATH_CUDA_TRY(cudaMalloc(&d_sorted, kMax * sizeof(ops[0])));
  WARPATH_CUDA_TRY(cudaMalloc(&d_keys, kMax * sizeof(uint16_t)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_order, kMax * sizeof(uint32_t)));
  WARPATH_TRY(ipsec::detail::prepare_device_sas(&k, 1, static_cast<ipsec::core::DeviceSa*>(d_sas)));
  WARPATH_CUDA_TRY(cudaMemcpy(d_data, host.data(), host.size(), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d_ops, ops.data(), kMax * sizeof(ops[0]), cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(
      cudaMemcpy(d_keys, keys.data(), kMax * sizeof(uint16_t), cudaMemcpyHostToDevice));
  auto* sas  = static_cast<ipsec::core::DeviceSa*>(d_sas);
  auto* data = static_cast<uint8_t*>(d_data);
  for (uint32_t n = 1024; n <= kMax; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(float arrival,
                             time_kernel(
                                 repeat,
                                 [&] {
                                   return ipsec::detail::launch_esp(
                                       sas, data, static_cast<ipsec::detail::EspDeviceOp*>(d_ops),
                                       n, nullptr, nullptr);
                                 },
                                 launches_for(n)));
    WARPATH_ASSIGN_OR_RETURN(
        float scheduled,
        time_kernel(
            repeat,
            [&]() -> Status {
              const char* why = nullptr;
              if (!runtime::detail::device_sort_order(
                      static_cast<const uint16_t*>(d_keys), static_cast<uint32_t*>(d_order), n,
                      runtime::core::kLengthKeyBits, nullptr, &why) ||
                  !runtime::detail::device_gather_rows(static_cast<const uint8_t*>(d_ops),
                                                       static_cast<uint8_t*>(d_sorted),
                                                       static_cast<const uint32_t*>(d_order), n,
                                                       uint32_t(sizeof(ops[0])), nullptr, &why))
                return Status(Errc::kCudaError, std::string("schedule: ") + (why ? why : "?"));
              return ipsec::detail::launch_esp(sas, data,
                                               static_cast<ipsec::detail::EspDeviceOp*>(d_sorted),
                                               n, nullptr, nullptr);
            },
            launches_for(n)));
    rows.push_back({"esp.gcm128.seal.mixed.arrival", n, arrival * 1e3, n / (arrival * 1e3), 0, 0});
    rows.push_back(
        {"esp.gcm128.seal.mixed.scheduled", n, scheduled * 1e3, n / (scheduled * 1e3), 0, 0});
  }
  for (void* p : {d_sas, d_data, d_ops, d_sorted, d_keys, d_order}) cudaFree(p);
  return Status::ok();
}

// The OpenFlow switch's flow table (cuda.flowtable): 1M exact-match flows of random 12-tuples,
// and 16 wildcard subtables of 1,000 flows each, looked up by keys that hit them, kernel-only
// (keys resident on the device) and end to end (the engine's lookup: keys up, kernel, ids
// down), at growing batches; the largest batch is first checked against cpu.flowtable.
// The CPU anchor is warpath-flow-bench's rte_hash rows on the same shape of keys.
Status run_flowtable(int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kMax = 1u << 20;
  for (const bool exact : {true, false}) {
    std::mt19937_64 rng(exact ? 1 : 2);
    openflow::FlowTable table;
    std::vector<packet::OfTuple> flows;
    const uint32_t count = exact ? 1'000'000 : 16'000;
    for (uint32_t i = 0; i < count; ++i) {
      packet::OfFields f;
      f.in_port  = uint16_t(1 + rng() % 8);
      f.dl_vlan  = packet::kOfNoVlan;
      for (int b = 0; b < 6; ++b) f.dl_src[b] = uint8_t(rng()), f.dl_dst[b] = uint8_t(rng());
      f.dl_type  = openflow::kEthIp;
      f.nw_proto = 6;
      f.nw_src   = uint32_t(rng());
      f.nw_dst   = uint32_t(rng());
      f.tp_src   = uint16_t(rng());
      f.tp_dst   = uint16_t(rng());
      uint32_t wc = 0;
      if (!exact) {
        const uint32_t mask = i / 1000;  // 16 masks
        const auto bit      = [&](uint32_t m, uint32_t w) { return mask & m ? w : 0u; };
        wc = bit(1, openflow::kWcDlSrc) | bit(2, openflow::kWcTpSrc) | bit(4, openflow::kWcInPort) |
             bit(8, openflow::kWcDlDst) | (8 + mask) << openflow::kWcNwSrcShift;
      }
      openflow::FlowSpec spec;
      spec.match    = openflow::make_match(f, wc);
      spec.priority = uint16_t(1 + rng() % 1000);
      spec.actions.push_back(openflow::Action{});
      spec.actions[0].port = 1;
      if (table.apply(openflow::FlowModCommand::kAdd, spec, 0).ok()) flows.push_back(packet::of_pack(f));
    }
    std::vector<packet::OfTuple> keys(kMax);
    for (auto& k : keys) k = flows[rng() % flows.size()];
    WARPATH_ASSIGN_OR_RETURN(auto cpu, openflow::make_flow_lookup("cpu.flowtable", table));
    WARPATH_ASSIGN_OR_RETURN(auto gpu, openflow::make_flow_lookup("cuda.flowtable", table));
    std::vector<uint32_t> want(kMax);
    PinnedVector<uint32_t> got(kMax);
    const PinnedVector<packet::OfTuple> pkeys = pinned(keys);
    WARPATH_TRY(cpu->lookup({keys.data(), kMax}, {want.data(), kMax}));
    WARPATH_TRY(gpu->lookup({keys.data(), kMax}, {got.data(), kMax}));
    const std::string name = exact ? "flowtable.exact.1M" : "flowtable.wildcard.16x1K";
    for (uint32_t i = 0; i < kMax; ++i)
      if (got[i] != want[i])
        return Status(Errc::kInvalidArgument, name + ": key " + std::to_string(i) + ": cuda.flowtable " +
                                                  std::to_string(got[i]) + ", cpu.flowtable " + std::to_string(want[i]));
    WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const openflow::FlowImage> img, openflow::FlowImage::build(table, 64));
    WARPATH_ASSIGN_OR_RETURN(auto dev, openflow::detail::DeviceImage::upload(*img));
    void *d_keys = nullptr, *d_ids = nullptr;
    WARPATH_CUDA_TRY(cudaMalloc(&d_keys, sizeof(packet::OfTuple) * kMax));
    WARPATH_CUDA_TRY(cudaMalloc(&d_ids, sizeof(uint32_t) * kMax));
    WARPATH_CUDA_TRY(cudaMemcpy(d_keys, keys.data(), sizeof(packet::OfTuple) * kMax, cudaMemcpyHostToDevice));
    for (uint32_t n = 256; n <= kMax; n *= 4) {
      WARPATH_ASSIGN_OR_RETURN(float kernel, time_kernel(
                                                 repeat,
                                                 [&] {
                                                   return openflow::detail::launch_flowtable(
                                                       *dev, static_cast<packet::OfTuple*>(d_keys),
                                                       n, static_cast<uint32_t*>(d_ids), nullptr);
                                                 },
                                                 launches_for(n)));
      double best_e2e = 1e30;
      for (int r = 0; r < repeat; ++r) {
        const auto t0 = std::chrono::steady_clock::now();
        WARPATH_TRY(gpu->lookup({pkeys.data(), n}, {got.data(), n}));
        best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
      }
      rows.push_back({name, n, kernel * 1e3, n / (kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    }
    cudaFree(d_keys);
    cudaFree(d_ids);
  }
  return Status::ok();
}

}  // namespace

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
