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
#include <algorithm>

#include "core/serial_map.hpp"
#include "nids/cpu/port_groups.hpp"
#include "nids/cpu/rule_groups.hpp"
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
    if (allowed) {
      // The group's always-candidates these ports and this direction allow, whether its
      // prefilter has a rule they allow, and the database to scan with, kept per direction
      // class and port filter slot (they depend only on the class pair and the direction).
      const size_t way   = size_t(!u.pkt.has_flow ? 2 : u.pkt.to_server ? 0 : 1) * kAppLayers +
                         size_t(u.pkt.app_layer);
      const uint64_t* ok = ways_[way].data();
      PortMemo& m        = memo_[kind][cls][way][ports_.last_slot()];
      if (m.key != ports_.last_key()) {
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
      }
      out.assign(m.always.begin(), m.always.end());
      any_allowed = m.any;
      pdb         = m.db;
    } else {
      out = g.always;
    }
    const size_t kept = out.size();  // ascending, allowed: the rest needs the filter and a sort
    DirState* d = nullptr;
    if (u.buffer == Buffer::kStream && u.flow) {  // its buffer's place in the direction
      d = &streams_.find_or_emplace(u.flow * 2 + u.dir);
      d->end += u.len - std::min(u.len, u.new_from);
    }
    if (!any_allowed) {
      // No rule of the group's prefilter takes these ports (Suricata's per-port rule groups):
      // nothing to scan. A stream direction's database has then missed bytes: the next chunk
      // it scans starts afresh from the buffer's first byte (a rule can match only bytes the
      // buffer holds, so the candidates it needs are found there).
      if (d) d->stale = true;
    } else if (g.prefilter && u.len) {
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
    return c;
  }

  void forget_flow(uint64_t flow) override {
    streams_.erase(flow * 2);
    streams_.erase(flow * 2 + 1);
  }

 private:
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
  };

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
  struct PortMemo {
    uint64_t key = ~uint64_t(0);  // the port filter's class pair it was made for
    bool any     = false;
    const PortDb* db = nullptr;  // the port groups' prefilter; null: the group's
    std::vector<uint32_t> always;
  };
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
  warpath::detail::SerialMap<DirState> streams_;    // key: flow * 2 + direction
};

}  // namespace

Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image) {
  auto d = std::make_unique<CpuDetector>(std::move(image));
  WARPATH_TRY(d->build());
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
