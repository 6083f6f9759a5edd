// src/nids/detect_image.hpp: the compiled rule image the detection engines share (internal).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "warpath/nids/detect.hpp"

struct pcre2_real_code_8;

namespace warpath::nids::detail {

class PrefilterCache;  // nids/cpu/port_groups.hpp
/// An empty PrefilterCache (defined with it).
std::shared_ptr<PrefilterCache> make_prefilter_cache();

/// A payload item ready to evaluate.
struct CompiledItem {
  Item::Kind kind = Item::kContent;
  const Content* content = nullptr;  ///< points into the image's rules
  const Pcre* pcre       = nullptr;
  const IsDataAt* isdataat = nullptr;
  const ByteOp* byte       = nullptr;
  std::string needle;                ///< content bytes, lower-cased when nocase
  pcre2_real_code_8* code = nullptr; ///< compiled pcre (owned by the image)
};

/// A flowbits condition: all (or any) of `bits` set, or (isnotset) not set.
struct BitCondition {
  bool any = false, negate = false;
  std::vector<uint32_t> bits;
};

struct CompiledRule {
  std::vector<CompiledItem> items;
  std::vector<BitCondition> conditions;
  std::vector<uint32_t> set, unset, toggle;
  bool packet_only = false;  ///< looks at packets only (no payload, dsize, no_stream, tcp-pkt, udp, icmp)
  bool stream_only = false;  ///< looks at streams only (only_stream, tcp-stream)
  bool needs_relative_retry = false;  ///< some item after the first is relative (backtracking helps)
  int32_t fast_pattern = -1;          ///< index of the fast-pattern content in items, -1: none
  int32_t last_positive = -1;  ///< index of the last non-negated content or pcre, -1: none
  RuleKind kind = RuleKind::kPacket;
};

class Image final : public DetectImage {
 public:
  Image() = default;
  ~Image() override;
  Image(const Image&) = delete;
  Image& operator=(const Image&) = delete;
  const std::vector<Rule>& rules() const noexcept override { return rules_; }
  ClassType class_of(const Rule& r) const override;
  RuleKind kind(uint32_t i) const override { return compiled_[i].kind; }
  const Content* fast_pattern(uint32_t i) const override {
    const int32_t k = compiled_[i].fast_pattern;
    return k < 0 ? nullptr : compiled_[i].items[size_t(k)].content;
  }
  const std::vector<CompiledRule>& compiled() const noexcept { return compiled_; }
  /// The prefilter databases of port groups (nids/cpu/port_groups.hpp), compiled on first use
  /// and shared by every detector of the image: what the image answers does not change, and a
  /// database is compiled once for all of them (the workers of a run, a reloaded inspector).
  PrefilterCache& prefilter_cache() const noexcept { return *prefilter_cache_; }
  uint32_t bit_count() const noexcept { return bits_; }

 private:
  friend Result<std::shared_ptr<const DetectImage>> nids::compile_rules(const RuleSet& set);
  std::vector<Rule> rules_;
  std::vector<CompiledRule> compiled_;
  Classification classification_;
  uint32_t bits_ = 0;
  std::shared_ptr<PrefilterCache> prefilter_cache_ = make_prefilter_cache();
};

}  // namespace warpath::nids::detail
