// src/classify/cpu/image_cpu.hpp: a rebuild-only CPU classifier over one immutable image, the
// shape cpu.rfc and cpu.tic share. Image provides static build(rules), view(), bytes() and
// detail(); Batched(view, keys, out, begin, end) is the engine's G-Opt loop over the core body.
#pragma once
#include <chrono>
#include <memory>
#include <string_view>

#include "classify/engines.hpp"
#include "classify/rfc_image.hpp"
#include "core/parallel.hpp"

namespace warpath::classify::detail {

template <class Image, class View,
          void (*Batched)(const View&, const KeyBatch&, uint32_t*, uint32_t, uint32_t)>
class ImageCpu final : public Classifier {
 public:
  // Below this many keys per thread, starting threads costs more than it saves.
  static constexpr uint32_t kMinPerThread = 1u << 14;

  ImageCpu(std::string_view id, std::unique_ptr<Image> img, ClassifierStats stats)
      : id_(id), img_(std::move(img)), view_(img_->view()), stats_(std::move(stats)) {}
  std::string_view id() const noexcept override { return id_; }
  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != KeyLayout::kFiveTuple)
      return Status(Errc::kInvalidArgument, std::string(id_) + ": keys are not 5-tuple keys");
    parallel_ranges(keys.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      Batched(view_, keys, out.data, begin, end);
    });
    return Status::ok();
  }
  ClassifierStats stats() const override { return stats_; }

 private:
  std::string_view id_;
  std::unique_ptr<Image> img_;
  View view_;
  ClassifierStats stats_;
};

/// Builds Image from `rules` and wraps it; build_ms covers the image build.
template <class Image, class View,
          void (*Batched)(const View&, const KeyBatch&, uint32_t*, uint32_t, uint32_t)>
Made make_image_cpu(std::string_view id, const RuleSet& rules, const ClassifyParams& params) {
  const auto t0 = std::chrono::steady_clock::now();
  WARPATH_ASSIGN_OR_RETURN(
      auto img,
      Image::build(rules, params.max_image_bytes ? params.max_image_bytes : kRfcMaxImageBytes));
  ClassifierStats s;
  s.rules = s.entries = rules.rules.size();
  s.memory_bytes      = img->bytes();
  s.build_ms =
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  s.detail = img->detail();
  return std::unique_ptr<Classifier>(
      std::make_unique<ImageCpu<Image, View, Batched>>(id, std::move(img), std::move(s)));
}

}  // namespace warpath::classify::detail
