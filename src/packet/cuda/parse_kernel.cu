/*
 * src/packet/cuda/parse_kernel.cu: cuda.parse, batched packet parsing on the GPU.
 *
 * Computes   out[i] = core::parse_packet(buffer + metas[i].offset - first, caplen, len), i in
 *            [0, n), `first` the lowest offset of the batch (only the range the packets span
 *            crosses: an arena batch's offsets count from the packet arena's base).
 * Algorithm  src/packet/core/parse_core.hpp, shared with cpu/parse_cpu.cpp. Do not fork.
 * Launch     1-D grid-stride; kBlockSize threads per block; grid capped at 8 x SM count.
 * Memory     the batch buffer and metas are copied to device global memory; results back.
 * Sync       the engine waits for its stream before returning.
 * Errors     none on device; CUDA API and launch errors become Status (WARPATH_CUDA_TRY).
 * Tested by  warpath selftest (src/selftest/parser_check.cpp: every engine against ref.parse).
 */
#include <algorithm>
#include <mutex>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"
#include "packet/core/parse_core.hpp"
#include "packet/cuda/info_words.cuh"
#include "packet/cuda/parse_launch.hpp"
#include "packet/engines.hpp"

namespace warpath::packet::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    parse_kernel(const uint8_t* __restrict__ buffer, const PacketMeta* __restrict__ metas,
                 PacketInfo* __restrict__ out, uint32_t n, uint32_t first) {
  for (const uint32_t i : grid_stride(n)) {
    const PacketMeta m = metas[i];
    // Built in registers, stored as four 16-byte words (`out` aligned: launch_parse checks).
    store_info(out, i, core::parse_packet(buffer + (m.offset - first), m.caplen, m.len));
  }
}


class CudaParser final : public Parser {
 public:
  std::string_view id() const noexcept override { return "cuda.parse"; }

  Status do_parse(const BatchView& batch, Span<PacketInfo> out, ExecContext& ctx) const override {
    if (batch.count == 0) return Status::ok();
    size_t end     = 0;
    uint32_t first = UINT32_MAX;
    for (uint32_t i = 0; i < batch.count; ++i) {
      end   = std::max(end, size_t(batch.metas[i].offset) + batch.metas[i].caplen);
      first = std::min(first, batch.metas[i].offset);
    }
    const size_t used = end - first;
    auto stream          = static_cast<cudaStream_t>(ctx.stream);
    auto scratch         = scratch_.acquire();  // this call's device buffers (scratch_pool.cuh)
    DeviceArray &buffer_ = scratch[0], &metas_ = scratch[1], &infos_ = scratch[2];
    WARPATH_TRY(buffer_.reserve(std::max<size_t>(used, 1)));
    WARPATH_TRY(metas_.reserve(batch.count * sizeof(PacketMeta)));
    WARPATH_TRY(infos_.reserve(batch.count * sizeof(PacketInfo)));
    WARPATH_CUDA_TRY(
        cudaMemcpyAsync(buffer_.ptr, batch.buffer + first, used, cudaMemcpyHostToDevice, stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(metas_.ptr, batch.metas, batch.count * sizeof(PacketMeta),
                                     cudaMemcpyHostToDevice, stream));
    WARPATH_TRY(launch_parse(static_cast<const uint8_t*>(buffer_.ptr),
                             static_cast<const PacketMeta*>(metas_.ptr),
                             static_cast<PacketInfo*>(infos_.ptr), batch.count, stream, first));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(out.data, infos_.ptr, batch.count * sizeof(PacketInfo),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

 private:
  ScratchPool<3> scratch_;
};

}  // namespace

Status launch_parse(const uint8_t* buffer, const PacketMeta* metas, PacketInfo* out, uint32_t n,
                    void* stream, uint32_t first) {
  if (n == 0) return Status::ok();
  if (!info_words_aligned(out))
    return Status(Errc::kInvalidArgument, "launch_parse: results must be 16-byte aligned");
  static const int sms  = sm_count();
  const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, uint32_t(8 * sms));
  parse_kernel<<<blocks, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(buffer, metas, out, n, first);
  WARPATH_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

Result<std::unique_ptr<Parser>> make_cuda_parser() {
  int device = 0;
  WARPATH_CUDA_TRY(cudaGetDevice(&device));
  return std::unique_ptr<Parser>(std::make_unique<CudaParser>());
}

}  // namespace warpath::packet::detail
