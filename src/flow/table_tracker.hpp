// src/flow/table_tracker.hpp: a FlowTracker over any table of core::track_packet's concept,
// run by track_loop.hpp's batch loop (keys a chunk at a time, the table's prefetches, the
// per-packet policy in order).
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "flow/core/flow_core.hpp"
#include "flow/track_loop.hpp"

namespace warpath::flow::detail {

template <class Table>
class TableTracker final : public FlowTracker {
 public:
  TableTracker(std::string id, const FlowConfig& config)
      : id_(std::move(id)), config_(config), table_(config_) {}

  std::string_view id() const noexcept override { return id_; }
  const FlowConfig& config() const noexcept override { return config_; }
  FlowCounters counters() const override { return st_.counters; }

  Status advance(uint64_t now_ns, std::vector<FlowRecord>& ended) override {
    advance_table(table_, st_, config_, now_ns, ended);
    return Status::ok();
  }

  Status flush(std::vector<FlowRecord>& ended) override {
    flush_table(table_, st_, config_, ended);
    return Status::ok();
  }

  /// The table's hash seed (key_hash's second argument).
  uint64_t hash_seed() const { return table_.seed(); }

  /// The per-packet policy over keys computed elsewhere (cuda.flow keys a batch on the GPU):
  /// keys[i], hashes[i], keyed[i] and from_b[i] are what core::make_key and core::key_hash
  /// (with hash_seed()) give for infos[i].
  Status track_keyed(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                     Span<PacketFlow> out, std::vector<FlowRecord>& ended,
                     const core::FlowKey* keys, const uint64_t* hashes, const Track* keyed,
                     const uint8_t* from_b) {
    track_pipelined(
        table_, st_, config_, infos, metas, ended,
        [&](uint32_t base, uint32_t) {
          return ChunkKeys{keys + base, hashes + base, keyed + base, from_b + base};
        },
        [&](uint32_t i, const PacketFlow& answer) { out[i] = answer; });
    return Status::ok();
  }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    track_pipelined(
        table_, st_, config_, infos, metas, ended,
        [&](uint32_t base, uint32_t n) {
          return keyer_(infos.data, base, n, table_.seed(), config_.ignore_ipv4_checksum);
        },
        [&](uint32_t i, const PacketFlow& answer) { out[i] = answer; });
    return Status::ok();
  }

 private:
  ChunkKeyer keyer_;
  std::string id_;
  FlowConfig config_;
  Table table_;
  core::TrackerState st_;
};

}  // namespace warpath::flow::detail
