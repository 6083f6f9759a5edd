// cpu.nids: rules grouped by the buffer they look at and the transport protocol; in each group
// a multi-literal prefilter over the rules' fast patterns picks the candidates (Suricata's
// multi-pattern matcher stage), and rules without a positive content are always candidates.
// Streams remember the rules their bytes have armed.
#include <algorithm>

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
  uint32_t max_len = 0;             // longest fast pattern
};

class CpuDetector final : public DetectorBase {
 public:
  explicit CpuDetector(std::shared_ptr<const DetectImage> image)
      : DetectorBase(std::move(image), "cpu.nids") {}

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
          if (c.fast_pattern < 0) {
            g.always.push_back(i);
            continue;
          }
          const CompiledItem& fp = c.items[size_t(c.fast_pattern)];
          pattern::Pattern p;
          p.id         = uint32_t(g.by_pattern.size());
          p.literal    = true;
          p.expression = fp.content->bytes;
          p.flags      = (fp.content->nocase ? uint32_t(pattern::kCaseless) : 0u) | pattern::kSingleMatch;
          patterns.push_back(std::move(p));
          g.by_pattern.push_back(i);
          g.max_len = std::max<uint32_t>(g.max_len, uint32_t(fp.needle.size()));
        }
        if (patterns.empty()) continue;
        auto m = pattern::make_matcher(engine, patterns);
        if (!m.is_ok()) return m.status();
        g.prefilter = std::move(*m);
      }
    }
    return Status::ok();
  }

 protected:
  void candidates(const Unit& u, std::vector<uint32_t>& out) override {
    Group& g = groups_[kind_of(u)][proto_class(u.pkt.proto)];
    out = g.always;
    if (!g.prefilter || !u.len) return;
    // A stream scans its new bytes and the tail a fast pattern ending in them may start in.
    uint32_t from = 0;
    if (u.buffer == Buffer::kStream && u.new_from > g.max_len) from = u.new_from - (g.max_len - 1);
    matches_.clear();
    if (!g.prefilter->scan(u.data + from, u.len - from, matches_).is_ok()) {
      // A prefilter that cannot answer: every rule of the group is a candidate.
      out.insert(out.end(), g.by_pattern.begin(), g.by_pattern.end());
    } else {
      for (const pattern::Match& m : matches_) out.push_back(g.by_pattern[m.id]);
    }
    if (u.buffer == Buffer::kStream && u.flow) {
      std::vector<uint32_t>& armed = armed_[u.flow * 2 + u.dir];
      const size_t before = armed.size();
      armed.insert(armed.end(), out.begin() + long(g.always.size()), out.end());
      if (armed.size() != before) {
        std::sort(armed.begin(), armed.end());
        armed.erase(std::unique(armed.begin(), armed.end()), armed.end());
      }
      out.insert(out.end(), armed.begin(), armed.end());
    }
    std::sort(out.begin(), out.end());
    out.erase(std::unique(out.begin(), out.end()), out.end());
  }

  void forget_flow(uint64_t flow) override {
    armed_.erase(flow * 2);
    armed_.erase(flow * 2 + 1);
  }

 private:
  Group groups_[kKinds][kProtos];
  std::vector<pattern::Match> matches_;
  std::unordered_map<uint64_t, std::vector<uint32_t>> armed_;
};

}  // namespace

Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image) {
  auto d = std::make_unique<CpuDetector>(std::move(image));
  WARPATH_TRY(d->build());
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
