/*
 * src/ipsec/cuda/ctr_kernel.cu: cuda.ctr, AES-CTR over byte ranges on the GPU (flow-aes's crypto,
 * GASPP's AES application: the CtrCipher contract, ipsec.hpp).
 *
 * Computes   each range XORed in place with its keystream from a 128-bit counter block, `skip`
 *            bytes into the first block.
 * Algorithm  src/ipsec/core/crypto_core.hpp (aes_ctr_range, aes_expand), checked on the host
 *            against OpenSSL by tests/ipsec. Do not fork.
 * Launch     one thread per range, kBlockSize threads per block; each block first builds the
 *            AES S-box in shared memory (one entry per thread).
 * Keys       expanded on the host when added (aes_expand); the schedules of keys added or
 *            dropped since the last call go up in one copy and a scatter kernel, the whole set
 *            only when the device array grows.
 * Memory     the ranges are gathered into one pinned staging buffer, copied up, processed,
 *            copied down and scattered back.
 * Next       a thread per 16-byte block for long ranges (cuda.esp's next step too).
 * Tested by  warpath selftest (check_ctr_engine: ranges of 0-1,500 bytes from any byte of a
 *            block, counters about to wrap, batches of 0, 1, lane edges and 300), on a GPU.
 */
#include <cstring>
#include <memory>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/pinned_buffer.hpp"
#include "ipsec/core/crypto_core.hpp"
#include "ipsec/cuda/ctr_launch.hpp"
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

constexpr int kBlockSize = 128;

__global__ void __launch_bounds__(kBlockSize)
    ctr_kernel(const core::AesKey* __restrict__ keys, uint8_t* data,
               const CtrDeviceOp* __restrict__ ops, uint32_t n) {
  __shared__ core::AesTable table;
  core::aes_table_build_block(table);
  for (const uint32_t t : grid_stride(n)) {
    const CtrDeviceOp op = ops[t];
    core::aes_ctr_range(keys[op.key], table, op.counter, op.skip, data + op.offset, op.len);
  }
}

// Keys added or dropped since the last call: (handle, schedule) pairs written into place.
struct KeyUpdate {
  uint32_t handle;
  core::AesKey key;
};
__global__ void scatter_keys(const KeyUpdate* __restrict__ updates, uint32_t n,
                             core::AesKey* keys) {
  for (const uint32_t t : grid_stride(n)) keys[updates[t].handle] = updates[t].key;
}

int blocks_for(uint32_t n) { return grid_blocks(n, kBlockSize); }

class CudaCtr final : public CtrCipher {
 public:
  std::string_view id() const noexcept override { return "cuda.ctr"; }
  bool live(uint32_t h) const noexcept override { return keys_.slots.live(h); }
  void drop_key(uint32_t h) override {
    if (!keys_.slots.live(h)) return;
    keys_.slots.drop(h);  // its schedule zeroed here, and on the device with the next call
    dirty_.push_back(h);
  }

 protected:
  Result<uint32_t> do_add_key(const uint8_t* key, uint32_t bytes) override {
    const uint32_t h = keys_.add(key, bytes);
    dirty_.push_back(h);
    return h;
  }

  Status do_apply(Span<const CtrOp> ops) override {
    WARPATH_TRY(sync_keys());
    if (ops.size == 0) return Status::ok();
    dops_.resize(ops.size);
    size_t total = 0;
    for (uint32_t k = 0; k < ops.size; ++k) {
      CtrDeviceOp& d = dops_[k];
      d.offset       = uint32_t(total);
      d.len          = ops[k].len;
      d.key          = ops[k].key;
      d.skip         = ops[k].skip;
      std::memcpy(d.counter, ops[k].counter, 16);
      total += (size_t(ops[k].len) + 15) / 16 * 16;
    }
    WARPATH_TRY(staging_.reserve(total ? total : 16, "cuda.ctr"));
    for (uint32_t k = 0; k < ops.size; ++k)
      if (ops[k].len) std::memcpy(staging_.get() + dops_[k].offset, ops[k].data, ops[k].len);
    WARPATH_TRY(d_data_.reserve(total ? total : 16));
    WARPATH_TRY(d_ops_.reserve(sizeof(CtrDeviceOp) * ops.size));
    if (total)
      WARPATH_CUDA_TRY(cudaMemcpy(d_data_.ptr, staging_.get(), total, cudaMemcpyHostToDevice));
    WARPATH_CUDA_TRY(cudaMemcpy(d_ops_.ptr, dops_.data(), sizeof(CtrDeviceOp) * ops.size,
                                cudaMemcpyHostToDevice));
    WARPATH_TRY(launch_ctr(d_keys_.as<core::AesKey>(), d_data_.as<uint8_t>(),
                           d_ops_.as<CtrDeviceOp>(), ops.size, nullptr));
    if (total)
      WARPATH_CUDA_TRY(cudaMemcpy(staging_.get(), d_data_.ptr, total, cudaMemcpyDeviceToHost));
    for (uint32_t k = 0; k < ops.size; ++k)
      if (ops[k].len) std::memcpy(ops[k].data, staging_.get() + dops_[k].offset, ops[k].len);
    return Status::ok();
  }

 private:
  // The device's schedules made equal to the host's: the changed ones, or all of them into a
  // larger array.
  Status sync_keys() {
    const std::vector<core::AesKey>& values = keys_.slots.values;
    const size_t n                          = values.size();
    if (sizeof(core::AesKey) * n > d_keys_.bytes) {
      WARPATH_TRY(d_keys_.reserve(sizeof(core::AesKey) * n));  // a new array: everything goes up
      WARPATH_CUDA_TRY(
          cudaMemcpy(d_keys_.ptr, values.data(), sizeof(core::AesKey) * n, cudaMemcpyHostToDevice));
      dirty_.clear();
      return Status::ok();
    }
    if (dirty_.empty()) return Status::ok();
    updates_.resize(dirty_.size());
    for (size_t i = 0; i < dirty_.size(); ++i) updates_[i] = {dirty_[i], values[dirty_[i]]};
    WARPATH_TRY(d_updates_.reserve(sizeof(KeyUpdate) * updates_.size()));
    WARPATH_CUDA_TRY(cudaMemcpy(d_updates_.ptr, updates_.data(),
                                sizeof(KeyUpdate) * updates_.size(), cudaMemcpyHostToDevice));
    scatter_keys<<<blocks_for(uint32_t(updates_.size())), kBlockSize>>>(
        d_updates_.as<KeyUpdate>(), uint32_t(updates_.size()), d_keys_.as<core::AesKey>());
    WARPATH_CUDA_TRY(cudaGetLastError());
    dirty_.clear();
    return Status::ok();
  }

  CoreKeys keys_;
  std::vector<uint32_t> dirty_;
  std::vector<KeyUpdate> updates_;
  std::vector<CtrDeviceOp> dops_;
  DeviceArray d_keys_, d_updates_, d_data_, d_ops_;
  warpath::detail::PinnedBuffer staging_;
};

}  // namespace

Status launch_ctr(const core::AesKey* keys, uint8_t* data, const CtrDeviceOp* ops, uint32_t n,
                  void* stream) {
  if (n == 0) return Status::ok();
  ctr_kernel<<<blocks_for(n), kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(keys, data, ops,
                                                                                  n);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<CtrCipher>> make_cuda_ctr() {
  return std::unique_ptr<CtrCipher>(std::make_unique<CudaCtr>());
}

}  // namespace warpath::ipsec::detail
