// src/stream/flowstream_engines.hpp: factories of the flow-and-stream engines
// (include/warpath/stream/flowstream.hpp), used only by flowstream_registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <string_view>

#include "warpath/core/status.hpp"
#include "warpath/stream/flowstream.hpp"

namespace warpath::stream::detail {

/// `flow_engine` chained to `stream_engine`, named `id` (ref.flowstream, cpu.chained).
Result<std::unique_ptr<FlowStream>> make_chained_flowstream(std::string id,
                                                            std::string_view flow_engine,
                                                            std::string_view stream_engine,
                                                            const flow::FlowConfig& fc,
                                                            const StreamConfig& sc);
/// cpu.flowstream.
std::unique_ptr<FlowStream> make_cpu_flowstream(const flow::FlowConfig& fc, const StreamConfig& sc);
/// kInvalidArgument unless `out` has one answer per packet of `batch`.
inline Status check_sizes(const packet::BatchView& batch, Span<flow::PacketFlow> out) {
  if (out.size == batch.count) return Status::ok();
  return Status(Errc::kInvalidArgument, "flowstream: " + std::to_string(out.size) +
                                            " answers for a batch of " +
                                            std::to_string(batch.count) + " packets");
}

}  // namespace warpath::stream::detail
