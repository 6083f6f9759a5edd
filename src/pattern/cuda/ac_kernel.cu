/*
 * src/pattern/cuda/ac_kernel.cu: cuda.ac, Aho-Corasick literal matching on the GPU.
 *
 * Computes   every (literal id, end offset) in each block of a batch (pattern.hpp semantics).
 * Algorithm  src/pattern/core/ac_core.hpp (ac_scan), shared with cpu.ac. Do not fork.
 * Launch     one thread per slice of kSlice bytes of a block; a slice starts max_len - 1 bytes
 *            early (warm-up, no reports) so matches crossing slice edges are found once, by
 *            the slice they end in. 1-D grid-stride, kBlockSize threads per block.
 * Memory     the automaton in global memory (copied once); the batch's bytes and slice table
 *            copied per call; matches appended to a global buffer with one atomic counter.
 * Overflow   more matches than the buffer holds (a 64-bit count): the batch is rescanned on
 *            the host with the same body, never lost.
 * Streams    kept on the host (state and history between writes, as cpu.ac): a stream's bytes
 *            arrive a few at a time, the GPU gains only on batches of blocks.
 * Tested by  warpath selftest (src/pattern/pattern_registry.cpp: every engine against ref.pattern).
 */
#include <algorithm>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "pattern/ac_image.hpp"
#include "pattern/cuda/ac_launch.hpp"
#include "pattern/engines.hpp"
#include "pattern/matches.hpp"
#include "warpath/core/memory.hpp"

namespace warpath::pattern::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void __launch_bounds__(kBlockSize)
    ac_kernel(core::AcView v, const uint8_t* __restrict__ data, const AcSlice* __restrict__ slices,
              uint32_t n, DeviceMatch* out, uint32_t capacity, unsigned long long* count) {
  for (const uint32_t t : grid_stride(n)) {
    const AcSlice s     = slices[t];
    const uint64_t warm = s.begin - s.block_start >= v.max_len - 1 ? s.begin - (v.max_len - 1)
                                                                   : s.block_start;
    auto at   = [data, &s](uint64_t pos) { return data[s.block_start + pos]; };
    auto emit = [&](uint32_t id, uint64_t end) {
      const unsigned long long k = atomicAdd(count, 1ull);
      if (k < capacity) out[k] = DeviceMatch{s.block, id, uint32_t(end)};
    };
    // Offsets relative to the block: base = -block_start, expressed through the data pointer.
    core::ac_scan(v, 0, data + s.block_start, warm - s.block_start, s.end - s.block_start, 0,
                  s.begin - s.block_start, at, emit);
  }
}


class AcCudaMatcher final : public Matcher {
 public:
  explicit AcCudaMatcher(std::unique_ptr<Matcher> host)
      : host_(std::move(host)), img_(ac_image_of(*host_)) {}
  std::string_view id() const noexcept override { return "cuda.ac"; }
  size_t patterns() const override { return host_->patterns(); }
  size_t database_bytes() const override { return img_.bytes(); }

  Status upload() {
    auto put = [](DeviceArray& d, const void* src, size_t bytes) -> Status {
      WARPATH_TRY(d.reserve(std::max<size_t>(bytes, 1)));
      if (bytes) WARPATH_CUDA_TRY(cudaMemcpy(d.ptr, src, bytes, cudaMemcpyHostToDevice));
      return Status::ok();
    };
    WARPATH_TRY(put(d_classes_, img_.classes, 256));
    WARPATH_TRY(put(d_next_, img_.next.data(), img_.next.size() * 4));
    WARPATH_TRY(put(d_out_begin_, img_.out_begin.data(), img_.out_begin.size() * 4));
    WARPATH_TRY(put(d_out_link_, img_.out_link.data(), img_.out_link.size() * 4));
    WARPATH_TRY(put(d_outputs_, img_.outputs.data(), img_.outputs.size() * sizeof(core::AcOutput)));
    WARPATH_TRY(put(d_literals_, img_.literals.data(), img_.literals.size()));
    WARPATH_TRY(put(d_sparse_begin_, img_.sparse_begin.data(), img_.sparse_begin.size() * 4));
    WARPATH_TRY(put(d_sparse_class_, img_.sparse_class.data(), img_.sparse_class.size()));
    WARPATH_TRY(put(d_sparse_next_, img_.sparse_next.data(), img_.sparse_next.size() * 4));
    WARPATH_TRY(put(d_fail_, img_.fail.data(), img_.fail.size() * 4));
    dview_           = img_.view();
    dview_.classes   = d_classes_.as<uint8_t>();
    dview_.next      = d_next_.as<uint32_t>();
    dview_.out_begin = d_out_begin_.as<uint32_t>();
    dview_.out_link  = d_out_link_.as<uint32_t>();
    dview_.outputs   = d_outputs_.as<core::AcOutput>();
    dview_.literals  = d_literals_.as<uint8_t>();
    dview_.sparse_begin = d_sparse_begin_.as<uint32_t>();
    dview_.sparse_class = d_sparse_class_.as<uint8_t>();
    dview_.sparse_next  = d_sparse_next_.as<uint32_t>();
    dview_.fail         = d_fail_.as<uint32_t>();
    return Status::ok();
  }

  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    return scan_as_batch(*this, data, len, out);
  }

  Status scan_blocks(const Block* blocks, uint32_t n, std::vector<Match>* out) override {
    for (uint32_t i = 0; i < n; ++i) out[i].clear();
    bytes_.clear();
    slices_.clear();
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t start = bytes_.size();
      bytes_.insert(bytes_.end(), blocks[i].data, blocks[i].data + blocks[i].len);
      for (uint64_t b = 0; b < blocks[i].len; b += kAcSlice)
        slices_.push_back(AcSlice{i, start, start + b, start + std::min<uint64_t>(b + kAcSlice, blocks[i].len)});
    }
    if (slices_.empty()) return Status::ok();
    const uint32_t capacity = uint32_t(std::min<size_t>(std::max<size_t>(bytes_.size() / 4, 4096), 1u << 26));
    WARPATH_TRY(d_data_.reserve(bytes_.size()));
    WARPATH_TRY(d_slices_.reserve(slices_.size() * sizeof(AcSlice)));
    WARPATH_TRY(d_matches_.reserve(size_t(capacity) * sizeof(DeviceMatch)));
    WARPATH_TRY(d_count_.reserve(sizeof(unsigned long long)));
    cudaStream_t stream = nullptr;
    WARPATH_CUDA_TRY(cudaMemcpyAsync(d_data_.ptr, bytes_.data(), bytes_.size(), cudaMemcpyHostToDevice, stream));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(d_slices_.ptr, slices_.data(), slices_.size() * sizeof(AcSlice),
                                     cudaMemcpyHostToDevice, stream));
    WARPATH_CUDA_TRY(cudaMemsetAsync(d_count_.ptr, 0, sizeof(unsigned long long), stream));
    WARPATH_TRY(launch_ac_scan(dview_, d_data_.as<uint8_t>(), d_slices_.as<AcSlice>(),
                               uint32_t(slices_.size()), d_matches_.as<DeviceMatch>(), capacity,
                               d_count_.as<unsigned long long>(), stream));
    unsigned long long count = 0;
    WARPATH_CUDA_TRY(cudaMemcpyAsync(&count, d_count_.ptr, sizeof count, cudaMemcpyDeviceToHost, stream));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    if (count > capacity) {  // rescan on the host: nothing is lost
      return host_->scan_blocks(blocks, n, out);
    }
    matches_.resize(count);
    WARPATH_CUDA_TRY(cudaMemcpy(matches_.data(), d_matches_.ptr, count * sizeof(DeviceMatch), cudaMemcpyDeviceToHost));
    for (const DeviceMatch& m : matches_) out[m.block].push_back({m.id, m.end});
    for (uint32_t i = 0; i < n; ++i) {
      sort_unique(out[i], 0);
      std::vector<uint32_t> reported;
      keep_first_of(img_.single_match, out[i], 0, reported);
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Stream>> open_stream() override { return host_->open_stream(); }

 private:
  std::unique_ptr<Matcher> host_;  ///< cpu.ac on the same literals: the automaton, streams, overflow
  const AcImage& img_;             ///< host_'s
  core::AcView dview_;
  DeviceArray d_classes_, d_next_, d_out_begin_, d_out_link_, d_outputs_, d_literals_;
  DeviceArray d_sparse_begin_, d_sparse_class_, d_sparse_next_, d_fail_;
  DeviceArray d_data_, d_slices_, d_matches_, d_count_;
  PinnedVector<uint8_t> bytes_;  // staging in page-locked memory (warpath/core/memory.hpp)
  PinnedVector<AcSlice> slices_;
  PinnedVector<DeviceMatch> matches_;
};

}  // namespace

Status launch_ac_scan(const core::AcView& device_view, const uint8_t* data, const AcSlice* slices,
                      uint32_t n, DeviceMatch* out, uint32_t capacity, unsigned long long* count, void* stream) {
  if (n == 0) return Status::ok();
  static const int sms = sm_count();
  const uint32_t grid  = std::min<uint32_t>(n / kBlockSize + 1, uint32_t(32 * sms));
  ac_kernel<<<grid, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(device_view, data, slices, n,
                                                                        out, capacity, count);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<Matcher>> make_ac_cuda_matcher(const std::vector<Pattern>& patterns) {
  auto host = make_ac_cpu_matcher(patterns);
  if (!host.is_ok()) return host.status();
  auto m = std::make_unique<AcCudaMatcher>(std::move(*host));
  WARPATH_TRY(m->upload());
  return std::unique_ptr<Matcher>(std::move(m));
}

}  // namespace warpath::pattern::detail
