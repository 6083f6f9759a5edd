// src/classify/cuda/image_cuda.cuh: a rebuild-only CUDA classifier over one immutable image,
// the shape cuda.rfc and cuda.tic share (only .cu files include this header).
//
// Launch     1-D grid-stride, kBlockSize threads per block, grid capped at 8 x SM count;
//            out[i] = Lookup{}(view, key i) with the engine's core body.
// Memory     keys: device global, SoA (word w of key i at w * n + i), coalesced; out: device
//            global, coalesced. The image (one buffer, Image::data()/bytes()): device global,
//            read-only, uploaded once at construction; Image::view(base) points a view into it.
// Engine     classify() copies the batch's four key rows in (one 2-D copy, any stride),
//            launches, copies the answers out and waits on ExecContext::stream.
#pragma once
#include <algorithm>
#include <chrono>
#include <mutex>
#include <string>

#include "classify/cuda/key_io.cuh"
#include "classify/engines.hpp"
#include "classify/rfc_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"

namespace warpath::classify::detail {

inline constexpr int kImageBlockSize = 256;

template <class View, class Lookup>
__global__ void __launch_bounds__(kImageBlockSize)
    image_kernel(View v, const uint32_t* __restrict__ keys, uint32_t n,
                 uint32_t* __restrict__ out) {
  for (const uint32_t i : grid_stride(n))
    out[i] =
        Lookup{}(v, keys[i], keys[size_t(n) + i], keys[2 * size_t(n) + i], keys[3 * size_t(n) + i]);
}


/// out[i] = Lookup{}(v, key i) for n keys already on the device (SoA rows of n words each):
/// the kernel alone, asynchronous on `stream` (what the engines and warpath-gpu-bench's
/// kernel-only rows launch).
template <class View, class Lookup>
Status launch_image(const View& v, const uint32_t* keys, uint32_t n, uint32_t* out,
                    cudaStream_t stream) {
  if (n == 0) return Status::ok();
  static const int sms = sm_count();
  const uint32_t blocks = std::min<uint32_t>(n / kImageBlockSize + 1, 8u * uint32_t(sms));
  image_kernel<View, Lookup><<<blocks, kImageBlockSize, 0, stream>>>(v, keys, n, out);
  WARPATH_CUDA_CHECK_LAUNCH();
  return Status::ok();
}

template <class Image, class View, class Lookup>
class ImageCuda final : public Classifier {
 public:
  ImageCuda(std::string_view id, std::unique_ptr<Image> img, ClassifierStats stats)
      : id_(id), img_(std::move(img)), stats_(std::move(stats)) {}

  Status init() {
    WARPATH_TRY(image_.reserve(img_->bytes()));
    WARPATH_CUDA_TRY(cudaMemcpy(image_.ptr, img_->data(), img_->bytes(), cudaMemcpyHostToDevice));
    WARPATH_CUDA_UPLOADS_LANDED();  // before a lane's stream reads it
    view_ = img_->view(static_cast<const uint8_t*>(image_.ptr));
    stats_.memory_bytes += img_->bytes();
    return Status::ok();
  }
  void set_build_ms(double ms) { stats_.build_ms = ms; }

  std::string_view id() const noexcept override { return id_; }
  bool takes_device_memory() const noexcept override { return true; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != KeyLayout::kFiveTuple)
      return Status(Errc::kInvalidArgument, std::string(id_) + ": keys are not 5-tuple keys");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    auto stream   = static_cast<cudaStream_t>(ctx.stream);
    auto lease    = scratch_.acquire_shared();  // this call's device buffers (scratch_pool.cuh)
    auto& scratch = *lease;
    KeyIo::defer(ctx, {lease});
    KeyIo io;  // the caller's device memory (resident) or the scratch (key_io.cuh)
    WARPATH_TRY(io.begin(keys, out, 4, ctx.resident, scratch[0], scratch[1], stream));
    WARPATH_TRY((launch_image<View, Lookup>(view_, io.keys(), n, io.out(), stream)));
    return io.finish(stream, ctx);
  }

  ClassifierStats stats() const override { return stats_; }

 private:
  std::string_view id_;
  std::unique_ptr<Image> img_;
  ClassifierStats stats_;
  DeviceArray image_;
  View view_{};
  ScratchPool<2> scratch_;
};

/// Builds Image from `rules` on the host and uploads it; build_ms covers both.
template <class Image, class View, class Lookup>
Made make_image_cuda(std::string_view id, const RuleSet& rules, const ClassifyParams& params) {
  int device = 0;
  WARPATH_CUDA_TRY(cudaGetDevice(&device));
  const auto t0 = std::chrono::steady_clock::now();
  WARPATH_ASSIGN_OR_RETURN(
      auto img,
      Image::build(rules, params.max_image_bytes ? params.max_image_bytes : kRfcMaxImageBytes));
  ClassifierStats s;
  s.rules = s.entries = rules.rules.size();
  s.memory_bytes      = img->bytes();
  s.detail            = img->detail();
  auto engine = std::make_unique<ImageCuda<Image, View, Lookup>>(id, std::move(img), std::move(s));
  WARPATH_TRY(engine->init());
  engine->set_build_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace warpath::classify::detail
