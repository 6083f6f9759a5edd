// The host half of cuda.stream and emu.stream (slot_reassembler.hpp), and emu.stream's backend.
#include "stream/slot_reassembler.hpp"

#include <algorithm>
#include <cstring>

#include "stream/engines.hpp"

namespace warpath::stream::detail {
namespace {

class HostSlots final : public SlotBackend {
 public:
  explicit HostSlots(uint32_t slots) : slots_(slots) {}
  uint32_t slots() const override { return uint32_t(slots_.size()); }
  Status run(const core::Limits& lim, const SlotBatch& b, SlotBatchOut& out) override {
    out.results.assign(b.chains.size(), {});
    out.chunks.clear();
    out.bytes.clear();
    out.c = {};
    for (size_t j = 0; j < b.chains.size(); ++j) {  // each chain into its regions, then appended
      const core::SlotChain& ch = b.chains[j];
      auto& slot                = slots_[ch.slot];
      if (!slot) slot = std::make_unique<core::SlotFlow>();
      chunks_.resize(ch.chunk_cap);
      bytes_.resize(ch.byte_cap);
      StreamCounters c;
      core::ChainResult& r = out.results[j];
      r = core::run_chain(lim, *slot, ch, b.segs.data(), b.payload.data(), chunks_.data(),
                          bytes_.data(), c);
      r.chunk_first = out.chunks.size();
      for (uint32_t k = 0; k < r.chunks; ++k) {
        out.chunks.push_back(chunks_[k]);
        out.chunks.back().bytes += out.bytes.size();
      }
      out.bytes.insert(out.bytes.end(), bytes_.begin(), bytes_.begin() + long(r.bytes));
      add_counters(out.c, c);
    }
    return Status::ok();
  }
  Status read(uint32_t slot, core::SlotFlow& out) override {
    out = *slots_[slot];
    return Status::ok();
  }

 private:
  std::vector<std::unique_ptr<core::SlotFlow>> slots_;
  std::vector<core::SlotChunk> chunks_;  // a chain's regions
  std::vector<uint8_t> bytes_;
};

}  // namespace

void add_to_chain(SlotBatch& b, std::vector<int64_t>& chain_of, std::vector<uint32_t>& tail,
                  uint32_t slot, bool fresh, uint64_t slot_bytes, const Segment& s, Policy to_dst,
                  Policy to_src) {
  core::SlotSegment g;
  g.flow    = s.flow;
  g.seq     = s.seq;
  g.ack     = s.ack;
  g.data    = b.payload.size();
  g.len     = s.len;
  g.missing = s.missing;
  g.dir     = s.dir;
  g.flags   = s.flags;
  g.tfo     = s.tfo;
  g.to_dst  = to_dst;
  g.to_src  = to_src;
  if (s.len) b.payload.insert(b.payload.end(), s.data, s.data + s.len);
  const uint32_t at = uint32_t(b.segs.size());
  b.segs.push_back(g);
  int64_t& j = chain_of[slot];
  if (j < 0) {
    j = int64_t(b.chains.size());
    core::SlotChain ch;
    ch.slot  = slot;
    ch.first = at;
    ch.fresh = fresh;
    // What the slot held may be delivered in this batch too, besides the payload.
    ch.byte_cap = slot_bytes;
    b.chains.push_back(ch);
    tail.push_back(at);
  } else {
    b.segs[tail[size_t(j)]].next = at;
    tail[size_t(j)]              = at;
  }
  b.chains[size_t(j)].byte_cap += g.len;
  b.chains[size_t(j)].chunk_cap += core::chunks_per_segment();
}

void place_chains(SlotBatch& b, std::vector<int64_t>& chain_of) {
  b.chunk_total = b.byte_total = 0;
  for (core::SlotChain& ch : b.chains) {
    ch.chunk_at = b.chunk_total;
    ch.byte_at  = b.byte_total;
    b.chunk_total += ch.chunk_cap;
    b.byte_total += ch.byte_cap;
    chain_of[ch.slot] = -1;
  }
}

std::unique_ptr<SlotBackend> make_host_slots(uint32_t slots) {
  return std::make_unique<HostSlots>(slots);
}

SlotReassembler::SlotReassembler(std::string id, const StreamConfig& config,
                                 std::unique_ptr<SlotBackend> backend)
    : HostReassembler(std::move(id), config), backend_(std::move(backend)) {
  const uint32_t n = backend_->slots();
  chain_of_.assign(n, -1);
  for (uint32_t i = n; i-- > 0;) free_.push_back(i);
}

SlotReassembler::Entry* SlotReassembler::admit(const Segment& s) {
  count(s);
  auto it = flows_.find(s.flow);
  if (it != flows_.end()) return &it->second;
  if (!may_open(s, flows_.size())) return nullptr;
  Entry e;
  if (free_.empty()) {
    e.host = std::make_unique<HostFlow>();
    stats_.host_flows += 1;
  } else {
    e.slot  = free_.back();
    e.fresh = true;
    free_.pop_back();
  }
  return &flows_.emplace(s.flow, std::move(e)).first->second;
}

Status SlotReassembler::to_host(Entry& e) {
  auto h = std::make_unique<HostFlow>();
  if (!e.fresh) {  // a fresh slot still holds an earlier flow's state: nothing to take
    core::SlotFlow f;
    WARPATH_TRY(backend_->read(uint32_t(e.slot), f));
    h->m = f.m;
    std::vector<uint8_t> bytes;
    for (int dir = 0; dir < 2; ++dir) {
      const auto& st = f.store[dir];
      for (uint32_t i = 0; i < st.pieces(); ++i) {
        const auto& p = st.piece(i);
        bytes.resize(p.end - p.start);
        st.copy(p.start, p.end - p.start, bytes.data());
        h->store[dir].insert(p.start, bytes.data(), uint32_t(bytes.size()), p.os, p.oe,
                             [](uint64_t, uint64_t) { return false; });
      }
      for (uint32_t i = 0; i < f.held[dir].size(); ++i) h->held[dir].push_sorted(f.held[dir].at(i));
    }
  }
  free_.push_back(uint32_t(e.slot));
  e.slot  = -1;
  e.fresh = false;
  e.host  = std::move(h);
  return Status::ok();
}

// Near memcap every flow's segments run on the host in arrival order (the cap couples them).
Status SlotReassembler::serial(const Segment* segs, uint32_t n, const ChunkSink& sink) {
  HostRules ctx = rules(sink);
  stats_.serial_batches += 1;
  for (uint32_t i = 0; i < n; ++i) {
    Entry* e = admit(segs[i]);
    if (!e) continue;
    if (e->slot >= 0)
      if (Status st = to_host(*e); !st.is_ok()) return failed_ = st;
    core::flow_segment(ctx, *e->host, segs[i]);
  }
  return Status::ok();
}

Status SlotReassembler::segments(const Segment* segs, uint32_t n, const ChunkSink& sink) {
  WARPATH_TRY(failed_);
  if (n == 0) return Status::ok();
  uint64_t need = total_ + held_ * core::kSegmentOverhead;
  for (uint32_t i = 0; i < n; ++i) need += segs[i].len + core::kSegmentOverhead;
  if (need > config_.memcap) return serial(segs, n, sink);

  // Admission in arrival order; host flows run at once (their chunks recorded), slot flows
  // become chains.
  SlotBatch& b = batch_;
  b.segs.clear();
  b.payload.clear();
  b.chains.clear();
  recs_.clear();
  host_bytes_.clear();
  arrival_.clear();
  tail_.clear();
  chain_entry_.clear();
  uint32_t seg_index = 0, order = 0;
  const ChunkSink record = [&](const Chunk& ch) {
    Rec r{seg_index, order++, ch};
    if (!ch.gap) {  // bytes kept as an offset until host_bytes_ stops growing
      r.ch.data = nullptr;
      r.at      = host_bytes_.size();
      host_bytes_.insert(host_bytes_.end(), ch.data, ch.data + ch.len);
    }
    recs_.push_back(r);
  };
  HostRules ctx = rules(record);
  for (uint32_t i = 0; i < n; ++i) {
    const Segment& s = segs[i];
    Entry* e         = admit(s);
    if (!e) continue;
    if (e->slot < 0) {
      seg_index = i;
      order     = 0;
      core::flow_segment(ctx, *e->host, s);
      continue;
    }
    arrival_.push_back(i);
    const size_t chains = b.chains.size();
    add_to_chain(b, chain_of_, tail_, uint32_t(e->slot), e->fresh, e->slot_bytes, s,
                 ctx.policy(s, true), ctx.policy(s, false));
    if (b.chains.size() > chains) chain_entry_.push_back(e);
    e->fresh = false;
  }
  place_chains(b, chain_of_);

  if (!b.chains.empty()) {
    if (Status st = backend_->run(lim_, b, out_); !st.is_ok()) return failed_ = st;
    stats_.chains += b.chains.size();
    add_counters(c_, out_.c);
    for (size_t j = 0; j < b.chains.size(); ++j) {
      const core::ChainResult& res = out_.results[j];
      total_ += uint64_t(res.buffered);
      held_ += uint64_t(res.held);
      Entry& e = *chain_entry_[j];
      e.slot_bytes += uint64_t(res.buffered);
      for (uint32_t k = 0; k < res.chunks; ++k) {
        const core::SlotChunk& o = out_.chunks[res.chunk_first + k];
        Rec r{arrival_[o.seg], o.order, {}};
        r.ch.flow   = o.flow;
        r.ch.dir    = o.dir;
        r.ch.gap    = o.gap;
        r.ch.offset = o.offset;
        r.ch.len    = o.len;
        r.ch.data   = o.gap ? nullptr : out_.bytes.data() + o.bytes;
        r.device    = true;
        recs_.push_back(r);
      }
      if (res.stopped == core::kEnd) continue;
      // The slot could not hold the flow: the rest of its chain runs on the host's stores.
      if (Status st = to_host(e); !st.is_ok()) return failed_ = st;
      stats_.moved += 1;
      for (uint32_t k = res.stopped; k != core::kEnd; k = b.segs[k].next) {
        seg_index = arrival_[k];
        order     = 0;
        core::flow_segment(ctx, *e.host, segs[arrival_[k]]);
      }
    }
  }
  std::stable_sort(recs_.begin(), recs_.end(), [](const Rec& x, const Rec& y) {
    return x.seg != y.seg ? x.seg < y.seg : x.order < y.order;
  });
  if (sink)
    for (Rec& r : recs_) {
      if (!r.ch.gap && !r.device) r.ch.data = host_bytes_.data() + r.at;
      sink(r.ch);
    }
  return Status::ok();
}

Status SlotReassembler::close_many(const uint64_t* flows, uint32_t n, const ChunkSink& sink) {
  WARPATH_TRY(failed_);
  // The slots of the flows that have one, read back at once.
  closing_.clear();
  read_at_.assign(n, -1);
  for (uint32_t i = 0; i < n; ++i)
    if (auto it = flows_.find(flows[i]);
        it != flows_.end() && it->second.slot >= 0 && !it->second.fresh) {
      read_at_[i] = int32_t(closing_.size());
      closing_.push_back(uint32_t(it->second.slot));
    }
  if (closing_.size() > read_cap_) {
    read_cap_ = uint32_t(closing_.size());
    read_.reset(new core::SlotFlow[read_cap_]);
  }
  if (!closing_.empty())
    if (Status st = backend_->read_many(closing_.data(), uint32_t(closing_.size()), read_.get());
        !st.is_ok())
      return failed_ = st;
  HostRules ctx = rules(sink);
  for (uint32_t i = 0; i < n; ++i) {
    auto it = flows_.find(flows[i]);
    if (it == flows_.end()) continue;  // no state, or closed earlier in this call
    Entry& e = it->second;
    if (e.slot >= 0) {
      if (!e.fresh) core::close_flow(ctx, flows[i], read_[size_t(read_at_[i])]);
      free_.push_back(uint32_t(e.slot));
    } else {
      core::close_flow(ctx, flows[i], *e.host);
    }
    flows_.erase(it);
  }
  return Status::ok();
}

Status SlotReassembler::close_all(const ChunkSink& sink) {
  std::vector<uint64_t> ids;
  ids.reserve(flows_.size());
  for (const auto& [id, e] : flows_) ids.push_back(id);
  std::sort(ids.begin(), ids.end());
  return close_many(ids.data(), uint32_t(ids.size()), sink);
}

void add_counters(StreamCounters& a, const StreamCounters& b) {
  static_assert(sizeof(StreamCounters) % sizeof(uint64_t) == 0);
  constexpr size_t kWords = sizeof(StreamCounters) / sizeof(uint64_t);
  uint64_t wa[kWords], wb[kWords];
  std::memcpy(wa, &a, sizeof a);
  std::memcpy(wb, &b, sizeof b);
  for (size_t i = 0; i < kWords; ++i) wa[i] += wb[i];
  std::memcpy(&a, wa, sizeof a);
}

std::unique_ptr<Reassembler> make_emu_reassembler(const StreamConfig& config) {
  return std::make_unique<SlotReassembler>("emu.stream", config, make_host_slots(kEmuSlots));
}

}  // namespace warpath::stream::detail
