// src/packet/cuda/parse_launch.hpp: the raw cuda.parse kernel launch on device-resident data,
// for the GPU benchmarks (kernel-only timing) and, later, the pipeline's GPU pre-shade stage.
// No CUDA header: the stream is a cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet::detail {

/// out[i] = parse of packet i, all pointers in device memory, `out` 16-byte aligned (as
/// cudaMalloc's are; kInvalidArgument otherwise), packet i at buffer + metas[i].offset - first
/// (`buffer` holds the range from the batch's lowest offset). Asynchronous on `stream`.
Status launch_parse(const uint8_t* buffer, const PacketMeta* metas, PacketInfo* out, uint32_t n,
                    void* stream, uint32_t first = 0);

}  // namespace warpath::packet::detail
