// src/stream/store_reassembler.hpp: the reassembly rules of include/warpath/stream/stream.hpp
// over any byte store (core/ranges), one body for every engine. A store holds one direction's
// buffered bytes (stream offsets at or past the first undelivered byte) and provides:
//   uint64_t buffered() const
//   Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
//                 wins)                // [os, oe): the whole segment; wins(old extent)
//   uint64_t contiguous_end(uint64_t from) const   // end of the run of bytes at `from`
//   uint64_t first_start() const                  // kNever when empty
//   void take(uint64_t from, uint64_t to, uint8_t* out)  // copy out and remove a run
#pragma once
#include <algorithm>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "core/ranges/insert.hpp"
#include "stream/core/stream_core.hpp"

namespace warpath::stream::detail {

using ranges::Insert;
using ranges::kNever;
inline constexpr uint32_t kMaxSegmentsPerStream = 4096;  ///< held at once per direction
/// What the caps charge per segment held besides its bytes: a stored range's bookkeeping.
inline constexpr uint64_t kSegmentOverhead = 128;

/// The ends of a direction's held segments in insertion order: a queue that lives inline for
/// the first few (most connections never hold more) and spills to the heap past that, so a
/// short connection costs no allocation for it.
class EndQueue {
 public:
  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  uint64_t front() const { return at(0); }
  void push_back(uint64_t v) {
    if (head_ + size_ == kInline && spill_.empty()) {  // move the inline ones out, then grow
      spill_.assign(inline_ + head_, inline_ + head_ + size_);
      head_ = 0;
    }
    if (spill_.empty() && head_ + size_ < kInline) {
      inline_[head_ + size_] = v;
    } else {
      spill_.push_back(v);
    }
    ++size_;
  }
  void pop_front() {
    ++head_;
    --size_;
    if (size_ == 0) {
      head_ = 0;
      spill_.clear();
    } else if (!spill_.empty() && head_ > spill_.size() / 2) {
      spill_.erase(spill_.begin(), spill_.begin() + long(head_));
      head_ = 0;
    }
  }

 private:
  static constexpr size_t kInline = 4;
  uint64_t at(size_t i) const { return spill_.empty() ? inline_[head_ + i] : spill_[head_ + i]; }
  uint64_t inline_[kInline] = {};
  std::vector<uint64_t> spill_;
  size_t head_ = 0, size_ = 0;
};

template <class Store>
class StoreReassembler final : public Reassembler {
 public:
  StoreReassembler(std::string id, const StreamConfig& config)
      : id_(std::move(id)), config_(config) {}

  std::string_view id() const noexcept override { return id_; }
  const StreamConfig& config() const noexcept override { return config_; }
  StreamCounters counters() const override {
    StreamCounters c   = c_;
    c.buffered_bytes   = total_;
    return c;
  }
  uint64_t refused() const override { return stream::refused(c_); }
  size_t flows() const override { return flows_.size(); }

  Status segment(const Segment& s, const ChunkSink& sink) override {
    using packet::kTcpAck, packet::kTcpFin, packet::kTcpRst, packet::kTcpSyn;
    c_.segments += 1;
    c_.payload_bytes += s.len;
    const bool syn = s.flags & kTcpSyn, ack = s.flags & kTcpAck;
    auto it        = flows_.find(s.flow);
    if (it == flows_.end()) {
      const bool opens = (syn && !ack && s.dir == 0) || (config_.midstream && !syn);
      if (!opens) {
        if (s.len) c_.before_handshake += 1;
        return Status::ok();
      }
      if (flows_.size() >= config_.max_flows) {
        c_.flows_refused += 1;
        return Status::ok();
      }
      it = flows_.emplace(s.flow, Flow{}).first;
    }
    Flow& f = it->second;
    if (f.phase != Phase::kOpen) {
      if (syn && !ack && s.dir == 0) {  // a SYN, or its retransmission
        f.isn[0] = s.seq;
        f.phase  = Phase::kSyn;
        if (s.len) c_.data_on_syn += 1;
        return Status::ok();
      }
      if (syn && ack && s.dir == 1 && f.phase == Phase::kSyn && s.ack == f.isn[0] + 1) {
        f.isn[1] = s.seq;
        f.phase  = Phase::kSynAck;
        if (s.len) c_.data_on_syn += 1;
        return Status::ok();
      }
      if (!syn && ack && s.dir == 0 && f.phase == Phase::kSynAck && s.ack == f.isn[1] + 1) {
        open(f.d[0], f.isn[0] + 1, policy_for(s, s.dst));
        open(f.d[1], f.isn[1] + 1, policy_for(s, s.src));
        f.phase = Phase::kOpen;
      } else if (config_.midstream && !syn) {
        f.phase     = Phase::kOpen;
        f.midstream = true;
        c_.midstream += 1;
      } else {
        if (s.len) c_.before_handshake += 1;
        return Status::ok();
      }
    }
    Dir& d = f.d[s.dir];
    if (!d.open) {
      if (syn) return Status::ok();  // a midstream flow's late SYN: nothing to learn
      open(d, s.seq, policy_for(s, s.dst));
    }
    const int64_t off = core::offset_of(s.seq, d.first, d.base);
    // A RST counts only in the sender's window (RFC 5961): a stale or far one could otherwise
    // end inspection of a live connection.
    if (s.flags & kTcpRst) {
      if (off >= int64_t(d.base) && off <= int64_t(d.sent_end) + int64_t(config_.max_ahead))
        f.reset = true;
      else
        c_.bad_rst += 1;
    }
    if (f.reset) {
      if (s.len) c_.after_close += 1;
      return Status::ok();
    }
    int64_t end = off + int64_t(s.len);
    if (d.fin != kNever && end > int64_t(d.fin)) {  // data past the FIN: not part of the stream
      c_.after_close += 1;
      end = std::max<int64_t>(off, int64_t(d.fin));
    }
    // A FIN fixes the end only in the window: a stale one (before what was delivered) or a far
    // one is the sender's mistake or an evasion, not the end of the stream.
    if ((s.flags & kTcpFin) && d.fin == kNever && end >= int64_t(d.base) &&
        end <= int64_t(d.base) + int64_t(config_.max_ahead))
      d.fin = uint64_t(end);
    if (end > off || s.missing) data(d, s, off, end);
    // The peer's acknowledgement moves the other direction's delivery (IDS mode).
    Dir& o = f.d[1 - s.dir];
    if (ack && o.open) {
      const int64_t a = core::offset_of(s.ack, o.first, o.base);
      if (a > int64_t(o.acked)) o.acked = std::min(uint64_t(a), o.sent_end);
    }
    if (config_.mode == Mode::kIds) {
      if (o.open) deliver(s.flow, uint8_t(1 - s.dir), o, std::min(o.acked, o.fin), true, sink);
    } else {
      deliver(s.flow, s.dir, d, kNever, false, sink);
    }
    return Status::ok();
  }

  Status close(uint64_t flow, const ChunkSink& sink) override {
    auto it = flows_.find(flow);
    if (it == flows_.end()) return Status::ok();
    for (uint8_t dir = 0; dir < 2; ++dir) {
      Dir& d = it->second.d[dir];
      if (!d.open) continue;
      deliver(flow, dir, d, kNever, true, sink);
      total_ -= d.store.buffered();
      held_ -= d.held.size();
    }
    flows_.erase(it);
    return Status::ok();
  }

  Status close_all(const ChunkSink& sink) override {
    // Only flows holding bytes deliver anything when closed (a direction with an empty store
    // has no hole to declare either), so only they are closed one by one in flow order; the
    // rest (at the end of a capture most are finished connections) go in one clear, without a
    // sort and a lookup each.
    std::vector<uint64_t> ids;
    for (const auto& [id, f] : flows_) {
      if (f.d[0].store.buffered() || f.d[1].store.buffered())
        ids.push_back(id);
      else  // none: every segment a store held was delivered with its bytes
        held_ -= f.d[0].held.size() + f.d[1].held.size();
    }
    std::sort(ids.begin(), ids.end());
    for (uint64_t id : ids) WARPATH_TRY(close(id, sink));
    flows_.clear();
    return Status::ok();
  }

 private:
  enum class Phase : uint8_t { kNone, kSyn, kSynAck, kOpen };
  struct Dir {
    bool open      = false;
    bool depth_hit = false;
    uint32_t first = 0;  ///< sequence number of offset 0
    /// Ends of the segments held, in insertion order; popped from the front once delivery
    /// passed them (so a segment is counted until every earlier one was delivered too).
    EndQueue held;
    uint64_t base = 0;      ///< first undelivered offset
    uint64_t acked = 0;     ///< offsets below were acknowledged (clamped to sent_end)
    uint64_t sent_end = 0;  ///< end of the bytes the sender was seen to send
    uint64_t fin = kNever;  ///< offset of the FIN
    Policy policy = Policy::kBsd;  ///< the receiving host's
    Store store;
  };
  struct Flow {
    Phase phase = Phase::kNone;
    bool midstream = false, reset = false;
    uint32_t isn[2] = {0, 0};
    Dir d[2];
  };

  void open(Dir& d, uint32_t first, Policy policy) {
    d.open   = true;
    d.first  = first;
    d.policy = policy;
    c_.streams += 1;
  }

  // The receiving host's policy: the longest configured prefix holding `host`.
  Policy policy_for(const Segment& s, const uint8_t* host) const {
    Policy best   = config_.policy;
    int best_len  = -1;
    if (!host) return best;
    for (const HostPolicy& h : config_.hosts) {
      if (h.ip_version != s.ip_version || int(h.length) <= best_len) continue;
      bool in = true;
      for (unsigned bit = 0; bit < h.length && in; ++bit) {
        const uint8_t m = uint8_t(0x80u >> (bit % 8));
        in              = (host[bit / 8] & m) == (h.addr[bit / 8] & m);
      }
      if (in) {
        best     = h.policy;
        best_len = h.length;
      }
    }
    return best;
  }

  void data(Dir& d, const Segment& s, int64_t off, int64_t end) {
    const uint64_t seg_end = end < 0 ? 0 : uint64_t(end);
    // Bytes the capture cut (snap length) were sent too: an ACK past them declares a gap. Past
    // the depth nothing is delivered, so nothing there is acknowledged either.
    uint64_t sent = std::min(seg_end + s.missing, d.base + config_.max_ahead);
    if (config_.depth) sent = std::min(sent, config_.depth);
    if (end <= int64_t(d.base)) {
      c_.retransmitted_bytes += uint64_t(end - off);
      d.sent_end = std::max(d.sent_end, sent);
      return;
    }
    const uint64_t at = std::max<uint64_t>(off < 0 ? 0 : uint64_t(off), d.base);
    c_.retransmitted_bytes += uint64_t(int64_t(at) - off);
    if (at > d.base + config_.max_ahead) {
      c_.beyond_window += 1;
      return;
    }
    uint64_t stop = seg_end;
    if (config_.depth && stop > config_.depth) {
      if (!d.depth_hit) c_.depth_reached += 1;
      d.depth_hit = true;
      stop        = config_.depth;
    }
    if (stop > at) {
      const uint64_t n = stop - at;
      if (d.held.size() >= kMaxSegmentsPerStream) {
        c_.segment_cap += 1;
        return;
      }
      const uint64_t charge = n + kSegmentOverhead * (d.held.size() + 1);
      if (d.store.buffered() + charge > config_.stream_cap) {
        c_.stream_cap += 1;
        return;
      }
      if (total_ + held_ * kSegmentOverhead + n + kSegmentOverhead > config_.memcap) {
        c_.memcap += 1;
        return;
      }
      const Policy policy = config_.mode == Mode::kInline ? Policy::kFirst : d.policy;
      const uint64_t os   = off < 0 ? 0 : uint64_t(off);
      const Insert r      = d.store.insert(at, s.data + (int64_t(at) - off), uint32_t(n), os,
                                           seg_end, [&](uint64_t a, uint64_t b) {
                                             return core::new_wins(policy, os, seg_end, a, b);
                                           });
      total_ += r.added;
      d.held.push_back(stop);
      held_ += 1;
      if (r.overlap) c_.overlaps += 1;
      if (r.differ) c_.overlap_diff += 1;
    }
    d.sent_end = std::max(d.sent_end, sent);
  }

  // Delivers d's bytes up to `limit`; with `gaps`, a hole below the limit is declared lost.
  void deliver(uint64_t flow, uint8_t dir, Dir& d, uint64_t limit, bool gaps,
               const ChunkSink& sink) {
    for (;;) {
      const uint64_t run    = d.store.contiguous_end(d.base);
      const uint64_t target = std::min(run, limit);
      if (target > d.base) {
        scratch_.resize(size_t(target - d.base));
        d.store.take(d.base, target, scratch_.data());
        total_ -= target - d.base;
        c_.delivered_bytes += target - d.base;
        Chunk ch;
        ch.flow   = flow;
        ch.dir    = dir;
        ch.offset = d.base;
        ch.data   = scratch_.data();
        ch.len    = uint32_t(target - d.base);
        d.base    = target;
        if (sink) sink(ch);
        continue;
      }
      if (!gaps || limit <= d.base) break;
      const uint64_t next = d.store.first_start();
      if (next == kNever && limit == kNever) break;  // closing: no trailing gap
      const uint64_t gap_end = std::min(next, limit);
      if (gap_end <= d.base) break;
      if (limit == kNever) {  // closing: a hole nobody acknowledged
        c_.unacked_holes += 1;
      } else {
        c_.gaps += 1;
        c_.gap_bytes += gap_end - d.base;
      }
      Chunk ch;
      ch.flow   = flow;
      ch.dir    = dir;
      ch.gap    = true;
      ch.offset = d.base;
      ch.len    = uint32_t(std::min<uint64_t>(gap_end - d.base, 0xffffffffu));
      d.base    = gap_end;
      if (sink) sink(ch);
    }
    while (!d.held.empty() && d.held.front() <= d.base) {
      d.held.pop_front();
      held_ -= 1;
    }
  }

  std::string id_;
  StreamConfig config_;
  std::unordered_map<uint64_t, Flow> flows_;
  uint64_t total_ = 0;
  uint64_t held_  = 0;  ///< segments held over all streams
  StreamCounters c_;
  std::vector<uint8_t> scratch_;
};

}  // namespace warpath::stream::detail
