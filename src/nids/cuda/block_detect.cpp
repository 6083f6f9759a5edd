// cuda.nids: cpu.nids's rule groups (nids/cpu/rule_groups.hpp) with a block prefilter. A batch
// of units is scanned at once, one scan_blocks call per group (on cuda.ac: one launch for every
// unit of the group), each unit's whole buffer: a stream unit's lookback too, so no matcher
// state lives per stream and a fast pattern spanning chunks is still seen. A rule can match a
// unit only if its fast pattern occurs in the unit's buffer, so the rules of the patterns found
// (and the group's always-candidates) are a superset of the matches; the port filter then drops
// the rules whose ports cannot take the unit, and DetectorBase evaluates the rest in order.
// The prefilter engine is a parameter: the tests run the same detector over cpu.ac.
#include <algorithm>
#include <string>

#include "nids/cpu/rule_groups.hpp"
#include "nids/detector_base.hpp"

namespace warpath::nids::detail {
namespace {

class BlockDetector final : public DetectorBase {
 public:
  BlockDetector(std::shared_ptr<const DetectImage> image, std::string id)
      : DetectorBase(std::move(image), std::move(id)), ports_(img().rules()) {}

  Status build(const std::string& engine) {
    return build_groups(img(), ports_.words(), engine, false, groups_);
  }
  bool prefers_batches() const noexcept override { return true; }

 protected:
  void candidates(const Unit& u, std::vector<uint32_t>& out) override {
    out.clear();
    candidates_batch(&u, 1, &out);
  }

  void candidates_batch(const Unit* units, uint32_t n, std::vector<uint32_t>* out) override {
    for (auto& kind : pending_)
      for (Pending& p : kind) p.blocks.clear(), p.units.clear();
    // Which units each group scans: those with bytes whose ports some prefiltered rule takes.
    for (uint32_t i = 0; i < n; ++i) {
      const Unit& u  = units[i];
      const int kind = kind_of(u), cls = proto_class(u.pkt.proto);
      const Group& g = groups_[kind][cls];
      out[i]         = g.always;
      if (!g.prefilter || !u.len) continue;
      const uint64_t* allowed = ports_of(u);
      if (allowed && !g.any_allowed(allowed)) continue;
      pending_[kind][cls].blocks.push_back({u.data, u.len});
      pending_[kind][cls].units.push_back(i);
    }
    for (int kind = 0; kind < kKinds; ++kind)
      for (int cls = 0; cls < kProtos; ++cls) {
        Pending& p     = pending_[kind][cls];
        const Group& g = groups_[kind][cls];
        if (p.units.empty()) continue;
        if (matches_.size() < p.units.size()) matches_.resize(p.units.size());
        if (!g.prefilter->scan_blocks(p.blocks.data(), uint32_t(p.blocks.size()), matches_.data())
                 .is_ok()) {
          // A prefilter that cannot answer: every rule of the group is a candidate.
          for (uint32_t i : p.units)
            out[i].insert(out[i].end(), g.by_pattern.begin(), g.by_pattern.end());
          continue;
        }
        for (size_t k = 0; k < p.units.size(); ++k)
          take_matches(g, matches_[k], seen_, out[p.units[k]]);
      }
    for (uint32_t i = 0; i < n; ++i) finish_candidates(ports_of(units[i]), out[i]);
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
  };
  Groups groups_;
  PortFilter ports_;
  Pending pending_[kKinds][kProtos];
  std::vector<std::vector<pattern::Match>> matches_;  // per block of the group being taken
  std::vector<uint8_t> seen_;
};

}  // namespace

Result<std::unique_ptr<Detector>> make_block_detector(std::shared_ptr<const DetectImage> image,
                                                      std::string id, const std::string& engine) {
  auto d = std::make_unique<BlockDetector>(std::move(image), std::move(id));
  WARPATH_TRY(d->build(engine));
  return std::unique_ptr<Detector>(std::move(d));
}

}  // namespace warpath::nids::detail
