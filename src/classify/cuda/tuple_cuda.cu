/*
 * src/classify/cuda/tuple_cuda.cu: cuda.tuple and cuda.bloom, GSwitch Algorithms 4 and 5.
 *
 * Computes   out[i] = index of the best rule matching key i (or kNoMatch), as the maximum over
 *            class tables of core::tuple_lookup<NW, kBloom>(table, key).
 * Algorithm  src/classify/core/tuple_core.hpp, shared with cpu/tuple_cpu.cpp. Do not fork.
 * Launch     grid (tables, key chunks of kChunk), kBlockSize threads: a block copies its class
 *            table's slots and Bloom filter to shared memory (classes of more than 256 values
 *            are split so a table fits, GSwitch Table 2), then probes its chunk's keys.
 *            A second kernel turns the per-key 64-bit maxima into rule indices.
 * Memory     keys: device global SoA (word w of key i at w * n + i), coalesced. best: one
 *            uint64 per key, 64-bit atomicMax of order_key() (exact priorities and indices).
 *            Tables: one device allocation per class table, a device array of their views.
 * Updates    the touched class tables are uploaded, a new view array is built and published
 *            by pointer swap; the old one (and tables no longer used) are freed after
 *            ReadGuard::synchronize(). classify() holds a reader section until its copy-out.
 * Tested by  tests/classify/tuple_test.cpp and engines_test.cpp (vs the oracle), where a GPU is.
 */
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <memory>
#include <mutex>

#include "classify/core/tuple_core.hpp"
#include "classify/cuda/key_io.cuh"
#include "classify/engines.hpp"
#include "classify/tuple_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"
#include "warpath/core/read_guard.hpp"

namespace warpath::classify::detail {
namespace {

constexpr int kBlockSize      = 256;
constexpr uint32_t kChunk     = 8192;       // keys per block
constexpr size_t kSharedLimit = 48 * 1024;  // default dynamic shared memory per block

// Tables of up to 256 values fit the limit unless cuckoo insertion had to grow one, so the
// global-memory kernels rarely run: WARPATH_CUDA_TUPLE_SHARED_LIMIT (bytes; 0: never shared)
// lowers the limit so the GPU checks run them too (scripts/gpu-check.sh).
size_t shared_limit() {
  static const size_t limit = [] {
    const char* env = std::getenv("WARPATH_CUDA_TUPLE_SHARED_LIMIT");
    return env && *env ? std::min<size_t>(std::strtoull(env, nullptr, 10), kSharedLimit)
                       : kSharedLimit;
  }();
  return limit;
}

template <unsigned NW, bool kBloom, bool kShared>
__global__ void __launch_bounds__(kBlockSize)
    tuple_kernel(const core::TupleTable* __restrict__ views, const uint32_t* __restrict__ keys,
                 uint32_t n, unsigned long long* __restrict__ best) {
  extern __shared__ uint32_t shared[];
  const core::TupleTable t = views[blockIdx.x];
  const uint32_t* slots    = t.slots;
  const uint32_t* bloom    = t.bloom;
  if (kShared) {  // Algorithm 4 lines 1-3 (Algorithm 5 lines 1-4)
    const uint32_t sw = core::table_slot_words(NW, t.log2d);
    for (uint32_t i = threadIdx.x; i < sw; i += kBlockSize) shared[i] = t.slots[i];
    if constexpr (kBloom) {
      const uint32_t bw = core::bloom_words(t.bloom_shift);
      for (uint32_t i = threadIdx.x; i < bw; i += kBlockSize) shared[sw + i] = t.bloom[i];
    }
    __syncthreads();
    slots = shared;
    bloom = shared + sw;
  }
  // The block's chunks of keys (gridDim.y is capped at 65,535: a block may take several), in
  // 64-bit arithmetic so batches near 2^32 keys do not wrap.
  const uint64_t chunks = (uint64_t(n) + kChunk - 1) / kChunk;
  for (uint64_t c = blockIdx.y; c < chunks; c += gridDim.y) {
    const uint64_t end = min(uint64_t(n), (c + 1) * kChunk);
    for (uint64_t i = c * kChunk + threadIdx.x; i < end; i += kBlockSize) {
      uint32_t key[NW];
      for (unsigned w = 0; w < NW; ++w) key[w] = keys[size_t(w) * n + i];  // READSOA
      const uint64_t found = core::tuple_lookup<NW, kBloom>(t, slots, bloom, key);
      if (found != 0 && found > best[i]) atomicMax(&best[i], (unsigned long long)found);
    }
  }
}

__global__ void finish_kernel(const unsigned long long* __restrict__ best,
                              uint32_t* __restrict__ out, uint32_t n) {
  for (const uint32_t i : grid_stride(n)) out[i] = core::order_index(best[i]);
}

// One class table in device memory; view points there.
struct DeviceTable {
  core::TupleTable view{};
  uint32_t* mem = nullptr;
  size_t bytes  = 0;
  ~DeviceTable() {
    if (mem) cudaFree(mem);
  }
};

struct DeviceVersion {
  std::vector<std::shared_ptr<DeviceTable>> tables;
  core::TupleTable* views = nullptr;
  size_t shared_bytes     = 0;  ///< the largest table's slots + filter
  ~DeviceVersion() {
    if (views) cudaFree(views);
  }
};

class TupleCuda final : public Classifier {
 public:
  TupleCuda(KeyLayout layout, bool bloom, uint64_t seed)
      : set_(layout, seed, core::kGpuTableEntries), bloom_(bloom) {}
  ~TupleCuda() override { delete current_.load(); }

  Status init(const RuleSet& rules) {
    WARPATH_TRY(set_.add_all(rules));
    WARPATH_ASSIGN_OR_RETURN(auto v, make_device_version());
    current_.store(v.release());
    return Status::ok();
  }

  std::string_view id() const noexcept override { return bloom_ ? "cuda.bloom" : "cuda.tuple"; }
  bool takes_device_memory() const noexcept override { return true; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != set_.layout())
      return Status(Errc::kInvalidArgument, std::string(id()) + ": key layout differs from rules");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    const unsigned nw = key_words(keys.layout);
    auto stream       = static_cast<cudaStream_t>(ctx.stream);
    // A deferred resident call (exec.hpp) holds the version until its caller saw the stream
    // finish (read_guard.hpp: holds); any other call reads it within a section.
    const ReadGuard::Scope scope(guard_, ctx.resident ? ctx.keep : nullptr);
    const DeviceVersion& v = *current_.load(std::memory_order_acquire);
    auto lease             = scratch_.acquire_shared();  // this call's device buffers
    auto& scratch          = *lease;                     // (scratch_pool.cuh)
    KeyIo::defer(ctx, {lease});
    DeviceArray& best_     = scratch[1];
    KeyIo io;  // the caller's device memory (resident) or the scratch (key_io.cuh)
    WARPATH_TRY(io.begin(keys, out, nw, ctx.resident, scratch[0], scratch[2], stream));
    const uint32_t* d_keys = io.keys();
    WARPATH_TRY(best_.reserve(size_t(n) * 8));
    auto* best = static_cast<unsigned long long*>(best_.ptr);
    WARPATH_CUDA_TRY(cudaMemsetAsync(best, 0, size_t(n) * 8, stream));
    if (!v.tables.empty()) {
      const dim3 grid(uint32_t(v.tables.size()),
                      uint32_t(std::min<uint64_t>((uint64_t(n) + kChunk - 1) / kChunk, 65535)));
      const bool shared  = v.shared_bytes <= shared_limit();
      const size_t smem  = shared ? v.shared_bytes : 0;
      if (nw == 4) {
        launch<4>(grid, smem, stream, shared, v.views, d_keys, n, best);
      } else {
        launch<9>(grid, smem, stream, shared, v.views, d_keys, n, best);
      }
      WARPATH_CUDA_CHECK_LAUNCH();
    }
    const uint32_t blocks = std::min<uint32_t>(n / kBlockSize + 1, 1024);
    finish_kernel<<<blocks, kBlockSize, 0, stream>>>(best, io.out(), n);
    WARPATH_CUDA_CHECK_LAUNCH();
    return io.finish(stream, ctx);
  }

  Status insert(uint32_t index, const Rule& rule) override {
    std::lock_guard<std::mutex> lock(mutex_);
    WARPATH_TRY(set_.insert(index, rule));
    return publish();
  }
  Status erase(uint32_t index) override {
    std::lock_guard<std::mutex> lock(mutex_);
    WARPATH_TRY(set_.erase(index));
    return publish();
  }

  ClassifierStats stats() const override {
    std::lock_guard<std::mutex> lock(mutex_);
    ClassifierStats s      = set_.stats();
    const DeviceVersion* v = current_.load();
    for (const auto& t : v->tables) s.memory_bytes += t->bytes;
    s.memory_bytes += v->tables.size() * sizeof(core::TupleTable);
    char buf[96];
    std::snprintf(buf, sizeof buf, "expansion %.2fx, %zu GPU tables (<= %u values)",
                  s.rules ? double(s.entries) / double(s.rules) : 0.0, v->tables.size(),
                  core::kGpuTableEntries);
    s.detail = buf;
    return s;
  }

 private:
  template <unsigned NW>
  void launch(dim3 grid, size_t smem, cudaStream_t stream, bool shared,
              const core::TupleTable* views, const uint32_t* keys, uint32_t n,
              unsigned long long* best) const {
    if (bloom_) {
      if (shared) {
        tuple_kernel<NW, true, true><<<grid, kBlockSize, smem, stream>>>(views, keys, n, best);
      } else {
        tuple_kernel<NW, true, false><<<grid, kBlockSize, 0, stream>>>(views, keys, n, best);
      }
    } else if (shared) {
      tuple_kernel<NW, false, true><<<grid, kBlockSize, smem, stream>>>(views, keys, n, best);
    } else {
      tuple_kernel<NW, false, false><<<grid, kBlockSize, 0, stream>>>(views, keys, n, best);
    }
  }

  // Writer: device tables for the set's current tables (uploading only new ones) and a new
  // view array.
  Result<std::unique_ptr<DeviceVersion>> make_device_version() {
    auto v            = std::make_unique<DeviceVersion>();
    const unsigned nw = key_words(set_.layout());
    std::map<TablePtr, std::shared_ptr<DeviceTable>> keep;
    std::vector<core::TupleTable> views;
    for (const TablePtr& host : set_.tables()) {
      std::shared_ptr<DeviceTable> dev;
      if (auto it = uploaded_.find(host); it != uploaded_.end()) {
        dev = it->second;
      } else {
        dev             = std::make_shared<DeviceTable>();
        const size_t sw = host->slots.size(), bw = host->bloom.size();
        dev->bytes = (sw + bw) * 4;
        WARPATH_CUDA_TRY(cudaMalloc(&dev->mem, dev->bytes));
        WARPATH_CUDA_TRY(cudaMemcpy(dev->mem, host->slots.data(), sw * 4, cudaMemcpyHostToDevice));
        WARPATH_CUDA_TRY(
            cudaMemcpy(dev->mem + sw, host->bloom.data(), bw * 4, cudaMemcpyHostToDevice));
        dev->view       = host->view;
        dev->view.slots = dev->mem;
        dev->view.bloom = dev->mem + sw;
      }
      const size_t need = size_t(core::table_slot_words(nw, dev->view.log2d)) * 4 +
                          (bloom_ ? size_t(core::bloom_words(dev->view.bloom_shift)) * 4 : 0);
      v->shared_bytes = std::max(v->shared_bytes, need);
      keep[host]      = dev;
      v->tables.push_back(dev);
      views.push_back(dev->view);
    }
    if (!views.empty()) {
      WARPATH_CUDA_TRY(cudaMalloc(&v->views, views.size() * sizeof(core::TupleTable)));
      WARPATH_CUDA_TRY(cudaMemcpy(v->views, views.data(), views.size() * sizeof(core::TupleTable),
                                  cudaMemcpyHostToDevice));
    }
    uploaded_ = std::move(keep);
    WARPATH_CUDA_UPLOADS_LANDED();  // before publish() swaps it in
    return Result<std::unique_ptr<DeviceVersion>>(std::move(v));
  }

  Status publish() {
    WARPATH_ASSIGN_OR_RETURN(auto v, make_device_version());
    DeviceVersion* old = current_.exchange(v.release(), std::memory_order_acq_rel);
    guard_.synchronize();
    delete old;
    return Status::ok();
  }

  TupleClassSet set_;
  bool bloom_;
  std::atomic<DeviceVersion*> current_{nullptr};
  std::map<TablePtr, std::shared_ptr<DeviceTable>> uploaded_;
  ReadGuard guard_;
  mutable std::mutex mutex_;
  ScratchPool<3> scratch_;
};

}  // namespace

Made make_cuda_tuple(const RuleSet& rules, const ClassifyParams& params, bool bloom) {
  int device = 0;
  WARPATH_CUDA_TRY(cudaGetDevice(&device));
  auto engine = std::make_unique<TupleCuda>(rules.layout, bloom, params.seed);
  WARPATH_TRY(engine->init(rules));
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace warpath::classify::detail
