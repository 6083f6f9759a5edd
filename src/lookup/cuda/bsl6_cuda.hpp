// src/lookup/cuda/bsl6_cuda.hpp: the IPv6 binary-search-on-lengths image on a GPU.
//
//   Bsl6Device            a device mirror of a Bsl6Image: the same starts, nodes and buckets,
//   copied
//                         once to device memory; view() has device pointers. Freed by the
//                         destructor. Immutable, so any number of streams may read it.
//   launch_bsl6_lookup    out[i] = core::bsl6_lookup(view, addrs[i]), one thread per address
//                         (grid-stride), asynchronous on `stream` (a cudaStream_t as void*).
//
// A plain C++ header (no CUDA header) for the Fib engines; defined in bsl6_kernel.cu, which is
// compiled only in CUDA builds. Errors: kCudaError with the failing call and file:line.
#pragma once
#include <cstdint>
#include <memory>

#include "lookup/bsl6_image.hpp"
#include "lookup/core/bsl6_core.hpp"
#include "warpath/core/status.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup::detail {

class Bsl6Device {
 public:
  /// Allocates device memory on the current device and copies `image` into it (synchronous).
  static Result<std::unique_ptr<Bsl6Device>> upload(const Bsl6Image& image);
  ~Bsl6Device();
  Bsl6Device(const Bsl6Device&)            = delete;
  Bsl6Device& operator=(const Bsl6Device&) = delete;

  /// The image with device pointers; valid while this object lives.
  core::Bsl6View view() const noexcept { return view_; }
  /// Device bytes held (starts, nodes and buckets).
  uint64_t memory_bytes() const noexcept { return bytes_; }

 private:
  Bsl6Device() = default;
  core::Bsl6View view_{};
  void* starts_   = nullptr;
  void* nodes_    = nullptr;
  void* buckets_  = nullptr;
  uint64_t bytes_ = 0;
};

/// Queues out[i] = core::bsl6_lookup(dev, d_addrs[i]) for i in [0, n) on `stream`. `dev` is a
/// Bsl6Device view; d_addrs and d_out are device pointers. n == 0 launches nothing.
Status launch_bsl6_lookup(const core::Bsl6View& dev, const Ip6* d_addrs, NextHop* d_out, uint32_t n,
                          void* stream);

}  // namespace warpath::lookup::detail
