// src/stream/slot_reassembler.hpp: the host half of cuda.stream (and of emu.stream, which runs
// the device's schedule on the host): flow admission in arrival order, flows in device slots
// run as chains (src/stream/core/slot_chain.hpp) by a backend, flows the slots cannot hold on
// the host's stores, and the chunks of both merged in segment order. Its answers are
// ref.stream's, segment for segment (the validate: wrapper and the self-test check it).
#pragma once
#include <memory>
#include <unordered_map>
#include <vector>

#include "core/ranges/range_store.hpp"
#include "stream/core/slot_chain.hpp"
#include "stream/store_reassembler.hpp"
#include "warpath/core/memory.hpp"

namespace warpath::stream::detail {

/// A batch for the backend, and what it gives back.
struct SlotBatch {  // in page-locked memory where a GPU is present (core/memory.hpp)
  PinnedVector<core::SlotSegment> segs;
  PinnedVector<uint8_t> payload;
  PinnedVector<core::SlotChain> chains;
  uint64_t chunk_total = 0, byte_total = 0;
};
struct SlotBatchOut {
  PinnedVector<core::ChainResult> results;  ///< per chain
  /// Every chain's chunks, compact: chain j's results[j].chunks from results[j].chunk_first,
  /// their bytes at SlotChunk::bytes in `bytes` (chains in any order).
  PinnedVector<core::SlotChunk> chunks;
  PinnedVector<uint8_t> bytes;
  StreamCounters c;  ///< summed over the chains
};

/// Builds a batch's chains: segment `s` (with its receivers' policies) appended to its slot's
/// chain, the chain begun (`fresh`: its flow is new; `slot_bytes`: what the slot holds, all of
/// which it may deliver) when the slot has none in this batch. `chain_of` (per slot, -1 when
/// none) and `tail` (per chain, its last segment) are the caller's scratch.
void add_to_chain(SlotBatch& b, std::vector<int64_t>& chain_of, std::vector<uint32_t>& tail,
                  uint32_t slot, bool fresh, uint64_t slot_bytes, const Segment& s,
                  Policy to_dst = Policy::kBsd, Policy to_src = Policy::kBsd);
/// Places every chain's chunks and bytes (its bounds: chunks_per_segment per segment; its
/// segments' payload and what its slot held) and clears chain_of for the next batch.
void place_chains(SlotBatch& b, std::vector<int64_t>& chain_of);

/// Where the slots live and how chains run: the host (emu.stream) or a GPU (cuda.stream).
class SlotBackend {
 public:
  virtual ~SlotBackend()                                                                 = default;
  virtual uint32_t slots() const                                                         = 0;
  virtual Status run(const core::Limits& lim, const SlotBatch& batch, SlotBatchOut& out) = 0;
  /// A copy of a slot's flow.
  virtual Status read(uint32_t slot, core::SlotFlow& out) = 0;
  /// Copies of n slots' flows (a GPU gathers them and copies them back at once).
  virtual Status read_many(const uint32_t* slots, uint32_t n, core::SlotFlow* out) {
    for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(read(slots[i], out[i]));
    return Status::ok();
  }
};

/// How a SlotReassembler's work went where.
struct SlotStats {
  uint64_t chains         = 0;  ///< chains run by the backend
  uint64_t moved          = 0;  ///< flows moved from a slot to the host (outgrew it)
  uint64_t host_flows     = 0;  ///< flows admitted on the host (no slot free)
  uint64_t serial_batches = 0;  ///< batches run on the host in arrival order (near memcap)
};

class SlotReassembler final : public HostReassembler {
 public:
  const SlotStats& stats() const { return stats_; }
  SlotReassembler(std::string id, const StreamConfig& config, std::unique_ptr<SlotBackend> backend);
  size_t flows() const override { return flows_.size(); }
  Status segment(const Segment& s, const ChunkSink& sink) override { return segments(&s, 1, sink); }
  Status segments(const Segment* s, uint32_t n, const ChunkSink& sink) override;
  bool batches() const override { return true; }
  Status close(uint64_t flow, const ChunkSink& sink) override { return close_many(&flow, 1, sink); }
  Status close_many(const uint64_t* flows, uint32_t n, const ChunkSink& sink) override;
  Status close_all(const ChunkSink& sink) override;

 private:
  using HostFlow = core::FlowState<ranges::RangeStore, EndQueue>;
  struct Entry {
    int64_t slot = -1;               ///< the device slot, or -1: on the host
    std::unique_ptr<HostFlow> host;  ///< when on the host
    bool fresh = false;              ///< admitted, its slot not yet reset by a chain
    uint64_t slot_bytes = 0;                  ///< bytes buffered in its slot
  };
  struct Rec {  // a chunk with its segment's arrival index and its order among its chunks
    uint32_t seg, order;
    Chunk ch;
    uint64_t at = 0;      ///< a host chunk's bytes in host_bytes_
    bool device = false;  ///< bytes in out_.bytes (ch.data set)
  };

  Status to_host(Entry& e);  // the slot's flow onto the host's stores; the slot freed
  Status serial(const Segment* s, uint32_t n, const ChunkSink& sink);
  Entry* admit(const Segment& s);

  std::unique_ptr<SlotBackend> backend_;
  std::unordered_map<uint64_t, Entry> flows_;
  std::vector<uint32_t> free_;     ///< free slots
  std::vector<int64_t> chain_of_;  ///< per slot: its chain in this batch, or -1
  SlotStats stats_;
  /// A backend call that failed (a GPU error) leaves slots and totals out of step with the
  /// flows: the engine answers every later call with that error.
  Status failed_ = Status::ok();
  SlotBatch batch_;
  SlotBatchOut out_;
  std::vector<Rec> recs_;
  std::vector<uint8_t> host_bytes_;
  std::vector<uint32_t> arrival_;  ///< per batch segment: its index in the caller's batch
  std::vector<uint32_t> tail_;     ///< per chain: its last segment so far
  std::vector<Entry*> chain_entry_;  ///< per chain: its flow
  std::vector<uint32_t> closing_;    ///< close_many: the slots read back
  std::vector<int32_t> read_at_;     ///< ... per flow asked for: its copy, or -1
  std::unique_ptr<core::SlotFlow[]> read_;  ///< ... their copies
  uint32_t read_cap_ = 0;
};

/// a += b, field by field.
void add_counters(StreamCounters& a, const StreamCounters& b);

/// emu.stream's slots: few, so that tests reach the host fallbacks (slots run out, flows
/// outgrow theirs) as well as the chains.
inline constexpr uint32_t kEmuSlots = 8;

/// The emulation backend: `slots` slots in host memory, chains run one after the other.
std::unique_ptr<SlotBackend> make_host_slots(uint32_t slots);

}  // namespace warpath::stream::detail
