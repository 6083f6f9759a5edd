// src/core/pinned_buffer.hpp: a growing buffer of page-locked host memory, the staging area of
// engines that gather their items, copy them to the GPU in one copy and back (cuda.esp,
// cuda.ctr). No CUDA header.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>

#include "core/cuda_host.hpp"
#include "warpath/core/status.hpp"

namespace warpath::detail {

class PinnedBuffer {
 public:
  PinnedBuffer()                               = default;
  PinnedBuffer(const PinnedBuffer&)            = delete;
  PinnedBuffer& operator=(const PinnedBuffer&) = delete;
  ~PinnedBuffer() { cuda_host_free(ptr_); }

  /// At least `bytes` (the contents are not kept when it grows); kOutOfMemory naming `who`.
  Status reserve(size_t bytes, const char* who) {
    if (bytes <= bytes_) return Status::ok();
    void* p = cuda_host_alloc(bytes);
    if (!p)
      return Status(Errc::kOutOfMemory,
                    std::string(who) + ": pinned staging of " + std::to_string(bytes) + " bytes");
    cuda_host_free(ptr_);
    ptr_   = p;
    bytes_ = bytes;
    return Status::ok();
  }
  uint8_t* get() const noexcept { return static_cast<uint8_t*>(ptr_); }

 private:
  void* ptr_    = nullptr;
  size_t bytes_ = 0;
};

}  // namespace warpath::detail
