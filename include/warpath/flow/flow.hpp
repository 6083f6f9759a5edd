// include/warpath/flow/flow.hpp
//
// Flow tracking: which connection each packet belongs to, in which direction, and what that
// connection has done so far (GASPP's connection table, section 4; Suricata's flow engine and
// Zeek's conn.log are the models for what is kept and reported).
//
// What a flow is
//   A bidirectional conversation keyed by (VLAN id, IP version, protocol, the two endpoints'
//   addresses and ports), so both directions of a TCP connection are one flow. The endpoint
//   that sent the flow's first packet is the initiator; direction 0 runs from it. ICMP and
//   protocols without ports are keyed by addresses alone. Packets that cannot be keyed are
//   not tracked and say why (Track): non-IP, later IP fragments (no ports until
//   defragmentation), and IP packets whose addresses or ports were not captured. A TCP flow
//   whose first packet is a SYN+ACK, or a packet without SYN from a port below 1024 to one
//   above, is oriented from the other side (the client's first packets were missed), and
//   one picked up without a handshake counts as established (it carries data), as Suricata
//   and Zeek see them. Such a guess is undone when the side taken for the responder, having
//   sent only that first packet, sends a bare SYN while the side taken for the initiator has
//   sent nothing: the flow ends (reused; counted as reoriented) and a new one starts from that
//   SYN (Suricata alike), so that a packet forged ahead of a real SYN cannot turn a connection
//   around. A split handshake (the responder's own SYN, the initiator's SYN+ACK, the
//   responder's ACK) establishes a connection too.
//
// RSTs and FINs
//   A RST ends a TCP connection, and a FIN closes its side, only near its sender's sequence
//   numbers: in the 64 KiB block of the latest sequence number that side sent, or the next or
//   previous block (a sender's RST or FIN carries its next sequence number). A side that has
//   sent nothing may answer the other side's first packet with a RST (a refused SYN, a scan's
//   probe; its SYN+ACK after such a RST takes the handshake back), and a lone RST is a flow of
//   its own.
//   Others are ignored (ignored_rst, ignored_fin), so that a blind forged RST, or FINs from
//   both sides, followed by a SYN cannot end a live flow and start another without its
//   handshake: a blind forger needs a sweep of about 21,800 RSTs. A side's tag follows its
//   packets forward by at most two blocks at a time (SYNs included), so walking it to a chosen
//   number costs a sweep at least as long. What two bytes of a sequence number leave open
//   (the reassembler checks exact windows, stream.hpp):
//     - an endpoint that places its own RST or FIN up to 128 KiB past its bytes (its peer and
//       the reassembler ignore it) still ends or closes the flow here, and a SYN after it
//       splits the connection;
//     - a side's first packet sets its tag, whoever sent it: a forger who knows the ports and
//       speaks first for a side (before the handshake, or for the side a one-sided capture
//       never sees) chooses that side's tag, and its RST then fits (the acknowledgement
//       numbers, which would confirm a tag, are not in PacketInfo);
//     - a side whose tag lags its real numbers by more than a block has its RSTs and FINs
//       ignored: after a capture loss of more than 128 KiB, a segment of over 64 KiB (GRO)
//       before the FIN, a RST at a number well behind its sender's latest (some stacks after a
//       retransmission timeout), or an endpoint that walked its own tag with segments its peer
//       drops. The flow then ends by timeout, and a new connection on the same ports meanwhile
//       is part of it (the reassembler, which took the RST, keeps it closed: no stream,
//       counted as after_close); so is one that follows a close the capture did not see.
// The table (compile, then run: fixed memory, nothing allocated per packet)
//   A preallocated table of `capacity` flows. A flow ends when
//     - it has been idle for its timeout: per protocol (TCP, UDP, ICMP, other) and state
//       (new: not yet answered / handshake not complete; established (TCP: also picked up
//       midstream); closed: both FINs or a RST). Defaults are Suricata's: TCP 60 / 600 / 60 s, others 30 / 300 s;
//     - a TCP SYN reopens a closed connection (port reuse), or one whose orientation was a
//       wrong guess (above);
//     - the table is full and the oldest (least recently seen) flow is evicted for a new one
//       (on_full = evict, the default; drop or pass refuse the new flow instead, counted);
//     - the input ends (flush).
//   Emergency mode (Suricata): when a new flow finds the table full, shorter timeouts apply
//   (TCP 5 / 100 / 10 s, others 10 / 100 s) until occupancy falls to (100 - recovery)% of the
//   capacity (recovery 30 by default). Half-open flows (SYN floods) take one fixed entry each
//   and nothing else: modules attach buffers only to established flows.
//
// Time and determinism
//   The tracker's clock is the largest packet timestamp seen (pcap time, or receive time on a
//   live port), so a capture replays the same way at any speed. Before each packet, every flow
//   whose deadline (last seen + timeout) is at or before the clock ends, in order of deadline,
//   then of last touch. Everything is defined per packet, in order: a tracker gives the same
//   answers and records whatever the batch sizes, and every engine gives the same as ref.flow.
//
// Engines (registry below; "<device>.<algorithm>" as for the other modules)
//   ref.flow   ordered map and linear scans: the deliberately naive oracle
//   cpu.flow   chained hash with a prefetching batch loop (G-Opt), timeout lists per class
// The per-packet rules (keys, the TCP state machine, counters) are one body in
// src/flow/core/flow_core.hpp, shared by every engine.
//
// Thread safety: a tracker is owned by one thread (per-worker state; flows stay on one worker
// through RSS / fanout hashing).
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::flow {

/// Protocol classes, each with its own timeouts.
enum class ProtoClass : uint8_t { kTcp, kUdp, kIcmp, kOther, kCount };
/// Timeout classes of a flow.
enum class FlowState : uint8_t { kNew, kEstablished, kClosed, kCount };
/// The TCP connection's state, as seen from the middle.
enum class TcpState : uint8_t {
  kNone,         ///< not TCP
  kSynSent,      ///< the initiator sent a SYN
  kSynReceived,  ///< the responder answered SYN+ACK (or its own SYN: a split handshake)
  kEstablished,  ///< handshake completed, or picked up midstream and answered
  kMidstream,    ///< first packet was not a SYN (nor a SYN+ACK); not yet answered
  kFinWait,      ///< one side sent FIN
  kClosed,       ///< both sides sent FIN
  kReset,        ///< a RST was seen
  kCount
};
/// Why a flow ended.
enum class FlowEnd : uint8_t { kTimeout, kEvicted, kReused, kShutdown, kCount };
/// What happened to one packet.
enum class Track : uint8_t {
  kTracked,      ///< belongs to a flow (serial != 0)
  kNotIp,        ///< not IPv4/IPv6
  kFragment,     ///< a later IP fragment: no transport header to key on
  kMalformed,    ///< addresses, protocol or ports not captured
  kFullDropped,  ///< table full, on_full = drop: the caller should drop it
  kFullPassed,   ///< table full, on_full = pass: not tracked
  kCount
};
enum class OnFull : uint8_t { kEvict, kDrop, kPass };

const char* proto_class_name(ProtoClass c) noexcept;  ///< "tcp", "udp", "icmp", "other"
const char* flow_state_name(FlowState s) noexcept;    ///< "new", "established", "closed"
const char* tcp_state_name(TcpState s) noexcept;      ///< "syn_sent", ..., "reset"; "-" for kNone
const char* flow_end_name(FlowEnd e) noexcept;        ///< "timeout", "evicted", "reused", "shutdown"
const char* track_name(Track t) noexcept;             ///< "tracked", "not_ip", ...
const char* on_full_name(OnFull o) noexcept;          ///< "evict", "drop", "pass"
Result<OnFull> parse_on_full(std::string_view text);

struct FlowConfig {
  uint32_t capacity = 1u << 18;  ///< flows in the table (memory: about 128 bytes each)
  /// Idle timeouts in seconds, [ProtoClass][FlowState]; kClosed applies to TCP only.
  uint32_t timeout_s[4][3]           = {{60, 600, 60}, {30, 300, 30}, {30, 300, 30}, {30, 300, 30}};
  uint32_t emergency_timeout_s[4][3] = {{5, 100, 10}, {10, 100, 10}, {10, 100, 10}, {10, 100, 10}};
  uint32_t emergency_recovery_percent = 30;  ///< leave emergency at (100 - this)% occupancy
  OnFull on_full                      = OnFull::kEvict;
  /// Track IPv4 packets whose header checksum does not verify (captures taken on the sending
  /// host before checksum offload; Suricata's -k none). Off: they are malformed, as the host
  /// receiving them would drop them.
  bool ignore_ipv4_checksum = false;
  /// Fault the table's memory in when it is made, so that a data plane takes no page fault on
  /// a new flow. Off (commands run once on a capture: `warpath reassemble`, `warpath flows`),
  /// a page is faulted in when its first flow arrives: a capture of a few connections does
  /// not pay for 2^18 entries (33 MB).
  bool prefault = true;
  /// kInvalidArgument naming the field: capacity 1..2^26, timeouts 1..2^31 s with emergency
  /// values not above the normal ones, recovery 1..99.
  Status validate() const;
};

/// One packet's answer.
struct PacketFlow {
  uint64_t serial = 0;  ///< the flow's number in creation order, from 1; 0 = not tracked
  uint32_t handle = 0;  ///< engine's slot + 1 while the flow lives (frame.flow); 0 = none
  uint8_t dir     = 0;  ///< 0: from the initiator; 1: from the responder
  Track track     = Track::kNotIp;
  uint8_t created = 0;  ///< 1 when this packet created the flow
  uint8_t pad     = 0;
};

/// A flow as reported when it ends (Zeek's conn.log): oriented from the initiator.
struct FlowRecord {
  uint64_t serial = 0;
  uint8_t ip_version = 0, proto = 0;
  uint16_t vlan      = 0;    ///< outer VLAN id, 0 when untagged
  uint8_t src[16]    = {};   ///< initiator (IPv4: first 4 bytes)
  uint8_t dst[16]    = {};   ///< responder
  uint16_t sport = 0, dport = 0;
  uint64_t first_ns = 0, last_ns = 0;
  uint64_t packets[2] = {}, bytes[2] = {};  ///< per direction; bytes on the wire
  uint8_t tcp_flags[2] = {};                ///< OR of the TCP flags each side sent
  FlowState state = FlowState::kNew;
  TcpState tcp    = TcpState::kNone;
  FlowEnd end     = FlowEnd::kTimeout;
  bool operator==(const FlowRecord&) const = default;
};

/// Zeek-like history of a TCP flow: the flags each side sent, S A D(PSH) F R, upper case from
/// the initiator and lower case from the responder ("SADFsaf"); "-" for other protocols.
std::string tcp_history(const FlowRecord& r);
/// A record as one JSON object on one line (what `warpath flows --format json` lists and a flow
/// log holds): flow, ts, duration, proto, ip_version, vlan, src, sport, dst, dport,
/// orig_packets, orig_bytes, resp_packets, resp_bytes, state, tcp_state, history,
/// orig_flags, resp_flags (TCP flags each side sent, two hex digits), end.
std::string flow_record_json(const FlowRecord& r);

struct FlowCounters {
  uint64_t packets = 0;
  uint64_t track[size_t(Track::kCount)] = {};  ///< packets by Track
  uint64_t created = 0;
  uint64_t ended[size_t(FlowEnd::kCount)] = {};
  uint64_t midstream = 0;          ///< TCP flows whose first packet was not a SYN
  uint64_t ignored_rst = 0;        ///< RSTs far from their sender's sequence numbers (ignored)
  uint64_t ignored_fin = 0;        ///< FINs far from their sender's sequence numbers (ignored)
  uint64_t reoriented = 0;         ///< flows ended because their guessed responder sent a SYN
  uint64_t emergency_entered = 0;  ///< times the table went into emergency mode
  uint64_t active = 0, max_active = 0;
  bool emergency = false;  ///< in emergency mode now
  bool operator==(const FlowCounters&) const = default;
};

/// The counters as `warpath flows` and the Python API report them: f(name, value) for each
/// number, and group(name, names, values, count) for the packets by track and the flows by
/// how they ended (`names` a function of the index).
template <class F, class G>
void for_each_counter(const FlowCounters& c, F&& f, G&& group) {
  f("packets", c.packets);
  const auto track = [](unsigned i) { return track_name(Track(i)); };
  const auto end   = [](unsigned i) { return flow_end_name(FlowEnd(i)); };
  group("packets_by_track", track, c.track, unsigned(Track::kCount));
  f("flows", c.created);
  group("ended", end, c.ended, unsigned(FlowEnd::kCount));
  f("midstream", c.midstream);
  f("max_active", c.max_active);
  f("emergency_entered", c.emergency_entered);
  f("ignored_rst", c.ignored_rst);
  f("ignored_fin", c.ignored_fin);
  f("reoriented", c.reoriented);
}

class FlowTracker {
 public:
  virtual ~FlowTracker() = default;
  virtual std::string_view id() const noexcept = 0;
  virtual const FlowConfig& config() const noexcept = 0;
  virtual FlowCounters counters() const = 0;

  /// Tracks `infos.size` packets in order (metas gives wire length and timestamp of each);
  /// writes one answer per packet to `out` and appends the records of flows that ended to
  /// `ended`. kInvalidArgument when the spans differ in size.
  Status track(Span<const packet::PacketInfo> infos, Span<const packet::PacketMeta> metas,
               Span<PacketFlow> out, std::vector<FlowRecord>& ended);
  /// Moves the clock to `now_ns` (when later) and ends the flows now due: what a live run
  /// calls when no packet arrives for a while.
  virtual Status advance(uint64_t now_ns, std::vector<FlowRecord>& ended) = 0;
  /// Ends every flow (end of input), appending their records in serial order.
  virtual Status flush(std::vector<FlowRecord>& ended) = 0;

 protected:
  virtual Status do_track(Span<const packet::PacketInfo> infos,
                        Span<const packet::PacketMeta> metas, Span<PacketFlow> out,
                        std::vector<FlowRecord>& ended) = 0;
};

/// Which of `shards` parts a packet belongs to when a capture is cut so that every flow stays
/// whole in one part (warpath cluster; `--shard K/N` of nids, flows and reassemble): a hash of
/// the flow key (both directions alike, as symmetric RSS spreads them over NIC queues) with a
/// fixed seed, so every machine cuts alike. The key is the tracker's own, the IPv4 header
/// checksum aside (a packet goes to its flow's part whether or not the run checks it). Packets
/// without one go by their address pair (later IP fragments of an undefragmented capture: not
/// tracked, so any part would do, and their datagram's other fragments go with them), and
/// non-IP packets to part 0. `shards` 0 or 1: 0.
uint32_t flow_shard(const packet::PacketInfo& info, uint32_t shards) noexcept;
/// A part function for a reader that cuts a capture (io::ShardSpec): the packet's parse, its
/// frame, capture length and time, to its part. A command whose flows are not the outer
/// headers' gives its own (the NIDS tracks tunnels' inner flows: nids::inspected_part_of).
using PartOf = std::function<uint32_t(const packet::PacketInfo& info, const uint8_t* frame,
                                      uint32_t caplen, uint64_t ts_ns)>;

/// The flow engines: ref.flow, cpu.flow.
std::vector<EngineInfo> flow_engines();
/// Resolves `id` (auto, cpu, ref, validate:<id>) and builds a tracker for `config` (validated).
Result<std::unique_ptr<FlowTracker>> make_flow_tracker(std::string_view id,
                                                       const FlowConfig& config = {});
/// Differential check of an engine against ref.flow on generated conversations (the
/// self-test's entry; see core/registry.hpp).
CheckReport check_flow_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::flow
