// src/core/huge_pages.hpp: memory for big tables, 2 MB aligned and marked for transparent huge
// pages from 2 MB on, so a table of tens of megabytes costs a handful of TLB entries instead of
// thousands (with 4 KB pages, random lookups into such a table wait on page walks as much as on
// the lines). Advice only: without THP the memory is ordinary. Smaller arrays come from the
// ordinary allocator.
#pragma once
#include <sys/mman.h>

#include <cstdlib>
#include <memory>
#include <new>
#include <vector>

namespace warpath::detail {

template <class T>
struct HugePageAllocator {
  using value_type    = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  static constexpr size_t kHuge = size_t(2) << 20;
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return std::allocator<T>().allocate(n);
    const size_t rounded = (bytes + kHuge - 1) / kHuge * kHuge;
    void* p              = std::aligned_alloc(kHuge, rounded);
    if (!p) throw std::bad_alloc();
    (void)madvise(p, rounded, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHuge)
      std::allocator<T>().deallocate(p, n);
    else
      std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept {
    return true;
  }
};

/// A vector whose storage is on huge pages once it reaches 2 MB.
template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace warpath::detail
