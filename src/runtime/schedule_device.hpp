// src/runtime/schedule_device.hpp: packet scheduling on the GPU for the offload master's
// resident launches (runtime/cuda/schedule_kernel.cu; GASPP section 5.3). No CUDA header: the
// stream is a cudaStream_t passed as void*. Built only with CUDA (WARPATH_HAVE_CUDA).
#pragma once
#include <cstdint>

namespace warpath::runtime::detail {

/// order[0, n) = the rows 0..n-1 stably sorted by keys[row] (their low `bits` bits), with
/// CUB's radix sort; keys and order are device memory. Asynchronous on `stream`; false, with
/// the reason in `why`, when CUDA refuses.
bool device_sort_order(const uint16_t* keys, uint32_t* order, uint32_t n, unsigned bits,
                       void* stream, const char** why) noexcept;
/// dst row r = src row order[r] (rows of `row_bytes`, device memory).
bool device_gather_rows(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                        uint32_t row_bytes, void* stream, const char** why) noexcept;
/// dst row order[r] = src row r.
bool device_scatter_rows(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                         uint32_t row_bytes, void* stream, const char** why) noexcept;

}  // namespace warpath::runtime::detail
