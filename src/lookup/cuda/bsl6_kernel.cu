/*
 * src/lookup/cuda/bsl6_kernel.cu: IPv6 longest-prefix match on the GPU (cuda.lpm, IPv6 path).
 *
 * Computes   out[i] = core::bsl6_lookup(view, addrs[i]) for i in [0, n).
 * Algorithm  src/lookup/core/bsl6_core.hpp, shared with cpu/bsl6_cpu.cpp. Do not fork.
 * Launch     1-D grid-stride; kBlockSize threads per block; grid capped at 8 x SM count.
 *            One thread per address: thousands of lookups in flight hide the latency of the
 *            bucket loads, as PacketShader's IPv6 kernel does (section 6.2.2).
 * Memory     addrs/out: device global, coalesced. nodes/buckets: device global, read-only;
 *            a probe reads one 64-byte bucket (two 32-byte sectors).
 * Sync       none inside the kernel; ordering comes from the caller's stream.
 * Errors     none on device; a miss is kNoRoute. API and launch errors become Status.
 * Tested by  tests/lookup (the Fib engines against ref.lpm), warpath selftest on GPU machines.
 */
#include <algorithm>
#include <utility>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/grid_stride.cuh"
#include "lookup/core/bsl6_core.hpp"
#include "lookup/cuda/bsl6_cuda.hpp"

namespace warpath::lookup::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    bsl6_lookup_kernel(core::Bsl6View view, const Ip6* __restrict__ addrs,
                       NextHop* __restrict__ out, uint32_t n) {
  for (const uint32_t i : grid_stride(n)) out[i] = core::bsl6_lookup(view, addrs[i]);
}


}  // namespace

Result<std::unique_ptr<Bsl6Device>> Bsl6Device::upload(const Bsl6Image& image) {
  std::unique_ptr<Bsl6Device> dev(new Bsl6Device());
  const auto& starts  = image.starts();
  const auto& nodes   = image.nodes();
  const auto& buckets = image.buckets();
  const size_t sbytes = starts.size() * sizeof(core::Bsl6Start);
  const size_t nbytes = nodes.size() * sizeof(core::Bsl6Node);
  const size_t bbytes = buckets.size() * sizeof(core::Bsl6Bucket);
  // cudaMalloc returns 256-byte aligned memory, enough for the 64-byte buckets.
  WARPATH_CUDA_TRY(cudaMalloc(&dev->starts_, std::max<size_t>(sbytes, 1)));
  WARPATH_CUDA_TRY(cudaMalloc(&dev->nodes_, std::max<size_t>(nbytes, 1)));
  WARPATH_CUDA_TRY(cudaMalloc(&dev->buckets_, std::max<size_t>(bbytes, 1)));
  WARPATH_CUDA_TRY(cudaMemcpy(dev->starts_, starts.data(), sbytes, cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(dev->nodes_, nodes.data(), nbytes, cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(dev->buckets_, buckets.data(), bbytes, cudaMemcpyHostToDevice));
  dev->view_         = image.view();
  dev->view_.starts  = static_cast<const core::Bsl6Start*>(dev->starts_);
  dev->view_.nodes   = static_cast<const core::Bsl6Node*>(dev->nodes_);
  dev->view_.buckets = static_cast<const core::Bsl6Bucket*>(dev->buckets_);
  dev->bytes_        = sbytes + nbytes + bbytes;
  WARPATH_CUDA_UPLOADS_LANDED();  // before the caller publishes it
  return Result<std::unique_ptr<Bsl6Device>>(std::move(dev));
}

Bsl6Device::~Bsl6Device() {
  if (starts_) cudaFree(starts_);
  if (nodes_) cudaFree(nodes_);
  if (buckets_) cudaFree(buckets_);
}

Status launch_bsl6_lookup(const core::Bsl6View& dev, const Ip6* d_addrs, NextHop* d_out, uint32_t n,
                          void* stream) {
  if (n == 0) return Status::ok();
  static const int sms  = sm_count();
  const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, uint32_t(8 * sms));
  bsl6_lookup_kernel<<<blocks, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(dev, d_addrs,
                                                                                   d_out, n);
  WARPATH_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

}  // namespace warpath::lookup::detail
