// include/warpath/core/span.hpp
//
// A POD span usable on host and device. std::span is not available in device code with every
// nvcc dialect, and core headers must not depend on the STL, so engines pass Span<T> views
// of arrays that live in host or device memory. A Span does not own its memory.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath {

template <class T>
struct Span {
  T* data       = nullptr;
  uint32_t size = 0;

  WARPATH_HD T& operator[](uint32_t i) const { return data[i]; }
  WARPATH_HD T* begin() const { return data; }
  WARPATH_HD T* end() const { return data + size; }
  WARPATH_HD bool empty() const { return size == 0; }
  WARPATH_HD Span subspan(uint32_t offset, uint32_t count) const {
    return Span{data + offset, count};
  }
};

/// Where the memory behind a view lives. Engines check it once per batch.
enum class MemSpace : uint8_t { kHost, kPinned, kDevice };

}  // namespace warpath
