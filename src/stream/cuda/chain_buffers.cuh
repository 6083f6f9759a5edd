// src/stream/cuda/chain_buffers.cuh: the device buffers of a cuda.stream batch and its launch,
// shared by the engine (GpuSlots, stream_kernel.cu) and warpath-gpu-bench's kernel-only rows.
#pragma once
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "stream/cuda/stream_launch.hpp"
#include "stream/slot_reassembler.hpp"

namespace warpath::stream::detail {

struct ChainBuffers {
  DeviceArray segs, payload, chains, chunks, bytes, results, counters;
  DeviceArray out_chunks, out_bytes, totals;  // the compact output

  /// Room for batch `b` (its chains' regions and the compact output), and its segments,
  /// payload and chains copied in, asynchronously on `stream`.
  Status upload(const SlotBatch& b, cudaStream_t stream) {
    const size_t n = b.chains.size();
    WARPATH_TRY(segs.reserve(b.segs.size() * sizeof(core::SlotSegment)));
    WARPATH_TRY(payload.reserve(b.payload.size() + 1));
    WARPATH_TRY(chains.reserve(n * sizeof(core::SlotChain)));
    WARPATH_TRY(chunks.reserve(b.chunk_total * sizeof(core::SlotChunk)));
    WARPATH_TRY(bytes.reserve(b.byte_total + 1));
    WARPATH_TRY(results.reserve(n * sizeof(core::ChainResult)));
    WARPATH_TRY(counters.reserve(sizeof(StreamCounters)));
    WARPATH_TRY(out_chunks.reserve(b.chunk_total * sizeof(core::SlotChunk)));
    WARPATH_TRY(out_bytes.reserve(b.byte_total + 1));
    WARPATH_TRY(totals.reserve(2 * sizeof(unsigned long long)));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(segs.ptr, b.segs.data(),
                                     b.segs.size() * sizeof(core::SlotSegment),
                                     cudaMemcpyHostToDevice, stream));
    if (!b.payload.empty())
      WARPATH_CUDA_TRY(cudaMemcpyAsync(payload.ptr, b.payload.data(), b.payload.size(),
                                       cudaMemcpyHostToDevice, stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(chains.ptr, b.chains.data(), n * sizeof(core::SlotChain),
                                     cudaMemcpyHostToDevice, stream));
    return Status::ok();
  }

  /// The n uploaded chains run in `slots`: the compact output restarted first. Their counters
  /// are added to `counters` (zero it before, for a batch's own).
  Status launch(const core::Limits& lim, core::SlotFlow* slots, uint32_t n, cudaStream_t stream) {
    WARPATH_CUDA_TRY(cudaMemsetAsync(totals.ptr, 0, 2 * sizeof(unsigned long long), stream));
    return launch_stream_chains(lim, slots, chains.as<core::SlotChain>(), n,
                                segs.as<core::SlotSegment>(), payload.as<uint8_t>(),
                                chunks.as<core::SlotChunk>(), bytes.as<uint8_t>(),
                                results.as<core::ChainResult>(), counters.as<unsigned long long>(),
                                out_chunks.as<core::SlotChunk>(), out_bytes.as<uint8_t>(),
                                totals.as<unsigned long long>(), stream);
  }
};

}  // namespace warpath::stream::detail
