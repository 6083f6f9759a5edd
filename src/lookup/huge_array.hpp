// src/lookup/huge_array.hpp: the allocation behind the IPv4 lookup images.
#pragma once
#include <cstddef>

namespace warpath::lookup::detail {

/// Memory from a 2 MiB-aligned allocation, advised to use transparent huge pages: a random
/// lookup then costs a cache miss but rarely a TLB miss.
struct HugeArray {
  void* data   = nullptr;
  size_t bytes = 0;
  HugeArray()  = default;
  explicit HugeArray(size_t n_bytes);
  HugeArray(HugeArray&& o) noexcept : data(o.data), bytes(o.bytes) { o.data = nullptr; }
  HugeArray& operator=(HugeArray&& o) noexcept;
  ~HugeArray();
};

}  // namespace warpath::lookup::detail
