// The NIDS pipeline of one thread (include/warpath/nids/inspector.hpp): flows, streams,
// detection, alerts and IPS verdicts.
#include "warpath/nids/inspector.hpp"

#include <algorithm>
#include <array>
#include <chrono>
#include <cstring>
#include <iterator>
#include <random>

#include "core/serial_map.hpp"
#include "nids/app/app_flow.hpp"
#include "nids/flow_ctx.hpp"
#include "nids/threshold_table.hpp"
#include "nids/tunnel.hpp"

namespace warpath::nids {
namespace {

using detail::DirBuffer;
using detail::FlowCtx;
using detail::handshake_step;
using detail::SeqSpace;

// 64 bits from the system's entropy source; should it fail (std::random_device may throw where
// none is available), the clock and an address: hard to guess from off the host, if weaker.
uint64_t entropy_seed() {
  try {
    std::random_device rd;
    return uint64_t(rd()) << 32 ^ rd();
  } catch (const std::exception&) {
    static int anchor;
    return uint64_t(std::chrono::steady_clock::now().time_since_epoch().count()) ^
           uint64_t(reinterpret_cast<uintptr_t>(&anchor)) << 17;
  }
}

// What the rules decided for the packet being inspected.
struct Verdict {
  bool drop = false;       // a drop rule matched (IPS: the packet is dropped; later alerts are not)
  bool drop_flow = false;  // ... one whose action covers the flow
  bool pass = false;       // a pass rule matched: nothing more of this packet is inspected
  bool pass_flow = false;  // ... one whose action covers the flow: nothing more of the flow
};

// The app-layer parsers' settings: the raw-stream window only where a loaded transaction rule
// has payload items to look at it.
AppConfig parser_config(const InspectorConfig& c, const DetectImage& image) {
  AppConfig a   = c.app;
  a.raw_window = std::any_of(image.rules().begin(), image.rules().end(),
                             [](const Rule& r) { return r.has_app_buffers() && r.has_payload(); });
  return a;
}

class PipelineInspector final : public Inspector {
 public:
  PipelineInspector(std::unique_ptr<Detector> d, std::unique_ptr<flow::FlowTracker> t,
                    std::unique_ptr<stream::Reassembler> r, std::unique_ptr<pattern::Matcher> l7,
                    const InspectorConfig& c)
      : detect_(std::move(d)), tracker_(std::move(t)), reasm_(std::move(r)), l7_(std::move(l7)), cfg_(c),
        app_(parser_config(c, detect_->image())) {
    sink_               = [this](const stream::Chunk& ch) { take_chunk(ch); };
    const auto& rules   = detect_->image().rules();
    const bool any_pass = std::any_of(
        rules.begin(), rules.end(), [](const Rule& rule) { return rule.action == Action::kPass; });
    gather_ = !cfg_.ips && !any_pass &&
              (cfg_.unit_batches == UnitBatches::kOn ||
               (cfg_.unit_batches == UnitBatches::kAuto && detect_->prefers_batches()));
  }

  Status process(const packet::BatchView& batch, const packet::PacketInfo* infos, uint32_t n,
                 std::vector<Alert>& alerts, std::vector<FlowEvent>& ended,
                 uint8_t* drop) override {
    answers_.resize(n);
    records_.clear();
    // Tunnelled packets are inspected by what they carry (nids/tunnel.hpp says which tunnels).
    const packet::PacketInfo* seen = infos;
    frames_.assign(n, {nullptr, 0});
    bool any_tunnel = false;
    for (uint32_t i = 0; i < n && !any_tunnel; ++i) any_tunnel = infos[i].tunnel != packet::Tunnel::kNone;
    if (any_tunnel) {
      local_infos_.assign(infos, infos + n);
      if (inner_.size() < n) inner_.resize(n);
      for (uint32_t i = 0; i < n; ++i) {
        const uint8_t* f = batch.data(i);
        uint32_t caplen  = batch.metas[i].caplen;
        const int levels =
            decap_.innermost(local_infos_[i], f, caplen, batch.metas[i].timestamp_ns, inner_[i]);
        if (levels) frames_[i] = {f, caplen};
        counters_.decapsulated += uint64_t(levels);
      }
      seen = local_infos_.data();
    }
    WARPATH_TRY(tracker_->track({seen, n}, {batch.metas, n}, {answers_.data(), n}, records_));
    for (uint32_t i = 0; i < n; ++i) {
      uint8_t verdict = 0;
      WARPATH_TRY(packet(batch, seen[i], answers_[i], i, alerts, verdict));
      if (drop) drop[i] = verdict;
    }
    return end_flows(alerts, ended);
  }

  Status advance(uint64_t now_ns, std::vector<Alert>& alerts, std::vector<FlowEvent>& ended) override {
    records_.clear();
    WARPATH_TRY(tracker_->advance(now_ns, records_));
    return end_flows(alerts, ended);
  }

  Status finish(std::vector<Alert>& alerts, std::vector<FlowEvent>& ended) override {
    records_.clear();
    WARPATH_TRY(tracker_->flush(records_));
    return end_flows(alerts, ended);
  }

  void take_app_events(std::vector<AppEvent>& out) override {
    std::move(app_events_.begin(), app_events_.end(), std::back_inserter(out));
    app_events_.clear();
  }

  InspectorCounters counters() const override {
    InspectorCounters c = counters_;
    c.app = app_.counters();
    return c;
  }
  flow::FlowCounters flow_counters() const override { return tracker_->counters(); }
  stream::StreamCounters stream_counters() const override { return reasm_->counters(); }
  DetectCounters detect_counters() const override { return detect_->counters(); }
  const DetectImage& image() const noexcept override { return detect_->image(); }
  std::string engines() const override {
    return std::string(detect_->id()) + (gather_ ? " (unit batches)" : "") + " + " +
           std::string(tracker_->id()) + " + " + std::string(reasm_->id());
  }

 private:
  Status packet(const packet::BatchView& batch, const packet::PacketInfo& info,
                const flow::PacketFlow& pf, uint32_t i, std::vector<Alert>& alerts,
                uint8_t& verdict) {
    const packet::PacketMeta& meta = batch.metas[i];
    const uint8_t* frame = frames_[i].first ? frames_[i].first : batch.data(i);
    const uint32_t caplen = frames_[i].first ? frames_[i].second : meta.caplen;
    ++counters_.packets;
    counters_.bytes += meta.len;
    ts_ = meta.timestamp_ns;
    ++packet_no_;
    if (info.ip_version != 4 && info.ip_version != 6) return Status::ok();
    // A TCP packet's segment is read once: for the handshake's view here, its payload below
    // (what payload_of gives, whatever the IPv4 checksum), and what the reassembler gets.
    stream::Segment seg;
    const bool tcp_seg = info.proto == 6 && stream::segment_of(info, frame, caplen, seg, true);
    FlowCtx* ctx = nullptr;
    bool first_in_dir = true, tcp_established = false;
    if (pf.serial) {
      ctx = &flows_.find_or_emplace(pf.serial);
      if (ctx->dropped) {  // IPS: the flow was dropped
        verdict = 1;
        ++counters_.dropped;
        return Status::ok();
      }
      if (pf.created && info.proto == 6 && (info.tcp_flags & 0x12) != 0x02) {  // no SYN first
        ++counters_.midstream_flows;
        switch (cfg_.midstream_policy) {
          case MidstreamPolicy::kIgnore: break;
          case MidstreamPolicy::kPassFlow: ctx->passed = true; break;
          case MidstreamPolicy::kDropFlow:
            if (cfg_.ips) ctx->dropped = true, ++counters_.flows_dropped;
            break;
          case MidstreamPolicy::kDropPacket:
            if (cfg_.ips) ctx->drop_packets = true;
            break;
        }
        if (ctx->dropped) {
          verdict = 1;
          ++counters_.dropped;
          return Status::ok();
        }
      }
      if (ctx->drop_packets) {
        verdict = 1;
        ++counters_.dropped;
        return Status::ok();
      }
      if (ctx->passed) return Status::ok();
      first_in_dir = !ctx->seen[pf.dir];
      ctx->seen[pf.dir] = true;
      // TCP: the packet that completes the handshake is not yet established (Suricata).
      if (info.proto == 6) {
        const bool syn = info.tcp_flags & packet::kTcpSyn;
        if (pf.created && !syn && cfg_.stream.midstream) ctx->midstream = true;
        tcp_established =
            tcp_seg ? handshake_step(*ctx, seg, pf.dir,
                                     cfg_.ips || cfg_.stream.mode == stream::Mode::kInline)
                    : ctx->established(6);
        // With --midstream the reassembler picks up a connection whose handshake it cannot
        // complete (the SYN+ACK lost, a capture starting at it) at its next packet without SYN:
        // established from there, as the packets of a flow first seen midstream are.
        if (cfg_.stream.midstream && !syn && !ctx->established(6)) ctx->midstream = true;
      }
    }
    PacketView pv;
    pv.ip_version  = info.ip_version;
    pv.proto       = info.proto;
    pv.src         = info.src;
    pv.dst         = info.dst;
    pv.sport       = info.sport;
    pv.dport       = info.dport;
    pv.tcp_flags   = info.tcp_flags;
    pv.icmp_type   = info.icmp_type;
    pv.icmp_code   = info.icmp_code;
    pv.has_flow    = ctx != nullptr;
    pv.established = ctx && (info.proto == 6 ? tcp_established || ctx->midstream
                                             : ctx->established(info.proto));
    pv.to_server   = pf.dir == 0;
    const uint8_t* payload = nullptr;
    uint32_t plen          = 0;
    if (tcp_seg) {
      if (seg.len) payload = seg.data, plen = seg.len;
      if (ctx) {  // stream_size: the session's sides, this segment counted
        ctx->seq[pf.dir].add(seg);
        session_view(*ctx, pv);
      }
    } else if (info.proto == 6 || !stream::payload_of(info, frame, caplen, payload, plen)) {
      payload = nullptr, plen = 0;
    }
    pv.dsize = plen;
    pv.ts_ns = meta.timestamp_ns;
    if (ctx && l7_) {
      pv.app_proto   = classify(*ctx, payload, plen);
      pv.app_pending = !ctx->l7.done;
    }
    next_packet();
    Verdict v;
    // A TCP segment goes to the reassembler first: whether it took the bytes decides where the
    // payload rules look (the stream, or this packet when the stream refused them).
    bool in_stream = false;
    const bool is_seg =
        tcp_seg && pf.serial && (cfg_.any_checksum || info.status == packet::ParseStatus::kOk);
    if (is_seg) {
      seg.flow = pf.serial;
      seg.dir  = pf.dir;
      const uint64_t refused_before = reasm_->refused();
      WARPATH_TRY(reasm_->segment(seg, sink_));
      in_stream = reasm_->refused() == refused_before;
      app_view(*ctx, pv);  // detection may have decided on these bytes
    } else if (ctx) {
      // A UDP datagram: DNS by content, each message a transaction.
      if (info.proto == 17 && plen) app_.datagram(ctx->app, pf.dir, payload, plen);
      app_view(*ctx, pv);
    }
    Unit& u        = packet_unit_;  // every field a packet unit has is set here
    u.pkt         = pv;
    u.buffer      = Buffer::kPacket;
    u.data        = payload;
    u.len         = plen;
    // TLS after its handshake: content rules see no payload (encryption-handling default).
    if (ctx && !cfg_.inspect_encrypted && ctx->app.tls && ctx->app.tls->encrypted(pf.dir))
      u.data = nullptr, u.len = 0;
    u.flow        = pf.serial;
    u.dir         = pf.dir;
    u.stream_flow  = in_stream;
    u.stream_inspects = in_stream && !ctx->dir[pf.dir].full;
    u.first_in_dir = first_in_dir;
    u.packet       = packet_no_;
    WARPATH_TRY(inspect(u, pf.serial, alerts, v));
    if (is_seg && !v.pass) WARPATH_TRY(inspect_streams(pf.serial, *ctx, &pv, pf.dir, alerts, v));
    if (ctx && !ctx->app.ready.empty() && !v.pass)
      WARPATH_TRY(inspect_transactions(pf.serial, *ctx, &pv, pf.dir, alerts, v));
    else if (ctx)
      ctx->app.ready.clear();
    if (ctx && v.pass_flow) ctx->passed = true;
    if (v.drop && cfg_.ips) {
      verdict = 1;
      ++counters_.dropped;
      if (ctx && v.drop_flow && !ctx->dropped) {
        ctx->dropped = true;
        ++counters_.flows_dropped;
      }
    }
    return Status::ok();
  }

  // L7: adds a packet's payload to the flow's first bytes and matches them; the label, or null.
  const std::string* classify(FlowCtx& ctx, const uint8_t* data, uint32_t len) {
    if (l7_classify(ctx.l7, data, len, *l7_, l7_matches_)) ++counters_.l7_classified;
    return ctx.l7.label >= 0 ? &cfg_.l7->names[size_t(ctx.l7.label)] : nullptr;
  }

  // What stream_size sees of the flow's TCP session: whether one opened, each side's size.
  static void session_view(const FlowCtx& ctx, PacketView& pv) {
    pv.has_session    = (ctx.handshake & 1) || ctx.midstream;
    pv.stream_size[0] = ctx.seq[0].size();
    pv.stream_size[1] = ctx.seq[1].size();
  }

  // What the flow's application layer shows a packet view: its protocol, TLS's versions.
  static void app_view(const FlowCtx& ctx, PacketView& pv) {
    pv.app_layer = ctx.app.layer;
    if (ctx.app.tls) pv.tls_version[0] = ctx.app.tls->version(0), pv.tls_version[1] = ctx.app.tls->version(1);
  }

  // A stream or transaction unit's packet view, oriented as direction d: from the packet `pv`
  // that delivered it (oriented as `pdir`), or at the flow's end (pv null) from its record.
  void orient(Unit& u, const PacketView* pv, uint8_t pdir, uint8_t d, const flow::FlowRecord* rec,
              const FlowCtx& ctx) const {
    if (pv) {
      u.pkt = *pv;
      if (d != pdir) {  // from *pv, not by swapping the copy's fields (reloading just-stored
                        // fields as one vector stalled on store forwarding)
        u.pkt.src   = pv->dst;
        u.pkt.dst   = pv->src;
        u.pkt.sport = pv->dport;
        u.pkt.dport = pv->sport;
      }
    } else {
      u.pkt             = PacketView{};
      u.pkt.ip_version  = rec->ip_version;
      u.pkt.proto       = rec->proto;
      u.pkt.src         = d == 0 ? rec->src : rec->dst;
      u.pkt.dst         = d == 0 ? rec->dst : rec->src;
      u.pkt.sport       = d == 0 ? rec->sport : rec->dport;
      u.pkt.dport       = d == 0 ? rec->dport : rec->sport;
      u.pkt.has_flow    = true;
      u.pkt.established = ctx.established(6);
      u.pkt.ts_ns       = ts_;
      session_view(ctx, u.pkt);
    }
    u.pkt.to_server = d == 0;
    app_view(ctx, u.pkt);
    if (ctx.l7.label >= 0) u.pkt.app_proto = &cfg_.l7->names[size_t(ctx.l7.label)];
    u.pkt.app_pending = l7_ && !ctx.l7.done;
  }

  // Inspects the directions of `ctx` that got bytes. `pv` is the packet that delivered them
  // (oriented as direction `pdir`), or null at the flow's end (`rec` orients then).
  Status inspect_streams(uint64_t serial, FlowCtx& ctx, const PacketView* pv, uint8_t pdir,
                         std::vector<Alert>& alerts, Verdict& v,
                         const flow::FlowRecord* rec = nullptr) {
    // The FIN's bytes are delivered when the other side acknowledges them, a packet later.
    if (pv && (pv->tcp_flags & 0x01)) ctx.dir[pdir].closing = true;
    for (uint8_t d = 0; d < 2; ++d) {
      DirBuffer& b = ctx.dir[d];
      Unit& u      = stream_unit_;  // below and in run(): every field a stream unit has
      u.buffer = Buffer::kStream;
      u.flow   = serial;
      u.dir    = d;
      u.packet = pv ? packet_no_ : 0;  // a flow's end: no packet of its own
      orient(u, pv, pdir, d, rec, ctx);
      auto run = [&](const uint8_t* data, size_t len, uint32_t inspected, bool from_start) {
        u.at_stream_start = from_start;
        u.data            = data;
        u.len             = uint32_t(len);
        u.new_from = inspected;
        return inspect(u, serial, alerts, v);
      };
      // Each run of bytes between gaps is a buffer of its own: those before a gap first.
      for (const auto& [bytes, inspected] : b.before_gap)
        WARPATH_TRY(
            run(reinterpret_cast<const uint8_t*>(bytes.data()), bytes.size(), inspected, false));
      b.before_gap.clear();
      if (b.dirty && pv && defer(b, *pv)) continue;
      if (b.dirty) {
        b.dirty = false;
        b.chunk = 0;  // the next chunk draws its own size
        WARPATH_TRY(run(b.data(), b.held(), b.inspected, b.from_start));
        if (b.held() > kStreamLookback) {  // keep the lookback only
          buffered_ -= b.held() - kStreamLookback;
          b.keep_last(kStreamLookback);
          b.from_start = false;
        }
        b.inspected = uint32_t(b.held());
      }
    }
    return Status::ok();
  }

  // Inspects the transactions the flow's parser finished (ctx.app.ready), each a unit of its
  // own oriented as its phase (request: from the client); `pv` as in inspect_streams.
  Status inspect_transactions(uint64_t serial, FlowCtx& ctx, const PacketView* pv, uint8_t pdir,
                              std::vector<Alert>& alerts, Verdict& v,
                              const flow::FlowRecord* rec = nullptr) {
    WARPATH_TRY(flush(alerts));  // the units gathered before these come first
    for (const AppTx& tx : ctx.app.ready) {
      if (v.pass) break;
      const uint8_t d = tx.response ? 1 : 0;
      Unit& u = app_unit_;
      u.buffer = Buffer::kApp;
      u.tx     = &tx;
      u.data   = nullptr;
      u.len    = 0;
      u.flow   = serial;
      u.dir    = d;
      u.packet = pv ? packet_no_ : 0;
      u.stream_flow  = true;
      u.first_in_dir = false;
      orient(u, pv, pdir, d, rec, ctx);
      u.pkt.dsize = 0;
      if (tx.log_only) {  // a phase inspected already, given again to be logged
        if (tx.last && cfg_.app_events) app_event(u, tx);
        continue;
      }
      hits_.clear();
      WARPATH_TRY(detect_->inspect(u, hits_));
      WARPATH_TRY(take_hits(u, serial, hits_, ts_, pv ? packet_no_ : 0, alerts, v));
      if (tx.last && cfg_.app_events) app_event(u, tx);
    }
    ctx.app.ready.clear();
    return Status::ok();
  }

  // The transaction's EVE event, oriented from the client (u is oriented as its phase).
  void app_event(const Unit& u, const AppTx& tx) {
    AppEvent e;
    e.ts_ns = ts_, e.flow = u.flow, e.packet = u.packet;
    e.ip_version = u.pkt.ip_version, e.proto = u.pkt.proto;
    const bool flip = u.dir == 1;
    const size_t alen = u.pkt.ip_version == 6 ? 16 : 4;
    std::memcpy(e.src, flip ? u.pkt.dst : u.pkt.src, alen);
    std::memcpy(e.dst, flip ? u.pkt.src : u.pkt.dst, alen);
    e.sport = flip ? u.pkt.dport : u.pkt.sport;
    e.dport = flip ? u.pkt.sport : u.pkt.dport;
    e.tx = std::make_shared<const AppTx>(tx);
    app_events_.push_back(std::move(e));
  }

  // IDS with stream_chunk: does direction d's inspection wait for more bytes? Not past the
  // chunk, nor once the direction's FIN was seen or at an RST (the stream ends there).
  bool defer(DirBuffer& b, const PacketView& pv) {
    if (cfg_.ips || cfg_.stream_chunk == 0) return false;
    if (b.full) return false;  // past inspect_depth no more bytes come: nothing to wait for
    if (b.chunk == 0) b.chunk = chunk_size();
    if (b.held() - b.inspected >= b.chunk) return false;
    return !b.closing && !(pv.tcp_flags & 0x04);
  }

  // A chunk's size: stream_chunk, moved by up to stream_chunk_jitter per cent either way at
  // random (uniformly, from a generator seeded from the system's entropy at the first draw), so
  // that where a direction is inspected does not follow from its bytes alone; never past
  // kMaxStreamChunk (what a direction may hold while it waits).
  uint32_t chunk_size() {
    const uint64_t n    = cfg_.stream_chunk;
    const uint64_t span = n * cfg_.stream_chunk_jitter / 100;
    if (span == 0) return uint32_t(n);
    const uint64_t r = next_random() % (2 * span + 1);
    return uint32_t(std::min<uint64_t>(n - span + r, kMaxStreamChunk));
  }
  uint64_t next_random() {  // splitmix64
    if (!seeded_) {
      rng_    = entropy_seed();
      seeded_ = true;
    }
    uint64_t z = (rng_ += 0x9e3779b97f4a7c15ull);
    z          = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z          = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }

  // A new packet (or a flow's end): its rules alert once however many of its units match.
  void next_packet() {
    seen_.clear();
    ++group_;
  }

  // Inspects `u` now, or, when gathering, keeps it (its stream bytes copied) for flush().
  Status inspect(const Unit& u, uint64_t serial, std::vector<Alert>& alerts, Verdict& v) {
    if (gather_) {
      Gathered g{u, serial, ts_, packet_no_, group_, 0};
      if (u.buffer == Buffer::kStream) {
        g.copy = unit_bytes_.size();
        unit_bytes_.insert(unit_bytes_.end(), u.data, u.data + u.len);
      }
      gathered_.push_back(g);
      return Status::ok();
    }
    hits_.clear();
    WARPATH_TRY(detect_->inspect(u, hits_));
    return take_hits(u, serial, hits_, ts_, packet_no_, alerts, v);
  }

  // The gathered units in one inspect_batch call, their hits taken in order as inspect() would.
  Status flush(std::vector<Alert>& alerts) {
    if (gathered_.empty()) return Status::ok();
    units_.clear();
    for (Gathered& g : gathered_) {
      if (g.unit.buffer == Buffer::kStream) g.unit.data = unit_bytes_.data() + g.copy;
      units_.push_back(g.unit);
    }
    if (batch_hits_.size() < units_.size()) batch_hits_.resize(units_.size());
    for (size_t i = 0; i < units_.size(); ++i) batch_hits_[i].clear();
    WARPATH_TRY(detect_->inspect_batch(units_.data(), uint32_t(units_.size()), batch_hits_.data()));
    uint64_t group = ~uint64_t(0);
    Verdict v;  // IDS without pass rules: no verdict changes what is inspected
    for (size_t i = 0; i < units_.size(); ++i) {
      const Gathered& g = gathered_[i];
      if (g.group != group) seen_.clear(), group = g.group;
      WARPATH_TRY(take_hits(units_[i], g.serial, batch_hits_[i], g.ts, g.packet, alerts, v));
    }
    gathered_.clear();
    unit_bytes_.clear();
    return Status::ok();
  }

  // The alerts and the verdict of the rules `hits` that matched `u` (of packet number
  // `packet_no` at `ts`).
  Status take_hits(const Unit& u, uint64_t serial, const std::vector<Hit>& hits, uint64_t ts,
                   uint64_t packet_no, std::vector<Alert>& alerts, Verdict& v) {
    const auto& rules = detect_->image().rules();
    for (const Hit& h : hits) {
      if (v.pass) break;  // nothing after a pass (alerts after a drop are kept, as Suricata)
      const Rule& r = rules[h.rule];
      // A rule alerts once per packet, and once per transaction (however many a packet ends).
      if (u.buffer != Buffer::kApp) {
        if (std::find(seen_.begin(), seen_.end(), h.rule) != seen_.end()) continue;
        seen_.push_back(h.rule);
      }
      const RuleKind kind = detect_->image().kind(h.rule);
      const bool flow_scope = kind == RuleKind::kIpOnly || kind == RuleKind::kLikeIpOnly ||
                              u.buffer == Buffer::kStream || u.buffer == Buffer::kApp;
      // A flow takes the first of drop and pass that covers it.
      if (r.action == Action::kPass) {
        v.pass = true;
        v.pass_flow = v.pass_flow || (flow_scope && serial && !v.drop_flow);
        continue;
      }
      // threshold / detection_filter: a detection_filter match below its count is no match
      // (no action either); other thresholds keep the alert back, the action still applies.
      bool full = false;
      const bool thresholded = r.threshold.type != Threshold::kNone &&
                               !thresholds_.allows(h.rule, r.threshold, u.pkt, ts, full);
      counters_.threshold_full += full;
      if (thresholded) ++counters_.thresholded;
      if (thresholded && r.threshold.type == Threshold::kDetectionFilter) continue;
      if (r.action == Action::kDrop) {
        v.drop = true;
        v.drop_flow = v.drop_flow || (flow_scope && !v.pass_flow);
      }
      if (r.noalert || thresholded) continue;
      Alert a;
      a.ts_ns      = ts;
      a.flow       = serial;
      a.packet     = packet_no;
      a.rule       = h.rule;
      a.ip_version = u.pkt.ip_version;
      a.proto      = u.pkt.proto;
      const size_t alen = u.pkt.ip_version == 6 ? 16 : 4;
      std::memcpy(a.src, u.pkt.src, alen);
      std::memcpy(a.dst, u.pkt.dst, alen);
      a.sport     = u.pkt.sport;
      a.dport     = u.pkt.dport;
      a.to_server = u.pkt.to_server;
      a.stream    = u.buffer == Buffer::kStream;
      if (u.buffer == Buffer::kApp) {
        a.app   = u.tx->layer;
        a.tx_id = int64_t(u.tx->id);
        a.tx    = std::make_shared<const AppTx>(*u.tx);
      } else {
        a.app = u.pkt.app_layer;
      }
      a.blocked   = cfg_.ips && r.action == Action::kDrop;
      alerts.push_back(a);
      ++counters_.alerts;
      if (serial)
        if (FlowCtx* f = flows_.find(serial)) ++f->alerts;
    }
    return Status::ok();
  }

  void take_chunk(const stream::Chunk& c) {
    FlowCtx* f = flows_.find(c.flow);
    if (!f || f->dropped || f->passed) return;  // nothing of the flow is inspected any more
    // The application layer parses every byte, whatever the inspection depth or memcap (its own
    // bounds are AppConfig's).
    const bool encrypted = !cfg_.inspect_encrypted && f->app.tls && f->app.tls->encrypted(c.dir);
    app_.take(f->app, c.dir, c.data, c.len, c.gap, ts_);
    if (encrypted && !c.gap) {  // TLS after its handshake: not inspected (encryption-handling default)
      counters_.encrypted_bytes += c.len;
      return;
    }
    DirBuffer& b = f->dir[c.dir & 1];
    if (c.gap) {  // content cannot match across bytes the capture lost
      if (b.held()) ++counters_.stream_gaps;
      buffered_ -= b.held();
      if (b.dirty) b.before_gap.emplace_back(b.take(), b.inspected);
      b.clear();
      b.dirty      = false;
      b.from_start = false;  // what follows a gap is not a stream's start
      b.inspected = 0;
      b.chunk      = 0;
      return;
    }
    if (b.full) return;
    const size_t room = cfg_.inspect_depth - std::min<uint64_t>(cfg_.inspect_depth, b.total);
    const size_t spare = cfg_.inspect_memcap - std::min<uint64_t>(cfg_.inspect_memcap, buffered_);
    if (spare < std::min<size_t>(room, c.len)) {
      // Over the memcap: these bytes are not inspected, and what follows them starts a new
      // buffer (no match across the bytes left out), as after a gap.
      ++counters_.inspect_memcap;
      buffered_ -= std::min<uint64_t>(buffered_, b.held());  // before the move empties it
      if (b.dirty) b.before_gap.emplace_back(b.take(), b.inspected);
      b.clear();
      b.dirty = false, b.inspected = 0, b.from_start = false, b.chunk = 0;
      b.total += std::min<size_t>(room, c.len);
      return;
    }
    const size_t take = std::min<size_t>(room, c.len);
    if (take < c.len) {
      b.full = true;
      ++counters_.inspect_depth;
    }
    if (take) {
      b.bytes.append(reinterpret_cast<const char*>(c.data), take);
      b.total += take;
      buffered_ += take;
      b.dirty = true;
    }
  }

  // The flows that ended: their streams closed and inspected a last time, then (after the
  // gathered units are inspected: their alerts count into the flows) their events.
  // What a flow's end finds (alerts in its last bytes, transactions it leaves open) is stamped
  // with the flow's last packet: the same whichever packet or batch ended it, and in whichever
  // part of a cut capture (warpath cluster) it was inspected.
  Status end_flows(std::vector<Alert>& alerts, std::vector<FlowEvent>& ended) {
    const uint64_t now = ts_;
    for (const flow::FlowRecord& r : records_) {
      if (r.proto != 6) continue;
      ts_ = r.last_ns;  // before close: its last bytes may finish transactions
      WARPATH_TRY(reasm_->close(r.serial, sink_));
      FlowCtx* f = flows_.find(r.serial);
      if (f && !f->dropped && !f->passed) {
        Verdict v;  // the flow is over: nothing left to drop
        next_packet();
        WARPATH_TRY(inspect_streams(r.serial, *f, nullptr, 0, alerts, v, &r));
        app_.close(f->app, ts_);
        if (!f->app.ready.empty()) WARPATH_TRY(inspect_transactions(r.serial, *f, nullptr, 0, alerts, v, &r));
      }
    }
    ts_ = now;
    WARPATH_TRY(flush(alerts));
    for (const flow::FlowRecord& r : records_) {
      FlowEvent ev;
      ev.record = r;
      FlowCtx* f = flows_.find(r.serial);
      // The L7 label when classification runs (what --l7 asked for), else what app-layer
      // detection found.
      if (l7_)
        ev.app_proto =
            f && f->l7.label >= 0 ? cfg_.l7->names[size_t(f->l7.label)] : std::string("unknown");
      else if (f && f->app.layer != AppLayer::kNone)
        ev.app_proto = app_layer_name(f->app.layer);
      if (f) {
        ev.alerts  = f->alerts;
        ev.dropped = f->dropped;
        buffered_ -= f->dir[0].held() + f->dir[1].held();
        app_.release(f->app);
        flows_.erase(r.serial);
      }
      detect_->end_flow(r.serial);
      ended.push_back(ev);
    }
    records_.clear();
    return Status::ok();
  }

  std::unique_ptr<Detector> detect_;
  std::unique_ptr<flow::FlowTracker> tracker_;
  std::unique_ptr<stream::Reassembler> reasm_;
  std::unique_ptr<pattern::Matcher> l7_;
  detail::Decapsulator decap_;
  std::vector<packet::PacketInfo> local_infos_;
  std::vector<std::array<std::vector<uint8_t>, 2>> inner_;  // per packet, two levels' frames
  std::vector<std::pair<const uint8_t*, uint32_t>> frames_;  // a packet's inner frame, if any
  std::vector<pattern::Match> l7_matches_;
  InspectorConfig cfg_;
  stream::ChunkSink sink_;
  warpath::detail::SerialMap<FlowCtx> flows_;  // by flow serial
  // The units packet() and inspect_streams() fill, kept: a Unit made on the stack at each
  // packet was cleared with `rep stos` (112 bytes) and its non-zero defaults stored over it,
  // the largest stall of inspect_streams.
  Unit packet_unit_, stream_unit_, app_unit_;
  detail::AppParsers app_;
  std::vector<AppEvent> app_events_;
  std::vector<flow::PacketFlow> answers_;
  std::vector<flow::FlowRecord> records_;
  std::vector<Hit> hits_;
  // Gathering (UnitBatches): the units of the batch so far, a stream unit's bytes copied.
  struct Gathered {
    Unit unit;
    uint64_t serial, ts, packet;
    uint64_t group;  // units of one packet (or flow end) share it: a rule alerts once there
    size_t copy;     // a stream unit's bytes in unit_bytes_
  };
  bool gather_    = false;
  uint64_t group_ = 0;
  std::vector<Gathered> gathered_;
  std::vector<uint8_t> unit_bytes_;
  std::vector<Unit> units_;
  std::vector<std::vector<Hit>> batch_hits_;
  std::vector<uint32_t> seen_;  // rules that alerted for the current packet
  InspectorCounters counters_;
  uint64_t ts_ = 0, packet_no_ = 0;
  uint64_t buffered_ = 0;  // bytes in every direction's inspection buffer
  uint64_t rng_      = 0;  // chunk_size()'s generator, seeded at its first draw
  bool seeded_       = false;
  detail::ThresholdTable thresholds_;
};

}  // namespace

Result<UnitBatches> parse_unit_batches(std::string_view t) {
  if (t == "auto") return UnitBatches::kAuto;
  if (t == "on") return UnitBatches::kOn;
  if (t == "off") return UnitBatches::kOff;
  return Status(Errc::kInvalidArgument,
                "unit batches '" + std::string(t) + "': expected auto, on or off");
}

Result<MidstreamPolicy> parse_midstream_policy(std::string_view t, bool ips) {
  if (t == "ignore") return MidstreamPolicy::kIgnore;
  if (t == "pass-flow" || t == "bypass") return MidstreamPolicy::kPassFlow;
  if (t == "drop-flow" || t == "reject") return MidstreamPolicy::kDropFlow;
  if (t == "drop-packet") return MidstreamPolicy::kDropPacket;
  if (t == "auto") return ips ? MidstreamPolicy::kDropFlow : MidstreamPolicy::kIgnore;
  return Status(Errc::kInvalidArgument, "midstream policy '" + std::string(t) +
                                            "': expected ignore, pass-flow, bypass, drop-flow, "
                                            "reject, drop-packet or auto");
}

Result<std::unique_ptr<Inspector>> Inspector::make(std::shared_ptr<const DetectImage> image,
                                                   const InspectorConfig& config) {
  if (config.inspect_depth == 0) return Status(Errc::kInvalidArgument, "inspect_depth must be above 0");
  if (config.stream_chunk > kMaxStreamChunk)
    return Status(Errc::kInvalidArgument, "stream_chunk must be at most 1 MiB");
  if (config.stream_chunk_jitter > kMaxStreamChunkJitter)
    return Status(Errc::kInvalidArgument, "stream_chunk_jitter must be 0 to " +
                                              std::to_string(kMaxStreamChunkJitter) +
                                              " (per cent)");
  InspectorConfig c = config;
  c.stream.mode     = c.ips ? stream::Mode::kInline : stream::Mode::kIds;
  c.flow.ignore_ipv4_checksum = c.flow.ignore_ipv4_checksum || c.any_checksum;
  WARPATH_ASSIGN_OR_RETURN(auto detector, make_detector(c.engine, std::move(image)));
  WARPATH_ASSIGN_OR_RETURN(auto tracker, flow::make_flow_tracker(c.flow_engine, c.flow));
  WARPATH_ASSIGN_OR_RETURN(auto reasm, stream::make_reassembler(c.stream_engine, c.stream));
  std::unique_ptr<pattern::Matcher> l7;
  if (c.l7 && !c.l7->patterns.empty()) {
    WARPATH_ASSIGN_OR_RETURN(l7, pattern::make_matcher(c.l7_engine, c.l7->patterns));
  }
  return std::unique_ptr<Inspector>(std::make_unique<PipelineInspector>(
      std::move(detector), std::move(tracker), std::move(reasm), std::move(l7), c));
}

}  // namespace warpath::nids
