// src/classify/cuda/key_io.cuh: where a CUDA classifier's call finds its keys and leaves its
// answers on the device. A resident call (ExecContext::resident: the offload master uploaded
// them) uses the caller's device memory as it is; otherwise the key columns are copied into the
// call's scratch back to back, and finish() copies the answers out. finish() waits for the
// stream (an engine completes before returning) except on a deferred resident call
// (ExecContext::keep: the offload master's asynchronous launches), where it hands what the
// queued kernels still use to the caller instead. Only .cu files include this header.
#pragma once
#include <cuda_runtime.h>

#include <initializer_list>
#include <memory>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/exec.hpp"

namespace warpath::classify::detail {

class KeyIo {
 public:
  /// `words` key columns of keys.count keys; `keys_scratch` and `out_scratch` are used only
  /// when the call is not resident.
  Status begin(const KeyBatch& keys, Span<uint32_t> out, unsigned words, bool resident,
               DeviceArray& keys_scratch, DeviceArray& out_scratch, cudaStream_t stream) {
    n_    = keys.count;
    host_ = resident ? nullptr : out.data;
    if (resident) {
      keys_ = keys.words;
      out_  = out.data;
      return Status::ok();
    }
    WARPATH_TRY(keys_scratch.reserve(size_t(n_) * words * sizeof(uint32_t)));
    WARPATH_TRY(out_scratch.reserve(size_t(n_) * sizeof(uint32_t)));
    WARPATH_CUDA_TRY(cudaMemcpy2DAsync(keys_scratch.ptr, size_t(n_) * sizeof(uint32_t), keys.words,
                                       size_t(keys.stride) * sizeof(uint32_t),
                                       size_t(n_) * sizeof(uint32_t), words, cudaMemcpyHostToDevice,
                                       stream));
    keys_ = keys_scratch.as<uint32_t>();
    out_  = out_scratch.as<uint32_t>();
    return Status::ok();
  }
  const uint32_t* keys() const noexcept { return keys_; }  ///< column w of key i at [w * n + i]
  uint32_t* out() const noexcept { return out_; }
  /// On a deferred resident call (ExecContext::keep), hands `held` (the call's scratch lease,
  /// a hold of its tables, its image) to the caller before anything is queued, so that they
  /// outlive the kernels even when the call fails after queuing some (the caller waits for
  /// the stream before letting go of them).
  static void defer(ExecContext& ctx, std::initializer_list<std::shared_ptr<void>> held) {
    if (ctx.resident && ctx.keep) ctx.keep->insert(ctx.keep->end(), held.begin(), held.end());
  }
  /// The answers to the caller (a copy unless resident), then the wait; none on a deferred
  /// resident call (defer()).
  Status finish(cudaStream_t stream, const ExecContext& ctx) const {
    if (host_)
      WARPATH_CUDA_TRY(cudaMemcpyAsync(host_, out_, size_t(n_) * sizeof(uint32_t),
                                       cudaMemcpyDeviceToHost, stream));
    if (!host_ && ctx.keep) return Status::ok();
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

 private:
  uint32_t n_           = 0;
  const uint32_t* keys_ = nullptr;
  uint32_t* out_        = nullptr;
  uint32_t* host_       = nullptr;  ///< where finish copies the answers (not resident)
};

}  // namespace warpath::classify::detail
