/*
 * src/pattern/cuda/dfa_kernel.cu: cuda.dfa, regex matching with search DFAs on the GPU.
 *
 * Computes   every (pattern id, end offset) of the DFA groups in each block of a batch; the
 *            patterns no DFA takes run on the fallback matcher on the CPU, as in cpu.dfa.
 * Algorithm  src/pattern/core/dfa_core.hpp (dfa_scan), shared with cpu.dfa. Do not fork.
 * Launch     one thread per (block, group): a regex match has no length bound, so a block is
 *            not sliced (unlike cuda.ac). 1-D grid-stride, kBlockSize threads per block.
 * Memory     every group's tables in global memory (copied once) and their views in an array;
 *            the batch's bytes and block offsets copied per call; matches appended to a global
 *            buffer with one atomic counter.
 * Overflow   more matches than the buffer holds (a 64-bit count): the batch is rescanned on
 *            the host with the same body, never lost.
 * Streams    on the host, as cpu.dfa (a stream's bytes arrive a few at a time).
 * Tested by  warpath selftest (src/pattern/pattern_registry.cpp: every engine against ref.pattern).
 */
#include <algorithm>
#include <vector>

#include "core/cuda/grid_stride.cuh"
#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "pattern/cuda/dfa_launch.hpp"
#include "pattern/dfa_image.hpp"
#include "pattern/engines.hpp"
#include "pattern/matches.hpp"
#include "warpath/core/memory.hpp"

namespace warpath::pattern::detail {
namespace {

constexpr int kBlockSize = 128;

__global__ void __launch_bounds__(kBlockSize)
    dfa_kernel(const core::DfaView* __restrict__ views, uint32_t groups, const uint8_t* __restrict__ data,
               const uint64_t* __restrict__ starts, uint32_t blocks, DeviceMatch* out,
               uint32_t capacity, unsigned long long* count) {
  const uint64_t n = uint64_t(blocks) * groups;
  for (uint64_t t = uint64_t(blockIdx.x) * kBlockSize + threadIdx.x; t < n; t += uint64_t(gridDim.x) * kBlockSize) {
    const uint32_t b = uint32_t(t / groups), g = uint32_t(t % groups);
    const core::DfaView v = views[g];
    const uint64_t begin = starts[b], end = starts[b + 1];
    core::dfa_scan(v, v.start, data + begin, 0, end - begin, 0, [&](uint32_t id, uint64_t at) {
      const unsigned long long k = atomicAdd(count, 1ull);
      if (k < capacity) out[k] = DeviceMatch{b, id, uint32_t(at)};
    });
  }
}


class DfaCudaMatcher final : public Matcher {
 public:
  explicit DfaCudaMatcher(std::unique_ptr<Matcher> host)
      : host_(std::move(host)), set_(dfa_set_of(*host_)), rest_(dfa_fallback_of(*host_)) {}
  std::string_view id() const noexcept override { return "cuda.dfa"; }
  size_t patterns() const override { return host_->patterns(); }
  size_t database_bytes() const override { return host_->database_bytes(); }

  Status upload() {
    if (set_.groups.empty()) return Status::ok();
    for (size_t k = 0; k < set_.groups.size(); ++k) tables_.push_back(std::make_unique<Tables>());
    std::vector<core::DfaView> views;
    for (size_t k = 0; k < set_.groups.size(); ++k) {
      const DfaGroup& g = set_.groups[k];
      Tables& t         = *tables_[k];
      auto put = [](DeviceArray& d, const void* src, size_t bytes) -> Status {
        WARPATH_TRY(d.reserve(std::max<size_t>(bytes, 4)));
        if (bytes) WARPATH_CUDA_TRY(cudaMemcpy(d.ptr, src, bytes, cudaMemcpyHostToDevice));
        return Status::ok();
      };
      WARPATH_TRY(put(t.classes, g.classes, 256));
      WARPATH_TRY(put(t.next, g.next.data(), g.next.size() * 4));
      WARPATH_TRY(put(t.accept_begin, g.accept_begin.data(), g.accept_begin.size() * 4));
      WARPATH_TRY(put(t.accepts, g.accepts.data(), g.accepts.size() * 4));
      core::DfaView v = g.view();
      v.classes       = t.classes.as<uint8_t>();
      v.next          = t.next.as<uint32_t>();
      v.accept_begin  = t.accept_begin.as<uint32_t>();
      v.accepts       = t.accepts.as<uint32_t>();
      views.push_back(v);
    }
    WARPATH_TRY(d_views_.reserve(views.size() * sizeof(core::DfaView)));
    WARPATH_CUDA_TRY(cudaMemcpy(d_views_.ptr, views.data(), views.size() * sizeof(core::DfaView),
                                cudaMemcpyHostToDevice));
    return Status::ok();
  }

  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    return scan_as_batch(*this, data, len, out);
  }

  Status scan_blocks(const Block* blocks, uint32_t n, std::vector<Match>* out) override {
    for (uint32_t i = 0; i < n; ++i) out[i].clear();
    if (n == 0) return Status::ok();
    const uint32_t groups = uint32_t(set_.groups.size());
    if (groups > 0) {
      bytes_.clear();
      starts_.assign(1, 0);
      for (uint32_t i = 0; i < n; ++i) {
        bytes_.insert(bytes_.end(), blocks[i].data, blocks[i].data + blocks[i].len);
        starts_.push_back(bytes_.size());
      }
      const uint32_t capacity = uint32_t(std::min<size_t>(std::max<size_t>(bytes_.size(), 4096), 1u << 26));
      WARPATH_TRY(d_data_.reserve(std::max<size_t>(bytes_.size(), 1)));
      WARPATH_TRY(d_starts_.reserve(starts_.size() * 8));
      WARPATH_TRY(d_matches_.reserve(size_t(capacity) * sizeof(DeviceMatch)));
      WARPATH_TRY(d_count_.reserve(8));
      cudaStream_t stream = nullptr;
      if (!bytes_.empty())
        WARPATH_CUDA_TRY(cudaMemcpyAsync(d_data_.ptr, bytes_.data(), bytes_.size(), cudaMemcpyHostToDevice, stream));
      WARPATH_CUDA_TRY(cudaMemcpyAsync(d_starts_.ptr, starts_.data(), starts_.size() * 8, cudaMemcpyHostToDevice, stream));
      WARPATH_CUDA_TRY(cudaMemsetAsync(d_count_.ptr, 0, 8, stream));
      WARPATH_TRY(launch_dfa_scan(d_views_.as<core::DfaView>(), groups, d_data_.as<uint8_t>(),
                                  d_starts_.as<uint64_t>(), n, d_matches_.as<DeviceMatch>(), capacity,
                                  d_count_.as<unsigned long long>(), stream));
      unsigned long long count = 0;
      WARPATH_CUDA_TRY(cudaMemcpyAsync(&count, d_count_.ptr, 8, cudaMemcpyDeviceToHost, stream));
      WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
      if (count > capacity) return host_->scan_blocks(blocks, n, out);  // nothing is lost
      matches_.resize(count);
      if (count)
        WARPATH_CUDA_TRY(cudaMemcpy(matches_.data(), d_matches_.ptr, count * sizeof(DeviceMatch), cudaMemcpyDeviceToHost));
      for (const DeviceMatch& m : matches_) out[m.block].push_back({m.id, m.end});
    }
    for (uint32_t i = 0; i < n; ++i) {
      for (const DfaGroup& g : set_.groups)
        for (uint32_t id : g.empty_at_start) out[i].push_back({id, 0});
      if (rest_) WARPATH_TRY(rest_->scan(blocks[i].data, blocks[i].len, out[i]));
      sort_unique(out[i], 0);
      std::vector<uint32_t> reported;
      keep_first_of(set_.single_match, out[i], 0, reported);
    }
    return Status::ok();
  }

  Result<std::unique_ptr<Stream>> open_stream() override { return host_->open_stream(); }

 private:
  struct Tables {
    DeviceArray classes, next, accept_begin, accepts;
  };
  std::unique_ptr<Matcher> host_;  ///< cpu.dfa on the same patterns: groups, fallback, streams, overflow
  const DfaSet& set_;              ///< host_'s groups
  Matcher* rest_;                  ///< host_'s fallback for the patterns no DFA takes (or null)
  std::vector<std::unique_ptr<Tables>> tables_;
  DeviceArray d_views_, d_data_, d_starts_, d_matches_, d_count_;
  PinnedVector<uint8_t> bytes_;  // staging in page-locked memory (warpath/core/memory.hpp)
  PinnedVector<uint64_t> starts_;
  PinnedVector<DeviceMatch> matches_;
};

}  // namespace

Status launch_dfa_scan(const core::DfaView* views, uint32_t groups, const uint8_t* data,
                       const uint64_t* starts, uint32_t blocks, DeviceMatch* out,
                       uint32_t capacity, unsigned long long* count, void* stream) {
  const uint64_t threads = uint64_t(blocks) * groups;
  if (threads == 0) return Status::ok();
  static const int sms = sm_count();
  const uint32_t grid = uint32_t(std::min<uint64_t>((threads + kBlockSize - 1) / kBlockSize, uint64_t(32) * sms));
  dfa_kernel<<<grid, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(views, groups, data, starts, blocks,
                                                                          out, capacity, count);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<Matcher>> make_dfa_cuda_matcher(const std::vector<Pattern>& patterns) {
  auto host = make_dfa_cpu_matcher(patterns);
  if (!host.is_ok()) return host.status();
  auto m = std::make_unique<DfaCudaMatcher>(std::move(*host));
  WARPATH_TRY(m->upload());
  return std::unique_ptr<Matcher>(std::move(m));
}

}  // namespace warpath::pattern::detail
