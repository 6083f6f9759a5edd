// src/openflow/cuda/flowtable_kernel.cu: cuda.flowtable, the switch's flow table on the GPU:
// the image's hash tables copied to the device, one thread per key running the per-key body of
// openflow/core/flow_hash_core.hpp (the CPU engine's, without its staging): the exact-match
// table, then the subtables best first until none can beat what the key has.
#include <cuda_runtime.h>

#include <cstring>
#include <mutex>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "openflow/cuda/flowtable_launch.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/openflow/flow_lookup.hpp"

namespace warpath::openflow::detail {
namespace {

constexpr int kBlockSize = 256;

__global__ void flowtable_kernel(const DeviceTable* tables, uint32_t count, bool has_exact,
                                 const uint64_t* ranks, const packet::OfTuple* keys, uint32_t n,
                                 uint32_t* ids) {
  for (const uint32_t i : grid_stride(n)) {
    const packet::OfTuple key = keys[i];
    uint32_t out              = kNoFlow;
    uint64_t best             = 0;
    uint32_t t                = 0;
    if (has_exact) {
      const core::HashView& v  = tables[0].view;
      const packet::OfTuple mk = core::apply_mask(key, v.mask);
      const uint32_t f         = core::probe(v, mk, core::hash_key(mk));
      if (f != core::kMiss) {
        ids[i] = f;  // exact beats every subtable
        continue;
      }
    }
    for (t = 1; t < count; ++t) {
      if (best >= tables[t].max_rank) break;  // ranked: no later subtable can win
      const core::HashView& v  = tables[t].view;
      const packet::OfTuple mk = core::apply_mask(key, v.mask);
      const uint32_t f         = core::probe(v, mk, core::hash_key(mk));
      if (f != core::kMiss && ranks[f] > best) {
        best = ranks[f];
        out  = f;
      }
    }
    ids[i] = out;
  }
}

int blocks_for(uint32_t n) { return grid_blocks(n, kBlockSize); }

class Uploaded final : public DeviceImage {
 public:
  Status init(const FlowImage& image) {
    if (image.incremental())
      return Status(Errc::kInvalidArgument, "cuda.flowtable takes full images (FlowImage::build)");
    const std::vector<FlowImage::TableData> t = image.tables();
    has_exact_ = t[0].slots > 0;
    std::vector<DeviceTable> host(t.size());
    for (size_t k = 0; k < 2 * t.size(); ++k) arrays_.push_back(std::make_unique<DeviceArray>());
    for (size_t k = 0; k < t.size(); ++k) {
      DeviceArray& b  = *arrays_[2 * k];
      DeviceArray& r  = *arrays_[2 * k + 1];
      const size_t bb = sizeof(core::Bucket) * t[k].bucket_count;
      WARPATH_TRY(b.reserve(bb));
      WARPATH_TRY(r.reserve(sizeof(core::Record) * (t[k].slots ? t[k].slots : 1)));
      WARPATH_CUDA_TRY(cudaMemcpy(b.ptr, t[k].buckets, bb, cudaMemcpyHostToDevice));
      if (t[k].slots)
        WARPATH_CUDA_TRY(cudaMemcpy(r.ptr, t[k].records, sizeof(core::Record) * t[k].slots,
                                    cudaMemcpyHostToDevice));
      host[k].view = {b.as<core::Bucket>(), t[k].bucket_count - 1, r.as<core::Record>(), t[k].mask};
      host[k].max_rank = t[k].max_rank;
    }
    count_ = uint32_t(t.size());
    WARPATH_TRY(tables_.reserve(sizeof(DeviceTable) * host.size()));
    WARPATH_CUDA_TRY(cudaMemcpy(tables_.ptr, host.data(), sizeof(DeviceTable) * host.size(), cudaMemcpyHostToDevice));
    const std::vector<uint64_t>& r = image.ranks();
    WARPATH_TRY(ranks_.reserve(sizeof(uint64_t) * (r.empty() ? 1 : r.size())));
    if (!r.empty())
      WARPATH_CUDA_TRY(cudaMemcpy(ranks_.ptr, r.data(), sizeof(uint64_t) * r.size(), cudaMemcpyHostToDevice));
    return Status::ok();
  }
  const DeviceTable* tables() const noexcept override { return tables_.as<DeviceTable>(); }
  uint32_t table_count() const noexcept override { return count_; }
  bool has_exact() const noexcept override { return has_exact_; }
  const uint64_t* ranks() const noexcept override { return ranks_.as<uint64_t>(); }

 private:
  std::vector<std::unique_ptr<DeviceArray>> arrays_;
  DeviceArray tables_, ranks_;
  uint32_t count_ = 0;
  bool has_exact_ = false;
};

class CudaFlowTable final : public FlowLookup {
 public:
  explicit CudaFlowTable(std::shared_ptr<const FlowImage> image) : image_(std::move(image)) {}
  std::string_view id() const noexcept override { return "cuda.flowtable"; }
  Status init() {
    WARPATH_ASSIGN_OR_RETURN(device_, DeviceImage::upload(*image_));
    return Status::ok();
  }
  Status do_lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const override {
    if (keys.size == 0) return Status::ok();
    std::lock_guard<std::mutex> g(lock_);  // one set of buffers per engine
    WARPATH_TRY(d_keys_.reserve(sizeof(packet::OfTuple) * keys.size));
    WARPATH_TRY(d_ids_.reserve(sizeof(uint32_t) * keys.size));
    WARPATH_CUDA_TRY(cudaMemcpy(d_keys_.ptr, keys.data, sizeof(packet::OfTuple) * keys.size, cudaMemcpyHostToDevice));
    WARPATH_TRY(launch_flowtable(*device_, d_keys_.as<packet::OfTuple>(), keys.size, d_ids_.as<uint32_t>(), nullptr));
    WARPATH_CUDA_TRY(cudaMemcpy(ids.data, d_ids_.ptr, sizeof(uint32_t) * keys.size, cudaMemcpyDeviceToHost));
    return Status::ok();
  }

 private:
  std::shared_ptr<const FlowImage> image_;
  std::unique_ptr<DeviceImage> device_;
  mutable std::mutex lock_;
  mutable DeviceArray d_keys_, d_ids_;
};

}  // namespace

Result<std::unique_ptr<DeviceImage>> DeviceImage::upload(const FlowImage& image) {
  auto u = std::make_unique<Uploaded>();
  WARPATH_TRY(u->init(image));
  return std::unique_ptr<DeviceImage>(std::move(u));
}

Status launch_flowtable(const DeviceImage& image, const packet::OfTuple* keys, uint32_t n, uint32_t* ids,
                        void* stream) {
  if (n == 0) return Status::ok();
  flowtable_kernel<<<blocks_for(n), kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(
      image.tables(), image.table_count(), image.has_exact(), image.ranks(), keys, n, ids);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<FlowLookup>> make_cuda_flow(std::shared_ptr<const FlowImage> image) {
  if (cuda_device_count() == 0)
    return Status(Errc::kNotSupported, "cuda.flowtable needs a CUDA device: none found");
  auto e = std::make_unique<CudaFlowTable>(std::move(image));
  WARPATH_TRY(e->init());
  return std::unique_ptr<FlowLookup>(std::move(e));
}

}  // namespace warpath::openflow::detail
