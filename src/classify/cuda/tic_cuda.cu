/*
 * src/classify/cuda/tic_cuda.cu: cuda.tic, TIC (RFC address tree + range interpreter) on the GPU.
 *
 * Computes   out[i] = core::tic_lookup(view, key i) for i in [0, n).
 * Algorithm  src/classify/core/tic_core.hpp, shared with cpu/tic_cpu.cpp. Do not fork.
 * Launch     1-D grid-stride, kBlockSize threads per block, grid capped at 8 x SM count.
 * Memory     keys: device global, SoA (word w of key i at w * n + i), coalesced; out: device
 *            global, coalesced. The image (one buffer: address tables and 64-byte code blocks,
 * tic_image.hpp): device global, read-only, uploaded once at construction. Engine     classify()
 * copies the batch's four key rows in (one 2-D copy, any stride), launches, copies the answers out
 * and waits on ExecContext::stream. Tested by  tests/classify/rfc_tic_test.cpp and
 * tests/classify/engines_test.cpp (vs the oracles) where a GPU is present; warpath selftest.
 */
#include <algorithm>
#include <chrono>
#include <mutex>

#include "classify/engines.hpp"
#include "classify/tic_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"

namespace warpath::classify::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    tic_kernel(core::TicView v, const uint32_t* __restrict__ keys, uint32_t n,
               uint32_t* __restrict__ out) {
  for (uint32_t i = blockIdx.x * kBlockSize + threadIdx.x; i < n; i += gridDim.x * kBlockSize)
    out[i] =
        core::tic_lookup(v, keys[i], keys[n + i], keys[2 * size_t(n) + i], keys[3 * size_t(n) + i]);
}

int sm_count() {
  int device = 0, sms = 1;
  if (cudaGetDevice(&device) == cudaSuccess)
    cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  return sms;
}

class TicCuda final : public Classifier {
 public:
  TicCuda(std::unique_ptr<TicImage> img, ClassifierStats stats)
      : img_(std::move(img)), stats_(std::move(stats)) {}

  Status init() {
    WARPATH_TRY(image_.reserve(img_->bytes()));
    WARPATH_CUDA_TRY(cudaMemcpy(image_.ptr, img_->data(), img_->bytes(), cudaMemcpyHostToDevice));
    view_ = img_->view(static_cast<const uint8_t*>(image_.ptr));
    stats_.memory_bytes += img_->bytes();
    return Status::ok();
  }

  std::string_view id() const noexcept override { return "cuda.tic"; }

  Status classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != KeyLayout::kFiveTuple)
      return Status(Errc::kInvalidArgument, "cuda.tic: keys are not 5-tuple keys");
    if (out.size < keys.count) return Status(Errc::kInvalidArgument, "output span too small");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    auto stream = static_cast<cudaStream_t>(ctx.stream);
    std::lock_guard<std::mutex> lock(mutex_);
    WARPATH_TRY(keys_.reserve(size_t(n) * 4 * sizeof(uint32_t)));
    WARPATH_TRY(out_.reserve(size_t(n) * sizeof(uint32_t)));
    WARPATH_CUDA_TRY(cudaMemcpy2DAsync(keys_.ptr, size_t(n) * 4, keys.words,
                                       size_t(keys.stride) * 4, size_t(n) * 4, 4,
                                       cudaMemcpyHostToDevice, stream));
    static const int sms  = sm_count();
    const uint32_t blocks = std::min<uint32_t>((n + kBlockSize - 1) / kBlockSize, 8u * sms);
    tic_kernel<<<blocks, kBlockSize, 0, stream>>>(view_, static_cast<const uint32_t*>(keys_.ptr), n,
                                                  static_cast<uint32_t*>(out_.ptr));
    WARPATH_CUDA_CHECK_LAUNCH();
    WARPATH_CUDA_TRY(cudaMemcpyAsync(out.data, out_.ptr, size_t(n) * sizeof(uint32_t),
                                     cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

  ClassifierStats stats() const override { return stats_; }
  void set_build_ms(double ms) { stats_.build_ms = ms; }

 private:
  std::unique_ptr<TicImage> img_;
  ClassifierStats stats_;
  DeviceArray image_;
  core::TicView view_;
  mutable std::mutex mutex_;
  mutable DeviceArray keys_, out_;
};

}  // namespace

Made make_cuda_tic(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  int device = 0;
  WARPATH_CUDA_TRY(cudaGetDevice(&device));
  const auto t0 = std::chrono::steady_clock::now();
  WARPATH_ASSIGN_OR_RETURN(auto img, TicImage::build(rules));
  ClassifierStats s;
  s.rules = s.entries = rules.rules.size();
  s.memory_bytes      = img->bytes();
  s.detail            = img->detail();
  auto engine         = std::make_unique<TicCuda>(std::move(img), std::move(s));
  WARPATH_TRY(engine->init());
  engine->set_build_ms(
      std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace warpath::classify::detail
