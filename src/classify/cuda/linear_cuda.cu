/*
 * src/classify/cuda/linear_cuda.cu: cuda.linear, GSwitch linear search (section 4.1,
 * Algorithm 1) on the GPU.
 *
 * Computes   out[i] = order[min over rule chunks c of core::linear_first_serial(chunk c, key i)]
 *            for i in [0, n): the first matching rule in image order, which is sorted by
 *            (priority desc, index asc), so the smallest image position is the exact answer.
 * Algorithm  src/classify/core/linear_core.hpp, shared with cpu/linear_cpu.cpp. Do not fork.
 * Exactness  GSwitch atomicMaxes a packed (8-bit priority, 24-bit index) word per key. Here a
 *            32-bit atomicMin of the image *position* orders 32-bit priorities and 32-bit
 *            indices exactly (the sort did the comparison), and is half of order_key()'s 64 bits.
 * Launch     linear_kernel: 2-D grid. y = chunks of kChunkBlocks blocks (256 rules), strided
 *            when there are more than 65535 chunks; x = tiles of kBlockSize keys, one key per
 *            thread, strided past 2^31 - 1 tiles. kBlockSize = 256 threads with
 *            __launch_bounds__(256, 8): 2048 threads per SM (100% occupancy on sm_80/sm_90 at
 *            <= 32 registers) and <= 20 KiB shared memory per block (8 blocks: 160 KiB).
 *            Blocks start x-fastest, so chunk 0 runs for every key tile before chunk 1: a thread
 *            whose key already has a match in an earlier chunk (best[i] < chunk start) skips
 *            the chunk, which is GSwitch's early exit across thread blocks.
 *            answer_kernel: 1-D grid-stride, best position -> RuleSet index.
 * Memory     The image (blocks + order) is uploaded once, at construction. Per call: the keys
 *            (SoA rows, copied 2-D from the host KeyBatch stride to a dense device pitch),
 *            best[] (memset to 0xFF), out[]; buffers grow to the largest batch and are leased
 *            per call (scratch_pool.cuh), so calls on different streams overlap. A chunk's
 *            blocks are staged in shared memory (coalesced); each warp then reads one rule field
 *            at a time, the same address for all lanes (broadcast).
 * Sync       classify() copies in, launches, copies out and waits on ctx.stream.
 * Tested by  tests/classify/engines_test.cpp (vs ref.linear, where a GPU is present) and
 *            tests/classify/linear_test.cpp (the core bodies on the host).
 */
#include <algorithm>
#include <chrono>
#include <mutex>
#include <vector>

#include "classify/core/linear_core.hpp"
#include "classify/cuda/key_io.cuh"
#include "classify/engines.hpp"
#include "classify/linear_image.hpp"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda/scratch_pool.cuh"

namespace warpath::classify::detail {

namespace {

using core::kLinearLanes;
using core::kLinearNone;

constexpr int kBlockSize              = 256;
constexpr int kMinBlocksPerSm         = 8;   // 2048 threads per SM
constexpr uint32_t kChunkBlocks       = 16;  // 256 rules per chunk
constexpr uint32_t kMaxGridY          = 65535;
constexpr uint32_t kMaxGridX          = 0x7FFF'FFFFu;
constexpr uint32_t kAnswerBlocksPerSm = 8;

// NW active words and R port ranges are template parameters so that the key stays in
// registers (a runtime count puts LinearKey in local memory).
template <int NW, int R>
__global__ void __launch_bounds__(kBlockSize, kMinBlocksPerSm)
    linear_kernel(core::LinearView v, const uint32_t* __restrict__ keys, uint32_t n,
                  uint32_t* __restrict__ best) {
  extern __shared__ uint32_t stage[];
  const uint32_t bw = v.layout.block_words(), blocks = v.block_count();
  const uint32_t chunks = (blocks + kChunkBlocks - 1) / kChunkBlocks;
  for (uint32_t c = blockIdx.y; c < chunks; c += gridDim.y) {
    const uint32_t b0    = c * kChunkBlocks;
    const uint32_t nb    = min(kChunkBlocks, blocks - b0);
    const uint32_t* src  = v.blocks + size_t(b0) * bw;
    const uint32_t first = b0 * kLinearLanes;
    // Skip the chunk (and its staging) when every key of this block has a match before it.
    // A stale read of best[] only costs work: best[] only decreases.
    bool need = false;
    for (const uint32_t i : grid_stride(n))
      if ((need = *static_cast<volatile const uint32_t*>(best + i) >= first)) break;
    if (!__syncthreads_or(need)) continue;  // also: the previous chunk's readers are done
    for (uint32_t t = threadIdx.x; t < nb * bw; t += kBlockSize) stage[t] = src[t];
    __syncthreads();
    core::LinearView chunk = v;
    chunk.blocks           = stage;
    chunk.rules            = v.rules - b0 * kLinearLanes;  // lanes past it are padding
    for (const uint32_t i : grid_stride(n)) {
      if (*static_cast<volatile const uint32_t*>(best + i) < first) continue;
      const core::LinearKey k = core::linear_key<NW>(v.layout, keys, n, i);
      const uint32_t pos      = core::linear_first_serial<NW, R>(chunk, k, 0, nb);
      if (pos != kLinearNone) atomicMin(best + i, first + pos);
    }
  }
}

__global__ void __launch_bounds__(kBlockSize)
    answer_kernel(core::LinearView v, const uint32_t* __restrict__ best, uint32_t* __restrict__ out,
                  uint32_t n) {
  for (const uint32_t i : grid_stride(n)) out[i] = core::linear_answer(v, best[i]);
}

using KernelFn = void (*)(core::LinearView, const uint32_t*, uint32_t, uint32_t*);

template <int R>
KernelFn pick_kernel(uint32_t words) {
  switch (words) {
    case 0:
      return &linear_kernel<0, R>;
    case 1:
      return &linear_kernel<1, R>;
    case 2:
      return &linear_kernel<2, R>;
    case 3:
      return &linear_kernel<3, R>;
    case 4:
      return &linear_kernel<4, R>;
    case 5:
      return &linear_kernel<5, R>;
    case 6:
      return &linear_kernel<6, R>;
    case 7:
      return &linear_kernel<7, R>;
    case 8:
      return &linear_kernel<8, R>;
    default:
      return &linear_kernel<9, R>;
  }
}

class LinearCuda final : public Classifier {
 public:
  explicit LinearCuda(KeyLayout layout) : layout_(layout) {}

  Status init(const RuleSet& rules) {
    const auto t0 = std::chrono::steady_clock::now();
    std::vector<uint32_t> order, storage;
    const core::LinearView host = build_linear_image(rules, order, storage);
    const size_t image          = size_t(host.block_count()) * host.layout.block_words();
    WARPATH_TRY(blocks_.reserve(std::max<size_t>(image, 1) * sizeof(uint32_t)));
    WARPATH_TRY(order_.reserve(std::max<size_t>(order.size(), 1) * sizeof(uint32_t)));
    if (image)
      WARPATH_CUDA_TRY(
          cudaMemcpy(blocks_.ptr, host.blocks, image * sizeof(uint32_t), cudaMemcpyHostToDevice));
    if (!order.empty())
      WARPATH_CUDA_TRY(cudaMemcpy(order_.ptr, order.data(), order.size() * sizeof(uint32_t),
                                  cudaMemcpyHostToDevice));
    WARPATH_CUDA_UPLOADS_LANDED();  // before a lane's stream reads them
    view_ = {host.layout, blocks_.as<uint32_t>(), order_.as<uint32_t>(), host.rules};
    kernel_ =
        host.layout.ranges ? pick_kernel<1>(host.layout.words) : pick_kernel<0>(host.layout.words);
    sms_                = sm_count();  // the one SM-count helper (grid_stride.cuh)
    stats_.rules        = rules.rules.size();
    stats_.entries      = rules.rules.size();
    stats_.memory_bytes = (image + order.size()) * sizeof(uint32_t);
    stats_.build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    stats_.detail = std::to_string(host.rules) + " live rules in " +
                    std::to_string(host.block_count()) + " blocks, chunks of " +
                    std::to_string(kChunkBlocks * kLinearLanes) + " rules in shared memory";
    return Status::ok();
  }

  std::string_view id() const noexcept override { return "cuda.linear"; }
  bool takes_device_memory() const noexcept override { return true; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, "cuda.linear: key layout differs from the rules'");
    const uint32_t n = keys.count;
    if (n == 0) return Status::ok();
    auto stream = static_cast<cudaStream_t>(ctx.stream);
    if (view_.rules == 0) {
      static_assert(kNoMatch == 0xFFFF'FFFFu, "the memset writes kNoMatch");
      if (ctx.resident) {
        WARPATH_CUDA_TRY(cudaMemsetAsync(out.data, 0xFF, size_t(n) * sizeof(uint32_t), stream));
        if (!ctx.keep) WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));  // deferred: queued only
      } else {
        std::fill(out.data, out.data + n, kNoMatch);
      }
      return Status::ok();
    }
    const unsigned words = key_words(layout_);
    auto lease           = scratch_.acquire_shared();  // this call's device buffers
    auto& scratch        = *lease;                     // (scratch_pool.cuh)
    KeyIo::defer(ctx, {lease});
    DeviceArray& best_   = scratch[1];
    KeyIo io;  // the caller's device memory (resident) or the scratch (key_io.cuh)
    WARPATH_TRY(io.begin(keys, out, words, ctx.resident, scratch[0], scratch[2], stream));
    WARPATH_TRY(best_.reserve(size_t(n) * sizeof(uint32_t)));
    WARPATH_CUDA_TRY(cudaMemsetAsync(best_.ptr, 0xFF, size_t(n) * sizeof(uint32_t), stream));
    const uint32_t chunks = (view_.block_count() + kChunkBlocks - 1) / kChunkBlocks;
    const dim3 grid(std::min<uint32_t>(n / kBlockSize + 1, kMaxGridX), std::min(chunks, kMaxGridY));
    const size_t shared = size_t(kChunkBlocks) * view_.layout.block_words() * sizeof(uint32_t);
    kernel_<<<grid, kBlockSize, shared, stream>>>(view_, io.keys(), n, best_.as<uint32_t>());
    WARPATH_CUDA_CHECK_LAUNCH();
    const uint32_t answer_blocks =
        std::min<uint32_t>(n / kBlockSize + 1, kAnswerBlocksPerSm * uint32_t(sms_));
    answer_kernel<<<answer_blocks, kBlockSize, 0, stream>>>(view_, best_.as<uint32_t>(), io.out(),
                                                            n);
    WARPATH_CUDA_CHECK_LAUNCH();
    return io.finish(stream, ctx);
  }

  ClassifierStats stats() const override { return stats_; }

 private:
  KeyLayout layout_;
  int sms_ = 1;
  DeviceArray blocks_, order_;
  core::LinearView view_;
  KernelFn kernel_ = nullptr;
  ClassifierStats stats_;
  ScratchPool<3> scratch_;
};

}  // namespace

Made make_cuda_linear(const RuleSet& rules, const ClassifyParams& params) {
  (void)params;
  auto engine = std::make_unique<LinearCuda>(rules.layout);
  WARPATH_TRY(engine->init(rules));
  return std::unique_ptr<Classifier>(std::move(engine));
}

}  // namespace warpath::classify::detail
