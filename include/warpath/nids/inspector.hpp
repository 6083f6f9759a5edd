// include/warpath/nids/inspector.hpp
//
// The NIDS pipeline for one thread: parsed packets -> flow tracking (flow/flow.hpp) -> TCP
// stream reassembly (stream/stream.hpp) -> detection (nids/detect.hpp) -> alerts, flow records
// and, in IPS mode, verdicts. `warpath nids` drives it over a capture; the nids module of
// `warpath run` over live ports.
//
// Per packet, in order:
//   0. a tunnelled packet (IP-in-IP, IPv6-in-IP, GRE carrying IP or Ethernet, VXLAN, Geneve;
//      up to three levels) is inspected as the packet it carries: flows, alerts and drops are
//      the inner packet's (the verdict is the outer packet's);
//   1. the flow tracker names its flow and direction;
//   2. its payload is a packet unit (every packet, so header-only rules see empty ones too);
//      a TCP packet of a flow with a stream (handshake seen, or midstream pickup) offers its
//      payload to the packet rules only;
//   3. a TCP segment goes to the reassembler; each direction that got new in-order bytes is a
//      stream unit, oriented as that direction (source = the sender of the bytes);
//   4. each rule alerts at most once per packet; pass rules and noalert rules do not alert;
//      threshold and detection_filter decide which matches alert (windows per rule and tracked
//      address, at most 65,536 at once: past that, matches alert and are counted).
// A flow's buffered bytes are inspected when it ends, as the reassembler delivers them.
//
// Stream inspection keeps each direction's last kStreamLookback bytes (since its last gap)
// and the chunk being inspected; it inspects up to `inspect_depth` bytes per direction, and
// all directions together hold at most `inspect_memcap` bytes (bytes past either are not
// inspected, counted). IDS mode inspects what the receiver acknowledged;
// IPS mode (inline reassembly) inspects bytes as they arrive, so a drop rule drops the packet
// that completed the match and every later packet of its flow.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/nids/detect.hpp"
#include "warpath/nids/l7.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::nids {

/// What happens to a TCP flow seen without its handshake (Suricata's stream.midstream-policy).
enum class MidstreamPolicy : uint8_t {
  kIgnore,      ///< inspected as usual (its bytes reach a stream only with StreamConfig::midstream)
  kPassFlow,    ///< not inspected (bypass is the same here)
  kDropFlow,    ///< IPS: every packet dropped, nothing inspected (IDS: as ignore)
  kDropPacket,  ///< IPS: its packets dropped until the flow ends (IDS: as ignore)
};
/// "ignore", "pass-flow", "bypass", "drop-flow", "reject", "drop-packet"; "auto" is drop-flow in
/// IPS mode and ignore in IDS mode.
Result<MidstreamPolicy> parse_midstream_policy(std::string_view text, bool ips);

/// Whether the inspector gathers a packet batch's inspection units and hands them to the
/// detector at once (Detector::inspect_batch) rather than one by one. Gathering copies the
/// stream buffers; it applies only in IDS mode to rule sets without pass rules (a pass or an
/// IPS drop decides what is inspected next, so there each unit waits for the one before). The
/// alerts are the same either way.
enum class UnitBatches : uint8_t {
  kAuto,  ///< when the engine prefers batches (cuda.nids)
  kOn,    ///< with any engine
  kOff,
};
Result<UnitBatches> parse_unit_batches(std::string_view text);  ///< "auto", "on", "off"

/// The largest stream_chunk, and the largest chunk its jitter may draw: what a stream direction
/// may hold while its inspection waits.
inline constexpr uint32_t kMaxStreamChunk = 1u << 20;
/// The largest stream_chunk_jitter (per cent).
inline constexpr uint32_t kMaxStreamChunkJitter = 50;

struct InspectorConfig {
  std::string engine = "auto";         ///< detection engine
  std::string flow_engine = "auto";
  std::string stream_engine = "auto";
  flow::FlowConfig flow;
  stream::StreamConfig stream;         ///< its mode is set from `ips`
  bool ips = false;
  MidstreamPolicy midstream_policy = MidstreamPolicy::kIgnore;
  uint32_t inspect_depth = 1u << 20;   ///< stream bytes per direction inspected
  uint64_t inspect_memcap = 256ull << 20;  ///< stream bytes held for inspection over all flows
  bool any_checksum = false;           ///< take IPv4 packets whose header checksum is wrong
  std::shared_ptr<const L7Set> l7;     ///< L7 classification (null: none)
  std::string l7_engine = "auto";      ///< pattern engine for it
  UnitBatches unit_batches = UnitBatches::kAuto;
  /// IDS: a direction's stream is inspected once about this many new bytes wait (each chunk's
  /// own size drawn by stream_chunk_jitter), or at its FIN or an RST, a gap, the flow's end or
  /// inspect_depth (Suricata's raw stream inspection in chunks); 0: at every segment. IPS
  /// inspects at every segment whatever this says (a verdict cannot wait).
  uint32_t stream_chunk = 0;
  /// Each chunk's size is drawn at random within this many per cent of stream_chunk either way
  /// (0 to 50, 10 by default; at most kMaxStreamChunk), anew for every chunk of every
  /// direction, so that an attacker cannot predict where an inspection happens. Suricata's
  /// randomize-chunk-range is documented so (10 by default), though its code applies half.
  uint32_t stream_chunk_jitter = 10;
  AppConfig app;  ///< the application-layer parsers (nids/app_layer.hpp)
  /// Keep each finished transaction for take_app_events (EVE's http events); off, none is kept.
  bool app_events = false;
  /// TLS once encrypted (Suricata's tls.encryption-handling): false ("default") inspects a
  /// direction's stream no more after its ChangeCipherSpec or first application data (the
  /// tls.* buffers, packet keywords and the handshake's own bytes still are); true ("full")
  /// inspects the encrypted bytes with the content rules too.
  bool inspect_encrypted = false;
};

struct Alert {
  uint64_t ts_ns   = 0;
  uint64_t flow    = 0;  ///< flow serial, 0 when not tracked
  uint64_t packet  = 0;  ///< the packet's number in the input, from 1
  uint32_t rule    = 0;  ///< index in the image's rules()
  uint8_t ip_version = 4, proto = 0;
  uint8_t src[16] = {}, dst[16] = {};
  uint16_t sport = 0, dport = 0;
  bool to_server = true;  ///< the direction of the packet or stream bytes that matched
  bool stream    = false; ///< matched in a stream buffer
  bool blocked   = false; ///< IPS: the packet was dropped
  AppLayer app   = AppLayer::kNone;  ///< the flow's application protocol, when detected
  int64_t tx_id  = -1;               ///< a transaction rule's transaction (its number in the flow)
  std::shared_ptr<const AppTx> tx;   ///< ... and its buffers (EVE's http object)
};

/// A finished application-layer transaction (EVE's http event), oriented client to server.
struct AppEvent {
  uint64_t ts_ns  = 0;
  uint64_t flow   = 0;
  uint64_t packet = 0;  ///< the packet that finished it (0: the flow's end)
  uint8_t ip_version = 4, proto = 6;
  uint8_t src[16] = {}, dst[16] = {};
  uint16_t sport = 0, dport = 0;
  std::shared_ptr<const AppTx> tx;
};

/// A flow that ended, with what detection made of it.
struct FlowEvent {
  flow::FlowRecord record;
  std::string app_proto;  ///< the L7 label ("unknown" when classification found none; empty without L7)
  uint64_t alerts = 0;
  bool dropped    = false;  ///< IPS: a drop rule matched in it
};

struct InspectorCounters {
  uint64_t packets = 0, bytes = 0;
  uint64_t alerts = 0;
  uint64_t dropped = 0;            ///< IPS: packets dropped (rx = passed + dropped)
  uint64_t flows_dropped = 0;      ///< IPS: flows a drop rule ended
  uint64_t inspect_depth = 0;      ///< stream directions that reached inspect_depth
  uint64_t inspect_memcap = 0;     ///< stream directions cut short by inspect_memcap
  uint64_t stream_gaps = 0;        ///< gaps that restarted a direction's inspection buffer
  uint64_t midstream_flows = 0;    ///< TCP flows seen without their handshake (midstream policy)
  uint64_t decapsulated = 0;       ///< tunnel layers removed (IP-in-IP, GRE, VXLAN, Geneve)
  uint64_t encrypted_bytes = 0;    ///< TLS stream bytes not inspected: encrypted (inspect_encrypted off)
  uint64_t l7_classified = 0;      ///< flows whose L7 classification finished (labelled or not)
  uint64_t thresholded = 0;        ///< matches threshold / detection_filter kept from alerting
  uint64_t threshold_full = 0;     ///< matches that alerted because the threshold table was full
  AppCounters app;                 ///< the application-layer parsers'
};

class Inspector {
 public:
  static Result<std::unique_ptr<Inspector>> make(std::shared_ptr<const DetectImage> image,
                                                 const InspectorConfig& config);
  virtual ~Inspector() = default;

  /// One batch of parsed packets, in order. Alerts and ended flows are appended; `drop`, when
  /// not null, gets one verdict per packet (1: dropped, IPS mode).
  virtual Status process(const packet::BatchView& batch, const packet::PacketInfo* infos,
                         uint32_t n, std::vector<Alert>& alerts, std::vector<FlowEvent>& ended,
                         uint8_t* drop = nullptr) = 0;
  /// Moves the clock (live runs without traffic): flows due end.
  virtual Status advance(uint64_t now_ns, std::vector<Alert>& alerts,
                         std::vector<FlowEvent>& ended) = 0;
  /// The end of the input: every flow ends, what is buffered is inspected.
  virtual Status finish(std::vector<Alert>& alerts, std::vector<FlowEvent>& ended) = 0;

  /// The transactions finished since the last call (appended to `out`).
  virtual void take_app_events(std::vector<AppEvent>& out) = 0;
  virtual InspectorCounters counters() const = 0;
  virtual flow::FlowCounters flow_counters() const = 0;
  virtual stream::StreamCounters stream_counters() const = 0;
  virtual DetectCounters detect_counters() const = 0;
  virtual const DetectImage& image() const noexcept = 0;
  virtual std::string engines()
      const = 0;  ///< "cpu.nids + cpu.flow + cpu.stream"; "cuda.nids (unit batches) + ..." when gathering
};

/// EVE JSON (Suricata's eve.json, one object per line): an alert.
std::string alert_eve(const Alert& a, const DetectImage& image, bool ips);
/// A flow record as an EVE flow event (flow.alerted, flow.state, flow.reason, app_proto when
/// L7 classification ran).
std::string flow_eve(const FlowEvent& f);
/// A transaction as an EVE event of its protocol (event_type http: hostname, url, method,
/// protocol, status, user agent, content type, referer, redirect, length; Suricata's names).
std::string app_eve(const AppEvent& e);

/// The part function (io::ShardSpec::part_of) of a capture cut into `shards` parts for the NIDS:
/// flow::flow_shard of the flow the inspector tracks a packet by, a tunnel's inner flow for a
/// tunnelled packet (decapsulated as the inspector does, up to three levels), so both
/// directions of a tunnelled connection, whose outer headers differ (VXLAN's and Geneve's
/// source ports), go to one part. One function per reader (it keeps scratch space).
flow::PartOf inspected_part_of(uint32_t shards);
/// A fast.log line.
std::string alert_fast(const Alert& a, const DetectImage& image, bool ips);

}  // namespace warpath::nids
