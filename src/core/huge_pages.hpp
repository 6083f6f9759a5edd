// src/core/huge_pages.hpp: memory for big tables, 2 MB aligned and marked for transparent huge
// pages from 2 MB on, so a table of tens of megabytes costs a handful of TLB entries instead of
// thousands (with 4 KB pages, random lookups into such a table wait on page walks as much as on
// the lines). Advice only: without THP the memory is ordinary. Smaller arrays come from the
// ordinary allocator.
#pragma once
#include <sys/mman.h>

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <memory>
#include <new>
#include <type_traits>
#include <utility>
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

/// A fixed array of `n` value-initialised (zero) elements of a trivial type on fresh anonymous
/// pages, 2 MB aligned and advised for huge pages before any is touched: the kernel's zero
/// pages are the zeroes, so an element costs nothing until it is used. LargeVector(n) writes
/// every byte first (a 262,144-flow table is 33 MB memset at start: 4-7% of `warpath
/// reassemble` on a bulk capture, paired). `populate` faults every page in at once, after the
/// advice (MADV_POPULATE_WRITE, or a write of zero into each 4 KB page before Linux 5.14), for a
/// data plane that must not take a fault on its first packets. std::bad_alloc when the kernel
/// refuses.
template <class T>
class ZeroedArray {
  static_assert(std::is_trivially_default_constructible_v<T> && std::is_trivially_destructible_v<T>,
                "zero pages stand for value-initialised elements only of a trivial type");

 public:
  ZeroedArray() = default;
  ZeroedArray(size_t n, bool populate) : n_(n) {
    const size_t bytes = n * sizeof(T);
    if (!bytes) return;
    // Over by a huge page, so that the array can start on a 2 MB boundary (the partial pages
    // at the ends of an unaligned mapping never become huge).
    map_bytes_ = bytes + (bytes >= kHugePage ? kHugePage : 0);
    void* m =
        ::mmap(nullptr, map_bytes_, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m == MAP_FAILED) throw std::bad_alloc();
    map_     = m;
    auto* at = static_cast<char*>(m);
    if (bytes >= kHugePage) {
      at += (kHugePage - reinterpret_cast<uintptr_t>(at) % kHugePage) % kHugePage;
      (void)madvise(at, bytes, MADV_HUGEPAGE);
    }
    p_ = reinterpret_cast<T*>(at);
    if (populate) fault_in(at, bytes);
  }
  ZeroedArray(ZeroedArray&& o) noexcept { *this = std::move(o); }
  ZeroedArray& operator=(ZeroedArray&& o) noexcept {
    if (this != &o) {
      release();
      p_         = std::exchange(o.p_, nullptr);
      n_         = std::exchange(o.n_, 0);
      map_       = std::exchange(o.map_, nullptr);
      map_bytes_ = std::exchange(o.map_bytes_, 0);
    }
    return *this;
  }
  ZeroedArray(const ZeroedArray&)            = delete;
  ZeroedArray& operator=(const ZeroedArray&) = delete;
  ~ZeroedArray() { release(); }

  T& operator[](size_t i) noexcept { return p_[i]; }
  const T& operator[](size_t i) const noexcept { return p_[i]; }
  T* data() noexcept { return p_; }
  const T* data() const noexcept { return p_; }
  size_t size() const noexcept { return n_; }

 private:
  static void fault_in(char* at, size_t bytes) {
#ifndef MADV_POPULATE_WRITE
    constexpr int MADV_POPULATE_WRITE = 23;  // Linux 5.14's uapi value
#endif
    if (madvise(at, bytes, MADV_POPULATE_WRITE) == 0) return;
    for (size_t off = 0; off < bytes; off += 4096) static_cast<volatile char*>(at)[off] = 0;
  }
  void release() noexcept {
    if (map_) ::munmap(map_, map_bytes_);
    map_ = nullptr;
    p_   = nullptr;
  }
  T* p_             = nullptr;
  size_t n_         = 0;
  void* map_        = nullptr;  ///< the whole mapping (p_ is 2 MB aligned within it)
  size_t map_bytes_ = 0;
};

}  // namespace warpath::detail
