// bench/gpu/gpu_bench_packets.cu: warpath-gpu-bench's parse, lookup, flow keying and stream reassembly rows (gpu_bench.cuh).
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {

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

}  // namespace warpath::gpu_bench
