// Generated TCP conversations (include/warpath/stream/generate.hpp).
#include "warpath/stream/generate.hpp"

#include <algorithm>

#include "gen/packet_builder.hpp"

namespace warpath::stream {
namespace {

struct Draft {
  uint64_t flow;
  uint8_t dir, flags;
  uint64_t offset;  ///< stream offset of the first byte (handshake: 0)
  uint32_t len;
  const uint8_t* data;
  bool lost;  ///< the receiver got it, the capture did not
};

}  // namespace

GeneratedStreams generate_streams(const StreamGenParams& p) {
  gen::detail::Rng rng(p.seed, 0x57e4);
  GeneratedStreams g;
  g.payload.resize(2 * (size_t(p.flows) + 1));
  g.lost.resize(g.payload.size());
  g.extra.reserve(size_t(p.flows) * 64);
  std::vector<uint32_t> isn(g.payload.size());
  std::vector<std::vector<Draft>> per_flow(p.flows + 1);
  const uint32_t max_seg = std::max<uint32_t>(p.max_segment, 1);
  for (uint64_t flow = 1; flow <= p.flows; ++flow) {
    std::vector<Draft>& d = per_flow[flow];
    for (uint8_t dir = 0; dir < 2; ++dir) {
      isn[2 * flow + dir] = p.random_isn ? rng.next32() : p.isn;
      auto& bytes = g.payload[2 * flow + dir];
      bytes.resize(rng.below(p.bytes + 1));
      for (auto& b : bytes) b = uint8_t('a' + rng.below(26));
    }
    d.push_back({flow, 0, 0x02, 0, 0, nullptr, false});
    d.push_back({flow, 1, 0x12, 0, 0, nullptr, false});
    d.push_back({flow, 0, 0x10, 0, 0, nullptr, false});
    // Both directions' segments, interleaved as a conversation would.
    uint64_t at[2] = {0, 0};
    for (;;) {
      const bool left0 = at[0] < g.payload[2 * flow].size();
      const bool left1 = at[1] < g.payload[2 * flow + 1].size();
      if (!left0 && !left1) break;
      const uint8_t dir  = left0 && (!left1 || rng.below(2) == 0) ? 0 : 1;
      const auto& bytes  = g.payload[2 * flow + dir];
      const uint32_t len = uint32_t(std::min<uint64_t>(1 + rng.below(max_seg), bytes.size() - at[dir]));
      const bool lost    = p.loss_percent && rng.below(100) < p.loss_percent;
      d.push_back({flow, dir, 0x18, at[dir], len, bytes.data() + at[dir], lost});
      if (lost) g.lost[2 * flow + dir].push_back({at[dir], at[dir] + len});
      if (p.duplicate_percent && rng.below(100) < p.duplicate_percent)
        d.push_back({flow, dir, 0x18, at[dir], len, bytes.data() + at[dir], false});
      if (p.overlap_percent && at[dir] && rng.below(100) < p.overlap_percent) {
        const uint64_t from = at[dir] - 1 - rng.below(uint32_t(std::min<uint64_t>(at[dir], max_seg)));
        const uint64_t to   = std::min<uint64_t>(at[dir] + len, from + 1 + rng.below(2 * max_seg));
        d.push_back({flow, dir, 0x18, from, uint32_t(to - from), bytes.data() + from, false});
      }
      if (p.conflict_percent && rng.below(100) < p.conflict_percent) {
        std::vector<uint8_t> other(len);
        for (auto& b : other) b = uint8_t('A' + rng.below(26));
        g.extra.push_back(std::move(other));
        d.push_back({flow, dir, 0x18, at[dir], len, g.extra.back().data(), false});
      }
      at[dir] += len;
    }
    if (p.fin) {
      d.push_back({flow, 0, 0x11, at[0], 0, nullptr, false});
      d.push_back({flow, 1, 0x11, at[1], 0, nullptr, false});
    }
    // Local reordering of the data segments (the handshake stays first).
    if (p.reorder_percent)
      for (size_t i = 3; i + 1 < d.size(); ++i)
        if (rng.below(100) < p.reorder_percent) std::swap(d[i], d[i + 1 + rng.below(uint32_t(std::min<size_t>(3, d.size() - i - 1)))]);
  }
  // Interleave the flows, keeping each flow's order.
  std::vector<size_t> next(p.flows + 1, 0);
  std::vector<uint64_t> live;
  for (uint64_t f = 1; f <= p.flows; ++f) live.push_back(f);
  // What each receiver holds contiguously (lost segments arrived at the host).
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> got(g.payload.size());
  std::vector<uint64_t> contiguous(g.payload.size(), 0);
  auto receive = [&](size_t k, uint64_t from, uint64_t to) {
    got[k].push_back({from, to});
    std::sort(got[k].begin(), got[k].end());
    for (const auto& [a, b] : got[k])
      if (a <= contiguous[k]) contiguous[k] = std::max(contiguous[k], b);
  };
  while (!live.empty()) {
    const size_t pick = rng.below(uint32_t(live.size()));
    const uint64_t f  = live[pick];
    const Draft& d    = per_flow[f][next[f]++];
    if (next[f] == per_flow[f].size()) live.erase(live.begin() + long(pick));
    const size_t mine = 2 * f + d.dir, peer = 2 * f + (1 - d.dir);
    if (d.len) receive(mine, d.offset, d.offset + d.len);
    if (d.lost) continue;
    Segment s;
    s.flow  = f;
    s.dir   = d.dir;
    s.flags = d.flags;
    s.data  = d.data;
    s.len   = d.len;
    if (d.flags == 0x02) {
      s.seq = isn[mine];
    } else if (d.flags == 0x12) {
      s.seq = isn[mine];
      s.ack = isn[peer] + 1;
    } else {
      s.seq = uint32_t(isn[mine] + 1 + d.offset);
      s.ack = uint32_t(isn[peer] + 1 + contiguous[peer]);
    }
    g.segments.push_back(s);
  }
  return g;
}

}  // namespace warpath::stream
