// src/nids/detect_image.hpp: the compiled rule image the detection engines share (internal).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "warpath/nids/detect.hpp"

struct pcre2_real_code_8;

namespace warpath::nids::detail {

class PrefilterCache;  // nids/cpu/port_groups.hpp
/// An empty PrefilterCache (defined with it); `bounded`: PrefilterCache's bounds hold.
std::shared_ptr<PrefilterCache> make_prefilter_cache(bool bounded = true);

struct ItemList;

/// A payload item ready to evaluate.
struct CompiledItem {
  Item::Kind kind = Item::kContent;
  const Content* content = nullptr;  ///< points into the image's rules
  const Pcre* pcre       = nullptr;
  const IsDataAt* isdataat = nullptr;
  const ByteOp* byte       = nullptr;
  const NumTest* size      = nullptr;  ///< kBsize
  const Base64Decode* b64  = nullptr;  ///< kBase64Decode
  ItemList* decoded_items  = nullptr;  ///< kBase64Decode: base64_data's items (null: none)
  std::string needle;                ///< content bytes, lower-cased when nocase
  pcre2_real_code_8* code = nullptr; ///< compiled pcre (owned by the image)
};

/// A flowbits condition: all (or any) of `bits` set, or (isnotset) not set.
struct BitCondition {
  bool any = false, negate = false;
  std::vector<uint32_t> bits;
};

/// An xbit condition or change: the bit (by name and whether it is an address pair's), where
/// it is kept, and (set, toggle) how long it lives.
struct XbitOp {
  uint32_t bit = 0;
  Flowbit::Op op = Flowbit::kSet;
  Xbit::Track track = Xbit::kIpSrc;
  uint64_t expire_ns = 0;
};

/// A flowint condition or change, its integers by index.
struct FlowintOp {
  Flowint::Op op = Flowint::kSet;
  uint32_t var = 0;
  uint32_t value = 0;
  int32_t value_var = -1;  ///< the value is this integer's (-1: `value`)
};

/// The items of one buffer, in rule order (relative items chain within it).
struct ItemList {
  std::vector<CompiledItem> items;
  bool needs_relative_retry = false;  ///< some item after the first is relative (backtracking helps)
  int32_t last_positive = -1;  ///< index of the last non-negated content or pcre, -1: none
  /// The lists of base64_data items of this list's base64_decode items (they point here).
  std::vector<std::unique_ptr<ItemList>> decoded_lists;
};

/// The items of one application-layer buffer.
struct AppList : ItemList {
  AppBuffer buffer = AppBuffer::kPayload;
  bool dotprefix   = false;  ///< looks at "." + the buffer
};

/// A rule ready to evaluate: its payload items (the ItemList it is) and, for a transaction
/// rule, one list per application-layer buffer it names.
struct CompiledRule : ItemList {
  std::vector<BitCondition> conditions;
  std::vector<uint32_t> set, unset, toggle;
  std::vector<XbitOp> xbit_conditions, xbit_changes;
  std::vector<FlowintOp> int_conditions, int_changes;  ///< each in rule order
  bool packet_only = false;  ///< looks at packets only (no payload, dsize, no_stream, tcp-pkt, udp, icmp)
  bool stream_only = false;  ///< looks at streams only (only_stream, tcp-stream)
  int32_t fast_pattern = -1;          ///< index of the fast-pattern content in items, -1: none
  RuleKind kind = RuleKind::kPacket;
  std::vector<AppList> app;    ///< kAppTx: the buffers' items
  bool app_response = false;   ///< kAppTx: inspected with the response (names a response buffer)
  int32_t app_fp_list = -1, app_fp_item = -1;  ///< kAppTx: the fast-pattern content, -1: none
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
    const CompiledRule& c = compiled_[i];
    if (c.kind == RuleKind::kAppTx)
      return c.app_fp_list < 0 ? nullptr : c.app[size_t(c.app_fp_list)].items[size_t(c.app_fp_item)].content;
    return c.fast_pattern < 0 ? nullptr : c.items[size_t(c.fast_pattern)].content;
  }
  /// The list of rules()[i]'s fast pattern (null for packet and stream rules).
  const AppList* fast_pattern_list(uint32_t i) const {
    const CompiledRule& c = compiled_[i];
    return c.kind == RuleKind::kAppTx && c.app_fp_list >= 0 ? &c.app[size_t(c.app_fp_list)] : nullptr;
  }
  const std::vector<CompiledRule>& compiled() const noexcept { return compiled_; }
  /// The prefilter databases of port groups (nids/cpu/port_groups.hpp), compiled on first use
  /// and shared by every detector of the image: what the image answers does not change, and a
  /// database is compiled once for all of them (the workers of a run, a reloaded inspector).
  PrefilterCache& prefilter_cache() const noexcept { return *prefilter_cache_; }
  /// The rule groups' and app groups' databases (nids/cpu/rule_groups.hpp), the same way:
  /// compiled by the image's first detector, cloned by the others (a worker's inspector made
  /// later, a run's every run in a benchmark), not once per detector.
  PrefilterCache& group_cache() const noexcept { return *group_cache_; }
  uint32_t bit_count() const noexcept { return bits_; }

 private:
  friend Result<std::shared_ptr<const DetectImage>> nids::compile_rules(const RuleSet& set);
  std::vector<Rule> rules_;
  std::vector<CompiledRule> compiled_;
  Classification classification_;
  uint32_t bits_ = 0;
  std::shared_ptr<PrefilterCache> prefilter_cache_ = make_prefilter_cache();
  std::shared_ptr<PrefilterCache> group_cache_     = make_prefilter_cache(false);
};

}  // namespace warpath::nids::detail
