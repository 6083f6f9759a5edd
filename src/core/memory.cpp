#include "warpath/core/memory.hpp"

#include <cstdlib>
#include <cstring>
#include <utility>

#include "core/cuda_host.hpp"

namespace warpath {

HostBuffer::HostBuffer(size_t bytes, MemSpace want) {
  if (bytes == 0) return;
  if (want == MemSpace::kPinned) {
    if (void* p = detail::cuda_host_alloc(bytes)) {
      data_  = static_cast<uint8_t*>(p);
      space_ = MemSpace::kPinned;
    }
  }
  if (!data_) {
    const size_t rounded = (bytes + 63) / 64 * 64;
    data_                = static_cast<uint8_t*>(std::aligned_alloc(64, rounded));
    space_               = MemSpace::kHost;
  }
  if (data_) {
    std::memset(data_, 0, bytes);
    bytes_ = bytes;
  }
}

HostBuffer::~HostBuffer() { release(); }

HostBuffer::HostBuffer(HostBuffer&& other) noexcept
    : data_(std::exchange(other.data_, nullptr)),
      bytes_(std::exchange(other.bytes_, 0)),
      space_(other.space_) {}

HostBuffer& HostBuffer::operator=(HostBuffer&& other) noexcept {
  if (this != &other) {
    release();
    data_  = std::exchange(other.data_, nullptr);
    bytes_ = std::exchange(other.bytes_, 0);
    space_ = other.space_;
  }
  return *this;
}

// A 64-byte header before the data says which allocator it came from.
namespace {
constexpr size_t kPinnedHeader = 64;
}

void* alloc_pinned(size_t bytes) noexcept {
  const size_t total = bytes + kPinnedHeader;
  void* p            = detail::cuda_host_alloc(total);
  const bool pinned  = p != nullptr;
  if (!p)
    p = std::aligned_alloc(kPinnedHeader,
                           (total + kPinnedHeader - 1) / kPinnedHeader * kPinnedHeader);
  if (!p) return nullptr;
  *static_cast<bool*>(p) = pinned;
  return static_cast<char*>(p) + kPinnedHeader;
}

void free_pinned(void* data) noexcept {
  if (!data) return;
  char* p = static_cast<char*>(data) - kPinnedHeader;
  if (*reinterpret_cast<const bool*>(p))
    detail::cuda_host_free(p);
  else
    std::free(p);
}

void HostBuffer::release() noexcept {
  if (!data_) return;
  if (space_ == MemSpace::kPinned)
    detail::cuda_host_free(data_);
  else
    std::free(data_);
  data_  = nullptr;
  bytes_ = 0;
}

}  // namespace warpath
