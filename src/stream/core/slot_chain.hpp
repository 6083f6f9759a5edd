// src/stream/core/slot_chain.hpp
//
// The device side of reassembly (cuda.stream; emu.stream runs the same schedule on the host):
// a flow's state in a fixed slot, and one thread per flow running the batch's segments of that
// flow in arrival order (GASPP's next-packet chains) through the rules of stream_rules.hpp.
//
//   Slot        FlowState over a SlotStore (at most kSlotPieces ranges, their bytes in a ring
//               of kSlotBytes indexed by stream offset) and a FixedEnds queue of kSlotHeld.
//   run_chain   the segments of one chain; before storing a segment's bytes it asks whether
//               the slot can hold them (can_store), and if not, restores the flow's scalars and
//               the counters it saved before that segment and stops: the host moves the flow
//               to its own store and runs the rest of the chain there. So the answers are those
//               of the host engines, segment for segment.
//   Batches     the host admits flows (max_flows, before_handshake for flows without state) in
//               arrival order and runs a batch this way only when memcap cannot bind in it
//               (what is buffered plus every segment of the batch fits): the one cap that
//               couples flows. Chunks carry (segment index, order) and are merged in that order.
#pragma once
#include <cstdint>

#include "stream/core/stream_rules.hpp"

namespace warpath::stream::core {

inline constexpr uint32_t kSlotPieces = 16;
inline constexpr uint32_t kSlotBytes  = 8192;  ///< a power of two
inline constexpr uint32_t kSlotHeld   = 16;

/// A direction's buffered bytes in a fixed slot: sorted, non-overlapping ranges, each with the
/// extent of the segment that stored it (as RangeStore), the bytes at ring[offset % B]. Every
/// stored offset lies in [base, base + B) of its direction (can_store), so none collide.
template <uint32_t P, uint32_t B>
struct SlotStore {
  static_assert((B & (B - 1)) == 0, "ring size must be a power of two");
  struct Piece {
    uint64_t start, end, os, oe;
  };
  Piece p[P];
  uint32_t n         = 0;
  uint64_t buffered_ = 0;
  uint8_t ring[B];

  WARPATH_HD void reset() {
    n         = 0;
    buffered_ = 0;
  }
  WARPATH_HD uint64_t buffered() const { return buffered_; }
  WARPATH_HD uint32_t pieces() const { return n; }
  WARPATH_HD const Piece& piece(uint32_t i) const { return p[i]; }

  /// Could [at, at + len) be inserted (at >= base, the direction's first undelivered offset)?
  /// An insert past every range adds one; another at most one per hole it fills and two split
  /// parts.
  WARPATH_HD bool fits(uint64_t base, uint64_t at, uint64_t len) const {
    const uint64_t e = at + len;
    if (e - base > B) return false;
    if (n == 0 || p[n - 1].end <= at) return n < P;  // in order: one range appended
    uint32_t over = 0;
    for (uint32_t i = 0; i < n; ++i) over += p[i].start < e && p[i].end > at;
    return n + over + 3 <= P;
  }

  template <class Wins>
  WARPATH_HD ranges::Insert insert(uint64_t at, const uint8_t* data, uint32_t len, uint64_t os,
                                   uint64_t oe, const Wins& wins) {
    ranges::Insert r;
    if (len == 0) return r;
    const uint64_t e = at + len;
    if (n == 0 || p[n - 1].end <= at) {
      p[n++] = {at, e, os, oe};
      copy_in(at, data, len);
      buffered_ += len;
      r.added = len;
      return r;
    }
    uint64_t c = at;
    uint32_t k = first_ending_after(c);
    while (c < e) {
      if (k == n || p[k].start > c) {  // free space up to the next range
        const uint64_t to = k == n ? e : umin(e, p[k].start);
        add(k, {c, to, os, oe});
        copy_in(c, data + (c - at), to - c);
        buffered_ += to - c;
        r.added += to - c;
        c = to;
        ++k;
        continue;
      }
      const Piece old   = p[k];
      const uint64_t to = umin(e, old.end);
      r.overlap         = true;
      if (!same(c, data + (c - at), to - c)) r.differ = true;
      if (wins(old.os, old.oe)) {  // the part before (the old range's), the new part, the rest
        remove(k);
        if (old.start < c) add(k++, {old.start, c, old.os, old.oe});
        add(k++, {c, to, os, oe});
        copy_in(c, data + (c - at), to - c);
        if (to < old.end) add(k, {to, old.end, old.os, old.oe});
      } else if (to == old.end) {
        ++k;
      }
      c = to;
    }
    return r;
  }

  WARPATH_HD uint64_t contiguous_end(uint64_t from) const {
    uint32_t k = first_ending_after(from);
    if (k == n || p[k].start > from) return from;
    uint64_t end = p[k].end;
    for (++k; k < n && p[k].start == end; ++k) end = p[k].end;
    return end;
  }
  WARPATH_HD uint64_t first_start() const { return n ? p[0].start : kNever; }

  /// Copies the stored bytes [at, at + len) out (they stay stored).
  WARPATH_HD void copy(uint64_t at, uint64_t len, uint8_t* out) const {
    for (uint64_t i = 0; i < len; ++i) out[i] = ring[(at + i) & (B - 1)];
  }

  // Runs start at the first range (everything below it was delivered).
  WARPATH_HD void take(uint64_t from, uint64_t to, uint8_t* out) {
    uint32_t k = 0;
    uint64_t c = from;
    while (c < to) {
      Piece& q         = p[k];
      const uint64_t e = umin(q.end, to);
      copy(q.start, e - q.start, out);
      out += e - q.start;
      buffered_ -= e - q.start;
      c = e;
      if (e == q.end)
        ++k;
      else
        q.start = e;
    }
    for (uint32_t i = k; i < n; ++i) p[i - k] = p[i];
    n -= k;
  }

 private:
  WARPATH_HD void copy_in(uint64_t at, const uint8_t* data, uint64_t len) {
    for (uint64_t i = 0; i < len; ++i) ring[(at + i) & (B - 1)] = data[i];
  }
  WARPATH_HD bool same(uint64_t at, const uint8_t* data, uint64_t len) const {
    for (uint64_t i = 0; i < len; ++i)
      if (ring[(at + i) & (B - 1)] != data[i]) return false;
    return true;
  }
  WARPATH_HD void add(uint32_t k, const Piece& q) {
    for (uint32_t i = n; i > k; --i) p[i] = p[i - 1];
    p[k] = q;
    ++n;
  }
  WARPATH_HD void remove(uint32_t k) {
    for (uint32_t i = k + 1; i < n; ++i) p[i - 1] = p[i];
    --n;
  }
  WARPATH_HD uint32_t first_ending_after(uint64_t at) const {
    uint32_t lo = 0, hi = n;
    while (lo < hi) {
      const uint32_t mid = (lo + hi) / 2;
      if (p[mid].end <= at)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }
};

/// The ends of a direction's held segments in ascending order, at most H (a ring).
template <uint32_t H>
struct FixedEnds {
  uint64_t v[H];
  uint32_t head = 0, count = 0;
  WARPATH_HD void reset() { head = count = 0; }
  WARPATH_HD uint32_t size() const { return count; }
  WARPATH_HD bool empty() const { return count == 0; }
  WARPATH_HD uint64_t front() const { return v[head]; }
  WARPATH_HD uint64_t at(uint32_t i) const { return v[(head + i) % H]; }
  WARPATH_HD void push_back(uint64_t x) { v[(head + count++) % H] = x; }
  /// Inserts x in order, from the back: O(entries past x), at most H (the host's EndQueue, which
  /// holds up to kMaxSegmentsPerStream, is a heap).
  WARPATH_HD void push_sorted(uint64_t x) {
    uint32_t i = count++;
    for (; i > 0 && v[(head + i - 1) % H] > x; --i) v[(head + i) % H] = v[(head + i - 1) % H];
    v[(head + i) % H] = x;
  }
  WARPATH_HD void pop_front() {
    head = (head + 1) % H;
    --count;
  }
};

using SlotFlow = FlowState<SlotStore<kSlotPieces, kSlotBytes>, FixedEnds<kSlotHeld>>;

WARPATH_HD void reset_slot(SlotFlow& f) {
  f.m = FlowMeta{};
  for (int i = 0; i < 2; ++i) {
    f.store[i].reset();
    f.held[i].reset();
  }
}

inline constexpr uint32_t kEnd = ~uint32_t(0);  ///< the end of a chain

/// A segment as the device sees it: its payload at `data` in the batch's payload buffer, the
/// receiving hosts' policies looked up by the host.
struct SlotSegment {
  uint64_t flow = 0;
  uint32_t seq = 0, ack = 0;
  uint64_t data = 0;  ///< offset of the payload in the batch's payload buffer
  uint32_t len = 0, missing = 0;
  uint32_t next = kEnd;  ///< the next segment of this flow in the batch (index), or kEnd
  uint8_t dir = 0, flags = 0;
  Policy to_dst = Policy::kBsd, to_src = Policy::kBsd;
  uint8_t tfo = 0;  ///< Segment::tfo
};
/// A chunk a chain delivered: its bytes at `bytes` in the chain's byte region (in a backend's
/// compact output: in SlotBatchOut::bytes).
struct SlotChunk {
  uint64_t flow = 0, offset = 0, bytes = 0;
  uint32_t seg   = 0;  ///< index of the segment that delivered it
  uint32_t order = 0;  ///< among that segment's chunks
  uint32_t len   = 0;
  uint8_t dir    = 0;
  bool gap       = false;
};

/// One chain: a slot and its segments (first, then SlotSegment::next); where its chunks go while
/// it runs (regions bounded by chunks_per_segment per segment, and by its segments' payload plus
/// what its slot held for bytes).
struct SlotChain {
  uint32_t slot     = 0;
  uint32_t first    = 0;
  uint8_t fresh     = 0;                 ///< the flow is new: reset the slot first
  uint64_t chunk_at = 0, chunk_cap = 0;  ///< its part of the chunk array
  uint64_t byte_at = 0, byte_cap = 0;    ///< its part of the byte array
};

/// What a chain ran: the chunks it wrote, and the segment where it stopped (kEnd: all).
struct ChainResult {
  uint32_t chunks  = 0;
  uint32_t stopped = kEnd;
  int64_t buffered = 0, held = 0;  ///< changes of the totals
  uint64_t bytes = 0;              ///< chunk bytes written
  /// Where the backend put the chain's chunks in its compact output (SlotBatchOut::chunks).
  uint64_t chunk_first = 0;
};

/// Chunks a chain may write per segment: one delivery's runs and gaps (a run ends at a hole).
WARPATH_HD uint64_t chunks_per_segment() { return 2 * kSlotPieces + 2; }

/// The Ctx of stream_rules.hpp for one chain in a slot.
struct SlotRules {
  const Limits* lim = nullptr;
  StreamCounters c{};
  const SlotSegment* seg = nullptr;
  uint32_t seg_index     = 0;
  uint32_t order         = 0;
  SlotChunk* chunks      = nullptr;
  uint8_t* bytes         = nullptr;
  ChainResult r;

  WARPATH_HD const Limits& limits() const { return *lim; }
  WARPATH_HD StreamCounters& counters() { return c; }
  WARPATH_HD Policy policy(const Segment&, bool of_dst) const {
    return of_dst ? seg->to_dst : seg->to_src;
  }
  WARPATH_HD bool memcap_room(uint64_t) const { return true; }  // the batch cannot reach it
  template <class S, class H>
  WARPATH_HD bool can_store(const Dir& d, const S& store, const H& held, uint64_t at,
                            uint64_t n) const {
    return held.size() < kSlotHeld && store.fits(d.base, at, n);
  }
  WARPATH_HD void buffered(int64_t n) { r.buffered += n; }
  WARPATH_HD void held(int64_t n) { r.held += n; }
  WARPATH_HD uint8_t* chunk_bytes(uint32_t n) {
    uint8_t* out = bytes + r.bytes;
    r.bytes += n;
    return out;
  }
  WARPATH_HD void emit(const Chunk& ch) {
    SlotChunk& o = chunks[r.chunks++];
    o.flow       = ch.flow;
    o.offset     = ch.offset;
    o.bytes      = ch.gap ? 0 : uint64_t(ch.data - bytes);
    o.seg        = seg_index;
    o.order      = order++;
    o.len        = ch.len;
    o.dir        = ch.dir;
    o.gap        = ch.gap;
  }
};

/// Runs one chain (one flow's segments of the batch, in arrival order) in its slot. `payload`:
/// the batch's payload buffer; chunks and their bytes go to `chunks` and `bytes` (the chain's
/// parts); counters to `c`.
WARPATH_HD ChainResult run_chain(const Limits& lim, SlotFlow& f, const SlotChain& chain,
                                 const SlotSegment* segs, const uint8_t* payload, SlotChunk* chunks,
                                 uint8_t* bytes, StreamCounters& c) {
  SlotRules ctx;
  ctx.lim    = &lim;
  ctx.chunks = chunks;
  ctx.bytes  = bytes;
  if (chain.fresh) reset_slot(f);
  for (uint32_t i = chain.first; i != kEnd; i = segs[i].next) {
    const SlotSegment& g = segs[i];
    Segment s;
    s.flow                       = g.flow;
    s.dir                        = g.dir;
    s.flags                      = g.flags;
    s.seq                        = g.seq;
    s.ack                        = g.ack;
    s.data                       = payload + g.data;
    s.len                        = g.len;
    s.missing                    = g.missing;
    s.tfo                        = g.tfo;
    ctx.seg                      = &g;
    ctx.seg_index                = i;
    ctx.order                    = 0;
    const FlowMeta saved_meta    = f.m;
    const StreamCounters saved_c = ctx.c;
    if (!flow_segment(ctx, f, s)) {
      f.m           = saved_meta;
      ctx.c         = saved_c;
      ctx.r.stopped = i;
      break;
    }
  }
  c = ctx.c;
  return ctx.r;
}

}  // namespace warpath::stream::core
