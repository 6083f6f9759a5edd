// src/flow/table_tracker.hpp: a FlowTracker over any table of core::track_packet's concept.
// The batch loop keys a chunk of packets, lets the table prefetch what they will touch (a
// no-op for the reference), then applies the per-packet policy in order.
#pragma once
#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "flow/core/flow_core.hpp"

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
    if (now_ns > st_.now) st_.now = now_ns;
    table_.expire_due(st_, ended);
    core::settle(table_, st_, config_);
    return Status::ok();
  }

  Status flush(std::vector<FlowRecord>& ended) override {
    std::vector<uint32_t> live = table_.live_handles();
    std::sort(live.begin(), live.end(), [&](uint32_t a, uint32_t b) {
      return table_.at(a).serial < table_.at(b).serial;
    });
    for (uint32_t h : live) table_.end(st_, h, FlowEnd::kShutdown, ended);
    core::settle(table_, st_, config_);
    return Status::ok();
  }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    constexpr uint32_t kChunk = 32;
    core::FlowKey keys[kChunk];
    uint64_t hashes[kChunk];
    Track keyed[kChunk];
    uint8_t from_b[kChunk];
    for (uint32_t base = 0; base < infos.size; base += kChunk) {
      const uint32_t n = std::min(kChunk, infos.size - base);
      for (uint32_t i = 0; i < n; ++i) {
        keyed[i]  = core::make_key(infos[base + i], keys[i], from_b[i]);
        hashes[i] = keyed[i] == Track::kTracked ? core::key_hash(keys[i]) : 0;
      }
      table_.prefetch(hashes, keyed, n);
      for (uint32_t i = 0; i < n; ++i)
        out[base + i] = core::track_packet(table_, st_, config_, infos[base + i],
                                           metas[base + i], hashes[i], keys[i], keyed[i],
                                           from_b[i], ended);
    }
    return Status::ok();
  }

 private:
  std::string id_;
  FlowConfig config_;
  Table table_;
  core::TrackerState st_;
};

}  // namespace warpath::flow::detail
