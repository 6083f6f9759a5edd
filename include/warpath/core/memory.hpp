// include/warpath/core/memory.hpp
//
// Host buffers that may be pinned (page-locked) for fast, asynchronous copies to a GPU.
//
// HostBuffer is a move-only owning byte buffer. With MemSpace::kPinned it is allocated with
// cudaMallocHost when CUDA is built in and a device is present, and otherwise falls back to
// ordinary 64-byte-aligned memory (space() then reports kHost). Packet batches keep their cells
// and metadata in HostBuffers so a CUDA engine can copy them without a staging copy.
#pragma once
#include <cstddef>
#include <cstdint>

#include "warpath/core/span.hpp"

namespace warpath {

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
