// src/core/cuda_host.hpp: internal hooks into the CUDA runtime, implemented by
// core/cuda/cuda_device.cu in CUDA builds and core/nocuda/cuda_stubs.cpp otherwise.
#pragma once
#include <cstddef>

namespace warpath::detail {

/// Page-locked host memory, or nullptr when there is no CUDA device.
void* cuda_host_alloc(size_t bytes) noexcept;
void cuda_host_free(void* ptr) noexcept;

/// A new non-blocking CUDA stream (cudaStream_t as void*), or nullptr (the default stream)
/// when there is no device.
void* cuda_stream_create() noexcept;
void cuda_stream_destroy(void* stream) noexcept;

}  // namespace warpath::detail
