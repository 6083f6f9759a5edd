// src/flow/cuda/flow_launch.hpp: the raw cuda.flow keying launch on device-resident parse
// results, for the GPU benchmark (kernel-only timing). No CUDA header: the stream is a
// cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "flow/core/flow_core.hpp"
#include "warpath/core/status.hpp"

namespace warpath::flow::detail {

/// For i in [0, n): keyed[i] = core::make_key(infos[i], keys[i], from_b[i], any_checksum) and
/// hashes[i] = core::key_hash(keys[i], seed) (0 when not keyed). Device pointers; asynchronous.
Status launch_flow_keys(const packet::PacketInfo* infos, uint32_t n, core::FlowKey* keys,
                        uint64_t* hashes, Track* keyed, uint8_t* from_b, bool any_checksum,
                        uint64_t seed, void* stream);

}  // namespace warpath::flow::detail
