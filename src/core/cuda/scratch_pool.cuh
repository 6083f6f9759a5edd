// src/core/cuda/scratch_pool.cuh: per-call device scratch for CUDA engines.
//
// An engine's call needs a few device buffers (keys in, intermediate, answers out). Sharing
// one set behind a mutex would serialise every caller, so two threads on two streams (the
// pipeline's master lanes) could never overlap one's copies with the other's kernel. Instead a
// call leases a set from the pool for its duration: concurrent calls get distinct sets, a pool
// grows to the number of calls ever in flight at once (two or three in practice), and buffers
// keep the size of the largest batch they served. Only .cu files include this header.
#pragma once
#include <array>
#include <cstddef>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda/device_array.cuh"

namespace warpath {

template <size_t N>
class ScratchPool {
 public:
  using Set = std::array<DeviceArray, N>;

  class Lease {
   public:
    Lease(const ScratchPool& pool, std::unique_ptr<Set> set) : pool_(&pool), set_(std::move(set)) {}
    Lease(const Lease&)            = delete;
    Lease& operator=(const Lease&) = delete;
    ~Lease() { pool_->give_back(std::move(set_)); }
    DeviceArray& operator[](size_t i) { return (*set_)[i]; }

   private:
    const ScratchPool* pool_;
    std::unique_ptr<Set> set_;
  };

  /// A set no other call is using (a new, empty one when all are taken).
  Lease acquire() const { return Lease(*this, take()); }
  /// The same for a call that may return before its kernels finish (ExecContext::keep, a
  /// deferred resident call): the set goes back when the last holder lets go of it.
  std::shared_ptr<Lease> acquire_shared() const { return std::make_shared<Lease>(*this, take()); }

 private:
  std::unique_ptr<Set> take() const {
    std::lock_guard<std::mutex> lock(mu_);
    if (free_.empty()) return std::make_unique<Set>();
    std::unique_ptr<Set> s = std::move(free_.back());
    free_.pop_back();
    return s;
  }
  void give_back(std::unique_ptr<Set> s) const {
    std::lock_guard<std::mutex> lock(mu_);
    free_.push_back(std::move(s));
  }
  mutable std::mutex mu_;
  mutable std::vector<std::unique_ptr<Set>> free_;
};

}  // namespace warpath
