// src/lookup/huge_array.cpp
#include "lookup/huge_array.hpp"

#include <sys/mman.h>

#include <cstdlib>
#include <new>

namespace warpath::lookup::detail {
namespace {

constexpr size_t kHuge = size_t(2) << 20;

}  // namespace

HugeArray::HugeArray(size_t n_bytes) {
  bytes = (n_bytes + kHuge - 1) / kHuge * kHuge;
  if (bytes == 0) bytes = kHuge;
  data = std::aligned_alloc(kHuge, bytes);
  if (!data) throw std::bad_alloc();
  ::madvise(data, bytes, MADV_HUGEPAGE);  // advice only: works without THP too
}

HugeArray& HugeArray::operator=(HugeArray&& o) noexcept {
  if (this != &o) {
    std::free(data);
    data   = o.data;
    bytes  = o.bytes;
    o.data = nullptr;
  }
  return *this;
}

HugeArray::~HugeArray() { std::free(data); }

}  // namespace warpath::lookup::detail
