// include/warpath/core/memory.hpp
//
// Host buffers that may be pinned (page-locked) for fast, asynchronous copies to a GPU.
//
// HostBuffer is a move-only owning byte buffer. With MemSpace::kPinned it is allocated with
// cudaMallocHost when CUDA is built in and a device is present, and otherwise falls back to
// ordinary 64-byte-aligned memory (space() then reports kHost). Packet batches keep their cells
// and metadata in HostBuffers so a CUDA engine can copy them without a staging copy.
//
// PinnedVector<T> is a std::vector in the same memory, for staging that grows: the arrays a
// tool or an engine copies to and from a device. A copy between a device and pageable memory
// goes through the driver's own bounce buffer, synchronously and at a fraction of the PCIe
// bandwidth, so whatever crosses to a GPU should live in one of these. Allocating pinned memory
// is slow (it maps pages): reserve, and keep vectors between calls.
#pragma once
#include <cstddef>
#include <cstdint>
#include <new>
#include <vector>

#include "warpath/core/span.hpp"

namespace warpath {

/// `bytes` of page-locked memory where a CUDA device is present (else ordinary memory), 64-byte
/// aligned; nullptr when out of memory. Release with free_pinned.
void* alloc_pinned(size_t bytes) noexcept;
void free_pinned(void* p) noexcept;

template <class T>
struct PinnedAllocator {
  using value_type           = T;
  PinnedAllocator() noexcept = default;
  template <class U>
  PinnedAllocator(const PinnedAllocator<U>&) noexcept {}  // NOLINT: rebinding converts
  T* allocate(size_t n) {
    if (void* p = alloc_pinned(n * sizeof(T))) return static_cast<T*>(p);
    throw std::bad_alloc();
  }
  void deallocate(T* p, size_t) noexcept { free_pinned(p); }
  template <class U>
  bool operator==(const PinnedAllocator<U>&) const noexcept {
    return true;
  }
};

template <class T>
using PinnedVector = std::vector<T, PinnedAllocator<T>>;

class HostBuffer {
 public:
  HostBuffer() = default;
  /// Allocates `bytes` zeroed bytes; an empty buffer if allocation fails (check data()).
  HostBuffer(size_t bytes, MemSpace want);
  ~HostBuffer();
  HostBuffer(HostBuffer&& other) noexcept;
  HostBuffer& operator=(HostBuffer&& other) noexcept;
  HostBuffer(const HostBuffer&)            = delete;
  HostBuffer& operator=(const HostBuffer&) = delete;

  uint8_t* data() const noexcept { return data_; }
  size_t bytes() const noexcept { return bytes_; }
  MemSpace space() const noexcept { return space_; }

 private:
  void release() noexcept;
  uint8_t* data_  = nullptr;
  size_t bytes_   = 0;
  MemSpace space_ = MemSpace::kHost;
};

}  // namespace warpath
