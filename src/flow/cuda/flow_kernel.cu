/*
 * src/flow/cuda/flow_kernel.cu: cuda.flow, flow tracking with the batch keyed on the GPU.
 *
 * Computes   keyed[i] = core::make_key(infos[i], keys[i], from_b[i]), hashes[i] =
 *            core::key_hash(keys[i], the table's seed): GASPP's first stage, every packet of a batch hashed to its
 *            flow in parallel. The per-packet policy (lookup, expiry, eviction, the TCP state)
 *            is sequential by definition (flow.hpp) and runs on the CPU table of cpu.flow
 *            (cpu_table.hpp) with the GPU's keys: the answers are cpu.flow's, bit for bit.
 * Algorithm  src/flow/core/flow_core.hpp (make_key, key_hash), shared with cpu.flow. Do not fork.
 * Launch     1-D grid-stride; kBlockSize threads per block; grid capped at 8 x SM count.
 * Memory     parse results copied to device global memory; keys, hashes and flags back.
 * Sync       the engine waits for its stream before the CPU stage.
 * Errors     none on device; CUDA API and launch errors become Status (WARPATH_CUDA_TRY).
 * Tested by  warpath selftest (src/flow/check.cpp: every engine against ref.flow).
 */
#include <algorithm>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"
#include "flow/cpu/cpu_table.hpp"
#include "flow/cuda/flow_launch.hpp"
#include "flow/engines.hpp"
#include "flow/table_tracker.hpp"
#include "packet/cuda/info_words.cuh"
#include "warpath/core/memory.hpp"

namespace warpath::flow::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    key_kernel(const packet::PacketInfo* __restrict__ infos, uint32_t n, core::FlowKey* keys,
               uint64_t* hashes, Track* keyed, uint8_t* from_b, bool any_checksum, uint64_t seed) {
  static_assert(sizeof(core::FlowKey) == 5 * sizeof(uint64_t));
  for (const uint32_t i : grid_stride(n)) {
    // The PacketInfo read as four 16-byte words and keyed in registers (`infos` aligned:
    // launch_flow_keys checks), the key stored as five 8-byte words (assigned as a struct it
    // was stored in 2-byte pieces).
    packet::detail::InfoWords in;
    packet::detail::load_info(infos, i, in);
    union {
      core::FlowKey key;
      uint64_t words[5];
    } k;
    uint8_t b     = 0;
    const Track t = core::make_key(in.info, k.key, b, any_checksum);
    uint64_t* out = reinterpret_cast<uint64_t*>(keys + i);
#pragma unroll
    for (int w = 0; w < 5; ++w) out[w] = k.words[w];
    keyed[i]  = t;
    from_b[i] = b;
    hashes[i] = t == Track::kTracked ? core::key_hash(k.key, seed) : 0;
  }
}


class CudaFlowTracker final : public FlowTracker {
 public:
  explicit CudaFlowTracker(const FlowConfig& config) : table_("cuda.flow", config) {}
  std::string_view id() const noexcept override { return "cuda.flow"; }
  const FlowConfig& config() const noexcept override { return table_.config(); }
  FlowCounters counters() const override { return table_.counters(); }
  Status advance(uint64_t now_ns, std::vector<FlowRecord>& ended) override {
    return table_.advance(now_ns, ended);
  }
  Status flush(std::vector<FlowRecord>& ended) override { return table_.flush(ended); }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    const uint32_t n = infos.size;
    if (n == 0) return Status::ok();
    keys_.resize(n);
    hashes_.resize(n);
    keyed_.resize(n);
    from_b_.resize(n);
    auto scratch = scratch_.acquire();
    DeviceArray &d_infos = scratch[0], &d_keys = scratch[1], &d_hashes = scratch[2],
                &d_keyed = scratch[3], &d_from = scratch[4];
    WARPATH_TRY(d_infos.reserve(n * sizeof(packet::PacketInfo)));
    WARPATH_TRY(d_keys.reserve(n * sizeof(core::FlowKey)));
    WARPATH_TRY(d_hashes.reserve(n * sizeof(uint64_t)));
    WARPATH_TRY(d_keyed.reserve(n * sizeof(Track)));
    WARPATH_TRY(d_from.reserve(n));
    cudaStream_t stream = nullptr;
    WARPATH_CUDA_TRY(cudaMemcpyAsync(d_infos.ptr, infos.data, n * sizeof(packet::PacketInfo),
                                     cudaMemcpyHostToDevice, stream));
    WARPATH_TRY(launch_flow_keys(static_cast<const packet::PacketInfo*>(d_infos.ptr), n,
                                 static_cast<core::FlowKey*>(d_keys.ptr),
                                 static_cast<uint64_t*>(d_hashes.ptr),
                                 static_cast<Track*>(d_keyed.ptr),
                                 static_cast<uint8_t*>(d_from.ptr),
                                 table_.config().ignore_ipv4_checksum, table_.hash_seed(),
                                 stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(keys_.data(), d_keys.ptr, n * sizeof(core::FlowKey),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(hashes_.data(), d_hashes.ptr, n * sizeof(uint64_t),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(keyed_.data(), d_keyed.ptr, n * sizeof(Track),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(
        cudaMemcpyAsync(from_b_.data(), d_from.ptr, n, cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return table_.track_keyed(infos, metas, out, ended, keys_.data(), hashes_.data(),
                              keyed_.data(), from_b_.data());
  }

 private:
  TableTracker<CpuTable> table_;
  ScratchPool<5> scratch_;
  // What comes back, in page-locked memory (warpath/core/memory.hpp).
  PinnedVector<core::FlowKey> keys_;
  PinnedVector<uint64_t> hashes_;
  PinnedVector<Track> keyed_;
  PinnedVector<uint8_t> from_b_;
};

}  // namespace

Status launch_flow_keys(const packet::PacketInfo* infos, uint32_t n, core::FlowKey* keys,
                        uint64_t* hashes, Track* keyed, uint8_t* from_b, bool any_checksum,
                        uint64_t seed, void* stream) {
  if (n == 0) return Status::ok();
  if (!packet::detail::info_words_aligned(infos))
    return Status(Errc::kInvalidArgument,
                  "launch_flow_keys: parse results must be 16-byte aligned");
  static const int sms = sm_count();
  const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, uint32_t(8 * sms));
  key_kernel<<<blocks, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(
      infos, n, keys, hashes, keyed, from_b, any_checksum, seed);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<FlowTracker>> make_cuda_tracker(const FlowConfig& config) {
  return std::unique_ptr<FlowTracker>(std::make_unique<CudaFlowTracker>(config));
}

}  // namespace warpath::flow::detail
