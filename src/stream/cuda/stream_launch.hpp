// src/stream/cuda/stream_launch.hpp: the raw cuda.stream chain launch on device-resident
// batches, for the GPU benchmark (kernel-only timing) and the engine. No CUDA header: the
// stream is a cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "stream/core/slot_chain.hpp"
#include "warpath/core/status.hpp"

namespace warpath::stream::detail {

/// For each chain j < n: results[j] = core::run_chain(lim, slots[chains[j].slot], chains[j],
/// segs, payload, chunks + chains[j].chunk_at, bytes + chains[j].byte_at), the chain's counters
/// added to `counters` (StreamCounters as 64-bit words), and what it wrote copied to the
/// compact `out_chunks` / `out_bytes` at offsets taken from totals[0] / totals[1] (zero them
/// first; results[j].chunk_first says where). Device pointers; asynchronous.
Status launch_stream_chains(const core::Limits& lim, core::SlotFlow* slots,
                            const core::SlotChain* chains, uint32_t n,
                            const core::SlotSegment* segs, const uint8_t* payload,
                            core::SlotChunk* chunks, uint8_t* bytes, core::ChainResult* results,
                            unsigned long long* counters, core::SlotChunk* out_chunks,
                            uint8_t* out_bytes, unsigned long long* totals, void* stream);

}  // namespace warpath::stream::detail
