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

inline constexpr size_t kHugePage = size_t(2) << 20;

/// `bytes` rounded up to whole 2 MiB pages, 2 MiB aligned and advised to use transparent huge
/// pages (free with std::free); null when out of memory.
inline void* huge_alloc(size_t bytes) {
  const size_t rounded = (bytes + kHugePage - 1) / kHugePage * kHugePage;
  void* p              = std::aligned_alloc(kHugePage, rounded ? rounded : kHugePage);
  if (p) (void)madvise(p, rounded ? rounded : kHugePage, MADV_HUGEPAGE);
  return p;
}

template <class T>
struct HugePageAllocator {
  using value_type    = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  T* allocate(size_t n) {
    if (n * sizeof(T) < kHugePage) return std::allocator<T>().allocate(n);
    void* p = huge_alloc(n * sizeof(T));
    if (!p) throw std::bad_alloc();
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHugePage)
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
