// include/warpath/stream/flowstream.hpp
//
// Flow tracking and TCP reassembly as one engine: what a FlowTracker (flow/flow.hpp) and a
// Reassembler (stream.hpp) do when chained, as `warpath reassemble`, the NIDS and the stream
// benchmark chain them, in one call per batch.
//
// What it does (the contract every engine meets exactly, packet for packet)
//   process(batch) is FlowTracker::track over the batch, then reassemble_batch (each tracked
//   TCP packet's segment, as flow out[i].serial, direction out[i].dir), then Reassembler::close
//   of each flow that ended in the batch, in the order of its record. So a flow that ends
//   inside a batch (timeout, eviction, port reuse) keeps its reassembly state, and counts
//   against max_flows and memcap, until the batch's end; the chunks come in that order too:
//   every segment's, packet by packet, then the ended flows' last bytes. advance() and flush()
//   are the tracker's, with the ended flows closed the same way.
//
// Engines ("<device>.<algorithm>", registry below)
//   ref.flowstream  ref.flow chained to ref.stream: the oracle
//   cpu.chained     cpu.flow chained to cpu.stream: what the commands run; "auto"
//   cpu.flowstream  one pass (docs/adr/0009, "One pass"): a packet is keyed and its flow found
//                   once; the flow's reassembly state is reached from the tracker's entry by its
//                   handle (no second lookup by serial), its segment is read from the packet and
//                   reassembled right after it was tracked (no gathered batch of segments), and
//                   the state goes with the flow when the table ends it. The same instructions
//                   a packet as cpu.chained so far, and 1-4% slower (docs/adr/0009, "One pass"):
//                   the base of the in-order branch and the leaner tracking still to come.
// validate:<id> runs ref.flowstream beside the engine and fails on the first difference in the
// answers, the flow records, the chunks or the counters.
//
// Thread safety: an engine is owned by one thread, as a tracker and a reassembler are.
#pragma once
#include <cstdint>
#include <memory>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::stream {

class FlowStream {
 public:
  virtual ~FlowStream() = default;
  virtual std::string_view id() const noexcept = 0;
  virtual const flow::FlowConfig& flow_config() const noexcept = 0;
  virtual const StreamConfig& stream_config() const noexcept = 0;
  virtual flow::FlowCounters flow_counters() const = 0;
  virtual StreamCounters stream_counters() const = 0;
  /// Flows with reassembly state now (Reassembler::flows).
  virtual size_t streams() const = 0;

  /// One batch (`infos` its parse, `out` one answer per packet, as FlowTracker::track): see
  /// above. A packet's segment is reassembled when it was tracked, is a TCP segment
  /// (segment_of, with the flow configuration's ignore_ipv4_checksum) and `mask` is null or
  /// mask[i] != 0. Ended flows' records are appended to `ended`. kInvalidArgument when `out`
  /// is not the batch's size; the first failure of a validate: engine.
  virtual Status process(const packet::BatchView& batch, const packet::PacketInfo* infos,
                         Span<flow::PacketFlow> out, std::vector<flow::FlowRecord>& ended,
                         const ChunkSink& sink, const uint8_t* mask = nullptr) = 0;
  /// FlowTracker::advance, and the ended flows closed.
  virtual Status advance(uint64_t now_ns, std::vector<flow::FlowRecord>& ended,
                         const ChunkSink& sink) = 0;
  /// FlowTracker::flush (every flow ended, in serial order), and the ended flows closed.
  virtual Status flush(std::vector<flow::FlowRecord>& ended, const ChunkSink& sink) = 0;
};

/// ref.flowstream, cpu.chained, cpu.flowstream.
std::vector<EngineInfo> flowstream_engines();
/// Resolves `id` (auto, cpu, ref, validate:<id>) and builds the engine for both configurations
/// (validated).
Result<std::unique_ptr<FlowStream>> make_flowstream(std::string_view id,
                                                    const flow::FlowConfig& flow_config = {},
                                                    const StreamConfig& stream_config = {});
/// Differential check against ref.flowstream on generated connections turned into frames,
/// hostile ones among them (the self-test's entry).
CheckReport check_flowstream_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::stream
