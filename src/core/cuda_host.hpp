// src/core/cuda_host.hpp: internal hooks into the CUDA runtime, implemented by
// core/cuda/cuda_device.cu in CUDA builds and core/nocuda/cuda_stubs.cpp otherwise.
#pragma once
#include <cstddef>

namespace warpath::detail {

/// Page-locked host memory, or nullptr when there is no CUDA device.
void* cuda_host_alloc(size_t bytes) noexcept;
void cuda_host_free(void* ptr) noexcept;
/// Page-locks `bytes` of existing host memory at `ptr` (cudaHostRegister); false when there is
/// no CUDA device or it refuses. Undone by cuda_host_unregister.
bool cuda_host_register(void* ptr, size_t bytes) noexcept;
void cuda_host_unregister(void* ptr) noexcept;

/// A new non-blocking CUDA stream (cudaStream_t as void*), or nullptr (the default stream)
/// when there is no device.
void* cuda_stream_create() noexcept;
void cuda_stream_destroy(void* stream) noexcept;

/// Device memory, or nullptr when there is no device (or it is full).
void* cuda_device_alloc(size_t bytes) noexcept;
void cuda_device_free(void* ptr) noexcept;
/// An asynchronous copy on `stream` between host and device (`to_device`: host -> device);
/// false, with the reason in `why` when given, when CUDA refuses it.
bool cuda_copy_async(void* dst, const void* src, size_t bytes, bool to_device, void* stream,
                     const char** why = nullptr) noexcept;
/// Waits for everything queued on `stream`; false (with the reason) when a queued call failed.
bool cuda_stream_sync(void* stream, const char** why = nullptr) noexcept;
/// Whether everything queued on `stream` has finished, without waiting (cudaStreamQuery): 1
/// yes, 0 not yet, -1 a queued call failed (the reason in `why`).
int cuda_stream_query(void* stream, const char** why = nullptr) noexcept;

}  // namespace warpath::detail
