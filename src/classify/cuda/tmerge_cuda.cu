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
 *            change flattens the writer's current version into a new device image (uploaded
 *            whole, O(rules): not yet the small deltas the design allows) and swaps it in;
 *            calls running on the previous image keep it alive (shared_ptr) until they end.
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

size_t align64(size_t x) { return (x + 63) & ~size_t(63); }

/// One uploaded version of the rule set.
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
    std::shared_ptr<DeviceImage<NW>> image;
    return current(image);
  }

  std::string_view id() const noexcept override { return "cuda.tuplemerge"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    std::shared_ptr<DeviceImage<NW>> image;
    WARPATH_TRY(current(image));
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
    tm_kernel<NW><<<blocks, kBlockSize, 0, stream>>>(image->views(), image->tables,
                                                     image->version, keys_.as<uint32_t>(), n,
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

  // The image of the writer's current version, flattened and uploaded when it changed.
  Status current(std::shared_ptr<DeviceImage<NW>>& out) const {
    std::lock_guard<std::mutex> ilock(image_mutex_);
    std::lock_guard<std::mutex> wlock(writer_.mutex());
    const uint64_t version = writer_.version();
    if (image_ && image_->version == version) {
      out = image_;
      return Status::ok();
    }
    const TmList<NW>& list = *writer_.set().list();
    // Sizes: the table views, each table's slots, each live bucket (header + entries).
    size_t bytes = align64(list.tables.size() * sizeof(core::TmTable<NW>));
    for (const auto& t : list.tables) {
      bytes += align64(size_t(t.cap_mask + 1) * 8);
      for (uint32_t i = 0; i <= t.cap_mask; ++i)
        if (t.slots[i] > core::kTmTomb)
          bytes += sizeof(core::TmBucket<NW>) +
                   size_t(core::tm_count_of<NW>(t.slots[i])) * sizeof(core::TmEntry<NW>);
    }
    auto image     = std::make_shared<DeviceImage<NW>>();
    image->version = version;
    image->tables  = uint32_t(list.tables.size());
    WARPATH_TRY(image->mem.reserve(std::max<size_t>(bytes, 64)));
    const auto base = reinterpret_cast<uintptr_t>(image->mem.ptr);
    staging_.assign(bytes, 0);
    auto* views = reinterpret_cast<core::TmTable<NW>*>(staging_.data());
    size_t at   = align64(list.tables.size() * sizeof(core::TmTable<NW>));
    for (size_t c = 0; c < list.tables.size(); ++c) {
      const core::TmTable<NW>& t = list.tables[c];
      views[c]                   = t;
      views[c].slots             = reinterpret_cast<const uint64_t*>(base + at);
      auto* slots                = reinterpret_cast<uint64_t*>(staging_.data() + at);
      at += align64(size_t(t.cap_mask + 1) * 8);
      for (uint32_t i = 0; i <= t.cap_mask; ++i) {
        const uint64_t s = t.slots[i];
        if (s <= core::kTmTomb) {
          slots[i] = s;
          continue;
        }
        const uint32_t count = core::tm_count_of<NW>(s);
        const size_t size    = sizeof(core::TmBucket<NW>) + size_t(count) * sizeof(core::TmEntry<NW>);
        std::memcpy(staging_.data() + at, core::tm_bucket_of<NW>(s), size);
        // Same tag and count bits, the device address of the copy.
        slots[i] = (s & 0xFFFF'0000'0000'003Full) | uint64_t(base + at);
        at += size;
      }
    }
    WARPATH_CUDA_TRY(cudaMemcpy(image->mem.ptr, staging_.data(), bytes, cudaMemcpyHostToDevice));
    image_ = image;
    out    = std::move(image);
    return Status::ok();
  }

  KeyLayout layout_;
  TmWriter<NW> writer_;
  mutable std::mutex image_mutex_;
  mutable std::shared_ptr<DeviceImage<NW>> image_;
  mutable std::vector<unsigned char> staging_;
  mutable ScratchPool<2> scratch_;
};

}  // namespace

Made make_cuda_tuplemerge(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return make_by_width<TupleMergeCuda>(rules);
}

}  // namespace warpath::classify::detail
