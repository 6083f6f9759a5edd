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
    apply(infos, metas, out, ended, [&](uint32_t base, uint32_t) {
      return Keys{keys + base, hashes + base, keyed + base, from_b + base};
    });
    return Status::ok();
  }

 protected:
  Status do_track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
                  Span<PacketFlow> out, std::vector<FlowRecord>& ended) override {
    // Keyed here, a chunk at a time into a ring of three (what apply() holds in flight).
    core::FlowKey keys[3][kChunk];
    uint64_t hashes[3][kChunk];
    Track keyed[3][kChunk];
    uint8_t from_b[3][kChunk];
    apply(infos, metas, out, ended, [&](uint32_t base, uint32_t n) {
      const uint32_t buf = (base / kChunk) % 3;
      for (uint32_t i = 0; i < n; ++i) {
        keyed[buf][i]  = core::make_key(infos[base + i], keys[buf][i], from_b[buf][i],
                                        config_.ignore_ipv4_checksum);
        hashes[buf][i] =
            keyed[buf][i] == Track::kTracked ? core::key_hash(keys[buf][i], table_.seed()) : 0;
      }
      return Keys{keys[buf], hashes[buf], keyed[buf], from_b[buf]};
    });
    return Status::ok();
  }

 private:
  static constexpr uint32_t kChunk = 32;
  /// A chunk's keys, hashes, whether each was tracked and its direction (core::make_key's).
  struct Keys {
    const core::FlowKey* keys;
    const uint64_t* hashes;
    const Track* keyed;
    const uint8_t* from_b;
  };

  /// The per-packet policy over packets [0, infos.size) in order, software-pipelined by chunks
  /// three deep: while chunk c's packets are applied, chunk c+1's entries (read from buckets
  /// prefetched a chunk earlier; for an empty bucket, the free entry its new flow will take)
  /// and chunk c+2's buckets are in flight. key(base, n) gives the chunk at `base` (n packets);
  /// what it returns must stay valid while the next two chunks are keyed.
  template <class KeyChunk>
  void apply(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
             Span<PacketFlow> out, std::vector<FlowRecord>& ended, KeyChunk&& key) {
    const uint32_t chunks = (infos.size + kChunk - 1) / kChunk;
    auto size_of          = [&](uint32_t c) { return std::min(kChunk, infos.size - c * kChunk); };
    Keys k[3];
    uint32_t fresh[3] = {};  // the new flows each chunk's entry prefetch expected
    auto key_chunk    = [&](uint32_t c) {
      k[c % 3] = key(c * kChunk, size_of(c));
      table_.prefetch_buckets(k[c % 3].hashes, k[c % 3].keyed, size_of(c));
    };
    // The entries of chunk c, after `ahead` new flows expected in the chunk before it.
    auto entries = [&](uint32_t c, uint32_t ahead) {
      fresh[c % 3] = table_.prefetch_entries(k[c % 3].hashes, k[c % 3].keyed, size_of(c), ahead);
    };
    if (chunks > 0) key_chunk(0);
    if (chunks > 1) key_chunk(1);
    if (chunks > 0) entries(0, 0);
    for (uint32_t c = 0; c < chunks; ++c) {
      if (c + 2 < chunks) key_chunk(c + 2);
      if (c + 1 < chunks) entries(c + 1, fresh[c % 3]);
      const Keys& r       = k[c % 3];
      const uint32_t base = c * kChunk, n = size_of(c);
      for (uint32_t i = 0; i < n; ++i)
        out[base + i] = core::track_packet(table_, st_, config_, infos[base + i], metas[base + i],
                                           r.hashes[i], r.keys[i], r.keyed[i], r.from_b[i], ended);
    }
  }

  std::string id_;
  FlowConfig config_;
  Table table_;
  core::TrackerState st_;
};

}  // namespace warpath::flow::detail
