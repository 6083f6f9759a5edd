// src/core/cuda/grid_stride.cuh: the items of a 1-D grid-stride loop, in 64-bit arithmetic.
//
//   for (const uint32_t i : grid_stride(n)) out[i] = f(in[i]);
//
// The usual `for (uint32_t i = blockIdx.x * blockDim.x + threadIdx.x; i < n; i += gridDim.x *
// blockDim.x)` wraps when n is within a stride of 2^32 (i += stride overflows back below n and
// the loop repeats items), and its products overflow on grids past 2^32 threads. Every kernel
// walks its items through this instead, launched with grid_blocks. Only .cu files include this
// header.
#pragma once
#include <cstdint>

namespace warpath {

class GridStride {
 public:
  struct End {};
  class It {
   public:
    __device__ It(uint64_t i, uint64_t step, uint64_t n) : i_(i), step_(step), n_(n) {}
    __device__ uint32_t operator*() const { return uint32_t(i_); }
    __device__ It& operator++() {
      i_ += step_;
      return *this;
    }
    __device__ bool operator!=(End) const { return i_ < n_; }

   private:
    uint64_t i_, step_, n_;
  };
  __device__ explicit GridStride(uint64_t n) : n_(n) {}
  __device__ It begin() const {
    return It(uint64_t(blockIdx.x) * blockDim.x + threadIdx.x, uint64_t(gridDim.x) * blockDim.x,
              n_);
  }
  __device__ End end() const { return {}; }

 private:
  uint64_t n_;
};

/// This thread's items of [0, n) (n < 2^32: the item is a uint32_t).
__device__ inline GridStride grid_stride(uint64_t n) { return GridStride(n); }

/// The current device's streaming multiprocessors (1 when it cannot be asked): the one place
/// every engine sizes its grids from.
inline int sm_count() {
  int device = 0, sms = 1;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

/// Blocks of `block` threads for a grid-stride loop over n items: one item per thread, at most
/// eight blocks per SM (the loop takes the rest), at least one.
inline int grid_blocks(uint32_t n, int block) {
  const int sms  = sm_count();
  const int need = int(n / uint32_t(block) + 1);
  return need < sms * 8 ? need : sms * 8;
}

}  // namespace warpath
