/*
 * src/runtime/cuda/schedule_kernel.cu: packet scheduling on the GPU (GASPP section 5.3) for the
 * offload master's resident launches (master.hpp).
 *
 * Computes   order = the rows 0..n-1 stably sorted by their 16-bit keys (the low `bits` bits:
 *            core::length_key of each packet job row), then rows gathered into that order
 *            before the module's job and its answers scattered back after, so threads of a
 *            warp take packets of similar length (similar loop trip counts in the crypto).
 * Algorithm  CUB's DeviceRadixSort::SortPairs (CCCL, shipped with the CUDA toolkit) over
 *            (key, row index); the CPU counterpart is the counting sort of chain.cpp.
 * Launch     the sort as CUB sizes it; gather and scatter one thread per row and 4-byte word,
 *            grid-stride, kBlockSize threads per block.
 * Memory     keys, order and rows are device memory (the master's slab); the sort's scratch
 *            (sorted keys, identity values, CUB's temporary storage) is the calling thread's,
 *            grown to the largest launch it served (each master lane is one thread).
 * Sync       asynchronous on `stream`; the master waits once after its download.
 * Tested by  tests/runtime/master_test.cpp (the same contract on host memory) and, on a GPU,
 *            the self-test's cuda.chain check through the master.
 */
#include <cub/device/device_radix_sort.cuh>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "runtime/schedule_device.hpp"

namespace warpath::runtime::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void iota_kernel(uint32_t* out, uint32_t n) {
  for (const uint32_t i : grid_stride(n)) out[i] = i;
}

// dst row r = src row order[r] (gather) or dst row order[r] = src row r (scatter), a byte at a
// time: rows are a few dozen bytes (an ESP op is 24), so bytes keep every row size correct.
template <bool kGather>
__global__ void move_rows_kernel(const uint8_t* __restrict__ src, uint8_t* __restrict__ dst,
                                 const uint32_t* __restrict__ order, uint32_t n,
                                 uint32_t row_bytes) {
  const uint64_t total = uint64_t(n) * row_bytes;
  for (uint64_t t = uint64_t(blockIdx.x) * kBlockSize + threadIdx.x; t < total;
       t += uint64_t(gridDim.x) * kBlockSize) {
    const uint32_t r = uint32_t(t / row_bytes), b = uint32_t(t % row_bytes);
    const uint32_t o = order[r];
    if (kGather)
      dst[size_t(r) * row_bytes + b] = src[size_t(o) * row_bytes + b];
    else
      dst[size_t(o) * row_bytes + b] = src[size_t(r) * row_bytes + b];
  }
}

unsigned grid_for(uint64_t items) {
  const uint64_t blocks = (items + kBlockSize - 1) / kBlockSize;
  return unsigned(blocks < 4096 ? (blocks ? blocks : 1) : 4096);
}

// The calling thread's sort scratch.
struct SortScratch {
  DeviceArray keys_out, values_in, temp;
};
thread_local SortScratch t_scratch;

bool failed(cudaError_t e, const char** why) {
  if (e == cudaSuccess) return false;
  cudaGetLastError();
  if (why) *why = cudaGetErrorString(e);
  return true;
}

}  // namespace

bool device_sort_order(const uint16_t* keys, uint32_t* order, uint32_t n, unsigned bits,
                       void* stream, const char** why) noexcept {
  if (n == 0) return true;
  auto s          = static_cast<cudaStream_t>(stream);
  SortScratch& sc = t_scratch;
  size_t temp     = 0;
  if (failed(cub::DeviceRadixSort::SortPairs(nullptr, temp, keys, static_cast<uint16_t*>(nullptr),
                                             static_cast<const uint32_t*>(nullptr), order, int(n),
                                             0, int(bits), s),
             why))
    return false;
  if (!sc.keys_out.reserve(size_t(n) * sizeof(uint16_t)).is_ok() ||
      !sc.values_in.reserve(size_t(n) * sizeof(uint32_t)).is_ok() ||
      !sc.temp.reserve(temp).is_ok()) {
    if (why) *why = "out of device memory for the schedule sort";
    return false;
  }
  iota_kernel<<<grid_for(n), kBlockSize, 0, s>>>(sc.values_in.as<uint32_t>(), n);
  if (failed(cudaGetLastError(), why)) return false;
  return !failed(
      cub::DeviceRadixSort::SortPairs(sc.temp.ptr, temp, keys, sc.keys_out.as<uint16_t>(),
                                      sc.values_in.as<uint32_t>(), order, int(n), 0, int(bits), s),
      why);
}

bool device_gather_rows(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                        uint32_t row_bytes, void* stream, const char** why) noexcept {
  if (n == 0 || row_bytes == 0) return true;
  move_rows_kernel<true>
      <<<grid_for(uint64_t(n) * row_bytes), kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(
          src, dst, order, n, row_bytes);
  return !failed(cudaGetLastError(), why);
}

bool device_scatter_rows(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                         uint32_t row_bytes, void* stream, const char** why) noexcept {
  if (n == 0 || row_bytes == 0) return true;
  move_rows_kernel<false>
      <<<grid_for(uint64_t(n) * row_bytes), kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(
          src, dst, order, n, row_bytes);
  return !failed(cudaGetLastError(), why);
}

}  // namespace warpath::runtime::detail
