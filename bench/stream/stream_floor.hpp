// bench/stream/stream_floor.hpp: warpath-stream-bench's `--engine floor`, a yardstick, not an
// engine. It does the least work the bench's job allows, to say how far warpath's engines are
// from that job's cost and how much of their time is what they do besides:
//   - Ethernet + IPv4 + TCP only (no VLAN, IPv6, fragments or malformed input: it stops at the
//     first frame it cannot read), no checksums;
//   - a flow is a canonical 5-tuple in an open-addressed index (linear probing, backward-shift
//     deletion) over a pool of entries, in batches of 256: every packet's home slot requested,
//     then the entry that slot names, then each packet found and applied in order;
//   - per direction: the next sequence number, the bytes not yet acknowledged (copied, as
//     libnids and warpath copy them) and the segments that came early (copied, delivered when
//     the hole fills); an ACK delivers the acknowledged bytes to the sink;
//   - a flow ends when both FINs are seen and acknowledged; no timeouts, policies, overlap
//     checks, caps, depth, counters or flow records.
// It delivers every byte of the bench's workloads (which are well formed) and nothing more.
// Its held segments are a plain list and its unacknowledged bytes a vector erased from the
// front: fine for the four workloads (at most one segment held, two acknowledged at a
// time), quadratic for the hostile `reverse` and `acksteps`, where it means nothing.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace warpath::bench::floor_engine {

struct Dir {
  uint32_t next    = 0;  ///< sequence number of the next byte in order
  uint32_t buf_seq = 0;  ///< sequence number of buf[0]
  uint32_t fin     = 0;  ///< sequence number of the FIN (valid when has_fin)
  bool has_fin     = false;
  std::vector<uint8_t> buf;  ///< in order, not yet acknowledged
  struct Early {
    uint32_t seq;
    std::vector<uint8_t> bytes;
  };
  std::vector<Early> early;  ///< came past a hole at `next`
};

struct Flow {
  uint32_t a = 0, b = 0;    ///< addresses, a <= b (host order)
  uint32_t ports      = 0;  ///< port of a << 16 | port of b
  bool initiator_is_b = false;
  bool live           = false;
  Dir d[2];  ///< 0: initiator -> responder
};

class Floor {
 public:
  explicit Floor(uint32_t capacity_log2) : mask_((1u << capacity_log2) - 1) {
    slots_.assign(size_t(mask_) + 1, 0);
    pool_.resize(size_t(mask_) + 1);
    free_.reserve(pool_.size());
    for (uint32_t i = uint32_t(pool_.size()); i > 1; --i) free_.push_back(i - 1);  // 0: empty
  }

  static constexpr uint32_t kMaxBatch = 256;

  /// One batch of at most kMaxBatch frames; returns false at a frame it cannot read.
  template <class Sink>
  bool batch(const uint8_t* const* frames, const uint32_t* lens, uint32_t n, Sink&& sink) {
    if (n > kMaxBatch) return false;
    Parsed p[kMaxBatch];
    for (uint32_t i = 0; i < n; ++i) {  // headers read, keys hashed, home slots requested
      if (!parse(frames[i], lens[i], p[i])) return false;
      __builtin_prefetch(&slots_[p[i].hash & mask_]);
    }
    for (uint32_t i = 0; i < n; ++i)  // the home slot's entry requested (most flows are there)
      if (const uint32_t e = slots_[p[i].hash & mask_]) __builtin_prefetch(&pool_[e]);
    for (uint32_t i = 0; i < n; ++i) packet(p[i], sink);  // found and applied in order
    return true;
  }

 private:
  struct Parsed {
    uint32_t a, b, ports, hash;
    uint32_t seq, ack, len;
    const uint8_t* data;
    uint8_t flags;
    bool from_b;
  };

  static uint32_t be32(const uint8_t* p) {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return __builtin_bswap32(v);
  }
  static uint16_t be16(const uint8_t* p) { return uint16_t(p[0] << 8 | p[1]); }

  static bool parse(const uint8_t* f, uint32_t caplen, Parsed& p) {
    if (caplen < 54 || be16(f + 12) != 0x0800) return false;
    const uint8_t* ip  = f + 14;
    const uint32_t ihl = uint32_t(ip[0] & 15) * 4, total = be16(ip + 2);
    if ((ip[0] >> 4) != 4 || ihl < 20 || ip[9] != 6 || 14 + total > caplen) return false;
    const uint8_t* t    = ip + ihl;
    const uint32_t doff = uint32_t(t[12] >> 4) * 4;
    if (doff < 20 || ihl + doff > total) return false;
    const uint32_t src = be32(ip + 12), dst = be32(ip + 16);
    const uint16_t sp = be16(t), dp = be16(t + 2);
    p.from_b         = src > dst || (src == dst && sp > dp);
    p.a              = p.from_b ? dst : src;
    p.b              = p.from_b ? src : dst;
    p.ports          = p.from_b ? uint32_t(dp) << 16 | sp : uint32_t(sp) << 16 | dp;
    p.hash           = hash(p.a, p.b, p.ports);
    p.seq   = be32(t + 4);
    p.ack   = be32(t + 8);
    p.flags = t[13];
    p.data  = t + doff;
    p.len   = total - ihl - doff;
    return true;
  }

  // The slot holding p's flow, or the empty slot where it would go.
  uint32_t find(const Parsed& p) const {
    for (uint32_t s = p.hash & mask_;; s = (s + 1) & mask_) {
      const uint32_t e = slots_[s];
      if (!e) return s;
      const Flow& f = pool_[e];
      if (f.a == p.a && f.b == p.b && f.ports == p.ports) return s;
    }
  }

  static uint32_t hash(uint32_t a, uint32_t b, uint32_t ports) {
    const uint64_t h =
        (uint64_t(a) << 32 | b) * 0x9e3779b97f4a7c15ull ^ uint64_t(ports) * 0xc2b2ae3d27d4eb4full;
    return uint32_t(h >> 32 ^ h);
  }

  // Backward-shift deletion: later entries of the run move into the hole they may occupy.
  void erase(uint32_t s) {
    free_.push_back(slots_[s]);
    for (uint32_t hole = s, k = (s + 1) & mask_;; k = (k + 1) & mask_) {
      const uint32_t e = slots_[k];
      if (!e) {
        slots_[hole] = 0;
        return;
      }
      const uint32_t home = hash(pool_[e].a, pool_[e].b, pool_[e].ports) & mask_;
      if (((k - home) & mask_) >= ((k - hole) & mask_)) {
        slots_[hole] = e;
        hole         = k;
      }
    }
  }

  template <class Sink>
  static void deliver(Dir& d, uint32_t ack, Sink& sink) {
    const uint32_t n = std::min<uint32_t>(ack - d.buf_seq, uint32_t(d.buf.size()));
    if (int32_t(ack - d.buf_seq) <= 0 || n == 0) return;
    sink(d.buf.data(), n);
    d.buf.erase(d.buf.begin(), d.buf.begin() + n);
    d.buf_seq += n;
  }

  static void append(Dir& d, const uint8_t* data, uint32_t len) {
    d.buf.insert(d.buf.end(), data, data + len);
    d.next += len;
    for (size_t k = 0; k < d.early.size();) {  // what came early and now follows
      Dir::Early& e = d.early[k];
      if (int32_t(e.seq - d.next) > 0) {
        ++k;
        continue;
      }
      const uint32_t skip = d.next - e.seq;
      if (skip < e.bytes.size()) {
        d.buf.insert(d.buf.end(), e.bytes.begin() + skip, e.bytes.end());
        d.next += uint32_t(e.bytes.size()) - skip;
      }
      d.early.erase(d.early.begin() + long(k));
      k = 0;
    }
  }

  template <class Sink>
  void packet(const Parsed& p, Sink& sink) {
    const uint32_t s    = find(p);
    uint32_t e          = slots_[s];
    const bool bare_syn = (p.flags & 0x12) == 0x02;
    if (bare_syn) {  // only a SYN opens a flow; a SYN on a known one starts it again
      if (!e) {
        if (free_.empty()) return;
        e = free_.back();
        free_.pop_back();
        slots_[s] = e;
      }
      Flow& f = pool_[e];
      f.a = p.a, f.b = p.b, f.ports = p.ports;
      f.initiator_is_b = p.from_b;
      f.live           = false;
      for (Dir& d : f.d) {
        d.buf.clear();
        d.early.clear();
        d.has_fin = false;
      }
    } else if (!e) {
      return;
    }
    Flow& f       = pool_[e];
    const int dir = p.from_b != f.initiator_is_b;
    Dir& d        = f.d[dir];
    Dir& o        = f.d[1 - dir];
    if (p.flags & 0x02) {  // SYN: the direction starts after it
      d.next = d.buf_seq = p.seq + 1;
      if (dir == 1) f.live = true;
    } else if (f.live) {
      if (p.len) {
        if (p.seq == d.next)
          append(d, p.data, p.len);
        else if (int32_t(p.seq - d.next) > 0)
          d.early.push_back({p.seq, {p.data, p.data + p.len}});
      }
      if (p.flags & 0x01) {
        d.has_fin = true;
        d.fin     = p.seq + p.len;
      }
    }
    if (p.flags & 0x10) {
      deliver(o, p.ack, sink);
      if (o.has_fin && d.has_fin && p.len == 0 && !(p.flags & 0x01) && p.ack == o.fin + 1) {
        deliver(d, d.fin, sink);  // what the other side sent before its FIN was acknowledged
        erase(s);
      }
    }
  }

  uint32_t mask_;
  std::vector<uint32_t> slots_;  ///< index into pool_, 0 empty
  std::vector<Flow> pool_;
  std::vector<uint32_t> free_;
};

}  // namespace warpath::bench::floor_engine
