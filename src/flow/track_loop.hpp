// src/flow/track_loop.hpp: the batch loop of the table engines (cpu.flow, ref.flow, cuda.flow's
// host side, and cpu.flowstream, which runs its reassembly inside it): packets keyed a chunk at
// a time, the table asked to prefetch what they will touch (prefetch_buckets,
// prefetch_entries: no-ops for the reference), then core::track_packet applied in order and its
// answer handed to the caller, packet by packet; and the end of a table's flows (advance,
// flush), which every such engine does alike.
#pragma once
#include <algorithm>
#include <utility>
#include <vector>

#include "flow/core/flow_core.hpp"

namespace warpath::flow::detail {

inline constexpr uint32_t kTrackChunk = 32;

/// A chunk's keys, hashes, whether each was tracked and its direction (core::make_key's).
struct ChunkKeys {
  const core::FlowKey* keys;
  const uint64_t* hashes;
  const Track* keyed;
  const uint8_t* from_b;
};

/// Keys packets on the CPU, a chunk at a time, into a ring of three chunks (what
/// track_pipelined holds in flight).
class ChunkKeyer {
 public:
  ChunkKeys operator()(const packet::PacketInfo* infos, uint32_t base, uint32_t n, uint64_t seed,
                       bool any_checksum) {
    const uint32_t buf = (base / kTrackChunk) % 3;
    for (uint32_t i = 0; i < n; ++i) {
      keyed_[buf][i]  = core::make_key(infos[base + i], keys_[buf][i], from_b_[buf][i], any_checksum);
      hashes_[buf][i] = keyed_[buf][i] == Track::kTracked ? core::key_hash(keys_[buf][i], seed) : 0;
    }
    return ChunkKeys{keys_[buf], hashes_[buf], keyed_[buf], from_b_[buf]};
  }

 private:
  core::FlowKey keys_[3][kTrackChunk];
  uint64_t hashes_[3][kTrackChunk];
  Track keyed_[3][kTrackChunk];
  uint8_t from_b_[3][kTrackChunk];
};

/// The per-packet policy over packets [0, infos.size) in order, software-pipelined by chunks
/// three deep: while chunk c's packets are applied, chunk c+1's entries (read from buckets
/// prefetched a chunk earlier; for an empty bucket, the free entry its new flow will take)
/// and chunk c+2's buckets are in flight. key(base, n) gives the chunk at `base` (n packets);
/// what it returns must stay valid while the next two chunks are keyed. each(i, answer) gets
/// packet i's answer right after its policy ran, before packet i + 1's.
template <class Table, class KeyChunk, class Each>
__attribute__((always_inline)) inline void track_pipelined(
    Table& table, core::TrackerState& st, const FlowConfig& config,
    Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
    std::vector<FlowRecord>& ended, KeyChunk&& key, Each&& each) {
  const uint32_t chunks = (infos.size + kTrackChunk - 1) / kTrackChunk;
  auto size_of = [&](uint32_t c) { return std::min(kTrackChunk, infos.size - c * kTrackChunk); };
  ChunkKeys k[3];
  uint32_t fresh[3] = {};  // the new flows each chunk's entry prefetch expected
  auto key_chunk    = [&](uint32_t c) {
    k[c % 3] = key(c * kTrackChunk, size_of(c));
    table.prefetch_buckets(k[c % 3].hashes, k[c % 3].keyed, size_of(c));
  };
  // The entries of chunk c, after `ahead` new flows expected in the chunk before it.
  auto entries = [&](uint32_t c, uint32_t ahead) {
    fresh[c % 3] = table.prefetch_entries(k[c % 3].hashes, k[c % 3].keyed, size_of(c), ahead);
  };
  if (chunks > 0) key_chunk(0);
  if (chunks > 1) key_chunk(1);
  if (chunks > 0) entries(0, 0);
  for (uint32_t c = 0; c < chunks; ++c) {
    if (c + 2 < chunks) key_chunk(c + 2);
    if (c + 1 < chunks) entries(c + 1, fresh[c % 3]);
    const ChunkKeys& r  = k[c % 3];
    const uint32_t base = c * kTrackChunk, n = size_of(c);
    for (uint32_t i = 0; i < n; ++i)
      each(base + i, core::track_packet(table, st, config, infos[base + i], metas[base + i],
                                        r.hashes[i], r.keys[i], r.keyed[i], r.from_b[i], ended));
  }
}

/// FlowTracker::advance over a table.
template <class Table>
void advance_table(Table& table, core::TrackerState& st, const FlowConfig& config,
                   uint64_t now_ns, std::vector<FlowRecord>& ended) {
  if (now_ns > st.now) st.now = now_ns;
  table.expire_due(st, ended);
  core::settle(table, st, config);
}

/// FlowTracker::flush over a table: every live flow ended, in serial order.
template <class Table>
void flush_table(Table& table, core::TrackerState& st, const FlowConfig& config,
                 std::vector<FlowRecord>& ended) {
  // (serial, handle) pairs sorted as they are: a comparison that read each flow's entry missed
  // the cache every time on a large table (100,000 flows: most of the flush).
  const std::vector<uint32_t> live = table.live_handles();
  std::vector<std::pair<uint64_t, uint32_t>> order;
  order.reserve(live.size());
  for (uint32_t h : live) order.emplace_back(table.at(h).serial, h);
  std::sort(order.begin(), order.end());
  ended.reserve(ended.size() + order.size());
  for (const auto& [serial, h] : order) table.end(st, h, FlowEnd::kShutdown, ended);
  core::settle(table, st, config);
}

}  // namespace warpath::flow::detail
