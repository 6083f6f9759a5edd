// src/flow/core/flow_core.hpp
//
// The one body of flow tracking (include/warpath/flow/flow.hpp has the semantics):
//   - keys: a packet's canonical bidirectional key and hash (WARPATH_HD: host and device);
//   - the per-flow rules: start, update, the TCP state machine, port reuse (WARPATH_HD);
//   - the per-packet policy every engine runs, track_packet<Table>(): the clock, expiry,
//     lookup, reuse, a full table (emergency mode, evict / drop / pass) and the update. An
//     engine supplies only its table (how flows are found, ordered and removed).
#pragma once
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <vector>

#include "warpath/core/hd.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::flow::core {

using packet::kTcpAck;
using packet::kTcpFin;
using packet::kTcpRst;
using packet::kTcpSyn;

/// Canonical key: endpoint a is the smaller (address, then port) of the two.
struct alignas(8) FlowKey {
  uint8_t a[16];
  uint8_t b[16];
  uint16_t pa, pb;
  uint16_t vlan;
  uint8_t proto, ip_version;
};
static_assert(sizeof(FlowKey) == 40, "FlowKey is five 64-bit words");
static_assert(offsetof(FlowKey, pa) == 32 && offsetof(FlowKey, pb) == 34 &&
                  offsetof(FlowKey, vlan) == 36 && offsetof(FlowKey, proto) == 38 &&
                  offsetof(FlowKey, ip_version) == 39,
              "make_key writes the fifth word whole (little-endian)");

WARPATH_HD bool key_equal(const FlowKey& x, const FlowKey& y) {
  const auto* p = reinterpret_cast<const uint64_t*>(&x);
  const auto* q = reinterpret_cast<const uint64_t*>(&y);
  return ((p[0] ^ q[0]) | (p[1] ^ q[1]) | (p[2] ^ q[2]) | (p[3] ^ q[3]) | (p[4] ^ q[4])) == 0;
}

/// One word into key_hash's state.
WARPATH_HD uint64_t key_round(uint64_t h, uint64_t word) {
  h ^= word;
  h *= 0x9e3779b97f4a7c15ull;
  return h ^ (h >> 29);
}

/// The key's hash; `seed` is the table's secret (drawn at random per table) so that nobody
/// can choose 5-tuples that fall into one bucket and turn lookups linear (hash flooding).
WARPATH_HD uint64_t key_hash(const FlowKey& k, uint64_t seed) {
  const auto* w = reinterpret_cast<const uint64_t*>(&k);
  uint64_t h    = 0x2545f4914f6cdd1dull ^ seed;
  // Written out: GCC at -O2 kept the five rounds a loop (a third of the hash's instructions).
  h = key_round(h, w[0]);
  h = key_round(h, w[1]);
  h = key_round(h, w[2]);
  h = key_round(h, w[3]);
  h = key_round(h, w[4]);
  h ^= h >> 33;  // murmur3's finaliser
  h *= 0xff51afd7ed558ccdull;
  h ^= h >> 33;
  h *= 0xc4ceb9fe1a85ec53ull;
  return h ^ (h >> 33);
}

WARPATH_HD ProtoClass proto_class(uint8_t proto) {
  return proto == 6 ? ProtoClass::kTcp
         : proto == 17 ? ProtoClass::kUdp
         : (proto == 1 || proto == 58) ? ProtoClass::kIcmp
                                       : ProtoClass::kOther;
}

/// Four bytes as a big-endian number (compilers make this one load and a byte swap).
WARPATH_HD uint32_t be32(const uint8_t* b) {
  return uint32_t(b[0]) << 24 | uint32_t(b[1]) << 16 | uint32_t(b[2]) << 8 | b[3];
}

/// Keys a packet. kTracked with `key` and `from_b` (the packet's source is endpoint b), or why
/// the packet cannot be tracked. `any_checksum`: an IPv4 header checksum that does not verify
/// is no reason to leave the packet out (captures taken before checksum offload).
WARPATH_HD_HOT Track make_key(const packet::PacketInfo& p, FlowKey& key, uint8_t& from_b,
                              bool any_checksum = false) {
  if (p.l3 != packet::L3::kIpv4 && p.l3 != packet::L3::kIpv6) return Track::kNotIp;
  if (p.flags & packet::kLaterFragment) return Track::kFragment;
  constexpr uint8_t kNeed = packet::kFieldSrc | packet::kFieldDst | packet::kFieldProto;
  const bool status_ok = p.status == packet::ParseStatus::kOk ||
                         (any_checksum && p.status == packet::ParseStatus::kBadIpv4Checksum);
  if (!status_ok || (p.fields & kNeed) != kNeed) return Track::kMalformed;
  const bool ported = p.proto == 6 || p.proto == 17 || p.proto == 132;
  if (ported && !(p.flags & packet::kHasPorts)) return Track::kMalformed;
  const uint16_t sport = ported ? p.sport : 0, dport = ported ? p.dport : 0;
  const unsigned n     = p.l3 == packet::L3::kIpv4 ? 4 : 16;
  // The addresses compared as big-endian words (a byte loop cost a branch per byte), then the
  // ports.
  int cmp = 0;
  if (n == 4) {
    const uint32_t s = be32(p.src), d = be32(p.dst);
    cmp = int(s > d) - int(s < d);
  } else {
    for (unsigned w = 0; w < 16 && cmp == 0; w += 4) {
      const uint32_t s = be32(p.src + w), d = be32(p.dst + w);
      cmp = int(s > d) - int(s < d);
    }
  }
  if (cmp == 0) cmp = int(sport) - int(dport);
  from_b            = cmp > 0;
  const uint8_t* lo = from_b ? p.dst : p.src;
  const uint8_t* hi = from_b ? p.src : p.dst;
  // Whole words (not a byte loop): hashing reads the key as five 64-bit words right after, and
  // byte stores cannot be forwarded to word loads.
  uint64_t a[2] = {0, 0}, b[2] = {0, 0};
  if (n == 4) {
    memcpy(a, lo, 4);
    memcpy(b, hi, 4);
  } else {
    memcpy(a, lo, 16);
    memcpy(b, hi, 16);
  }
  memcpy(key.a, a, 16);
  memcpy(key.b, b, 16);
  // The fifth word (ports, VLAN, protocol, version) as one store too: written field by field,
  // the hash's load of it waited for five narrow stores (28% of do_track's samples).
  const uint64_t pa   = from_b ? dport : sport;
  const uint64_t pb   = from_b ? sport : dport;
  const uint64_t vlan = p.vlan_count ? uint16_t(p.vlan_tci[0] & 0xfff) : 0;
  const uint64_t ipv  = p.l3 == packet::L3::kIpv4 ? 4 : 6;
  const uint64_t w4   = pa | pb << 16 | vlan << 32 | uint64_t(p.proto) << 48 | ipv << 56;
  memcpy(&key.pa, &w4, 8);
  return Track::kTracked;
}

/// What every engine keeps per flow besides its own links. (The initiator's side, the class and
/// the timeout state share a byte, which left room for the sequence tags in cpu.flow's
/// two-cache-line entry; read them with class_of() and state_of().)
struct FlowCore {
  FlowKey key;
  uint64_t serial;
  uint64_t first_ns, last_ns;
  uint64_t packets[2], bytes[2];
  uint8_t initiator_is_b : 1;
  uint8_t cls : 2;    ///< ProtoClass
  uint8_t state : 2;  ///< FlowState, after the latest packet
  uint8_t tagged : 2; ///< TCP: bit d set once side d's seq_tag holds a number (follow_seq)
  uint8_t tcp_flags[2];
  TcpState tcp;
  /// TCP: the top 16 bits of the latest sequence number each side sent (valid where `tagged`
  /// says): where a RST or FIN from that side may fall (end_fits).
  uint16_t seq_tag[2];
};
static_assert(sizeof(FlowCore) == 104, "FlowCore is 13 words (cpu.flow's entry is 128 B)");

WARPATH_HD ProtoClass class_of(const FlowCore& f) { return ProtoClass(f.cls); }

WARPATH_HD FlowState state_of(ProtoClass cls, TcpState tcp, uint64_t responder_packets) {
  if (cls != ProtoClass::kTcp)
    return responder_packets ? FlowState::kEstablished : FlowState::kNew;
  switch (tcp) {
    case TcpState::kEstablished:
    case TcpState::kMidstream:  // carrying data without a handshake: established (Suricata's
                                // midstream pickup, Zeek)
    case TcpState::kFinWait: return FlowState::kEstablished;
    case TcpState::kClosed:
    case TcpState::kReset: return FlowState::kClosed;
    default: return FlowState::kNew;
  }
}

WARPATH_HD FlowState state_of(const FlowCore& f) { return FlowState(f.state); }

/// How far a packet's sequence number may move its side's tag forward at once, in tags of
/// 64 KiB: two (a capture may lose up to 128 KiB between two packets of a side and the tag
/// still follows). More would let a blind forger walk the tag to a number of its choice with a
/// sweep cheaper than a sweep of RSTs (65,536 / (slack + 1) packets against 21,846).
inline constexpr int kSeqTagSlack = 2;

/// `seq` from direction `dir`, in tags from that side's latest (modulo 2^32).
WARPATH_HD int seq_tag_step(const FlowCore& f, uint8_t dir, uint32_t seq) {
  return int(int16_t(uint16_t(uint16_t(seq >> 16) - f.seq_tag[dir])));
}

/// Whether a RST or FIN from direction `dir` with sequence number `seq` may end or close the
/// connection: `seq` is in the 64 KiB tag of that side's latest sequence number or the next or
/// previous one (a sender's RST or FIN carries its next sequence number, at or just past the
/// latest it sent; one far from it, blind and forged, is ignored and the flow goes on:
/// flow.hpp, "RSTs and FINs"); or its side has sent nothing yet and the packet is the flow's
/// first (a lone RST, backscatter) or answers the other side's first (a refused SYN, a scan's
/// probe: should the side answer a SYN with a SYN+ACK after all, flow_update takes the answer).
/// A silent side's RST after that (a one-sided capture's later packets) is ignored.
WARPATH_HD bool end_fits(const FlowCore& f, uint8_t dir, uint32_t seq) {
  if (f.packets[dir] == 0) return f.packets[1 - dir] <= 1;
  const int step = seq_tag_step(f, dir, seq);
  return step >= -1 && step <= 1;
}

/// Moves direction `dir`'s tag to a packet's `seq` (a packet without RST, before its flags are
/// counted): its side's first such packet sets it (a RST before it sets nothing); later ones
/// (SYNs too: a forged one must not reset it) move it forward only from within the slack, so
/// that a forged packet far away cannot carry it off (a capture that lost more than the slack
/// leaves it behind: that side's RSTs and FINs are then ignored).
WARPATH_HD void follow_seq(FlowCore& f, uint8_t dir, uint32_t seq) {
  const int step = seq_tag_step(f, dir, seq);
  if (!(f.tagged >> dir & 1) || (step > 0 && step <= kSeqTagSlack)) {
    f.seq_tag[dir] = uint16_t(seq >> 16);
    f.tagged       = (f.tagged | 1u << dir) & 3u;
  }
}

/// The TCP state after a packet with `flags` from direction `dir`.
WARPATH_HD TcpState tcp_next(TcpState s, uint8_t dir, uint8_t flags, const uint8_t seen[2]) {
  if (flags & kTcpRst) return TcpState::kReset;
  if (s == TcpState::kReset) return s;
  const bool syn = flags & kTcpSyn, ack = flags & kTcpAck;
  // A split handshake (the responder answers the SYN with its own SYN, the initiator with a
  // SYN+ACK, the responder's ACK completes it; stream.hpp) is a handshake too: left half-open,
  // its connection would time out as new and lose its stream.
  const bool split_ack = dir == 1 && (seen[0] & (kTcpSyn | kTcpAck)) == (kTcpSyn | kTcpAck);
  if (s == TcpState::kSynSent && dir == 1 && syn) s = TcpState::kSynReceived;
  else if (s == TcpState::kSynReceived && ack && !syn && (dir == 0 || split_ack))
    s = TcpState::kEstablished;
  else if (s == TcpState::kMidstream && dir == 1) s = TcpState::kEstablished;
  if (flags & kTcpFin) {
    // `seen` already includes this packet's flags.
    s = (seen[0] & kTcpFin) && (seen[1] & kTcpFin) ? TcpState::kClosed : TcpState::kFinWait;
  }
  return s;
}

/// A SYN without ACK or RST (a connection's first packet), and a SYN+ACK without RST (its
/// answer).
WARPATH_HD bool is_bare_syn(uint8_t flags) {
  return (flags & (kTcpSyn | kTcpAck | kTcpRst)) == kTcpSyn;
}
WARPATH_HD bool is_syn_ack(uint8_t flags) {
  return (flags & (kTcpSyn | kTcpAck | kTcpRst)) == (kTcpSyn | kTcpAck);
}

/// A new flow from its first packet. Returns whether it was picked up midstream (TCP whose
/// first packet is not a bare SYN). A first packet with SYN+ACK is the responder's answer (the
/// SYN was missed), and so is a midstream one from a well-known port (< 1024) to an ephemeral
/// one: the other side is the initiator, as Suricata and Zeek orient such flows.
WARPATH_HD bool flow_start(FlowCore& f, const FlowKey& key, uint8_t from_b, uint64_t serial,
                           uint64_t now, uint8_t tcp_flags) {
  const ProtoClass cls = proto_class(key.proto);
  const bool tcp       = cls == ProtoClass::kTcp;
  const bool syn_ack  = tcp && is_syn_ack(tcp_flags);
  // Picked up midstream from a well-known port to an ephemeral one: the server spoke first.
  const uint16_t sport = from_b ? key.pb : key.pa, dport = from_b ? key.pa : key.pb;
  const bool served    = tcp && !(tcp_flags & kTcpSyn) && sport < 1024 && dport >= 1024;
  f.key            = key;
  f.serial         = serial;
  f.first_ns       = now;
  f.last_ns        = now;
  f.packets[0]     = f.packets[1] = 0;
  f.bytes[0]       = f.bytes[1] = 0;
  f.initiator_is_b = (syn_ack || served) ? uint8_t(!from_b) : from_b;
  f.tcp_flags[0]   = f.tcp_flags[1] = 0;
  f.seq_tag[0]     = f.seq_tag[1] = 0;
  f.tagged         = 0;
  f.cls            = uint8_t(cls) & 3u;
  f.state          = uint8_t(FlowState::kNew) & 3u;
  if (!tcp) {
    f.tcp = TcpState::kNone;
    return false;
  }
  const bool bare_syn = is_bare_syn(tcp_flags);
  f.tcp               = bare_syn ? TcpState::kSynSent : syn_ack ? TcpState::kSynReceived
                                                                : TcpState::kMidstream;
  return !bare_syn;
}

/// The direction of a packet from `from_b`'s side: 0 from the initiator.
WARPATH_HD uint8_t direction_of(const FlowCore& f, uint8_t from_b) {
  return from_b != f.initiator_is_b;
}

/// Why a bare SYN ends a TCP flow and starts another (kNo: it does not). Port reuse: the flow
/// is closed or reset. A wrong guess: the flow was oriented by a SYN+ACK or a packet from a
/// well-known port, the side taken for its initiator has sent nothing, the other side only
/// that first packet, and the other side now sends a SYN, so that side is the initiator
/// (Suricata starts a new flow alike); otherwise a packet forged before the real SYN would turn
/// the connection around and leave it without a stream. (Once the guessed initiator has spoken the orientation stays: turning it then would
/// let a client split a connection picked up midstream.)
enum class Reopen : uint8_t { kNo, kReused, kReoriented };
WARPATH_HD Reopen reopens(const FlowCore& f, uint8_t from_b, uint8_t tcp_flags) {
  if (class_of(f) != ProtoClass::kTcp || !is_bare_syn(tcp_flags)) return Reopen::kNo;
  if (f.tcp == TcpState::kClosed || f.tcp == TcpState::kReset) return Reopen::kReused;
  return f.packets[0] == 0 && f.packets[1] == 1 && direction_of(f, from_b) == 1
             ? Reopen::kReoriented
             : Reopen::kNo;
}

/// Counts a packet of `len` wire bytes from `from_b`'s side into the flow (`seq`: its TCP
/// sequence number). A RST or FIN that end_fits refuses is ignored (the packet counts without
/// it; `ignored` says which), and such a packet moves no tag, nor does a RST.
WARPATH_HD uint8_t flow_update(FlowCore& f, uint8_t from_b, uint32_t len, uint8_t tcp_flags,
                               uint32_t seq, uint64_t now, uint8_t& ignored) {
  const uint8_t dir = direction_of(f, from_b);
  ignored           = 0;
  // A responder's first SYN+ACK after a RST from it while it had sent nothing else: the RST
  // (end_fits takes a silent side's at any number) was not the refusal it looked like.
  const bool answer_after_rst = dir == 1 && f.tcp == TcpState::kReset &&
                                is_syn_ack(tcp_flags) &&
                                f.tcp_flags[1] == (kTcpRst | (f.tcp_flags[1] & kTcpAck)) &&
                                (f.tcp_flags[0] & kTcpSyn);
  if (class_of(f) == ProtoClass::kTcp) {
    const uint8_t ends = tcp_flags & (kTcpRst | kTcpFin);
    if (ends && !end_fits(f, dir, seq)) {
      tcp_flags &= uint8_t(~ends);  // ignored: the flow goes on (flow.hpp, "RSTs and FINs")
      ignored = ends;
    } else if (!(tcp_flags & kTcpRst)) {
      follow_seq(f, dir, seq);
    }
    f.tcp_flags[dir] |= tcp_flags;
  }
  f.packets[dir] += 1;
  f.bytes[dir] += len;
  f.last_ns = now;
  if (class_of(f) == ProtoClass::kTcp) f.tcp = tcp_next(f.tcp, dir, tcp_flags, f.tcp_flags);
  if (answer_after_rst) f.tcp = TcpState::kSynReceived;
  f.state = uint8_t(state_of(class_of(f), f.tcp, f.packets[1])) & 3u;
  return dir;
}

inline uint64_t timeout_ns(const FlowConfig& c, ProtoClass cls, FlowState s, bool emergency) {
  const uint32_t sec = emergency ? c.emergency_timeout_s[unsigned(cls)][unsigned(s)]
                                 : c.timeout_s[unsigned(cls)][unsigned(s)];
  return uint64_t(sec) * 1000000000ull;
}

inline FlowRecord to_record(const FlowCore& f, FlowEnd end) {
  FlowRecord r;
  r.serial     = f.serial;
  r.ip_version = f.key.ip_version;
  r.proto      = f.key.proto;
  r.vlan       = f.key.vlan;
  const bool b = f.initiator_is_b;
  std::memcpy(r.src, b ? f.key.b : f.key.a, 16);
  std::memcpy(r.dst, b ? f.key.a : f.key.b, 16);
  r.sport        = b ? f.key.pb : f.key.pa;
  r.dport        = b ? f.key.pa : f.key.pb;
  r.first_ns     = f.first_ns;
  r.last_ns      = f.last_ns;
  r.packets[0]   = f.packets[0];
  r.packets[1]   = f.packets[1];
  r.bytes[0]     = f.bytes[0];
  r.bytes[1]     = f.bytes[1];
  r.tcp_flags[0] = f.tcp_flags[0];
  r.tcp_flags[1] = f.tcp_flags[1];
  r.state        = state_of(f);
  r.tcp          = f.tcp;
  r.end          = end;
  return r;
}

/// The clock, the mode and the counters every engine keeps beside its table.
struct TrackerState {
  uint64_t now = 0;
  uint64_t touches = 0;  ///< packets applied to flows so far: the order of last touch
  uint64_t serials = 0;
  bool emergency   = false;
  FlowCounters counters;
};

/// After a packet, advance() or flush(): the occupancy counters, and leaving emergency mode
/// once occupancy is down to (100 - recovery)% of the capacity.
template <class Table>
inline void settle(const Table& t, TrackerState& st, const FlowConfig& cfg) {
  FlowCounters& c = st.counters;
  c.active        = t.size();
  if (c.active > c.max_active) c.max_active = c.active;
  if (st.emergency &&
      uint64_t(t.size()) * 100 <= uint64_t(cfg.capacity) * (100 - cfg.emergency_recovery_percent))
    st.emergency = false;
  c.emergency = st.emergency;
}

/// The per-packet policy (flow.hpp). `Table` provides, with handles 1..capacity:
///   uint32_t size() const;
///   void expire_due(TrackerState&, std::vector<FlowRecord>&)  // every flow due at st.now,
///                                  // by (deadline, touch), ended with kTimeout via end()
///   uint32_t find(const FlowKey&, uint64_t hash)               // 0 when absent
///   FlowCore& at(uint32_t handle)
///   void end(TrackerState&, uint32_t handle, FlowEnd, std::vector<FlowRecord>&)
///   void evict_oldest(TrackerState&, std::vector<FlowRecord>&)  // least recent touch
///   uint32_t insert(const FlowKey&, uint64_t hash)              // a free entry, linked
///   void touched(TrackerState&, uint32_t handle)   // after the update: order and class
template <class Table>
__attribute__((always_inline)) inline PacketFlow track_packet(
    Table& t, TrackerState& st, const FlowConfig& cfg, const packet::PacketInfo& p,
    const packet::PacketMeta& m, uint64_t hash, const FlowKey& key, Track keyed, uint8_t from_b,
    std::vector<FlowRecord>& ended) {
  PacketFlow out;
  FlowCounters& c = st.counters;
  c.packets += 1;
  if (m.timestamp_ns > st.now) st.now = m.timestamp_ns;
  t.expire_due(st, ended);
  if (keyed != Track::kTracked) {
    out.track = keyed;
  } else {
    const uint8_t flags = (p.proto == 6 && (p.flags & packet::kHasPorts)) ? p.tcp_flags : 0;
    uint32_t h          = t.find(key, hash);
    if (h) {
      const Reopen why = reopens(t.at(h), from_b, flags);
      if (why != Reopen::kNo) {
        if (why == Reopen::kReoriented) c.reoriented += 1;
        t.end(st, h, FlowEnd::kReused, ended);
        h = 0;
      }
    }
    bool refused = false;
    if (!h) {
      const uint32_t capacity = cfg.capacity;
      if (t.size() >= capacity && !st.emergency) {
        st.emergency = true;
        c.emergency_entered += 1;
        t.expire_due(st, ended);  // the shorter timeouts apply from now
      }
      if (t.size() >= capacity) {
        if (cfg.on_full == OnFull::kEvict) {
          t.evict_oldest(st, ended);
        } else {
          out.track = cfg.on_full == OnFull::kDrop ? Track::kFullDropped : Track::kFullPassed;
          refused   = true;
        }
      }
      if (!refused) {
        h = t.insert(key, hash);
        if (flow_start(t.at(h), key, from_b, ++st.serials, st.now, flags)) c.midstream += 1;
        c.created += 1;
        out.created = 1;
      }
    }
    if (h) {
      FlowCore& f = t.at(h);
      uint8_t ignored;
      out.dir = flow_update(f, from_b, m.len, flags, p.tcp_seq, st.now, ignored);
      c.ignored_rst += (ignored & kTcpRst) != 0;
      c.ignored_fin += (ignored & kTcpFin) != 0;
      st.touches += 1;
      t.touched(st, h);
      out.serial = f.serial;
      out.handle = h;
      out.track  = Track::kTracked;
    }
  }
  c.track[unsigned(out.track)] += 1;
  settle(t, st, cfg);
  return out;
}

}  // namespace warpath::flow::core
