// src/nids/detector_base.hpp: what every detection engine shares: flowbits per flow and the
// evaluation of candidate rules in order (the engines differ only in how they pick the
// candidates).
#pragma once
#include <memory>
#include <string>
#include <unordered_map>
#include <vector>

#include "nids/core/rule_eval.hpp"
#include "nids/detect_image.hpp"

namespace warpath::nids::detail {

class DetectorBase : public Detector {
 public:
  DetectorBase(std::shared_ptr<const DetectImage> image, std::string id);
  ~DetectorBase() override;
  DetectorBase(const DetectorBase&) = delete;
  DetectorBase& operator=(const DetectorBase&) = delete;

  std::string_view id() const noexcept override { return id_; }
  Status inspect(const Unit& u, std::vector<Hit>& hits) override;
  void end_flow(uint64_t flow) override;
  DetectCounters counters() const override;
  const DetectImage& image() const noexcept override { return *holder_; }

 protected:
  /// Rule indices worth evaluating for `u`, ascending, each once (a superset of the matches).
  virtual void candidates(const Unit& u, std::vector<uint32_t>& out) = 0;
  /// Per-flow state of the engine to drop.
  virtual void forget_flow(uint64_t) {}
  const Image& img() const noexcept { return img_; }

 private:
  bool conditions_hold(const CompiledRule& c, uint64_t flow) const;
  void apply_bits(const CompiledRule& c, uint64_t flow);

  std::shared_ptr<const DetectImage> holder_;
  const Image& img_;
  std::string id_;
  pcre2_match_data* md_    = nullptr;
  pcre2_match_context* mc_ = nullptr;
  std::unordered_map<uint64_t, std::vector<uint64_t>> bits_;  // flow -> flowbit words
  std::vector<uint32_t> cands_;
  uint64_t packet_ = 0;            // the packet of the last unit
  std::vector<uint32_t> applied_;  // rules whose flowbits changed for that packet
  DetectCounters counters_;
};

Result<std::unique_ptr<Detector>> make_ref_detector(std::shared_ptr<const DetectImage> image);
Result<std::unique_ptr<Detector>> make_cpu_detector(std::shared_ptr<const DetectImage> image);

}  // namespace warpath::nids::detail
