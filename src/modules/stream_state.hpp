// src/modules/stream_state.hpp: the stream module's per-worker state. Its side queue is
// `chunks`: the in-order stream bytes (and gaps) the frame being finished delivered, which a
// later module of the chain (pattern matching, the NIDS) reads in post, as GASPP's
// processStream modules get stream chunks rather than packets.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "warpath/runtime/frame.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::runtime {

struct StreamWorkerState final : ModuleState {
  static constexpr std::string_view kQueue = "streams";  ///< the side queue (ModuleContract)
  explicit StreamWorkerState(size_t count) : ModuleState(count) {}
  std::unique_ptr<stream::Reassembler> reassembler;
  std::vector<uint64_t> closing;  ///< the frame's ended TCP flows (scratch)
  /// The engine's first failure (a validate: difference, a GPU error): finish returns it.
  Status failed = Status::ok();
  /// This frame's chunks: data points into `bytes` (valid until the next frame's post).
  std::vector<stream::Chunk> chunks;
  std::vector<uint8_t> bytes;
};

}  // namespace warpath::runtime
