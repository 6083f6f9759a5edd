// src/core/pinned_vector.hpp: std::vector over page-locked host memory, for the staging that
// CUDA engines copy to and from the device.
//
// A copy between a device and pageable memory goes through the driver's own bounce buffer: it
// is synchronous with the host, and slower than from page-locked memory (about half the PCIe
// bandwidth on the machines measured by CUDA's bandwidthTest). An engine's own staging vectors
// (gathered bytes, slices, matches, keys and hashes coming back) are therefore PinnedVectors.
// Without a device (or when cudaMallocHost fails) the allocator falls back to ordinary memory,
// so the same code runs in CPU-only builds. Allocation is slow (cudaMallocHost maps pages):
// reserve, and let vectors keep their capacity between calls.
#pragma once
#include <cstddef>
#include <new>
#include <vector>

#include "core/cuda_host.hpp"

namespace warpath::detail {

template <class T>
struct PinnedAllocator {
  using value_type           = T;
  PinnedAllocator() noexcept = default;
  template <class U>
  PinnedAllocator(const PinnedAllocator<U>&) noexcept {}  // NOLINT: rebinding converts

  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T) + kHeader;
    void* p            = cuda_host_alloc(bytes);
    const bool pinned  = p != nullptr;
    if (!p) p = ::operator new(bytes, std::align_val_t(kHeader));
    *static_cast<bool*>(p) = pinned;  // the header says how to free it
    return reinterpret_cast<T*>(static_cast<char*>(p) + kHeader);
  }
  void deallocate(T* t, size_t) noexcept {
    char* p = reinterpret_cast<char*>(t) - kHeader;
    if (*reinterpret_cast<const bool*>(p)) {
      cuda_host_free(p);
    } else {
      ::operator delete(p, std::align_val_t(kHeader));
    }
  }
  template <class U>
  bool operator==(const PinnedAllocator<U>&) const noexcept {
    return true;
  }

 private:
  static constexpr size_t kHeader = 64;  ///< keeps the data 64-byte aligned
};

template <class T>
using PinnedVector = std::vector<T, PinnedAllocator<T>>;

}  // namespace warpath::detail
