// cpu.nids: rules grouped by the buffer they look at and the transport protocol; in each group
// a multi-literal prefilter over the rules' fast patterns picks the candidates (Suricata's
// multi-pattern matcher stage), and rules without a positive content are always candidates.
// A stream direction feeds its new bytes to the group's streaming database once and remembers
// the rules its bytes have armed. A TCP or UDP unit's candidates then pass the port filter
// (port_filter.hpp): rules whose ports cannot take the unit are not evaluated at all, and a
// scan uses the database of the unit's port groups and direction when they exclude most of the
// group's rules (port_groups.hpp; a rule for the other direction, flow:to_server or to_client,
// cannot match either, nor one for an application protocol the unit's flow does not speak:
// `alert ftp ...` on an HTTP flow, `alert http ...` on a flow whose protocol is not known).
// A TCP payload bound for its stream is scanned once for both the packet and the stream rules
// while its direction's delivered bytes are the arrived ones (single_scan.hpp).
#include <algorithm>
#include <cstdlib>
#include <string_view>
#include <unordered_map>

#include "core/serial_map.hpp"
#include "nids/cpu/port_groups.hpp"
#include "nids/cpu/rule_groups.hpp"
#include "nids/cpu/single_scan.hpp"
#include "nids/detector_base.hpp"

namespace warpath::nids::detail {
namespace {

class CpuDetector final : public DetectorBase {
 public:
  explicit CpuDetector(std::shared_ptr<const DetectImage> image)
      : DetectorBase(std::move(image), "cpu.nids"),
        ports_(img().rules()),
        port_groups_(img(), best_cpu_pattern_engine()) {}

  Status build() {
    for (auto& kind : memo_)
      for (auto& cls : kind)
        for (auto& way : cls) way.resize(ports_.cache_slots());
    // Per direction class and application protocol, the rules its units may match as far as
    // flow:to_server and to_client and the rule's protocol go (header_matches's tests).
    for (auto& w : ways_) w.assign(ports_.words(), 0);
    const auto& rules = img().rules();
    for (uint32_t i = 0; i < rules.size() && ports_.words(); ++i) {
      const FlowOpt& f   = rules[i].flow;
      const uint64_t bit = uint64_t(1) << (i % 64);
      for (size_t app = 0; app < kAppLayers; ++app) {
        if (rules[i].app != AppLayer::kNone && size_t(rules[i].app) != app) continue;
        if (!f.to_client) ways_[0 * kAppLayers + app][i / 64] |= bit;
        if (!f.to_server) ways_[1 * kAppLayers + app][i / 64] |= bit;
        if (!f.to_client && !f.to_server) ways_[2 * kAppLayers + app][i / 64] |= bit;
      }
    }
    return build_groups(img(), ports_.words(), best_cpu_pattern_engine(), true, groups_);
  }

 protected:
  void candidates(const Unit& u, std::vector<uint32_t>& out) override {
    const int kind = kind_of(u), cls = proto_class(u.pkt.proto);
    Group& g = groups_[kind][cls];
    const uint64_t* allowed =
        u.pkt.proto == 6 || u.pkt.proto == 17 ? ports_.allowed(u.pkt.sport, u.pkt.dport) : nullptr;
    bool any_allowed = true;
    const PortDb* pdb = nullptr;  // the port groups' database; null: the group's
    PortMemo* m       = nullptr;
    if (allowed) {
      m = &port_memo(kind, cls, u, allowed);
      out.assign(m->always.begin(), m->always.end());
      any_allowed = m->any;
      pdb         = m->db;
    } else {
      out = g.always;
    }
    const size_t kept = out.size();  // ascending, allowed: the rest needs the filter and a sort
    DirState* d  = nullptr;
    bool scanned = false;  // by the direction's single scan (single_scan.hpp)
    if (u.buffer == Buffer::kStream && u.flow) {  // its buffer's place in the direction
      d = &streams_.find_or_emplace(u.flow * 2 + u.dir);
      d->end += u.len - std::min(u.len, u.new_from);
      scanned = single_stream(cls, u, allowed, pdb, any_allowed, *d, out);
    } else if (kind == 1 && u.flow && allowed && u.len && single_on_) {
      scanned = single_packet(cls, u, allowed, *m, out);
    }
    if (!scanned && !any_allowed) {
      // No rule of the group's prefilter takes these ports (Suricata's per-port rule groups):
      // nothing to scan. A stream direction's database has then missed bytes: the next chunk
      // it scans starts afresh from the buffer's first byte (a rule can match only bytes the
      // buffer holds, so the candidates it needs are found there).
      if (d) d->stale = true;
    } else if (!scanned && g.prefilter && u.len) {
      pattern::Matcher& pre             = pdb ? *pdb->prefilter : *g.prefilter;
      const std::vector<uint32_t>& rule = pdb ? pdb->source->by_pattern : g.by_pattern;
      if (d) {
        stream_candidates(g, pre, rule, pdb, u, *d, out);
      } else {
        matches_.clear();
        // Only which patterns matched counts (candidates are sorted below): the engine's order.
        if (!pre.scan_any_order(u.data, u.len, matches_).is_ok()) {
          // A prefilter that cannot answer: every rule of the group is a candidate.
          out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
        } else {
          found_.clear();
          take_matches(rule, matches_, 0, at_, found_);
          for (const Found& f : found_) out.push_back(f.rule);
        }
      }
    }
    if (out.size() > kept) finish_candidates(allowed, out);
  }

  DetectCounters counters() const override {
    DetectCounters c        = DetectorBase::counters();
    c.port_group_dbs        = port_groups_.databases();
    c.port_group_compile_ns = port_groups_.compile_ns();
    c.single_scans          = single_scans_;
    c.single_scan_left      = single_left_;
    return c;
  }

  void forget_flow(uint64_t flow) override {
    for (uint64_t key : {flow * 2, flow * 2 + 1})
      if (DirState* d = streams_.find(key)) {
        d->single.leave(&pending_bytes_);
        streams_.erase(key);
      }
  }

 private:
  struct PortMemo {
    uint64_t key = ~uint64_t(0);  // the port filter's class pair it was made for
    bool any     = false;
    const PortDb* db = nullptr;  // the port groups' prefilter; null: the group's
    std::vector<uint32_t> always;
  };

  // A stream direction's prefilter state: the group's streaming database fed each chunk's new
  // bytes once (a fast pattern spanning chunks is found without re-scanning), and the rules its
  // bytes armed (their other conditions may complete in later chunks).
  struct DirState {
    std::unique_ptr<pattern::Stream> stream;
    const PortDb* db   = nullptr;  // the database `stream` belongs to (null: the group's)
    uint64_t stream_at = 0;        // the direction offset of the streaming database's first byte
    uint64_t end       = 0;  // the direction offset past the last unit's buffer
    ArmedRules armed;
    bool stale = false;  // chunks went unscanned (no rule took their ports)
    SingleScan single;   // the packet and stream scans in one, while it lasts
  };

  // The group's always-candidates the unit's ports and direction allow, whether its prefilter
  // has a rule they allow, and the database to scan with, kept per direction class and port
  // filter slot (they depend only on the class pair and the direction); `allowed` is
  // ports_.allowed()'s answer for the unit.
  PortMemo& port_memo(int kind, int cls, const Unit& u, const uint64_t* allowed) {
    const Group& g    = groups_[kind][cls];
    const size_t way  = size_t(!u.pkt.has_flow ? 2 : u.pkt.to_server ? 0 : 1) * kAppLayers +
                       size_t(u.pkt.app_layer);
    const uint64_t* ok = ways_[way].data();
    PortMemo& m        = memo_[kind][cls][way][ports_.last_slot()];
    if (m.key == ports_.last_key()) return m;
    m.key = ports_.last_key();
    m.any = false;
    for (size_t w = 0; w < g.members.size() && !m.any; ++w)
      m.any = (g.members[w] & allowed[w] & ok[w]) != 0;
    m.db = nullptr;
    if (m.any && g.prefilter) {  // the scan's database: the port groups' and direction's
      group_set_.resize(ports_.words());
      ports_.group_allowed(u.pkt.sport, u.pkt.dport, group_set_.data());
      for (size_t w = 0; w < group_set_.size(); ++w) group_set_[w] &= ok[w];
      m.db = port_groups_.get(kind, cls, g, group_set_.data());
    }
    m.always.clear();
    for (uint32_t r : g.always)
      if (PortFilter::test(allowed, r) && PortFilter::test(ok, r)) m.always.push_back(r);
    return m;
  }

  // What identifies a side's database within the image: the port group's source, or the
  // group's own (`group` names it).
  static const void* side_of(const PortDb* pdb, const Group& g) {
    return pdb ? static_cast<const void*>(pdb->source.get()) : static_cast<const void*>(&g);
  }

  // The single-scan database of a packet group's database and a stream group's (null: none
  // could be made), compiled once per image and cloned here.
  const SingleScanDb* single_db(int cls, const Group& pg, const PortDb* pdb, const Group& sg,
                                const PortDb* sdb) {
    const std::pair<const void*, const void*> key{side_of(pdb, pg), side_of(sdb, sg)};
    auto [it, fresh] = single_dbs_.try_emplace(key);
    if (!fresh) return it->second.get();
    auto db       = std::make_unique<SingleScanDb>();
    db->packet_db = key.first;
    db->stream_db = key.second;
    std::vector<pattern::Pattern> patterns;
    std::string name = "single:" + std::to_string(cls);  // image-wide: see below
    auto add = [&](const PortDb* side, const Group& group, const char* own) {
      for (uint32_t r : side ? side->source->by_pattern : group.by_pattern) {
        const Content* fp = img().fast_pattern(r);
        patterns.push_back(prefilter_pattern(*fp, uint32_t(db->rule.size())));
        db->rule.push_back(r);
        db->len.push_back(uint32_t(fp->bytes.size()));
      }
      // A port group's source by its address (the image keeps it), a group's own by its kind.
      name += side ? ":" + std::to_string(reinterpret_cast<uintptr_t>(side->source.get()))
                   : std::string(own);
    };
    add(pdb, pg, ":group1");
    db->packet_ids = uint32_t(db->rule.size());
    add(sdb, sg, ":group2");
    auto m = shared_matcher(img().prefilter_cache(), name, engine_, patterns, true);
    if (!m.is_ok()) return nullptr;
    db->matcher = std::move(*m);
    it->second  = std::move(db);
    return it->second.get();
  }

  // Starts direction state `s` on the databases of `pm` (the packet group's memo) and `sm`
  // (the stream group's), at the direction's first byte; false when the two cannot be scanned
  // as one.
  bool single_start(SingleScan& s, int cls, const PortMemo& pm, const PortMemo& sm) {
    const Group& pg = groups_[1][cls];
    const Group& sg = groups_[2][cls];
    if (!pm.any || !sm.any || !pg.prefilter || !sg.prefilter) return false;
    const SingleScanDb* db = single_db(cls, pg, pm.db, sg, sm.db);
    if (!db) return false;
    auto st = db->matcher->open_stream();
    if (!st.is_ok()) return false;
    s.stream = std::move(*st);
    s.db     = db;
    s.state  = SingleScan::State::kOn;
    return true;
  }

  // A direction leaves the single scan; `stale`: its stream database missed bytes (a fresh
  // start from the buffer's first byte at its next stream unit).
  void single_leave(DirState& d, bool stale) {
    d.single.leave(&pending_bytes_);
    d.stale = d.stale || stale;
    ++single_left_;
  }

  // A packet unit of a stream flow (kind 1) through its direction's single scan: its packet
  // candidates appended to `out` and its stream matches kept; false when the direction does not
  // take the single scan (then the unit is scanned as before).
  bool single_packet(int cls, const Unit& u, const uint64_t* allowed, const PortMemo& pm,
                     std::vector<uint32_t>& out) {
    DirState& d   = streams_.find_or_emplace(u.flow * 2 + u.dir);
    SingleScan& s = d.single;
    if (s.state == SingleScan::State::kOff) return false;
    // Bytes the stream will not inspect (past its depth) are never delivered to compare.
    if (!u.stream_inspects) return single_leave(d, true), false;
    const Group& pg = groups_[1][cls];
    // The stream group's database for this direction, as its stream units will pick it.
    const PortMemo& sm = port_memo(2, cls, u, allowed);  // another kind's memo than pm
    if (s.state == SingleScan::State::kUnused) {
      // Only from the direction's first byte: every byte delivered must have arrived here.
      if (d.end != 0 || !single_start(s, cls, pm, sm)) return single_leave(d, true), false;
    } else if (s.db->packet_db != side_of(pm.db, pg) ||
               s.db->stream_db != side_of(sm.db, groups_[2][cls])) {
      // The unit's application protocol (or ports) pick other databases now: a fresh stream
      // would miss what spans the change, so the direction goes back to two scans, its stream
      // database starting again at the buffer's first byte.
      return single_leave(d, true), false;
    }
    const uint64_t first = s.arrived;
    if (!s.keep(u.data, u.len, &pending_bytes_)) return single_leave(d, true), false;
    matches_.clear();
    if (!s.stream->write_any_order(u.data, u.len, matches_).is_ok()) {
      out.insert(out.end(), pg.by_pattern.begin(), pg.by_pattern.end());  // cannot answer
      single_leave(d, true);
      return true;
    }
    packet_matches_.clear();
    stream_matches_.clear();
    for (const pattern::Match& x : matches_)  // x.end: a direction offset (from its first byte)
      if (x.id >= s.db->packet_ids)
        stream_matches_.push_back(x);
      else if (x.end >= first + s.db->len[x.id])  // within this payload
        packet_matches_.push_back(x);
    found_.clear();
    take_matches(s.db->rule, packet_matches_, 0, at_, found_);
    for (const Found& f : found_) out.push_back(f.rule);
    take_matches(s.db->rule, stream_matches_, 0, at_, s.found);
    ++single_scans_;
    return true;
  }

  // A stream unit of a direction in the single scan: its new bytes checked against what
  // arrived and the stream rules found in them armed; false when the direction is not (or no
  // longer) in it, then the unit is scanned as before (from the buffer's first byte after a
  // leave). `pdb`, `any_allowed`: the unit's stream database, as port_memo gave them.
  bool single_stream(int cls, const Unit& u, const uint64_t* allowed, const PortDb* pdb,
                     bool any_allowed, DirState& d, std::vector<uint32_t>& out) {
    SingleScan& s = d.single;
    if (s.state == SingleScan::State::kUnused) s.state = SingleScan::State::kOff;
    if (s.state == SingleScan::State::kOff) return false;
    Group& g             = groups_[2][cls];
    const uint32_t from  = std::min(u.len, u.new_from);
    const uint64_t start = d.end - u.len;  // the buffer's first byte
    if (!any_allowed || !g.prefilter || !allowed ||
        !s.deliver(u.data + from, u.len - from, start + from, &pending_bytes_))
      return single_leave(d, true), false;
    if (s.db->stream_db != side_of(pdb, g)) {
      // The unit's stream database is another than the one the arrivals were scanned in (its
      // application protocol was found since): this buffer is scanned again from its first
      // byte in the unit's database, as the two-scan path does on such a change, and the
      // direction goes on with two scans, its stream database having every byte.
      d.stale = true;
      pattern::Matcher& pre = pdb ? *pdb->prefilter : *g.prefilter;
      stream_candidates(g, pre, pdb ? pdb->source->by_pattern : g.by_pattern, pdb, u, d, out);
      single_leave(d, false);
      return true;
    }
    found_.clear();  // what ends in the delivered bytes is armed; what ends later waits
    auto later = std::partition(s.found.begin(), s.found.end(),
                                [&](const Found& f) { return f.end > d.end; });
    found_.assign(later, s.found.end());
    s.found.erase(later, s.found.end());
    d.armed.arm(g, found_, false, start, d.end, out);
    return true;
  }

  // `pre` (the database of `pdb`, or the group's when null) maps its pattern ids by `rule`.
  void stream_candidates(Group& g, pattern::Matcher& pre, const std::vector<uint32_t>& rule,
                         const PortDb* pdb, const Unit& u, DirState& d,
                         std::vector<uint32_t>& out) {
    const uint64_t start = d.end - u.len;
    // A fresh buffer (the stream's start, or after a gap), unscanned chunks before this one, or
    // a stream of another database: a new stream from the buffer's first byte.
    const uint32_t from = d.stale || d.db != pdb ? 0 : std::min(u.len, u.new_from);
    if (from == 0 || !d.stream) {
      auto s      = pre.open_stream();
      d.stream    = s.is_ok() ? std::move(*s) : nullptr;
      d.db        = pdb;
      d.stream_at = start + from;  // the direction offset of the first byte it is given
    }
    d.stale = false;
    matches_.clear();
    found_.clear();
    const bool failed =
        !d.stream || !d.stream->write_any_order(u.data + from, u.len - from, matches_).is_ok();
    if (failed)
      d.stream.reset();  // cannot answer: every rule of the group is armed
    else
      take_matches(rule, matches_, d.stream_at, at_, found_);
    d.armed.arm(g, found_, failed, start, d.end, out);
  }

 private:
  Groups groups_;
  PortFilter ports_;
  PortGroups port_groups_;
  std::vector<uint64_t> group_set_;              // PortFilter::group_allowed's
  // per group, direction class and application protocol, port slot
  std::vector<PortMemo> memo_[kKinds][kProtos][3 * kAppLayers];
  // per direction class (to server, to client, no flow) and application protocol: rules
  std::vector<uint64_t> ways_[3 * kAppLayers];
  std::vector<pattern::Match> matches_;
  std::vector<uint32_t> at_;                        // take_matches's scratch
  std::vector<Found> found_;                        // rules a scan found
  std::vector<pattern::Match> packet_matches_, stream_matches_;  // single_packet's
  warpath::detail::SerialMap<DirState> streams_;    // key: flow * 2 + direction
  struct PairHash {
    size_t operator()(const std::pair<const void*, const void*>& k) const noexcept {
      return std::hash<const void*>()(k.first) * 31 + std::hash<const void*>()(k.second);
    }
  };
  std::unordered_map<std::pair<const void*, const void*>, std::unique_ptr<SingleScanDb>, PairHash>
      single_dbs_;  // null: could not be made
  std::string engine_ = best_cpu_pattern_engine();
  size_t pending_bytes_ = 0;  // what the directions' single scans keep
  // WARPATH_NIDS_SINGLE_SCAN=0 scans each payload twice (the A/B switch of the NIDS bench)
  const bool single_on_ = [] {
    const char* v = std::getenv("WARPATH_NIDS_SINGLE_SCAN");
    return !v || std::string_view(v) != "0";
  }();
  uint64_t single_scans_ = 0, single_left_ = 0;
};

}  // namespace

Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image) {
  auto d = std::make_unique<CpuDetector>(std::move(image));
  WARPATH_TRY(d->build());
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
