// src/modules/flow_state.hpp: the flow module's per-worker state, which later modules
// of the chain read (a side queue between modules of one worker): the answers of the frame
// being finished, per packet, and the flows that ended while tracking it.
#pragma once
#include <memory>
#include <string_view>
#include <vector>

#include "warpath/flow/flow.hpp"
#include "warpath/runtime/frame.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {

/// The flows per worker of a flow module's table (its `capacity`); 0 for another module.
uint32_t flow_module_capacity(const Module& m);

struct FlowWorkerState final : ModuleState {
  static constexpr std::string_view kQueue = "flows";  ///< the side queue (ModuleContract)
  explicit FlowWorkerState(size_t count) : ModuleState(count) {}
  std::unique_ptr<flow::FlowTracker> tracker;
  /// By packet index of the current frame: its flow (serial 0 when the flow module did not
  /// track it in this frame).
  std::vector<flow::PacketFlow> by_packet;
  /// Flows that ended while the current frame was tracked (and at the end, while flushing),
  /// after those that ended while the worker was idle.
  std::vector<flow::FlowRecord> ended;
  /// Flows that ended while the worker was idle (Module::idle), handed on with the next frame.
  std::vector<flow::FlowRecord> idle_ended;
  uint64_t clock = 0;  ///< the tracker's clock: the largest packet timestamp, moved on when idle
  uint64_t mono  = 0;  ///< monotonic time of the last packet (or idle call)
  // Scratch of post().
  std::vector<packet::PacketInfo> infos;
  std::vector<packet::PacketMeta> metas;
  std::vector<flow::PacketFlow> answers;
  std::vector<uint32_t> index;
};

}  // namespace warpath::runtime
