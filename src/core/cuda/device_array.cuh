// src/core/cuda/device_array.cuh: device memory that grows to the largest batch seen (the
// per-call key/result buffers of CUDA engines). Only .cu files include this header.
#pragma once
#include <cuda_runtime.h>

#include <cstddef>

#include "core/cuda/cuda_check.cuh"

namespace warpath {

struct DeviceArray {
  void* ptr                                  = nullptr;
  size_t bytes                               = 0;
  DeviceArray()                              = default;
  DeviceArray(const DeviceArray&)            = delete;
  DeviceArray& operator=(const DeviceArray&) = delete;
  /// The first reservation is exact; a growth takes at least twice the old size, so a buffer
  /// that follows growing batches reallocates a logarithmic number of times: cudaFree waits
  /// for every kernel on the device (the other master lane's included).
  Status reserve(size_t need) {
    if (need <= bytes) return Status::ok();
    const size_t want = bytes && need < 2 * bytes ? 2 * bytes : need;
    if (ptr) cudaFree(ptr);
    ptr   = nullptr;
    bytes = 0;
    WARPATH_CUDA_TRY(cudaMalloc(&ptr, want));
    bytes = want;
    return Status::ok();
  }
  template <class T>
  T* as() const {
    return static_cast<T*>(ptr);
  }
  ~DeviceArray() {
    if (ptr) cudaFree(ptr);
  }
};

}  // namespace warpath
