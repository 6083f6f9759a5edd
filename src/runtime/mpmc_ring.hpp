// src/runtime/mpmc_ring.hpp: a bounded lock-free queue of many producers and many consumers
// (Vyukov's sequence-numbered ring): the offload master's submit queue, where workers put
// frames and lanes take them without a lock. Each cell carries a sequence number that says
// whose turn it is: a producer claims the tail position whose cell reads "free for lap k", a
// consumer the head position whose cell reads "filled in lap k"; a claim is one compare and
// swap, and the value is published by a release store of the next sequence number.
#pragma once
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <memory>

namespace warpath::runtime::detail {

template <class T>
class MpmcRing {
 public:
  /// Room for `capacity` values, rounded up to a power of two (at least 2).
  explicit MpmcRing(size_t capacity) {
    size_t n = 2;
    while (n < capacity) n *= 2;
    mask_  = n - 1;
    cells_ = std::make_unique<Cell[]>(n);
    for (size_t i = 0; i < n; ++i) cells_[i].seq.store(i, std::memory_order_relaxed);
  }
  MpmcRing(const MpmcRing&)            = delete;
  MpmcRing& operator=(const MpmcRing&) = delete;

  size_t capacity() const noexcept { return mask_ + 1; }

  /// False when the ring is full.
  bool try_push(T value) noexcept {
    size_t pos = tail_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c            = cells_[pos & mask_];
      const size_t seq   = c.seq.load(std::memory_order_acquire);
      const intptr_t dif = intptr_t(seq) - intptr_t(pos);
      if (dif == 0) {
        if (tail_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          c.value = value;
          c.seq.store(pos + 1, std::memory_order_release);
          return true;
        }
      } else if (dif < 0) {
        return false;  // the cell still holds last lap's value: full
      } else {
        pos = tail_.load(std::memory_order_relaxed);
      }
    }
  }

  /// False when the ring is empty (or its next value is claimed and not yet published).
  bool try_pop(T& out) noexcept {
    size_t pos = head_.load(std::memory_order_relaxed);
    for (;;) {
      Cell& c            = cells_[pos & mask_];
      const size_t seq   = c.seq.load(std::memory_order_acquire);
      const intptr_t dif = intptr_t(seq) - intptr_t(pos + 1);
      if (dif == 0) {
        if (head_.compare_exchange_weak(pos, pos + 1, std::memory_order_relaxed)) {
          out = c.value;
          c.seq.store(pos + mask_ + 1, std::memory_order_release);
          return true;
        }
      } else if (dif < 0) {
        return false;
      } else {
        pos = head_.load(std::memory_order_relaxed);
      }
    }
  }

  /// Whether a value was claimed and not yet taken (a hint: either may change at once).
  bool maybe_nonempty() const noexcept {
    return tail_.load(std::memory_order_acquire) != head_.load(std::memory_order_acquire);
  }

 private:
  struct Cell {
    std::atomic<size_t> seq{0};
    T value{};
  };
  std::unique_ptr<Cell[]> cells_;
  size_t mask_ = 0;
  alignas(64) std::atomic<size_t> tail_{0};  // producers' next position
  alignas(64) std::atomic<size_t> head_{0};  // consumers' next position
};

}  // namespace warpath::runtime::detail
