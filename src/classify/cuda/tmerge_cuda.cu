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
 *            in the image's spare room and copied first, then slots and deaths stored as whole
 *            8-byte words by a small kernel, then a fresh copy of the tables' views),
 *            or, when the set was restructured (a new table, a slot array replaced, a
 *            collection every kTmCollectEvery updates) or the room is used up, flattens it
 *            whole into a new image and swaps it in; calls running on the previous image keep
 *            it alive (shared_ptr) until they end. Patches land under running kernels safely:
 *            each kernel reads at its own version and its own views, buckets are
 *            copy-on-write, and words are stored whole.
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
#include "classify/cuda/key_io.cuh"
#include "classify/engines.hpp"
#include "classify/tmerge_flat.hpp"
#include "classify/tmerge_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"

namespace warpath::classify::detail {
namespace {

constexpr int kBlockSize = 256;

template <unsigned NW>
__global__ void __launch_bounds__(kBlockSize)
    tm_kernel(const core::TmTable<NW>* __restrict__ tables, uint32_t nt, uint64_t version,
              const uint32_t* __restrict__ keys, uint32_t n, uint32_t* __restrict__ out) {
  for (const uint32_t i : grid_stride(n)) {
    uint32_t key[NW];
    for (unsigned w = 0; w < NW; ++w) key[w] = keys[size_t(w) * n + i];  // READSOA
    uint64_t best = 0;
    for (uint32_t c = 0; c < nt && best < tables[c].best; ++c)
      core::tm_probe<NW>(tables[c], key, version, best);
    out[i] = core::order_index(best);
  }
}

// Stores 8-byte words into the image, each whole (kernels reading the image may load it
// meanwhile): `words` holds (offset, value) pairs.
__global__ void store_words(unsigned char* image, const uint64_t* __restrict__ words, uint32_t n) {
  for (const uint32_t i : grid_stride(n))
    *reinterpret_cast<volatile uint64_t*>(image + words[2 * i]) = words[2 * i + 1];
}

/// The rule set on the device: flattened whole, then patched version after version.
template <unsigned NW>
struct DeviceImage {
  DeviceArray mem;
  uint64_t version = 0;
};

/// A copy of the tables' views, never written while a kernel may read it (each list of tables
/// gets its own).
template <unsigned NW>
struct DeviceViews {
  DeviceArray mem;
  uint32_t tables = 0;
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
    std::shared_ptr<DeviceViews<NW>> views;
    uint64_t version = 0;
    return current(image, views, version);
  }

  std::string_view id() const noexcept override { return "cuda.tuplemerge"; }
  bool takes_device_memory() const noexcept override { return true; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    std::shared_ptr<DeviceImage<NW>> image;
    std::shared_ptr<DeviceViews<NW>> views;
    uint64_t version = 0;
    WARPATH_TRY(current(image, views, version));
    auto stream   = static_cast<cudaStream_t>(ctx.stream);
    auto lease    = scratch_.acquire_shared();
    auto& scratch = *lease;
    KeyIo::defer(ctx, {lease, image, views});
    KeyIo io;  // the caller's device memory (resident) or the scratch (key_io.cuh)
    WARPATH_TRY(io.begin(keys, out, NW, ctx.resident, scratch[0], scratch[1], stream));
    static const int sms = sm_count();
    const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, 8u * sms);
    tm_kernel<NW><<<blocks, kBlockSize, 0, stream>>>(views->views(), views->tables, version,
                                                     io.keys(), n, io.out());
    WARPATH_CUDA_CHECK_LAUNCH();
    return io.finish(stream, ctx);
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

  // The image of the writer's current version, its views and that version: patched (the new
  // buckets, then the words, then fresh views: tmerge_flat.hpp) or flattened and uploaded
  // whole when it changed. A failed upload leaves no image behind: the next call flattens.
  Status current(std::shared_ptr<DeviceImage<NW>>& out, std::shared_ptr<DeviceViews<NW>>& views,
                 uint64_t& version) const {
    std::lock_guard<std::mutex> ilock(image_mutex_);
    std::lock_guard<std::mutex> wlock(writer_.mutex());
    version = writer_.version();
    if (image_ && image_->version == version) {
      out   = image_;
      views = views_;
      return Status::ok();
    }
    TmSet<NW>& set = writer_.mutable_set();
    Status st;
    if (image_ && flat_.update(set)) {
      (void)(st = patch());
    } else {
      image_ = nullptr;
      (void)(st = flatten(set));
    }
    // Copies from pageable memory may return before they land: readers on other streams
    // launch only after everything uploaded is on the device.
    if (st.is_ok())
      if (const cudaError_t e = cudaStreamSynchronize(nullptr); e != cudaSuccess)
        (void)(st = cuda_status(e, "cudaStreamSynchronize(nullptr)", __FILE__, __LINE__));
    if (!st.is_ok()) {
      image_ = nullptr;
      views_ = nullptr;
      return st;
    }
    image_->version = version;
    out             = image_;
    views           = views_;
    return Status::ok();
  }

  Status flatten(TmSet<NW>& set) const {
    auto image            = std::make_shared<DeviceImage<NW>>();
    const size_t capacity = TmFlat<NW>::capacity_for(set);
    WARPATH_TRY(image->mem.reserve(capacity));
    flat_.rebuild(set, uint64_t(reinterpret_cast<uintptr_t>(image->mem.ptr)), capacity);
    WARPATH_CUDA_TRY(cudaMemcpy(image->mem.ptr, flat_.data(), flat_.used(), cudaMemcpyHostToDevice));
    image_ = std::move(image);
    return upload_views();
  }

  Status patch() const {
    auto* base = static_cast<unsigned char*>(image_->mem.ptr);
    for (const auto& [off, n] : flat_.bulk())
      WARPATH_CUDA_TRY(cudaMemcpy(base + off, flat_.data() + off, n, cudaMemcpyHostToDevice));
    const auto& words = flat_.words();
    if (!words.empty()) {
      const auto n = uint32_t(words.size());
      WARPATH_TRY(words_dev_.reserve(size_t(n) * 16));
      static_assert(sizeof(words[0]) == 16);
      WARPATH_CUDA_TRY(cudaMemcpy(words_dev_.ptr, words.data(), size_t(n) * 16, cudaMemcpyHostToDevice));
      store_words<<<std::min<uint32_t>((n + 255) / 256, 64), 256>>>(base, words_dev_.as<uint64_t>(), n);
      WARPATH_CUDA_CHECK_LAUNCH();
    }
    WARPATH_CUDA_UPLOADS_LANDED();  // the patch is whole on the device before it is published
    return flat_.views_changed() ? upload_views() : Status::ok();
  }

  // A views buffer goes back to views_pool_ when its last reader lets go (no kernel reads it
  // then), so publishing views does not cudaFree, which would wait for every kernel running.
  Status upload_views() const {
    DeviceViews<NW>* raw = nullptr;
    {
      std::lock_guard<std::mutex> lock(*pool_mutex_);
      if (!views_pool_->empty()) {
        raw = views_pool_->back().release();
        views_pool_->pop_back();
      }
    }
    if (!raw) raw = new DeviceViews<NW>();
    std::shared_ptr<DeviceViews<NW>> views(
        raw, [pool = views_pool_, mutex = pool_mutex_](DeviceViews<NW>* v) {
          std::lock_guard<std::mutex> lock(*mutex);
          if (pool->size() < 8) pool->emplace_back(v);
          else delete v;
        });
    views->tables = flat_.tables();
    const size_t bytes = std::max<size_t>(size_t(views->tables) * sizeof(core::TmTable<NW>), 64);
    WARPATH_TRY(views->mem.reserve(bytes));
    WARPATH_CUDA_TRY(cudaMemcpy(views->mem.ptr, flat_.data(),
                                size_t(views->tables) * sizeof(core::TmTable<NW>),
                                cudaMemcpyHostToDevice));
    WARPATH_CUDA_UPLOADS_LANDED();  // image and views on the device before they are published
    views_ = std::move(views);
    return Status::ok();
  }

  KeyLayout layout_;
  TmWriter<NW> writer_;
  mutable std::mutex image_mutex_;
  mutable std::shared_ptr<DeviceImage<NW>> image_;
  mutable std::shared_ptr<DeviceViews<NW>> views_;
  // Freed views buffers for reuse (shared with the buffers' deleters, which may outlive this).
  std::shared_ptr<std::vector<std::unique_ptr<DeviceViews<NW>>>> views_pool_ =
      std::make_shared<std::vector<std::unique_ptr<DeviceViews<NW>>>>();
  std::shared_ptr<std::mutex> pool_mutex_ = std::make_shared<std::mutex>();
  mutable DeviceArray words_dev_;  ///< the words of a patch, (offset, value) pairs
  mutable TmFlat<NW> flat_;  ///< the host copy of the device image, and its patches
  mutable ScratchPool<2> scratch_;
};

}  // namespace

Made make_cuda_tuplemerge(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  return make_by_width<TupleMergeCuda>(rules);
}

}  // namespace warpath::classify::detail
