// src/pattern/cuda/ac_launch.hpp: the raw cuda.ac launch on device-resident data, for the
// engine and the GPU benchmark (kernel-only timing). No CUDA header: the stream is a
// cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "pattern/core/ac_core.hpp"
#include "warpath/core/status.hpp"

namespace warpath::pattern::detail {

/// Bytes of a block one thread reports matches for.
inline constexpr uint32_t kAcSlice = 256;

/// One thread's work: block `block` starts at block_start in the batch's bytes; the thread
/// reports matches ending in (begin, end] (offsets in the batch's bytes).
struct AcSlice {
  uint32_t block;
  uint64_t block_start, begin, end;
};

struct DeviceMatch {
  uint32_t block, id, end;  ///< end: offset in the block
};

/// Scans every slice with core::ac_scan on `device_view` (device pointers), appending matches
/// to out[0, capacity) through *count (64-bit: it cannot wrap; above capacity, some were not
/// stored). Asynchronous on `stream`.
Status launch_ac_scan(const core::AcView& device_view, const uint8_t* data, const AcSlice* slices,
                      uint32_t n, DeviceMatch* out, uint32_t capacity, unsigned long long* count, void* stream);

}  // namespace warpath::pattern::detail
