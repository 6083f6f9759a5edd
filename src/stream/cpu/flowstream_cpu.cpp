// cpu.flowstream: flow tracking and reassembly in one pass (include/warpath/stream/flowstream.hpp;
// docs/adr/0009, "One pass").
//
//   - The table is cpu.flow's (flow/cpu/cpu_table.hpp) and its batch loop (flow/track_loop.hpp):
//     keys a chunk at a time, buckets and entries prefetched, the per-packet policy in order.
//   - Right after a packet was tracked, while its parse and frame are in the cache, its segment
//     is read from the frame (segment_from) and run through the reassembly rules
//     (stream/core/stream_rules.hpp, cpu.stream's RangeStore and EndQueue): no batch of
//     segments gathered and read back.
//   - The flow's reassembly state is found by the tracker's handle: state_of_[handle] names a
//     full state in a pool (stores and held ends, recycled with their room) or, for a finished
//     connection, its scalars alone (as cpu.stream keeps them); no lookup by serial.
//   - The table's end hook takes a flow's state from its handle when the flow ends (timeout,
//     eviction, reuse, flush) and queues it; the queue is closed at the end of the batch, in the
//     order the flows ended, as the chained pair closes them (flowstream.hpp's contract).
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "core/huge_pages.hpp"
#include "core/ranges/range_store.hpp"
#include "flow/cpu/cpu_table.hpp"
#include "flow/track_loop.hpp"
#include "stream/flowstream_engines.hpp"
#include "stream/segment_from.hpp"
#include "stream/store_reassembler.hpp"

namespace warpath::stream::detail {
namespace {

using flow::detail::BasicCpuTable;
using Flow = HostFlow<ranges::RangeStore>;

class FusedFlowStream;

/// The table's end hook: the ending flow's reassembly state leaves its handle.
struct DetachState {
  FusedFlowStream* engine;
  void operator()(uint32_t handle) const;
};

class FusedFlowStream final : public FlowStream, private HostStream {
 public:
  FusedFlowStream(const flow::FlowConfig& fc, const StreamConfig& sc)
      : HostStream(sc), flow_config_(fc), table_(flow_config_, DetachState{this}),
        state_of_(size_t(fc.capacity) + 1, kNone) {
    // Finished connections' scalars, made now (StreamConfig::prealloc_flows): until that many
    // are kept at once, a connection that finishes touches no fresh memory.
    metas_.resize(sc.prealloc_flows);
    free_metas_.reserve(sc.prealloc_flows);
    for (uint32_t i = sc.prealloc_flows; i > 0; --i) free_metas_.push_back(i - 1);
  }

  std::string_view id() const noexcept override { return "cpu.flowstream"; }
  const flow::FlowConfig& flow_config() const noexcept override { return flow_config_; }
  const StreamConfig& stream_config() const noexcept override { return config_; }
  flow::FlowCounters flow_counters() const override { return st_.counters; }
  StreamCounters stream_counters() const override { return HostStream::stream_counters(); }
  size_t streams() const override { return full_ + finished_; }

  Status process(const packet::BatchView& batch, const packet::PacketInfo* infos,
                 Span<flow::PacketFlow> out, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink, const uint8_t* mask) override {
    WARPATH_TRY(check_sizes(batch, out));
    HostRules ctx    = rules(sink);
    const bool any   = flow_config_.ignore_ipv4_checksum;
    const uint32_t n = out.size;
    flow::detail::track_pipelined(
        table_, st_, flow_config_, {infos, n}, {batch.metas, n}, ended,
        [&](uint32_t base, uint32_t k) { return keyer_(infos, base, k, table_.seed(), any); },
        [&](uint32_t i, const flow::PacketFlow& answer) {
          out[i] = answer;
          if (!answer.serial || (mask && !mask[i])) return;
          Segment s;
          if (!segment_from(infos[i], batch.data(i), batch.metas[i].caplen, s, any)) return;
          s.flow = answer.serial;
          s.dir  = answer.dir;
          segment(ctx, answer.handle, s);
        });
    close_ended(ctx);
    return Status::ok();
  }

  Status advance(uint64_t now_ns, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink) override {
    flow::detail::advance_table(table_, st_, flow_config_, now_ns, ended);
    HostRules ctx = rules(sink);
    close_ended(ctx);
    return Status::ok();
  }

  Status flush(std::vector<flow::FlowRecord>& ended, const ChunkSink& sink) override {
    flow::detail::flush_table(table_, st_, flow_config_, ended);
    HostRules ctx = rules(sink);
    close_ended(ctx);
    return Status::ok();
  }

  /// DetachState: the flow at `handle` ends; its state waits for the batch's end.
  void detach(uint32_t handle) {
    uint32_t& slot = state_of_[handle];
    if (slot == kNone) return;
    ending_.push_back({table_.at(handle).serial, slot});
    slot = kNone;
  }

 private:
  /// state_of_'s entries: none, a finished flow's scalars (kMeta | index into metas_) or a full
  /// state (index into pool_).
  static constexpr uint32_t kNone = ~0u;
  static constexpr uint32_t kMeta = 1u << 31;

  struct Ending {
    uint64_t serial;
    uint32_t slot;
  };

  /// One segment of the flow at `handle` (cpu.stream's StoreReassembler::one, found by handle).
  __attribute__((always_inline)) void segment(HostRules& ctx, uint32_t handle, const Segment& s) {
    count(s);
    uint32_t& slot = state_of_[handle];
    if (slot == kNone) {
      if (!may_open(s, streams())) return;
      slot = take_flow();
    } else if (slot & kMeta) [[unlikely]] {
      late(ctx, slot, s);
      return;
    }
    Flow& f = pool_[slot];
    core::flow_segment(ctx, f, s);
    if (finished(f)) [[unlikely]] {
      const uint32_t meta = take_meta(f.m);
      release_flow(slot);
      slot = kMeta | meta;
    }
  }

  /// A segment of a finished connection: the rules on its scalars with empty stores (spare_);
  /// should they ever store something, the flow becomes a full state again (cpu.stream's late).
  void late(HostRules& ctx, uint32_t& slot, const Segment& s) {
    const uint32_t meta = slot & ~kMeta;
    spare_.m            = metas_[meta];
    core::flow_segment(ctx, spare_, s);
    if (finished(spare_)) {
      metas_[meta] = spare_.m;
      return;
    }
    const uint32_t full = take_flow();
    std::swap(pool_[full], spare_);  // spare_ gets the pool's recycled, empty state
    release_meta(meta);
    slot = full;
  }

  /// The flows that ended since the last call, closed in the order they ended.
  void close_ended(HostRules& ctx) {
    for (const Ending& e : ending_) {
      if (e.slot & kMeta) {  // nothing buffered: closing delivers nothing
        release_meta(e.slot & ~kMeta);
        continue;
      }
      core::close_flow(ctx, e.serial, pool_[e.slot]);
      release_flow(e.slot);
    }
    ending_.clear();
  }

  uint32_t take_flow() {
    full_ += 1;
    if (!free_flows_.empty()) {
      const uint32_t i = free_flows_.back();
      free_flows_.pop_back();
      return i;
    }
    pool_.emplace_back();
    return uint32_t(pool_.size() - 1);
  }
  void release_flow(uint32_t i) {
    pool_[i].recycle();
    free_flows_.push_back(i);
    full_ -= 1;
  }
  uint32_t take_meta(const core::FlowMeta& m) {
    finished_ += 1;
    if (!free_metas_.empty()) {
      const uint32_t i = free_metas_.back();
      free_metas_.pop_back();
      metas_[i] = m;
      return i;
    }
    metas_.push_back(m);
    return uint32_t(metas_.size() - 1);
  }
  void release_meta(uint32_t i) {
    free_metas_.push_back(i);
    finished_ -= 1;
  }

  flow::FlowConfig flow_config_;
  BasicCpuTable<DetachState> table_;
  flow::core::TrackerState st_;
  flow::detail::ChunkKeyer keyer_;
  warpath::detail::LargeVector<uint32_t> state_of_;  ///< per table handle
  std::deque<Flow> pool_;           ///< full states (a deque: taking one moves none)
  std::vector<uint32_t> free_flows_;
  warpath::detail::LargeVector<core::FlowMeta> metas_;  ///< finished connections' scalars (huge pages)
  std::vector<uint32_t> free_metas_;
  size_t full_ = 0, finished_ = 0;     ///< states in use (pending closes included)
  std::vector<Ending> ending_;
  Flow spare_;  ///< late()'s state: empty stores and queues between calls
};

void DetachState::operator()(uint32_t handle) const { engine->detach(handle); }

}  // namespace

std::unique_ptr<FlowStream> make_cpu_flowstream(const flow::FlowConfig& fc, const StreamConfig& sc) {
  return std::make_unique<FusedFlowStream>(fc, sc);
}

}  // namespace warpath::stream::detail
