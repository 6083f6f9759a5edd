// src/nids/detector_base.hpp: what every detection engine shares: flowbits per flow and the
// evaluation of candidate rules in order (the engines differ only in how they pick the
// candidates).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "nids/core/rule_eval.hpp"
#include "nids/detect_image.hpp"
#include "nids/xbit_table.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::nids::detail {

class DetectorBase : public Detector {
 public:
  DetectorBase(std::shared_ptr<const DetectImage> image, std::string id);
  ~DetectorBase() override;
  DetectorBase(const DetectorBase&) = delete;
  DetectorBase& operator=(const DetectorBase&) = delete;

  std::string_view id() const noexcept override { return id_; }
  Status inspect(const Unit& u, std::vector<Hit>& hits) override;
  /// Every unit's candidates first (candidates_batch), then each unit evaluated in order.
  Status inspect_batch(const Unit* units, uint32_t n, std::vector<Hit>* hits) override;
  void end_flow(uint64_t flow) override;
  DetectCounters counters() const override;
  const DetectImage& image() const noexcept override { return *holder_; }

 protected:
  /// Rule indices worth evaluating for `u`, ascending, each once (a superset of the matches).
  virtual void candidates(const Unit& u, std::vector<uint32_t>& out) = 0;
  /// The candidates of `n` units (out[i] for units[i], as candidates() would give them, the
  /// units taken in order); by default candidates() of each.
  virtual void candidates_batch(const Unit* units, uint32_t n, std::vector<uint32_t>* out);
  /// Rule indices worth evaluating for a transaction unit (Buffer::kApp), ascending, each once:
  /// by default those the per-buffer prefilter finds (AppGroups, on the CPU for every engine);
  /// ref.nids takes every transaction rule of the unit's phase (all_app_rules).
  virtual void app_candidates(const Unit& u, std::vector<uint32_t>& out);
  void all_app_rules(const Unit& u, std::vector<uint32_t>& out);
  /// Per-flow state of the engine to drop.
  virtual void forget_flow(uint64_t) {}
  const Image& img() const noexcept { return img_; }

 private:
  bool conditions_hold(const CompiledRule& c, const Unit& u) const;
  void apply_bits(const CompiledRule& c, const Unit& u);
  void count(const Unit& u);
  /// The candidates `cands` of `u` evaluated in order; matches appended to `hits`.
  void evaluate(const Unit& u, const std::vector<uint32_t>& cands, std::vector<Hit>& hits);

  std::shared_ptr<const DetectImage> holder_;
  const Image& img_;
  std::string id_;
  pcre2_match_data* md_    = nullptr;
  pcre2_match_context* mc_ = nullptr;
  std::unordered_map<uint64_t, std::vector<uint64_t>> bits_;  // flow -> flowbit words
  // flow -> (flowint, value) of the integers it set
  std::unordered_map<uint64_t, std::vector<std::pair<uint32_t, uint32_t>>> ints_;
  XbitTable xbits_;
  std::vector<uint32_t> cands_;
  std::vector<uint32_t> app_rules_;  // the transaction rules (all_app_rules)
  bool app_rules_built_ = false;
  std::unique_ptr<struct AppGroups> app_groups_;  // the transaction prefilter, at first use
  bool app_failed_ = false;                       // ... could not be compiled
  std::vector<pattern::Match> app_matches_;
  std::vector<uint32_t> app_at_;
  std::vector<struct Found> app_found_;
  std::vector<std::vector<uint32_t>> batch_cands_;  // inspect_batch's, per unit
  uint64_t packet_ = 0;            // the packet of the last unit
  std::vector<uint32_t> applied_;  // rules whose flowbits changed for that packet
  DetectCounters counters_;
};

Result<std::unique_ptr<Detector>> make_ref_detector(std::shared_ptr<const DetectImage> image);
Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image);
/// `engine` beside ref.nids (the validate: wrapper).
Result<std::unique_ptr<Detector>> validated_detector(std::unique_ptr<Detector> engine,
                                                     std::shared_ptr<const DetectImage> image);
/// check_nids_engine over detectors `make` builds (validate: ones: they fail on a difference).
using DetectorMaker =
    std::function<Result<std::unique_ptr<Detector>>(std::shared_ptr<const DetectImage>)>;
CheckReport check_detector(std::string_view id, const DetectorMaker& make, uint64_t seed,
                           uint64_t items);
/// cuda.nids's detector over any pattern engine's block scans (`engine`: cuda.ac; the tests
/// run it over cpu.ac), named `id`. With a `fallback` CPU engine, a rule group's batch of
/// fewer than `offload_min_bytes` bytes is scanned there instead (PacketShader's opportunistic
/// offload: a small batch does not pay for a launch and its copies). Both engines report the
/// same patterns, so the answers do not depend on the split.
struct BlockOffload {
  std::string fallback;            ///< CPU pattern engine; empty: every scan on `engine`
  uint64_t offload_min_bytes = 0;  ///< a group's batch below this goes to the fallback
};
Result<std::unique_ptr<Detector>> make_block_detector(std::shared_ptr<const DetectImage> image,
                                                      std::string id, const std::string& engine,
                                                      const BlockOffload& offload = {});
/// cuda.nids's offload threshold: WARPATH_NIDS_OFFLOAD_MIN_BYTES when set (0: always the GPU),
/// else kDefaultOffloadMinBytes.
inline constexpr uint64_t kDefaultOffloadMinBytes = 32 << 10;
uint64_t offload_min_bytes_from_env();

}  // namespace warpath::nids::detail
