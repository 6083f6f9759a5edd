/*
 * src/classify/cuda/tmerge_cuda.cu: cuda.tuplemerge, TupleMerge on the GPU.
 *
 * Computes   out[i] = index of the best rule matching key i (or kNoMatch): core::tm_probe over
 *            the tables in order of best, stopping at the first that cannot improve the key.
 * Algorithm  src/classify/core/tmerge_core.hpp, shared with cpu/tmerge_cpu.cpp. Do not fork.
 * Launch     1-D grid-stride, kBlockSize threads, a thread per key; grid capped at 8 x SMs.
 * Memory     keys: device global SoA (word w of key i at w * n + i), coalesced. The image: one
 *            device buffer [tables][slot arrays][buckets], each 64-byte aligned, with the
 *            slots holding device addresses (the host layout with its pointers rewritten).
 * Updates    the host TmWriter takes them (as cpu.tuplemerge's); the first classify after a
 *            change brings the device image to the writer's version by the small patches the
 *            writer's logs describe (src/classify/tmerge_flat.hpp: slots stored, buckets added
 *            in the image's spare room, deaths written; a few uploads of the changed ranges),
 *            or, when the set was restructured (a new table, a slot array replaced, a
 *            collection every kTmCollectEvery updates) or the room is used up, flattens it
 *            whole into a new image and swaps it in; calls running on the previous image keep
 *            it alive (shared_ptr) until they end. Patches land under running kernels safely:
 *            each kernel reads at its own version, and buckets are copy-on-write.
 * Tested by  tests/classify/engines_test.cpp and tuple_test.cpp (vs the oracle), where a GPU is.
 */
#include <algorithm>
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "classify/core/tmerge_core.hpp"
#include "classify/core/tuple_core.hpp"
#include "classify/cuda/image_cuda.cuh"
#include "classify/engines.hpp"
#include "classify/tmerge_flat.hpp"
#include "classify/tmerge_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/scratch_pool.cuh"

namespace warpath::classify::detail {
namespace {

constexpr int kBlockSize = 256;

template <unsigned NW>
__global__ void __launch_bounds__(kBlockSize)
    tm_kernel(const core::TmTable<NW>* __restrict__ tables, uint32_t nt, uint64_t version,
              const uint32_t* __restrict__ keys, uint32_t n, uint32_t* __restrict__ out) {
  for (uint32_t i = blockIdx.x * kBlockSize + threadIdx.x; i < n; i += gridDim.x * kBlockSize) {
    uint32_t key[NW];
    for (unsigned w = 0; w < NW; ++w) key[w] = keys[size_t(w) * n + i];  // READSOA
    uint64_t best = 0;
    for (uint32_t c = 0; c < nt && best < tables[c].best; ++c)
      core::tm_probe<NW>(tables[c], key, version, best);
    out[i] = core::order_index(best);
  }
}

/// The rule set on the device: flattened whole, then patched version after version.
template <unsigned NW>
struct DeviceImage {
  DeviceArray mem;
  uint64_t version = 0;
  uint32_t tables  = 0;
  const core::TmTable<NW>* views() const { return mem.as<const core::TmTable<NW>>(); }
};

template <unsigned NW>
class TupleMergeCuda final : public Classifier {
 public:
  explicit TupleMergeCuda(KeyLayout layout) : layout_(layout) {}

  Status init(const RuleSet& rules) {
    WARPATH_TRY(writer_.init(rules));
    {
      std::lock_guard<std::mutex> lock(writer_.mutex());
      writer_.mutable_set().set_logging(true);
    }
    std::shared_ptr<DeviceImage<NW>> image;
    uint64_t version = 0;
    return current(image, version);
  }

  std::string_view id() const noexcept override { return "cuda.tuplemerge"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    std::shared_ptr<DeviceImage<NW>> image;
    uint64_t version = 0;
    WARPATH_TRY(current(image, version));
    auto stream  = static_cast<cudaStream_t>(ctx.stream);
    auto scratch = scratch_.acquire();
    DeviceArray &keys_ = scratch[0], &out_ = scratch[1];
    WARPATH_TRY(keys_.reserve(size_t(n) * NW * 4));
    WARPATH_TRY(out_.reserve(size_t(n) * 4));
    WARPATH_CUDA_TRY(cudaMemcpy2DAsync(keys_.ptr, size_t(n) * 4, keys.words,
                                       size_t(keys.stride) * 4, size_t(n) * 4, NW,
                                       cudaMemcpyHostToDevice, stream));
    static const int sms = image_sm_count();
    const uint32_t blocks = std::min<uint32_t>((n + kBlockSize - 1) / kBlockSize, 8u * sms);
    tm_kernel<NW><<<blocks, kBlockSize, 0, stream>>>(image->views(), image->tables, version,
                                                     keys_.as<uint32_t>(), n,
                                                     out_.as<uint32_t>());
    WARPATH_CUDA_CHECK_LAUNCH();
    WARPATH_CUDA_TRY(
        cudaMemcpyAsync(out.data, out_.ptr, size_t(n) * 4, cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

  Status insert(uint32_t index, const Rule& rule) override {
    return writer_.update(true, index, &rule, &no_host_readers, nullptr);
  }
  Status erase(uint32_t index) override {
    return writer_.update(false, index, nullptr, &no_host_readers, nullptr);
  }

  ClassifierStats stats() const override {
    ClassifierStats s;
    {
      std::lock_guard<std::mutex> lock(writer_.mutex());
      s = tm_stats(writer_.set());
    }
    std::lock_guard<std::mutex> lock(image_mutex_);
    if (image_) s.memory_bytes += image_->mem.bytes;
    return s;
  }

 private:
  // The device image never points into host memory, and the flattening holds the writer's
  // mutex: no host reader to wait for.
  static void no_host_readers(const void*) {}

  // The image of the writer's current version (and that version): patched or flattened and
  // uploaded when it changed.
  Status current(std::shared_ptr<DeviceImage<NW>>& out, uint64_t& version) const {
    std::lock_guard<std::mutex> ilock(image_mutex_);
    std::lock_guard<std::mutex> wlock(writer_.mutex());
    version = writer_.version();
    if (image_ && image_->version == version) {
      out = image_;
      return Status::ok();
    }
    TmSet<NW>& set = writer_.mutable_set();
    if (image_ && flat_.update(set)) {
      for (const auto& [off, n] : flat_.patches())
        WARPATH_CUDA_TRY(cudaMemcpy(static_cast<unsigned char*>(image_->mem.ptr) + off,
                                    flat_.data() + off, n, cudaMemcpyHostToDevice));
      image_->version = version;
      out             = image_;
      return Status::ok();
    }
    auto image                = std::make_shared<DeviceImage<NW>>();
    const size_t capacity     = TmFlat<NW>::capacity_for(set);
    WARPATH_TRY(image->mem.reserve(capacity));
    flat_.rebuild(set, uint64_t(reinterpret_cast<uintptr_t>(image->mem.ptr)), capacity);
    WARPATH_CUDA_TRY(cudaMemcpy(image->mem.ptr, flat_.data(), flat_.used(), cudaMemcpyHostToDevice));
    image->version = version;
    image->tables  = flat_.tables();
    image_         = image;
    out            = std::move(image);
    return Status::ok();
  }

  KeyLayout layout_;
  TmWriter<NW> writer_;
  mutable std::mutex image_mutex_;
  mutable std::shared_ptr<DeviceImage<NW>> image_;
  mutable TmFlat<NW> flat_;  ///< the host copy of the device image, and its patches
  mutable ScratchPool<2> scratch_;
};

}  // namespace

Made make_cuda_tuplemerge(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return make_by_width<TupleMergeCuda>(rules);
}

}  // namespace warpath::classify::detail
