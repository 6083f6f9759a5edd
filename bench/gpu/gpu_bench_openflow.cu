// bench/gpu/gpu_bench_openflow.cu: warpath-gpu-bench's OpenFlow flow-table rows (gpu_bench.cuh).
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {

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

}  // namespace warpath::gpu_bench
