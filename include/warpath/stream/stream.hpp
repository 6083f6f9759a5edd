// include/warpath/stream/stream.hpp
//
// TCP stream reassembly: each direction of each tracked TCP flow as an ordered byte stream,
// the way the receiving host will see it (GASPP's processStream input; Suricata's and Snort's
// stream engines are the models; ../shared/notes/stream-reassembly.md has their defaults and
// the checklist this follows).
//
// Input: segments (flow, direction, TCP flags, sequence and acknowledgement numbers, payload)
// from the flow tracker (flow/flow.hpp) in arrival order. Output: chunks of in-order stream
// bytes per (flow, direction), with gaps named as gaps.
//
// Rules
//   - A RST counts only where the receiver's next expected byte may be (RFC 5961 3.2): not
//     before what it acknowledged or was delivered, not past what the sender sent (one past
//     its FIN); a FIN only when it is not before bytes already in sequence nor past
//     max_ahead. Stale or far ones are ignored (bad_rst counts RSTs): they cannot end
//     inspection of a live connection. A FIN counts as sent (its
//     ACK declares unseen bytes before it a gap), after the bytes a snap length cut from it.
//   - A SYN once the connection is open carries nothing into the stream (counted as
//     data_on_syn when it has data): a host in ESTABLISHED takes none of it.
//   - Handshake first: a stream is created when the three-way handshake completes (SYN, then
//     SYN+ACK acknowledging it, then an ACK acknowledging that); a half-open flow costs a small
//     entry and buffers nothing (SYN floods). Data on the SYN is counted (data_on_syn) and not
//     buffered, unless the SYN carries the TCP Fast Open option (RFC 7413, as Suricata takes
//     it; not with a RST): then its bytes are the client's first (held, within the caps, from
//     the SYN on: a half-open flow then holds them), the connection is open at the SYN+ACK
//     (which must acknowledge the SYN and at most its data), and that SYN+ACK's own bytes are
//     the server's first. A SYN+ACK that acknowledges only the SYN (the server did not take the
//     data: the client sends it again) discards them (counted: fast_open_ignored; inline, where
//     they went out already, what the client sends in their place follows them); one that
//     took a part (a shorter copy of the SYN) delivers that part and discards the rest; the
//     same SYN sent again is a retransmission under the overlap policy (and leaves any
//     handshake where it is); a SYN with another ISN discards them. A split handshake (the
//     responder answers the SYN with its own SYN, the initiator acknowledges that with a
//     SYN+ACK, the responder's ACK or SYN+ACK completes it: Suricata's 4WHS) opens the
//     connection too, and so does an ordinary SYN+ACK after a responder's SYN. With `midstream`, a flow seen without
//     its handshake is picked up at the first sequence number seen in each direction (counted).
//   - Sequence numbers are compared modulo 2^32 and turned into 64-bit stream offsets
//     (offset 0 = the byte after the ISN), so streams longer than 4 GiB and any ISN work.
//   - Overlaps are resolved per byte by the receiving host's policy (Novak and Sturges,
//     "Target-Based TCP Stream Reassembly", 2007; per prefix in StreamConfig::hosts, longest
//     first, else StreamConfig::policy), comparing the new segment with the segment that stored the
//     byte (its original extent):
//       first, vista, windows   the stored byte stays
//       last                    the new byte wins
//       bsd                     new wins when it starts before the stored segment
//       linux                   ... or starts at the same place and ends after it
//       old-linux               ... or starts at the same place and ends at or after it
//       solaris                 new wins when it ends after the stored segment, or ends at the
//                               same place and starts at or before it
//     (windows is treated as vista: not measured against a Windows host.) Overlapping bytes
//     that differ are counted (overlap_diff): an evasion attempt or a broken stack. As in
//     Suricata (its eve-overlap-payload-02 vector), the policy also decides over bytes stored
//     in order and not yet acknowledged, though a real stack has taken those for good.
//   - Delivery. IDS mode (default): a byte is delivered once the receiver acknowledged it (the
//     other direction's ACK), so what is inspected is what the host accepted. A hole the ACK
//     has passed was lost by the capture, not by the host: it is declared a gap (a gap chunk,
//     counted) and delivery goes on; nothing waits forever. Inline mode: contiguous bytes are
//     delivered at once and overlaps keep the first copy (normalisation). When a flow ends
//     (close), what is buffered is delivered, the holes between as gap chunks (counted as
//     unacked_holes, not as capture loss).
//   - Bounds: segments more than max_ahead bytes past the first undelivered byte are dropped;
//     buffered bytes per stream (stream_cap) and over all streams (memcap) are capped, each
//     segment held charged 128 bytes of bookkeeping besides its bytes, and at most 4,096
//     segments are held per direction; a segment that would exceed them is dropped (the
//     receiver's ACK of a dropped segment still declares its bytes a gap, so a capture loss
//     longer than max_ahead does not stop the direction); bytes past `depth` (0: no limit) are neither
//     buffered nor delivered, but the direction moves along past it with its ACKs (inline:
//     with what was sent), so its window, FIN and RST stay where the connection is. Memory is the bytes buffered, never a buffer sized by a sequence
//     gap. Every drop and event is counted.
//
// Engines ("<device>.<algorithm>", registry below): ref.stream (a byte map: one entry per
// buffered byte, the oracle), cpu.stream (segment ranges, split on overlap), cuda.stream (flows
// in fixed GPU slots, one thread per flow over its segments of a batch; flows a slot cannot
// hold move to the host's stores) and emu.stream (cuda.stream's schedule run on the host, so
// that it is tested without a GPU). The per-segment
// rules (handshake, offsets, bounds, delivery, gaps) are one body (src/stream/core).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::stream {

enum class Policy : uint8_t { kFirst, kLast, kBsd, kLinux, kOldLinux, kSolaris, kVista, kWindows, kCount };
const char* policy_name(Policy p) noexcept;  ///< "first", "last", "bsd", "linux", "old-linux", ...
Result<Policy> parse_policy(std::string_view text);

enum class Mode : uint8_t { kIds, kInline };

/// The policy of the hosts in one prefix (Suricata's host-os-policy): the receiving host of a
/// stream direction picks it, longest prefix first.
struct HostPolicy {
  uint8_t ip_version = 4;
  uint8_t addr[16]   = {};  ///< network order (IPv4: first 4 bytes)
  uint8_t length     = 0;   ///< prefix length
  Policy policy      = Policy::kBsd;
};
/// "10.0.0.0/8=linux", "2001:db8::/32=windows", "192.0.2.7=solaris" (a host). kParseError
/// naming the part that is wrong.
Result<HostPolicy> parse_host_policy(std::string_view text);

struct StreamConfig {
  Policy policy     = Policy::kBsd;  ///< Suricata's built-in default; hosts below override it
  std::vector<HostPolicy> hosts;     ///< per receiving host, longest prefix first
  Mode mode         = Mode::kIds;
  bool midstream    = false;          ///< pick up flows seen without their handshake
  uint64_t depth    = 1u << 20;       ///< bytes per direction delivered; 0 = no limit
  uint32_t max_ahead  = 1u << 20;     ///< a segment may start at most this far past the hole
  uint32_t stream_cap = 1u << 20;     ///< bytes buffered per direction
  uint64_t memcap     = 64ull << 20;  ///< bytes buffered over all streams
  uint32_t max_flows  = 1u << 20;     ///< flows with reassembly state (half-open ones too)
  /// Finished connections whose storage is allocated when the engine is built, as libnids
  /// preallocates its streams and Suricata its sessions (stream.prealloc-sessions): until
  /// that many are kept at once, a connection that finishes touches no fresh memory and the
  /// lookup never rehashes (cpu.stream: about 128 bytes each, 32 MiB for 262,144; 100,000
  /// short connections from a cold start, 61 -> 55 ns a packet, docs/adr/0009; ref.stream
  /// allocates per connection). 0: grown as needed. At most max_flows.
  uint32_t prealloc_flows = 0;
  /// The room for finished connections beside a flow table of `flow_capacity`: they stay
  /// until the table ends them, so it bounds them (at most max_flows).
  uint32_t prealloc_for(uint32_t flow_capacity) const {
    return flow_capacity < max_flows ? flow_capacity : max_flows;
  }
  /// kInvalidArgument naming the field.
  Status validate() const;
};

/// One TCP segment of a tracked flow.
struct Segment {
  uint64_t flow = 0;  ///< the flow's serial (flow/flow.hpp), unique per tracker
  uint8_t dir   = 0;  ///< 0: from the initiator
  uint8_t flags = 0;  ///< TCP flags
  uint32_t seq = 0, ack = 0;
  const uint8_t* data = nullptr;  ///< captured payload
  uint32_t len        = 0;
  uint32_t missing    = 0;  ///< payload bytes on the wire after `len` but not captured
  /// A SYN (or SYN+ACK) carrying the TCP Fast Open option (kind 34, or the experimental 254
  /// with magic 0xF989; RFC 7413): its data belongs to the stream (segment_of sets it).
  uint8_t tfo = 0;
  /// The packet's addresses (network order; IPv4: first 4 bytes), which pick the receiving
  /// host's policy (StreamConfig::hosts); may be null when no host policies are configured.
  uint8_t ip_version  = 0;
  const uint8_t* src  = nullptr;
  const uint8_t* dst  = nullptr;
};

/// In-order bytes of one direction: `len` bytes at stream offset `offset`, or, for a gap, `len`
/// bytes the capture lost (data == nullptr).
struct Chunk {
  uint64_t flow = 0;
  uint8_t dir   = 0;
  bool gap      = false;
  uint64_t offset     = 0;
  const uint8_t* data = nullptr;
  uint32_t len        = 0;
};
/// Receives chunks in order. `data` is valid during the call only (it may point into the
/// reassembler's own buffer), and a sink must not call back into the reassembler that called it.
using ChunkSink = std::function<void(const Chunk&)>;

struct StreamCounters {
  uint64_t segments = 0, payload_bytes = 0;
  uint64_t streams = 0;             ///< directions that got a stream
  uint64_t midstream = 0;           ///< flows picked up without a handshake
  uint64_t delivered_bytes = 0;
  uint64_t gaps = 0, gap_bytes = 0;  ///< holes the receiver's ACK passed (capture loss)
  /// Holes still open when the flow ended (never acknowledged, as before a RST): delivered as
  /// gap chunks too, but not capture loss (Suricata counts them in no reassembly_gap either).
  uint64_t unacked_holes = 0;
  uint64_t overlaps = 0;            ///< segments that overlapped buffered bytes
  uint64_t overlap_diff = 0;        ///< of those, with different bytes
  uint64_t retransmitted_bytes = 0; ///< bytes before the first undelivered one (already seen)
  uint64_t before_handshake = 0;    ///< data segments of flows without a stream (dropped)
  uint64_t data_on_syn = 0;
  /// Fast Open SYNs whose data the handshake did not take, or took only a part of (a SYN+ACK, or
  /// a split handshake's last packet, acknowledging less than the SYN's bytes): what it did not
  /// take is discarded, and the client sends it again (Suricata's
  /// 3whs_synack_tfo_data_ignored).
  uint64_t fast_open_ignored = 0;
  uint64_t after_close = 0;         ///< data after a RST or the final FIN
  uint64_t beyond_window = 0;       ///< segments dropped: past max_ahead
  uint64_t stream_cap = 0, memcap = 0;  ///< segments dropped by each cap
  uint64_t segment_cap = 0;          ///< segments dropped: 4,096 held in the direction already
  uint64_t bad_rst        = 0;       ///< RSTs not where the receiver's next byte may be (ignored)
  uint64_t depth_reached = 0;       ///< streams that reached depth
  uint64_t flows_refused = 0;       ///< flows not given state: max_flows reached
  uint64_t buffered_bytes = 0;      ///< now
  bool operator==(const StreamCounters&) const = default;
};

/// Every counter of a report (the buffered bytes, a gauge, aside) with its name, in the order
/// `warpath reassemble`'s index.json and the Python API list them: f(name, value).
template <class F>
void for_each_counter(const StreamCounters& c, F&& f) {
  f("segments", c.segments);
  f("payload_bytes", c.payload_bytes);
  f("streams", c.streams);
  f("midstream", c.midstream);
  f("delivered_bytes", c.delivered_bytes);
  f("gaps", c.gaps);
  f("gap_bytes", c.gap_bytes);
  f("unacked_holes", c.unacked_holes);
  f("overlaps", c.overlaps);
  f("overlap_diff", c.overlap_diff);
  f("retransmitted_bytes", c.retransmitted_bytes);
  f("before_handshake", c.before_handshake);
  f("data_on_syn", c.data_on_syn);
  f("fast_open_ignored", c.fast_open_ignored);
  f("after_close", c.after_close);
  f("beyond_window", c.beyond_window);
  f("stream_cap", c.stream_cap);
  f("memcap", c.memcap);
  f("segment_cap", c.segment_cap);
  f("bad_rst", c.bad_rst);
  f("depth_reached", c.depth_reached);
  f("flows_refused", c.flows_refused);
}

/// Segments a reassembler did not take into a stream (no stream yet, data on a SYN, after the
/// close, past the window, caps, no flow state): their payload is not in any chunk.
inline uint64_t refused(const StreamCounters& c) {
  return c.before_handshake + c.data_on_syn + c.after_close + c.beyond_window + c.stream_cap +
         c.memcap + c.segment_cap + c.flows_refused;
}

class Reassembler {
 public:
  virtual ~Reassembler() = default;
  virtual std::string_view id() const noexcept = 0;
  virtual const StreamConfig& config() const noexcept = 0;
  virtual StreamCounters counters() const = 0;
  /// Segments refused so far (refused(counters()), without the copy): a caller learns whether
  /// the last segment was taken by comparing it before and after.
  virtual uint64_t refused() const = 0;
  /// One segment; delivered chunks go to `sink` (their data is valid during the call). Fails
  /// in validate: wrappers (kInvalidArgument naming the first difference), and in a GPU engine
  /// whose device call failed (then every later call fails with that error).
  virtual Status segment(const Segment& s, const ChunkSink& sink) = 0;
  /// n segments in arrival order, as n calls of segment() would take them (the same chunks,
  /// in the same order, and the same counters); a batching engine (cuda.stream) runs them at
  /// once.
  virtual Status segments(const Segment* s, uint32_t n, const ChunkSink& sink) {
    for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(segment(s[i], sink));
    return Status::ok();
  }
  /// Whether segments() is more than a loop of segment() (reassemble_batch gathers a batch's
  /// segments for it then).
  virtual bool batches() const { return false; }
  /// The flow ended: what is buffered is delivered (gaps declared between) and its state freed.
  virtual Status close(uint64_t flow, const ChunkSink& sink) = 0;
  /// close() of each of n flows, in that order (a GPU engine reads their state back at once).
  virtual Status close_many(const uint64_t* flows, uint32_t n, const ChunkSink& sink) {
    for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(close(flows[i], sink));
    return Status::ok();
  }
  /// Closes every flow with state, in flow order (the end of the input).
  virtual Status close_all(const ChunkSink& sink) = 0;
  /// Flows with state now.
  virtual size_t flows() const = 0;
};

/// The TCP part of a parsed packet as a segment (flags, seq, ack, the captured payload and
/// what the snap length cut of it); flow and dir are left to the caller. False when the packet
/// is not a well-formed, unfragmented TCP packet whose header was captured (`any_checksum`:
/// an IPv4 header checksum that does not verify is accepted, as flow::FlowConfig allows).
bool segment_of(const packet::PacketInfo& info, const uint8_t* frame, uint32_t caplen,
                Segment& out, bool any_checksum = false);

/// The captured transport payload of a parsed packet, for matching it as a block: a TCP
/// segment's (segment_of), a UDP datagram's (up to its length field: Ethernet pads short
/// frames), an ICMP or ICMPv6 message's after its 8-byte header (as Suricata and Snort see it),
/// else what follows the transport header's start; both up to the IP datagram's end. False when the packet has no transport
/// layer or an empty payload.
bool payload_of(const packet::PacketInfo& info, const uint8_t* frame, uint32_t caplen,
                const uint8_t*& data, uint32_t& len);

/// A batch of tracked packets into `r`, in order: packet i goes in as flow flows[i].serial,
/// direction flows[i].dir, when the flow tracker tracked it (serial != 0), `mask` is null or
/// mask[i] != 0, and segment_of takes it (with `any_checksum`). How the CLI, the stream module
/// and the benchmark feed a reassembler; the first failure (validate: engines) is returned.
Status reassemble_batch(Reassembler& r, const packet::BatchView& batch,
                        const packet::PacketInfo* infos, const flow::PacketFlow* flows,
                        uint32_t n, const ChunkSink& sink, bool any_checksum = false,
                        const uint8_t* mask = nullptr);

/// ref.stream, cpu.stream.
std::vector<EngineInfo> stream_engines();
/// Resolves `id` (auto, cpu, ref, validate:<id>) and builds a reassembler (config validated).
/// validate:<id> runs ref.stream beside it: segment() and close() fail on the first difference
/// in the chunks or the counters.
Result<std::unique_ptr<Reassembler>> make_reassembler(std::string_view id,
                                                      const StreamConfig& config = {});
/// Differential check against ref.stream on generated streams (the self-test's entry).
CheckReport check_stream_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::stream
