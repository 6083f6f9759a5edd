// cpu.nids: rules grouped by the buffer they look at and the transport protocol; in each group
// a multi-literal prefilter over the rules' fast patterns picks the candidates (Suricata's
// multi-pattern matcher stage), and rules without a positive content are always candidates.
// A stream direction feeds its new bytes to the group's streaming database once and remembers
// the rules its bytes have armed. A TCP or UDP unit's candidates then pass the port filter
// (port_filter.hpp): rules whose ports cannot take the unit are not evaluated at all.
#include <algorithm>

#include "nids/cpu/port_filter.hpp"
#include "nids/detector_base.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::nids::detail {
namespace {

// Unit kinds: packets of flows without a stream, packets whose payload goes to the stream,
// stream buffers.
constexpr int kKinds = 3;
// Transport classes: TCP, UDP, ICMP, other.
constexpr int kProtos = 4;

int proto_class(uint8_t proto) {
  return proto == 6 ? 0 : proto == 17 ? 1 : (proto == 1 || proto == 58) ? 2 : 3;
}

int kind_of(const Unit& u) {
  return u.buffer == Buffer::kStream ? 2 : u.stream_flow ? 1 : 0;
}

bool rule_takes_proto(Proto p, int cls) {
  switch (p) {
    case Proto::kIp: return true;
    case Proto::kTcp: case Proto::kTcpPkt: case Proto::kTcpStream: return cls == 0;
    case Proto::kUdp: return cls == 1;
    case Proto::kIcmp: return cls == 2;
  }
  return false;
}

struct Group {
  std::vector<uint32_t> always;     // rules without a fast pattern
  std::vector<uint32_t> by_pattern; // pattern id -> rule
  std::unique_ptr<pattern::Matcher> prefilter;
  std::vector<uint64_t> members;    // the rules of by_pattern, a bitset (PortFilter's words)
};

// Does any rule of `members` pass `allowed`?
bool any_allowed(const std::vector<uint64_t>& members, const uint64_t* allowed) {
  for (size_t w = 0; w < members.size(); ++w)
    if (members[w] & allowed[w]) return true;
  return false;
}

class CpuDetector final : public DetectorBase {
 public:
  explicit CpuDetector(std::shared_ptr<const DetectImage> image)
      : DetectorBase(std::move(image), "cpu.nids"), ports_(img().rules()) {}

  Status build() {
    const auto& compiled = img().compiled();
    const auto& rules    = img().rules();
    std::string engine = "cpu.ac";
    for (const EngineInfo& e : pattern::pattern_engines())
      if (e.id == "cpu.hs" && e.available && e.available()) engine = "cpu.hs";
    for (int kind = 0; kind < kKinds; ++kind) {
      const Buffer b = kind == 2 ? Buffer::kStream : Buffer::kPacket;
      for (int cls = 0; cls < kProtos; ++cls) {
        Group& g = groups_[kind][cls];
        std::vector<pattern::Pattern> patterns;
        for (uint32_t i = 0; i < rules.size(); ++i) {
          const CompiledRule& c = compiled[i];
          if (!applies_to(c, b, kind == 1) || !rule_takes_proto(rules[i].proto, cls)) continue;
          const Content* fp = img().fast_pattern(i);
          if (!fp) {
            g.always.push_back(i);
            continue;
          }
          pattern::Pattern p;
          p.id         = uint32_t(g.by_pattern.size());
          p.literal    = true;
          p.expression = fp->bytes;
          // Every match, not HS_FLAG_SINGLEMATCH: Vectorscan 5.4.9 misses literals in a database
          // whose other patterns are single-match (found by the self-test: B/H, xc/i, ba/H
          // over 65 bytes ending in "xc" reports no xc).
          p.flags      = fp->nocase ? uint32_t(pattern::kCaseless) : 0u;
          patterns.push_back(std::move(p));
          g.by_pattern.push_back(i);
        }
        g.members.assign(ports_.words(), 0);
        if (!g.members.empty())
          for (uint32_t i : g.by_pattern) g.members[i / 64] |= uint64_t(1) << (i % 64);
        if (patterns.empty()) continue;
        auto m = pattern::make_matcher(engine, patterns);
        if (!m.is_ok()) return m.status();
        g.prefilter = std::move(*m);
        // A stream group's streaming database is compiled here, with the rest, and not by
        // the first stream (a hiccup of tens of milliseconds in the middle of traffic).
        if (kind == 2) WARPATH_TRY(g.prefilter->open_stream().status());
      }
    }
    return Status::ok();
  }

 protected:
  void candidates(const Unit& u, std::vector<uint32_t>& out) override {
    Group& g = groups_[kind_of(u)][proto_class(u.pkt.proto)];
    const uint64_t* allowed =
        u.pkt.proto == 6 || u.pkt.proto == 17 ? ports_.allowed(u.pkt.sport, u.pkt.dport) : nullptr;
    out = g.always;
    if (allowed && !any_allowed(g.members, allowed)) {
      // No rule of the group's prefilter takes these ports (Suricata's per-port rule groups):
      // nothing to scan. A stream direction's database has then missed bytes: the next chunk
      // it scans starts afresh from the buffer's first byte (a rule can match only bytes the
      // buffer holds, so the candidates it needs are found there).
      if (u.buffer == Buffer::kStream && u.flow) streams_[u.flow * 2 + u.dir].stale = true;
    } else if (g.prefilter && u.len) {
      if (u.buffer == Buffer::kStream && u.flow) {
        stream_candidates(g, u, out);
      } else {
        matches_.clear();
        // Only which patterns matched counts (candidates are sorted below): the engine's order.
        if (!g.prefilter->scan_any_order(u.data, u.len, matches_).is_ok()) {
          // A prefilter that cannot answer: every rule of the group is a candidate.
          out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
        } else {
          take(g, out);
        }
      }
    }
    if (allowed)
      out.erase(std::remove_if(out.begin(), out.end(),
                               [&](uint32_t i) { return !PortFilter::test(allowed, i); }),
                out.end());
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
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
    std::vector<uint32_t> armed;
    bool all   = false;  // armed past kMaxArmed: every rule of the group is a candidate
    bool stale = false;  // chunks went unscanned (no rule took their ports)
  };
  static constexpr size_t kMaxArmed = 64;  // rules remembered per direction (bounded memory)

  // The rules of the patterns matched, each once (a pattern may match many times). (Arming only
  // rules whose header takes the unit would assume a direction's header never changes; the
  // self-test's units break that, so every armed rule is checked at each chunk.)
  void take(Group& g, std::vector<uint32_t>& out) {
    if (seen_.size() < g.by_pattern.size()) seen_.resize(g.by_pattern.size(), 0);
    const size_t from = out.size();
    for (const pattern::Match& m : matches_)
      if (!seen_[m.id]) {
        seen_[m.id] = 1;
        out.push_back(m.id);
      }
    for (size_t k = from; k < out.size(); ++k) {
      seen_[out[k]] = 0;
      out[k]        = g.by_pattern[out[k]];
    }
  }

  void stream_candidates(Group& g, const Unit& u, std::vector<uint32_t>& out) {
    DirState& d = streams_[u.flow * 2 + u.dir];
    // A fresh buffer (the stream's start, or after a gap), or unscanned chunks before this one:
    // a new stream from the buffer's first byte.
    const uint32_t from = d.stale ? 0 : u.new_from;
    if (from == 0 || !d.stream) {
      auto s = g.prefilter->open_stream();
      d.stream = s.is_ok() ? std::move(*s) : nullptr;
    }
    d.stale = false;
    matches_.clear();
    const size_t before = d.armed.size();
    if (!d.stream || !d.stream->write_any_order(u.data + from, u.len - from, matches_).is_ok()) {
      d.stream.reset();  // cannot answer: every rule of the group is armed
      d.all = true;
    } else {
      take(g, d.armed);
    }
    if (d.armed.size() != before) {
      std::sort(d.armed.begin(), d.armed.end());
      d.armed.erase(std::unique(d.armed.begin(), d.armed.end()), d.armed.end());
    }
    if (d.all || d.armed.size() > kMaxArmed) {
      d.all = true;
      std::vector<uint32_t>().swap(d.armed);
      out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
    } else {
      out.insert(out.end(), d.armed.begin(), d.armed.end());
    }
  }

 private:
  Group groups_[kKinds][kProtos];
  PortFilter ports_;
  std::vector<pattern::Match> matches_;
  std::vector<uint8_t> seen_;  // pattern ids taken in this scan
  std::unordered_map<uint64_t, DirState> streams_;  // key: flow * 2 + direction
};

}  // namespace

Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image) {
  auto d = std::make_unique<CpuDetector>(std::move(image));
  WARPATH_TRY(d->build());
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
