// src/flow/table_tracker.hpp: a FlowTracker over any table of core::track_packet's concept.
// The batch loop keys chunks of packets, lets the table prefetch what they will touch
// (prefetch_buckets, prefetch_entries: no-ops for the reference), then applies the per-packet
// policy in order.
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

  /// The table's hash seed (key_hash's second argument).
  uint64_t hash_seed() const { return table_.seed(); }

  /// The per-packet policy over keys computed elsewhere (cuda.flow keys a batch on the GPU):
  /// keys[i], hashes[i], keyed[i] and from_b[i] are what core::make_key and core::key_hash
  /// (with hash_seed()) give for infos[i].
  Status track_keyed(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                     Span<PacketFlow> out, std::vector<FlowRecord>& ended,
                     const core::FlowKey* keys, const uint64_t* hashes, const Track* keyed,
                     const uint8_t* from_b) {
    constexpr uint32_t kChunk = 32;
    if (infos.size) table_.prefetch_buckets(hashes, keyed, std::min(kChunk, infos.size));
    for (uint32_t base = 0; base < infos.size; base += kChunk) {
      const uint32_t n = std::min(kChunk, infos.size - base);
      if (base + kChunk < infos.size)
        table_.prefetch_buckets(hashes + base + kChunk, keyed + base + kChunk,
                                std::min(kChunk, infos.size - base - kChunk));
      table_.prefetch_entries(hashes + base, keyed + base, n);
      for (uint32_t i = base; i < base + n; ++i)
        out[i] = core::track_packet(table_, st_, config_, infos[i], metas[i], hashes[i], keys[i],
                                    keyed[i], from_b[i], ended);
    }
    return Status::ok();
  }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    // Software-pipelined by chunks, three deep: while chunk c's packets are applied in order,
    // chunk c+1's entries (read from buckets prefetched a chunk earlier) and chunk c+2's
    // buckets are in flight.
    constexpr uint32_t kChunk = 32;
    core::FlowKey keys[3][kChunk];
    uint64_t hashes[3][kChunk];
    Track keyed[3][kChunk];
    uint8_t from_b[3][kChunk];
    uint32_t fresh[3] = {};
    auto key_chunk = [&](uint32_t base, int buf) {
      const uint32_t n = std::min(kChunk, infos.size - base);
      for (uint32_t i = 0; i < n; ++i) {
        keyed[buf][i]  = core::make_key(infos[base + i], keys[buf][i], from_b[buf][i],
                                        config_.ignore_ipv4_checksum);
        hashes[buf][i] =
            keyed[buf][i] == Track::kTracked ? core::key_hash(keys[buf][i], table_.seed()) : 0;
      }
      table_.prefetch_buckets(hashes[buf], keyed[buf], n);
    };
    // The entries of chunk c, after `ahead` new flows expected in the chunk before it.
    auto entries = [&](uint32_t c, uint32_t ahead) {
      const int buf = int(c % 3);
      fresh[buf]    = table_.prefetch_entries(hashes[buf], keyed[buf],
                                              std::min(kChunk, infos.size - c * kChunk), ahead);
    };
    const uint32_t chunks = (infos.size + kChunk - 1) / kChunk;
    if (chunks > 0) key_chunk(0, 0);
    if (chunks > 1) key_chunk(kChunk, 1);
    if (chunks > 0) entries(0, 0);
    for (uint32_t c = 0; c < chunks; ++c) {
      const uint32_t base = c * kChunk, buf = c % 3;
      const uint32_t n = std::min(kChunk, infos.size - base);
      if (c + 2 < chunks) key_chunk((c + 2) * kChunk, int((c + 2) % 3));
      if (c + 1 < chunks) entries(c + 1, fresh[buf]);
      for (uint32_t i = 0; i < n; ++i)
        out[base + i] = core::track_packet(table_, st_, config_, infos[base + i],
                                           metas[base + i], hashes[buf][i], keys[buf][i],
                                           keyed[buf][i], from_b[buf][i], ended);
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
