// src/pattern/cuda/dfa_launch.hpp: the raw cuda.dfa launch on device-resident data, for the
// engine and the GPU benchmark (kernel-only timing). No CUDA header: the stream is a
// cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "pattern/core/dfa_core.hpp"
#include "pattern/cuda/ac_launch.hpp"
#include "warpath/core/status.hpp"

namespace warpath::pattern::detail {

/// For every block b in [0, blocks) (bytes data[starts[b], starts[b + 1])) and group g in
/// [0, groups): core::dfa_scan with views[g] (device pointers, as is `views`), matches appended
/// to out[0, capacity) through *count (64-bit: it cannot wrap; above capacity, some were not
/// stored). Asynchronous on `stream`.
Status launch_dfa_scan(const core::DfaView* views, uint32_t groups, const uint8_t* data,
                       const uint64_t* starts, uint32_t blocks, DeviceMatch* out,
                       uint32_t capacity, unsigned long long* count, void* stream);

}  // namespace warpath::pattern::detail
