// include/warpath/nids/detect.hpp
//
// Detection: a rule set (nids/rule.hpp) compiled into an immutable image, and engines that
// answer "which rules match this inspection unit" against it.
//
// Inspection units
//   A unit is one buffer with the context of the packet that brought it:
//     - a packet buffer: the transport payload of one packet (UDP, ICMP, other IP, and TCP
//       packets of flows without a reassembled stream);
//     - a stream buffer: a chunk of reassembled bytes of one direction of a TCP flow (what one
//       delivery brought, at `new_from`) after up to kStreamLookback bytes that came before it
//       (since the last gap), so content split across deliveries matches. Only matches that
//       end in the chunk count (an occurrence alerts once), and absolute positions (offset,
//       depth, startswith, absolute isdataat, pcre anchored with ^ or A) count from the
//       chunk's start, as Suricata inspects raw stream chunks; while the buffer still begins
//       at the stream's first byte (the first kStreamLookback bytes), they may count from
//       there too, so a request split over segments still matches its anchored contents.
//   Which rules see which buffer (Suricata's split): rules without payload conditions, those
//   without a content or pcre that must be found, and those with dsize, flags, itype/icode,
//   flow:no_stream or proto tcp-pkt, look at packets; TCP payload rules look
//   at the stream when the flow has one (flow:only_stream and tcp-stream: only then), else at
//   the packet.
//
// Evaluation of one rule (one body, src/nids/core/rule_eval.hpp, for every engine)
//   header (proto, addresses and ports, <> both ways), flow options, dsize, flags, itype/icode,
//   flowbits conditions, then the payload items in order with Suricata's semantics: absolute
//   contents in [offset, offset + depth), relative ones in [prev_end + distance,
//   prev_end + distance + within], negated ones must not occur there, pcre (R: from prev_end)
//   moves prev_end to its match's end, isdataat tests the buffer's length; when a later item
//   fails, earlier ones are retried at their next occurrence (backtracking, bounded).
//   Rules are evaluated in Suricata's order: by action (RuleSet::action_order, by default
//   pass, drop, alert), flowbits setters before checkers, then priority, then file order. A matching pass rule ends the unit (no
//   later rule alerts for it). Each rule matches a packet at most once.
//
// Engines ("<device>.<algorithm>", nids_engines())
//   ref.nids   every rule fully evaluated on every unit: the oracle
//   cpu.nids   rules grouped by buffer and protocol; a multi-literal prefilter (the pattern
//              engines: Vectorscan where built, else Aho-Corasick) over each rule's fast
//              pattern (its fast_pattern content, else its longest positive content) picks the
//              candidates; rules without a positive content are always candidates. A stream
//              remembers the rules whose fast pattern it has shown (their other conditions may
//              complete later). A TCP or UDP unit scans with the database of its port groups,
//              direction and application protocol (rules for another protocol than its flow's
//              cannot match: `alert ftp` on an HTTP flow).
//   cuda.nids  cpu.nids's groups with a block prefilter on the GPU (cuda.ac): inspect_batch
//              scans every unit of a batch at once, one launch per group (a packet unit whole,
//              a stream unit from its new bytes, its direction remembering the rules earlier
//              chunks armed), then evaluates the candidates of each unit in order on the CPU
//              (flowbits are sequential by definition). Only literals run on the GPU: pcre and
//              the other conditions are the candidates' evaluation, as in cpu.nids.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/status.hpp"
#include "warpath/nids/app_layer.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {

/// What the header and the non-payload options of a rule see.
struct PacketView {
  uint8_t ip_version = 4;
  uint8_t proto      = 0;  ///< transport protocol number
  const uint8_t* src = nullptr;
  const uint8_t* dst = nullptr;  ///< network order (IPv4: 4 bytes)
  uint16_t sport = 0, dport = 0;
  uint8_t tcp_flags = 0;
  uint8_t icmp_type = 0, icmp_code = 0;
  uint32_t dsize = 0;         ///< the packet's payload length
  uint64_t ts_ns = 0;         ///< the packet's time (xbits expire by it)
  /// TCP: a session was seen opening (or picked up midstream), so stream_size applies; its
  /// size per side (0: the client's, the initiator's; 1: the server's), this packet included.
  bool has_session = false;
  uint32_t stream_size[2] = {};
  bool has_flow = false;      ///< tracked by the flow table
  bool established = false;   ///< TCP: handshake done (or picked up midstream); others: answered
  bool to_server = true;      ///< direction 0 (from the initiator)
  const std::string* app_proto = nullptr;  ///< the flow's L7 label; null when none matched
  bool app_pending = false;  ///< L7 classification still running: app-layer-protocol waits
  AppLayer app_layer = AppLayer::kNone;  ///< the protocol app-layer detection found in the flow
  /// TLS: each side's hello version (0: the client's, 1: the server's; 0 before the hello).
  uint16_t tls_version[2] = {};
};

/// What a unit's bytes are: a packet's payload, a stream chunk, or (kApp) a transaction's
/// buffers (Unit::tx; data and len unused).
enum class Buffer : uint8_t { kPacket, kStream, kApp };

/// Bytes of a direction's earlier stream kept before each new chunk.
inline constexpr uint32_t kStreamLookback = 4096;

struct Unit {
  PacketView pkt;
  Buffer buffer       = Buffer::kPacket;
  const uint8_t* data = nullptr;
  uint32_t len        = 0;
  uint32_t new_from   = 0;  ///< stream: where the chunk starts (matches must end after it)
  bool at_stream_start = false;  ///< stream: data[0] is the stream's first byte (since a gap)
  /// The packet the unit belongs to (units of one packet share it; 0: a packet of its own):
  /// a rule's flowbits change once per packet, however many of its units it matches.
  uint64_t packet = 0;
  uint64_t flow       = 0;  ///< flow serial (flowbits, stream state); 0: none
  uint8_t dir         = 0;  ///< the buffer's direction (0: from the initiator)
  /// A packet unit of a TCP flow whose payload is inspected through its stream: only the
  /// packet rules (no payload, dsize, no_stream, tcp-pkt) look at it.
  bool stream_flow = false;
  /// With stream_flow: whether the stream will inspect this payload's bytes (false once its
  /// direction reached the inspection depth).
  bool stream_inspects = true;
  /// The first packet of its flow in its direction (or an untracked packet): IP-only rules
  /// look at these packets only.
  bool first_in_dir = true;
  /// kApp: the transaction (its request, or with `response` its response too); the kAppTx
  /// rules of its phase look at it, each buffer list at its buffer.
  const AppTx* tx = nullptr;
};

/// Suricata's rule types, which decide when a rule is evaluated and what its action covers.
enum class RuleKind : uint8_t {
  kIpOnly,      ///< addresses only (no ports, payload, flow or packet keywords): the first
                ///< packet of each direction of a flow; its action covers the flow
  kLikeIpOnly,  ///< the same with a negated address: every packet; action covers the flow
  kPacket,      ///< packet keywords or no payload: every packet; action covers the packet
  kPacketStream,///< payload: the stream when there is one (action covers the flow), else packets
  kStream,      ///< tcp-stream or flow:only_stream: the stream only; action covers the flow
  kAppTx,       ///< application-layer buffers: a flow's transactions; action covers the flow
};
const char* rule_kind_name(RuleKind k) noexcept;  ///< "ip_only", "like_ip_only", "pkt", ...

/// A rule that matched: its index in DetectImage::rules().
struct Hit {
  uint32_t rule = 0;
  bool operator==(const Hit&) const = default;
};

struct DetectCounters {
  uint64_t units = 0, packet_units = 0, stream_units = 0, app_units = 0;
  uint64_t bytes = 0;              ///< buffer bytes inspected (stream: the new ones)
  uint64_t candidates = 0;         ///< rules fully evaluated
  uint64_t matches = 0;            ///< rules that matched (noalert ones too)
  uint64_t backtrack_limit = 0;    ///< evaluations stopped by the backtracking bound (no match)
  uint64_t pcre_limit = 0;         ///< pcre runs stopped by PCRE2's match limit (no match)
  uint64_t flows_with_bits = 0;    ///< flows holding flowbits now
  uint64_t flows_with_ints = 0;    ///< flows holding flowints now
  uint64_t xbits = 0;              ///< xbits held now (hosts' and address pairs', unexpired or not swept)
  uint64_t xbits_full = 0;         ///< xbits not set because the table was full (XbitTable)
  /// An offloading engine's (cuda.nids) prefilter scans, one per rule group and batch: on the
  /// device, and on the CPU because the group's bytes in the batch were too few to pay for a
  /// launch (opportunistic offload, WARPATH_NIDS_OFFLOAD_MIN_BYTES).
  uint64_t scans_offloaded = 0, scans_on_cpu = 0;
  /// cpu.nids's prefilter databases per port group (Suricata's signature group heads), compiled
  /// on first use, and the time compiling them took.
  uint64_t port_group_dbs = 0, port_group_compile_ns = 0;
  /// cpu.nids's TCP payloads scanned once for both the packet and the stream rules, and the
  /// directions that left that single scan (their bytes delivered were not the bytes that
  /// arrived, in order: a retransmission, reordering, an overlap, bytes not inspected), scanned
  /// twice from then on (src/nids/cpu/single_scan.hpp).
  uint64_t single_scans = 0, single_scan_left = 0;
  bool operator==(const DetectCounters&) const = default;
};

class DetectImage;

/// Compiles loaded rules: content bytes folded for nocase, pcre compiled (PCRE2, JIT where it
/// can), flowbits named by index, evaluation order. kNotSupported naming the rule when a pcre
/// does not compile.
Result<std::shared_ptr<const DetectImage>> compile_rules(const RuleSet& set);

class DetectImage {
 public:
  virtual ~DetectImage() = default;
  /// Rules in evaluation order (Hit::rule indexes this).
  virtual const std::vector<Rule>& rules() const noexcept = 0;
  /// The classtype's description and priority, or the rule's own priority.
  virtual ClassType class_of(const Rule& r) const = 0;
  /// The type of rules()[i].
  virtual RuleKind kind(uint32_t i) const = 0;
  /// The content cpu.nids prefilters rules()[i] by (its fast_pattern content, else its longest
  /// positive one), or null when it has none.
  virtual const Content* fast_pattern(uint32_t i) const = 0;
};

class Detector {
 public:
  virtual ~Detector() = default;
  virtual std::string_view id() const noexcept = 0;
  /// Appends the rules that match `u` (in evaluation order, each once; noalert and pass rules
  /// included: the caller decides what to log) and applies their flowbits.
  virtual Status inspect(const Unit& u, std::vector<Hit>& hits) = 0;
  /// `n` units at once: appends to hits[i] what inspect(units[i], hits[i]) would, the units
  /// taken in order (flowbits set by one are seen by the next). The units' bytes stay valid
  /// for the call. Engines that prefilter a batch at once (cuda.nids) answer faster this way;
  /// the others inspect one unit after the other.
  virtual Status inspect_batch(const Unit* units, uint32_t n, std::vector<Hit>* hits) {
    for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(inspect(units[i], hits[i]));
    return Status::ok();
  }
  /// Whether inspect_batch is this engine's fast path (callers then gather units).
  virtual bool prefers_batches() const noexcept { return false; }
  /// The flow ended: its flowbits and stream state are freed.
  virtual void end_flow(uint64_t flow) = 0;
  virtual DetectCounters counters() const = 0;
  virtual const DetectImage& image() const noexcept = 0;
};

/// ref.nids, cpu.nids, cuda.nids.
std::vector<EngineInfo> nids_engines();
/// Resolves `id` (auto, cpu, ref, validate:<id>) and builds a detector over `image`.
/// validate:<id> runs ref.nids beside it and fails inspect() on the first unit whose hits differ.
Result<std::unique_ptr<Detector>> make_detector(std::string_view id,
                                                std::shared_ptr<const DetectImage> image);
/// Differential check against ref.nids on generated rules and payloads (the self-test's entry).
CheckReport check_nids_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::nids
