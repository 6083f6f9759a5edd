// src/stream/core/stream_rules.hpp
//
// The reassembly rules of include/warpath/stream/stream.hpp (handshake, offsets, RST and FIN,
// bounds, overlaps, delivery, gaps), written once for the host and the device: every engine
// runs these functions on its own flow state, byte store and end queue.
//
//   Store  one direction's buffered bytes (core/ranges: ByteStore, RangeStore; slot_chain.hpp
//          on the device): buffered(), insert(at, data, n, os, oe, wins) -> ranges::Insert,
//          contiguous_end(from), first_start(), take(from, to, out); optionally view(from,
//          to) (the run in place, or null) and drop(from, to), which save the copy.
//   Held   the ends of the direction's held segments, smallest first (EndQueue, a heap, on the
//          host, a fixed ring in a device slot): size(), empty(), front(), push_sorted(),
//          pop_front(). Ordered, not FIFO: a segment parked far ahead that nobody acknowledges
//          must not keep the acknowledged ones after it counted against kMaxSegmentsPerStream.
//   Ctx    what the rules need from their engine:
//            const Limits& limits()
//            StreamCounters& counters()
//            Policy policy(const Segment&, bool of_dst)   the receiving host's (of s.dst or s.src)
//            bool memcap_room(uint64_t n)    n more bytes and one more segment held fit memcap
//            bool can_store(const Dir&, Store&, Held&, uint64_t at, uint64_t n)
//                                             false: this store cannot take them (a device slot
//                                             that is full); the segment is abandoned before
//                                             any store changed, for the caller to redo it
//            void buffered(int64_t bytes), held(int64_t segments)   totals over all streams
//            uint8_t* chunk_bytes(uint32_t n) where a chunk's bytes are copied out
//            void emit(const Chunk&)
//
// Admission (finding or creating a flow's state, max_flows) is the engine's: the rules start
// with a flow that has state.
#pragma once
#include <cstdint>

#include "core/ranges/insert.hpp"
#include "stream/core/stream_core.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::stream::core {

inline constexpr uint64_t kNever                = ranges::kNever;
inline constexpr uint32_t kMaxSegmentsPerStream = 4096;  ///< held at once per direction
/// What the caps charge per segment held besides its bytes: a stored range's bookkeeping.
inline constexpr uint64_t kSegmentOverhead = 128;

WARPATH_HD uint64_t umin(uint64_t a, uint64_t b) { return a < b ? a : b; }
WARPATH_HD uint64_t umax(uint64_t a, uint64_t b) { return a < b ? b : a; }

/// StreamConfig's scalars (no heap: copied to the device as they are).
struct Limits {
  Mode mode           = Mode::kIds;
  bool midstream      = false;
  uint64_t depth      = 0;
  uint32_t max_ahead  = 0;
  uint32_t stream_cap = 0;
  uint64_t memcap     = 0;
};
inline Limits limits_of(const StreamConfig& c) {
  return {c.mode, c.midstream, c.depth, c.max_ahead, c.stream_cap, c.memcap};
}

/// Where the handshake is: the initiator's SYN seen; the responder's SYN+ACK; open. A split
/// handshake (Beardsley's; Suricata's 4WHS) goes SYN, the responder's own SYN (kSplitSyn), the
/// initiator's SYN+ACK (kSplitSynAck), the responder's ACK.
enum class Phase : uint8_t { kNone, kSyn, kSynAck, kOpen, kSplitSyn, kSplitSynAck };

/// One direction's scalars.
struct Dir {  // 48 bytes: the small fields first
  bool open         = false;
  bool depth_hit    = false;
  Policy policy     = Policy::kBsd;  ///< the receiving host's
  uint32_t first    = 0;             ///< sequence number of offset 0
  uint64_t base     = 0;             ///< first undelivered offset
  uint64_t acked    = 0;             ///< offsets below were acknowledged (up to sent_end)
  uint64_t sent_end = 0;             ///< end of the bytes the sender was seen to send
  uint64_t fin      = kNever;        ///< offset of the FIN
  /// End of the segments refused (past the window, base + max_ahead, or by a cap), clamped to
  /// base + max_ahead: sent, not taken. An acknowledgement up to it counts those bytes as sent
  /// (the receiver has them), so that after a capture loss longer than max_ahead, or a refusal,
  /// the ACKs declare gaps and the direction catches up, max_ahead at a time (a forged segment
  /// and ACK skip no further than a stored segment could); an ACK alone, past every segment
  /// seen, moves nothing.
  uint64_t refused_end = 0;
};
/// A flow's scalars: what a device thread saves before a segment it may have to hand back.
struct FlowMeta {
  Phase phase    = Phase::kNone;
  bool midstream = false, reset = false;
  bool fast_open = false;  ///< the SYN (or the SYN+ACK) carried TCP Fast Open's option
  uint32_t syn_len = 0;    ///< sequence space of the Fast Open SYN's data (captured or not)
  uint32_t isn[2]  = {0, 0};
  Dir d[2];
};
/// A flow with reassembly state. `held[i]` holds the ends of direction i's segments in the
/// store, popped from the front once delivery passed them (so a segment is counted until every
/// earlier one was delivered too).
template <class Store, class Held>
struct FlowState {
  FlowMeta m;
  Store store[2];
  Held held[2];
};

/// Does a segment open a flow that has no state yet?
WARPATH_HD bool opens_flow(const Segment& s, bool midstream) {
  const bool syn = s.flags & packet::kTcpSyn, ack = s.flags & packet::kTcpAck;
  return (syn && !ack && s.dir == 0) || (midstream && !syn);
}

template <class Ctx>
WARPATH_HD void open_dir(Ctx& ctx, Dir& d, uint32_t first, Policy policy) {
  d.open   = true;
  d.first  = first;
  d.policy = policy;
  ctx.counters().streams += 1;
}

struct NewWins {
  Policy policy;
  uint64_t os, oe;
  WARPATH_HD bool operator()(uint64_t a, uint64_t b) const {
    return new_wins(policy, os, oe, a, b);
  }
};

/// The segment's bytes [off, end) into direction d. False: ctx.can_store refused them.
template <class Ctx, class Store, class Held>
WARPATH_HD bool store_data(Ctx& ctx, Dir& d, Store& store, Held& held, const Segment& s,
                           int64_t off, int64_t end) {
  const Limits& lim      = ctx.limits();
  StreamCounters& c      = ctx.counters();
  const uint64_t seg_end = end < 0 ? 0 : uint64_t(end);
  // Bytes the capture cut (snap length) were sent too: an ACK past them declares a gap. (Past
  // the depth they count as sent as well: the ACKs move the direction along past it, without
  // delivering or declaring anything, so that its window, FIN and RST stay where the
  // connection is.)
  const uint64_t sent = umin(seg_end + s.missing, d.base + lim.max_ahead);
  if (end <= int64_t(d.base)) {
    c.retransmitted_bytes += uint64_t(end - off);
    d.sent_end = umax(d.sent_end, sent);
    return true;
  }
  const uint64_t at = umax(off < 0 ? 0 : uint64_t(off), d.base);
  if (at > d.base + lim.max_ahead) {
    c.retransmitted_bytes += uint64_t(int64_t(at) - off);
    c.beyond_window += 1;
    d.refused_end = umax(d.refused_end, sent);  // at most max_ahead past the base: an ACK
    return true;                                // moves a direction that far at a time
  }
  uint64_t stop         = seg_end;
  const bool hits_depth = lim.depth && stop > lim.depth;
  if (hits_depth) stop = lim.depth;
  const uint64_t n = stop > at ? stop - at : 0;
  // Which cap refuses the bytes, if any; bytes every cap admits the store must take too
  // (can_store), or the segment is abandoned before anything changed, for the caller to redo.
  uint64_t* refused = nullptr;
  if (n) {
    if (held.size() >= kMaxSegmentsPerStream)
      refused = &c.segment_cap;
    else if (store.buffered() + n + kSegmentOverhead * (held.size() + 1) > lim.stream_cap)
      refused = &c.stream_cap;
    else if (!ctx.memcap_room(n))
      refused = &c.memcap;
    else if (!ctx.can_store(d, store, held, at, n))
      return false;
  }
  c.retransmitted_bytes += uint64_t(int64_t(at) - off);
  if (hits_depth) {
    if (!d.depth_hit) c.depth_reached += 1;
    d.depth_hit = true;
  }
  if (refused) {
    *refused += 1;
    d.refused_end = umax(d.refused_end, sent);
    return true;
  }
  if (n) {
    const Policy policy    = lim.mode == Mode::kInline ? Policy::kFirst : d.policy;
    const uint64_t os      = off < 0 ? 0 : uint64_t(off);
    const ranges::Insert r = store.insert(at, s.data + (int64_t(at) - off), uint32_t(n), os,
                                          seg_end, NewWins{policy, os, seg_end});
    ctx.buffered(int64_t(r.added));
    held.push_sorted(stop);
    ctx.held(1);
    if (r.overlap) c.overlaps += 1;
    if (r.differ) c.overlap_diff += 1;
  }
  d.sent_end = umax(d.sent_end, sent);
  return true;
}

/// Delivers direction `dir`'s bytes up to `limit`; with `gaps`, a hole below the limit is
/// declared lost.
template <class Ctx, class Store, class Held>
WARPATH_HD_HOT void deliver(Ctx& ctx, uint64_t flow, uint8_t dir, Dir& d, Store& store, Held& held,
                            uint64_t limit, bool gaps) {
  StreamCounters& c = ctx.counters();
  for (;;) {
    const uint64_t run    = store.contiguous_end(d.base);
    const uint64_t target = umin(run, limit);
    if (target > d.base) {
      const uint64_t from  = d.base;
      const uint32_t n     = uint32_t(target - from);
      const uint8_t* bytes = nullptr;
      // A store that can hand the run out in place (RangeStore, when its segments came in
      // order) saves the copy; it drops the run once the chunk was emitted.
      if constexpr (requires { store.view(from, target); }) bytes = store.view(from, target);
      const bool in_place = bytes != nullptr;
      if (!in_place) {
        uint8_t* out = ctx.chunk_bytes(n);
        store.take(from, target, out);
        bytes = out;
      }
      ctx.buffered(-int64_t(n));
      c.delivered_bytes += n;
      Chunk ch;
      ch.flow   = flow;
      ch.dir    = dir;
      ch.offset = from;
      ch.data   = bytes;
      ch.len    = n;
      d.base    = target;
      ctx.emit(ch);
      if constexpr (requires { store.view(from, target); })
        if (in_place) store.drop(from, target);
      continue;
    }
    // Past the depth nothing is kept: the bytes only pass, up to the limit (IDS mode: what
    // was acknowledged) or, inline, what was sent; closing moves nothing.
    const uint64_t depth = ctx.limits().depth;
    if (depth && d.base >= depth) {
      const uint64_t to = limit != kNever ? limit : gaps ? d.base : d.sent_end;
      if (to > d.base) d.base = to;
      break;
    }
    if (!gaps || limit <= d.base) break;
    const uint64_t next = store.first_start();
    if (next == kNever && limit == kNever) break;  // closing: no trailing gap
    const uint64_t gap_end = umin(umin(next, limit), depth ? depth : kNever);
    if (gap_end <= d.base) break;
    if (limit == kNever) {  // closing: a hole nobody acknowledged
      c.unacked_holes += 1;
    } else {
      c.gaps += 1;
      c.gap_bytes += gap_end - d.base;
    }
    Chunk ch;
    ch.flow   = flow;
    ch.dir    = dir;
    ch.gap    = true;
    ch.offset = d.base;
    ch.len    = uint32_t(umin(gap_end - d.base, 0xffffffffu));
    d.base    = gap_end;
    ctx.emit(ch);
  }
  int64_t popped = 0;
  while (!held.empty() && held.front() <= d.base) {
    held.pop_front();
    popped += 1;
  }
  if (popped) ctx.held(-popped);
}

/// A Fast Open SYN's (or SYN+ACK's) data as the segment it is: from the sequence number after
/// the SYN's, without the SYN (and without a RST, which such a segment is only taken without).
WARPATH_HD Segment as_data(const Segment& s) {
  Segment t = s;
  t.seq     = s.seq + 1;
  t.flags   = uint8_t(s.flags & ~(packet::kTcpSyn | packet::kTcpRst));
  return t;
}

/// Discards what a Fast Open SYN left in direction `d` (another SYN, or a SYN+ACK that did not
/// take its data): nothing but that SYN's bytes can be there, one run from the base. The
/// direction's next byte is the one at sequence number `next_seq` (the new SYN's, or the same
/// SYN's again), placed at the base: in inline mode the SYN's bytes were delivered already, and
/// what the client sends in their place must follow them, not hide behind them as a
/// retransmission (bytes the server takes would go uninspected).
template <class Ctx, class Store, class Held>
WARPATH_HD void forget_syn_data(Ctx& ctx, Dir& d, Store& store, Held& held, uint32_t next_seq) {
  const uint64_t n = store.buffered();
  if (n) {
    store.take(d.base, d.base + n, ctx.chunk_bytes(uint32_t(n)));
    ctx.buffered(-int64_t(n));
  }
  int64_t popped = 0;
  while (!held.empty()) {
    held.pop_front();
    popped += 1;
  }
  if (popped) ctx.held(-popped);
  d.sent_end = d.refused_end = d.acked = d.base;
  d.fin                               = kNever;
  d.first                             = next_seq - uint32_t(d.base);
}

template <class Ctx, class Store, class Held>
WARPATH_HD_HOT bool open_segment(Ctx& ctx, FlowState<Store, Held>& f, const Segment& s);

/// The handshake is complete at `s`: both directions open (direction 0 already is when a Fast
/// Open SYN's bytes are held). The receiver of direction 0 is the responder: `s`'s source when
/// it comes from the responder, its destination when from the initiator.
template <class Ctx>
WARPATH_HD void open_both(Ctx& ctx, FlowMeta& m, const Segment& s) {
  const bool from_initiator = s.dir == 0;
  if (!m.d[0].open) open_dir(ctx, m.d[0], m.isn[0] + 1, ctx.policy(s, from_initiator));
  open_dir(ctx, m.d[1], m.isn[1] + 1, ctx.policy(s, !from_initiator));
  m.phase = Phase::kOpen;
}

/// A Fast Open SYN's bytes, held in direction 0 from now on (the longest copy's length kept:
/// what a SYN+ACK may acknowledge).
template <class Ctx, class Store, class Held>
WARPATH_HD bool take_syn_data(Ctx& ctx, FlowState<Store, Held>& f, const Segment& s) {
  FlowMeta& m        = f.m;
  const uint64_t len = uint64_t(s.len) + s.missing;
  if (len > m.syn_len) m.syn_len = uint32_t(umin(len, 0xffffffffu));
  m.fast_open = true;
  if (!m.d[0].open) open_dir(ctx, m.d[0], s.seq + 1, ctx.policy(s, true));
  return open_segment(ctx, f, as_data(s));
}

/// A split handshake completes at the responder's ACK or SYN+ACK (`s`, from the responder), which
/// acknowledges the initiator's SYN alone: a Fast Open SYN's bytes were not taken.
template <class Ctx, class Store, class Held>
WARPATH_HD void open_split(Ctx& ctx, FlowState<Store, Held>& f, const Segment& s) {
  FlowMeta& m = f.m;
  if (m.syn_len) {
    forget_syn_data(ctx, m.d[0], f.store[0], f.held[0], m.isn[0] + 1);
    ctx.counters().fast_open_ignored += 1;
    m.syn_len = 0;
  }
  open_both(ctx, m, s);
}

/// One segment of a flow with state. False: ctx.can_store refused its bytes, and the caller
/// restores the flow's scalars and the counters it saved and redoes the segment elsewhere.
template <class Ctx, class Store, class Held>
WARPATH_HD_HOT bool flow_segment(Ctx& ctx, FlowState<Store, Held>& f, const Segment& s) {
  const Limits& lim = ctx.limits();
  StreamCounters& c = ctx.counters();
  FlowMeta& m       = f.m;
  const bool syn = s.flags & packet::kTcpSyn, ack = s.flags & packet::kTcpAck;
  if (m.phase != Phase::kOpen) {
    const bool rst = s.flags & packet::kTcpRst;
    if (syn && !ack && s.dir == 0) {  // a SYN, or its retransmission
      if (m.phase != Phase::kNone && s.seq == m.isn[0]) {
        // The same SYN again (crossing a split handshake's packets, too): the handshake stays
        // where it is. Before any answer, a Fast Open SYN's bytes go in as a retransmission of
        // the first's, under the receiver's overlap policy (the server took whichever copy
        // reached it); once answered, a server takes none of a SYN's bytes (Linux, in
        // SYN-RECEIVED, answers a resent SYN without them).
        if (rst || !(s.len || s.missing) || !(s.tfo || m.d[0].open) || m.phase != Phase::kSyn) {
          if (s.len) c.data_on_syn += 1;
          return true;
        }
        return take_syn_data(ctx, f, s);
      }
      // Another attempt: what a Fast Open SYN left is not the stream's.
      if (m.d[0].open) forget_syn_data(ctx, m.d[0], f.store[0], f.held[0], s.seq + 1);
      m.isn[0]    = s.seq;
      m.phase     = Phase::kSyn;
      m.fast_open = s.tfo && !rst;
      m.syn_len   = 0;
      // TCP Fast Open: the SYN's bytes are the client's first, held from now on. (A SYN with a
      // RST is no connection attempt a host takes: Linux discards a RST in LISTEN.)
      if (s.tfo && (s.len || s.missing) && !rst) return take_syn_data(ctx, f, s);
      if (s.len) c.data_on_syn += 1;
      return true;
    }
    const bool fast_open = m.fast_open || s.tfo;
    const uint32_t taken = s.ack - (m.isn[0] + 1);  // of the SYN's data, what a SYN+ACK took
    // (After a split handshake's own SYN too: the responder may answer the ordinary way after
    // all, and whichever handshake completes opens the connection; and after a SYN+ACK, which
    // a new one replaces: the responder's half-open state expired, its SYN cookies changed.)
    const bool syn_sent =
        m.phase == Phase::kSyn || m.phase == Phase::kSplitSyn || m.phase == Phase::kSynAck;
    if (syn && ack && s.dir == 1 && syn_sent &&
        (fast_open ? !rst && taken <= m.syn_len : taken == 0)) {
      m.isn[1] = s.seq;
      if (!fast_open) {
        m.phase = Phase::kSynAck;
        if (s.len) c.data_on_syn += 1;
        return true;
      }
      // TCP Fast Open: open at the SYN+ACK (Suricata: established). One that acknowledges only
      // the SYN did not take its data: the client sends it again after the handshake.
      if (taken < m.syn_len) {
        // It took none or a part (a shorter copy of the SYN than the longest seen): what it took
        // is delivered (IDS: it acknowledged it), the rest was never the stream's.
        if (taken && lim.mode == Mode::kIds)
          deliver(ctx, s.flow, 0, m.d[0], f.store[0], f.held[0], taken, true);
        forget_syn_data(ctx, m.d[0], f.store[0], f.held[0], m.isn[0] + 1 + taken);
        c.fast_open_ignored += 1;
      }
      open_both(ctx, m, s);
      m.fast_open = true;
      // Its own bytes (RFC 7413 4.2.2: a SYN+ACK may carry data) and its acknowledgement of
      // the SYN's, as an ordinary segment's after the SYN's sequence number.
      return open_segment(ctx, f, as_data(s));
    }
    // A split handshake: the responder answers the SYN with a SYN of its own (a stack in
    // SYN-SENT takes it as a simultaneous open), the initiator acknowledges that with a SYN+ACK
    // of its first SYN, and the responder's ACK completes it. Not following it would leave the
    // connection without a stream, its bytes uninspected: an evasion.
    if (syn && !ack && s.dir == 1 && m.phase == Phase::kSyn) {
      m.isn[1] = s.seq;
      m.phase  = Phase::kSplitSyn;
      if (s.len) c.data_on_syn += 1;
      return true;
    }
    if (syn && ack && s.dir == 0 && m.phase == Phase::kSplitSyn && s.seq == m.isn[0] &&
        s.ack == m.isn[1] + 1) {
      m.phase = Phase::kSplitSynAck;
      if (s.len) c.data_on_syn += 1;
      return true;
    }
    // The split handshake's last packet may be the responder's SYN+ACK (a simultaneous open:
    // Linux answers the initiator's SYN+ACK so) as well as its ACK.
    // Its data, if any, is no stream's: Linux takes such a SYN+ACK only without data.
    if (syn && ack && s.dir == 1 && m.phase == Phase::kSplitSynAck && s.seq == m.isn[1] &&
        s.ack == m.isn[0] + 1) {
      open_split(ctx, f, s);
      if (s.len) c.data_on_syn += 1;
      return true;
    }
    const bool three_way = s.dir == 0 && m.phase == Phase::kSynAck && s.ack == m.isn[1] + 1;
    const bool split     = s.dir == 1 && m.phase == Phase::kSplitSynAck && s.ack == m.isn[0] + 1;
    if (!syn && ack && split) {
      open_split(ctx, f, s);
    } else if (!syn && ack && three_way) {
      open_both(ctx, m, s);
    } else if (lim.midstream && !syn) {
      m.phase     = Phase::kOpen;
      m.midstream = true;
      c.midstream += 1;
    } else {
      if (s.len) c.before_handshake += 1;
      return true;
    }
  }
  return open_segment(ctx, f, s);
}

/// A segment of a direction that may hold data (the connection open, or a Fast Open SYN's).
template <class Ctx, class Store, class Held>
WARPATH_HD_HOT bool open_segment(Ctx& ctx, FlowState<Store, Held>& f, const Segment& s) {
  const Limits& lim = ctx.limits();
  StreamCounters& c = ctx.counters();
  FlowMeta& m       = f.m;
  const bool syn = s.flags & packet::kTcpSyn, ack = s.flags & packet::kTcpAck;
  Dir& d = m.d[s.dir];
  if (!d.open) {
    if (syn) return true;  // a midstream flow's late SYN: nothing to learn
    open_dir(ctx, d, s.seq, ctx.policy(s, true));
  }
  // A SYN once the connection is open (a handshake retransmission, or an evasion: its data
  // would sit one byte off) carries nothing the receiver takes: a stack in ESTABLISHED answers
  // it with an ACK at most (RFC 5961 4), whatever its flags and bytes.
  if (syn) {
    if (s.len) c.data_on_syn += 1;
    return true;
  }
  const int64_t off = offset_of(s.seq, d.first, d.base);
  // A RST counts only where the receiver's next expected byte may be (RFC 5961 3.2: a stack
  // takes a RST there alone, and answers one elsewhere in its window with an ACK): not before
  // what it acknowledged or was delivered, not past what the sender sent (its FIN included). A
  // stale or far one could otherwise end inspection of a live connection.
  if (s.flags & packet::kTcpRst) {
    const uint64_t lo = umax(d.base, d.acked);
    const uint64_t hi = d.fin != kNever ? umax(d.sent_end, d.fin + 1) : d.sent_end;
    if (off >= int64_t(lo) && off <= int64_t(hi))
      m.reset = true;
    else
      c.bad_rst += 1;
  }
  if (m.reset) {
    if (s.len) c.after_close += 1;
    return true;
  }
  int64_t end = off + int64_t(s.len);
  // Data past the FIN is not part of the stream. (The FIN takes a sequence number, so the
  // final ACK lies past it too, without data: it is no refused segment.)
  if (d.fin != kNever && end > int64_t(d.fin)) {
    if (s.len) c.after_close += 1;
    end = off > int64_t(d.fin) ? off : int64_t(d.fin);
  }
  // A FIN fixes the end only in the window: a stale one (before bytes already in sequence: the
  // sender cannot end its stream there) or a far one is the sender's mistake or an evasion, not
  // the end of the stream. (In sequence, not merely seen: a byte injected past the real FIN
  // must not make that FIN look stale.) It takes the place after the segment's bytes, those
  // the capture cut (snap length) included, and counts as sent: an ACK of it declares the
  // bytes before it that were never seen a gap.
  if (s.flags & packet::kTcpFin) {
    const int64_t fin_at = end + int64_t(s.missing);
    if (d.fin == kNever && fin_at >= int64_t(f.store[s.dir].contiguous_end(d.base)) &&
        fin_at <= int64_t(d.base) + int64_t(lim.max_ahead)) {
      d.fin      = uint64_t(fin_at);
      d.sent_end = umax(d.sent_end, d.fin);
    }
  }
  if (end > off || s.missing)
    if (!store_data(ctx, d, f.store[s.dir], f.held[s.dir], s, off, end)) return false;
  // The peer's acknowledgement moves the other direction's delivery (IDS mode).
  const uint8_t other = uint8_t(1 - s.dir);
  Dir& o              = m.d[other];
  if (ack && o.open) {
    const int64_t a = offset_of(s.ack, o.first, o.base);
    if (a > int64_t(o.acked)) {
      o.acked    = umin(uint64_t(a), umax(o.sent_end, o.refused_end));
      o.sent_end = umax(o.sent_end, o.acked);  // acknowledged: sent (Dir::refused_end)
    }
  }
  if (lim.mode == Mode::kIds) {
    // Nothing to deliver or declare unless the limit passed what was delivered (most segments:
    // an ACK that moved nothing). Nor anything to pop: a direction's first held segment always
    // ends past its base (stored only past it; popped whenever the base moves).
    const uint64_t limit = umin(o.acked, o.fin);
    if (o.open && limit > o.base)
      deliver(ctx, s.flow, other, o, f.store[other], f.held[other], limit, true);
  } else {
    deliver(ctx, s.flow, s.dir, d, f.store[s.dir], f.held[s.dir], kNever, false);
  }
  return true;
}

/// The flow ended: what is buffered is delivered (holes declared between).
template <class Ctx, class Store, class Held>
WARPATH_HD void close_flow(Ctx& ctx, uint64_t flow, FlowState<Store, Held>& f) {
  for (uint8_t dir = 0; dir < 2; ++dir) {
    Dir& d = f.m.d[dir];
    if (!d.open) continue;
    deliver(ctx, flow, dir, d, f.store[dir], f.held[dir], kNever, true);
    ctx.buffered(-int64_t(f.store[dir].buffered()));
    ctx.held(-int64_t(f.held[dir].size()));
  }
}

}  // namespace warpath::stream::core
