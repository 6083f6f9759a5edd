// cuda.nids: cpu.nids's rule groups (nids/cpu/rule_groups.hpp) with a block prefilter. A batch
// of units is scanned at once, one scan_blocks call per group (on cuda.ac: one launch for every
// unit of the group). A packet unit is scanned whole. A stream unit is scanned from its new
// bytes, less the group's longest fast pattern but one (an occurrence that straddles the
// chunk's start), and its direction remembers the rules its scans armed, as cpu.nids's
// streaming databases do: a rule can match a unit only if its fast pattern occurs in the unit's
// buffer, and that occurrence was found by this scan or by one of an earlier chunk, so the
// armed rules (every rule of the group past ArmedRules::kMax) and the group's always-candidates are a
// superset of the matches. A direction whose last chunk went unscanned (no rule took its ports)
// or that has no state yet is scanned from its buffer's first byte. The port filter then drops
// the rules whose ports cannot take the unit, and DetectorBase evaluates the rest in order.
// The prefilter engine is a parameter: the tests run the same detector over cpu.ac. A rule
// group's batch too small to pay for a launch goes to a CPU engine instead (BlockOffload).
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <unordered_map>

#include "nids/cpu/rule_groups.hpp"
#include "nids/detector_base.hpp"

namespace warpath::nids::detail {
namespace {

class BlockDetector final : public DetectorBase {
 public:
  BlockDetector(std::shared_ptr<const DetectImage> image, std::string id,
                const BlockOffload& offload)
      : DetectorBase(std::move(image), std::move(id)), ports_(img().rules()), offload_(offload) {}

  Status build(const std::string& engine) {
    WARPATH_TRY(build_groups(img(), ports_.words(), engine, false, groups_, offload_.fallback));
    for (int kind = 0; kind < kKinds; ++kind)
      for (int cls = 0; cls < kProtos; ++cls)
        for (uint32_t rule : groups_[kind][cls].by_pattern)
          longest_[kind][cls] = std::max<uint32_t>(
              longest_[kind][cls], uint32_t(img().fast_pattern(rule)->bytes.size()));
    return Status::ok();
  }
  bool prefers_batches() const noexcept override { return true; }
  DetectCounters counters() const override {
    DetectCounters c  = DetectorBase::counters();
    c.scans_offloaded = scans_offloaded_;
    c.scans_on_cpu    = scans_on_cpu_;
    return c;
  }

 protected:
  void candidates(const Unit& u, std::vector<uint32_t>& out) override {
    out.clear();
    candidates_batch(&u, 1, &out);
  }

  void candidates_batch(const Unit* units, uint32_t n, std::vector<uint32_t>* out) override {
    for (auto& kind : pending_)
      for (Pending& p : kind) p.blocks.clear(), p.units.clear(), p.ok = true;
    if (scanned_.size() < n) scanned_.resize(n), start_.resize(n), from_.resize(n);
    // Which units each group scans, and from where: those with bytes whose ports some
    // prefiltered rule takes (a stream unit: from its new bytes, unless its direction is new or
    // skipped bytes).
    for (uint32_t i = 0; i < n; ++i) {
      const Unit& u  = units[i];
      if (u.buffer == Buffer::kApp) {  // a transaction: the per-buffer prefilter (on the CPU)
        out[i].clear();
        app_candidates(u, out[i]);
        scanned_[i] = false, from_[i] = 0, start_[i] = 0;
        continue;
      }
      const int kind = kind_of(u), cls = proto_class(u.pkt.proto);
      const Group& g = groups_[kind][cls];
      out[i]         = g.always;
      scanned_[i]    = false;
      from_[i]       = 0;
      start_[i]      = 0;
      DirState* d = u.buffer == Buffer::kStream && u.flow ? &streams_[u.flow * 2 + u.dir] : nullptr;
      if (d) {  // the unit's buffer's place in its direction
        d->end += u.len - std::min(u.len, u.new_from);
        start_[i] = d->end - u.len;
      }
      if (!g.prefilter || !u.len) continue;
      const uint64_t* allowed = ports_of(u);
      if (allowed && !g.any_allowed(allowed)) {
        if (d) d->stale = true;
        continue;
      }
      uint32_t from = 0;
      if (d) {
        const uint32_t back = longest_[kind][cls] ? longest_[kind][cls] - 1 : 0;
        if (d->seen && !d->stale) from = std::min(u.len, u.new_from - std::min(u.new_from, back));
        d->seen = true, d->stale = false;
      }
      from_[i] = from;
      pending_[kind][cls].blocks.push_back({u.data + from, u.len - from});
      pending_[kind][cls].units.push_back(i);
    }
    for (int kind = 0; kind < kKinds; ++kind)
      for (int cls = 0; cls < kProtos; ++cls) {
        Pending& p = pending_[kind][cls];
        if (p.units.empty()) continue;
        if (matches_.size() < p.units.size()) matches_.resize(p.units.size());
        const Group& g      = groups_[kind][cls];
        const bool small    = g.fallback && bytes_of(p.blocks) < offload_.offload_min_bytes;
        pattern::Matcher& m = small ? *g.fallback : *g.prefilter;
        ++(small ? scans_on_cpu_ : scans_offloaded_);
        p.ok = m.scan_blocks(p.blocks.data(), uint32_t(p.blocks.size()), matches_.data()).is_ok();
        if (!p.ok) continue;
        if (found_.size() < n) found_.resize(n);
        for (size_t k = 0; k < p.units.size(); ++k) {
          const uint32_t i = p.units[k];
          found_[i].clear();
          take_matches(groups_[kind][cls], matches_[k], start_[i] + from_[i], at_, found_[i]);
          scanned_[p.units[k]] = true;
        }
      }
    // In unit order (a direction's armed rules grow chunk by chunk): the candidates.
    for (uint32_t i = 0; i < n; ++i) {
      const Unit& u  = units[i];
      if (u.buffer == Buffer::kApp) continue;  // its candidates are final already
      const int kind = kind_of(u), cls = proto_class(u.pkt.proto);
      const Group& g    = groups_[kind][cls];
      const bool failed = !scanned_[i] && g.prefilter && u.len && pending_[kind][cls].failed(i);
      if (u.buffer == Buffer::kStream && u.flow && (scanned_[i] || failed)) {
        streams_[u.flow * 2 + u.dir].armed.arm(g, failed ? none_ : found_[i], failed, start_[i],
                                               start_[i] + u.len, out[i]);
      } else if (failed) {
        out[i].insert(out[i].end(), g.by_pattern.begin(), g.by_pattern.end());
      } else if (scanned_[i]) {
        for (const Found& f : found_[i]) out[i].push_back(f.rule);
      }
      finish_candidates(ports_of(u), out[i]);
    }
  }

  void forget_flow(uint64_t flow) override {
    streams_.erase(flow * 2);
    streams_.erase(flow * 2 + 1);
  }

 private:
  // The port filter's set for a TCP or UDP unit (valid until the next call), else null.
  const uint64_t* ports_of(const Unit& u) {
    return u.pkt.proto == 6 || u.pkt.proto == 17 ? ports_.allowed(u.pkt.sport, u.pkt.dport)
                                                 : nullptr;
  }

  struct Pending {
    std::vector<pattern::Block> blocks;
    std::vector<uint32_t> units;  // the unit of each block
    bool ok = true;               // the group's scan answered
    bool failed(uint32_t unit) const {
      return !ok && std::binary_search(units.begin(), units.end(), unit);
    }
  };
  static uint64_t bytes_of(const std::vector<pattern::Block>& blocks) {
    uint64_t n = 0;
    for (const pattern::Block& b : blocks) n += b.len;
    return n;
  }
  // A stream direction: the rules its chunks' scans armed (cpu.nids's DirState, less the
  // streaming database: each chunk is a block).
  struct DirState {
    ArmedRules armed;
    uint64_t end = 0;      // the direction offset past the last unit's buffer
    bool seen  = false;  // a chunk was scanned: the next scans from its new bytes
    bool stale = false;  // a chunk went unscanned (no rule took its ports)
  };

  Groups groups_;
  PortFilter ports_;
  BlockOffload offload_;
  uint64_t scans_offloaded_ = 0, scans_on_cpu_ = 0;
  uint32_t longest_[kKinds][kProtos] = {};  // each group's longest fast pattern
  Pending pending_[kKinds][kProtos];
  std::vector<std::vector<pattern::Match>> matches_;  // per block of the group being taken
  std::vector<std::vector<Found>> found_;  // per unit: the rules its scan found, and where
  std::vector<uint8_t> scanned_;           // per unit: scanned and answered
  std::vector<uint64_t> start_;            // per stream unit: its buffer's direction offset
  std::vector<uint32_t> from_;             // per unit: where its scan began in its buffer
  std::vector<uint32_t> at_;               // take_matches's scratch
  const std::vector<Found> none_;
  std::unordered_map<uint64_t, DirState> streams_;  // key: flow * 2 + direction
};

}  // namespace

uint64_t offload_min_bytes_from_env() {
  const char* v = std::getenv("WARPATH_NIDS_OFFLOAD_MIN_BYTES");
  if (!v || !*v) return kDefaultOffloadMinBytes;
  char* end                  = nullptr;
  const unsigned long long n = std::strtoull(v, &end, 10);
  if (*v < '0' || *v > '9' || *end != 0) {  // a tuning knob: say so, and run with the default
    static bool said = false;
    if (!said)
      std::fprintf(stderr,
                   "warpath: WARPATH_NIDS_OFFLOAD_MIN_BYTES=%s is not a byte count; using %llu\n",
                   v, (unsigned long long)kDefaultOffloadMinBytes);
    said = true;
    return kDefaultOffloadMinBytes;
  }
  return uint64_t(n);
}

Result<std::unique_ptr<Detector>> make_block_detector(std::shared_ptr<const DetectImage> image,
                                                      std::string id, const std::string& engine,
                                                      const BlockOffload& offload) {
  BlockOffload o = offload;
  if (o.offload_min_bytes == 0) o.fallback.clear();  // never used: not built
  auto d = std::make_unique<BlockDetector>(std::move(image), std::move(id), o);
  WARPATH_TRY(d->build(engine));
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
