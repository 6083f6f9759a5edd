/*
 * src/lookup/cuda/dir24_8_kernel.cu: batched IPv4 longest-prefix match on the GPU.
 *
 * Computes   out[i] = core::dir24_8_lookup(view, addrs[i]) for i in [0, n).
 * Algorithm  src/lookup/core/dir24_8_core.hpp, shared with cpu/dir24_8_cpu.hpp. Do not fork.
 * Launch     1-D grid-stride, kBlockSize threads per block, grid capped at 8 x SM count.
 * Memory     addrs/out: device global, coalesced. tbl24/tbl8/nh: device global, read-only in
 *            the kernel (updates are copied between kernels, dir24_8_cuda.hpp).
 * Tested by  tests/lookup/fib_engines_test.cpp (cuda.lpm vs ref.lpm) and warpath selftest.
 */
#include <algorithm>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/grid_stride.cuh"
#include "lookup/cuda/dir24_8_cuda.hpp"

namespace warpath::lookup::detail {
namespace {

constexpr int kBlockSize = 256;

template <class E>
__global__ void __launch_bounds__(kBlockSize)
    dir24_8_kernel(core::Dir24_8View<E> view, const uint32_t* __restrict__ addrs,
                   NextHop* __restrict__ out, uint32_t n) {
  for (const uint32_t i : grid_stride(n)) out[i] = core::dir24_8_lookup(view, addrs[i]);
}


}  // namespace

Result<std::unique_ptr<Dir24_8Device>> Dir24_8Device::upload(const Dir24_8Image& img) {
  std::unique_ptr<Dir24_8Device> d(new Dir24_8Device());
  d->bits_            = img.entry_bits();
  const size_t entry  = img.entry_bits() / 8;
  d->bytes24_         = (size_t(1) << 24) * entry;
  d->bytes8_          = std::max<size_t>(size_t(img.group_capacity()) * 256 * entry, entry);
  d->bytes_nh_        = img.entry_bits() == 16 ? core::Dir24_8Traits<uint16_t>::kNhSlots * 4 : 0;
  WARPATH_CUDA_TRY(cudaMalloc(&d->tbl24_, d->bytes24_));
  WARPATH_CUDA_TRY(cudaMalloc(&d->tbl8_, d->bytes8_));
  const void* h24 = img.entry_bits() == 16 ? static_cast<const void*>(img.view16().tbl24)
                                           : static_cast<const void*>(img.view32().tbl24);
  const void* h8  = img.entry_bits() == 16 ? static_cast<const void*>(img.view16().tbl8)
                                           : static_cast<const void*>(img.view32().tbl8);
  WARPATH_CUDA_TRY(cudaMemcpy(d->tbl24_, h24, d->bytes24_, cudaMemcpyHostToDevice));
  WARPATH_CUDA_TRY(cudaMemcpy(d->tbl8_, h8, size_t(img.group_capacity()) * 256 * entry,
                              cudaMemcpyHostToDevice));
  if (d->bytes_nh_) {
    WARPATH_CUDA_TRY(cudaMalloc(&d->nh_, d->bytes_nh_));
    WARPATH_CUDA_TRY(cudaMemcpy(d->nh_, img.view16().nh, d->bytes_nh_, cudaMemcpyHostToDevice));
  }
  WARPATH_CUDA_UPLOADS_LANDED();  // before the caller publishes it
  return Result<std::unique_ptr<Dir24_8Device>>(std::move(d));
}

Dir24_8Device::~Dir24_8Device() {
  cudaFree(tbl24_);
  cudaFree(tbl8_);
  cudaFree(nh_);
}

Status Dir24_8Device::apply(const Dir24_8Image& img, const std::vector<DirtyRange>& dirty) {
  const size_t entry = bits_ / 8;
  for (const DirtyRange& r : dirty) {
    const size_t off = size_t(r.begin), count = size_t(r.end - r.begin);
    if (r.table == 2) {
      WARPATH_CUDA_TRY(cudaMemcpy(static_cast<NextHop*>(nh_) + off, img.view16().nh + off,
                                  count * sizeof(NextHop), cudaMemcpyHostToDevice));
      continue;
    }
    const void* host = nullptr;
    if (bits_ == 16) {
      host = (r.table == 0 ? img.view16().tbl24 : img.view16().tbl8) + off;
    } else {
      host = (r.table == 0 ? img.view32().tbl24 : img.view32().tbl8) + off;
    }
    char* dev = static_cast<char*>(r.table == 0 ? tbl24_ : tbl8_) + off * entry;
    WARPATH_CUDA_TRY(cudaMemcpy(dev, host, count * entry, cudaMemcpyHostToDevice));
  }
  WARPATH_CUDA_UPLOADS_LANDED();  // the update is whole on the device when apply returns
  return Status::ok();
}

core::Dir24_8View<uint16_t> Dir24_8Device::view16() const {
  return {static_cast<const uint16_t*>(tbl24_), static_cast<const uint16_t*>(tbl8_),
          static_cast<const NextHop*>(nh_)};
}
core::Dir24_8View<uint32_t> Dir24_8Device::view32() const {
  return {static_cast<const uint32_t*>(tbl24_), static_cast<const uint32_t*>(tbl8_), nullptr};
}

Status launch_dir24_8_lookup(const Dir24_8Device& dev, const uint32_t* d_addrs, NextHop* d_out,
                             uint32_t n, void* stream) {
  if (n == 0) return Status::ok();
  static const int sms  = sm_count();
  const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, uint32_t(8 * sms));
  auto s                = static_cast<cudaStream_t>(stream);
  if (dev.entry_bits() == 16) {
    dir24_8_kernel<<<blocks, kBlockSize, 0, s>>>(dev.view16(), d_addrs, d_out, n);
  } else {
    dir24_8_kernel<<<blocks, kBlockSize, 0, s>>>(dev.view32(), d_addrs, d_out, n);
  }
  WARPATH_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

}  // namespace warpath::lookup::detail
