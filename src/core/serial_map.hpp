// src/core/serial_map.hpp: a map from 64-bit serial numbers to values, for state kept by a
// flow's serial (the tracker numbers flows 1, 2, 3, ... in creation order).
//
//   - Slots: one flat power-of-two array of {key, value's address} (16 bytes: a lookup goes
//     from the slot straight to the value, values never move), open addressing with
//     linear probing in Robin Hood order (within a run, entries sorted by home slot), at most
//     half full. Deletion shifts back the entries after the hole up to the first one at its
//     home: no tombstones, and a deletion in a long run of keys at home (consecutive serials)
//     moves nothing.
//   - Values: a slab with a free list: no allocation per entry, no node to chase. Block k holds
//     256 << k values, so growth never moves a value (nor touches fresh memory twice, as a
//     vector's doubling would), and large blocks and slot arrays are on transparent huge pages
//     (core/huge_pages.hpp): a table of 100,000 finished connections faults in a few 2 MiB
//     pages instead of thousands of 4 KiB ones. reserve(n) on a map without values makes one
//     pool of exactly n values first (indices 0..n-1), the doubling blocks after it.
//   - Placement: a key's home slot is its low bits folded with its high ones. Serials alive at
//     once are close together, so they land in neighbouring slots without colliding, and a
//     lookup of a recent flow finds its line warm. Any keys stay correct (linear probing), only
//     their probe lengths depend on how they cluster.
//
// References returned by find() and emplace() stay valid until the erase of that key, clear()
// or the map's end (a stale one would alias the next entry given that value, not crash).
// Memory grows to the peak number of entries (or what reserve() made, if more) and is kept, as
// a preallocated pool would be, until clear(): an erased value is destroyed (its own
// allocations released) and rebuilt as a default T in place, or, for a T with recycle(),
// recycled (it keeps what recycle() keeps: cpu.stream's flows up to 8 pieces' room per
// direction). Slots point into the values, so a map moves but is not copied.
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "core/huge_pages.hpp"

namespace warpath::detail {

template <class T>
class SerialMap {
 public:
  SerialMap() { rebuild(16); }
  SerialMap(const SerialMap&)                = delete;  // slots point at this map's own values
  SerialMap& operator=(const SerialMap&)     = delete;
  SerialMap(SerialMap&&) noexcept            = default;
  SerialMap& operator=(SerialMap&&) noexcept = default;

  size_t size() const { return size_; }
  bool empty() const { return size_ == 0; }
  /// Slots (16 bytes each) and values allocated: what the map holds in memory.
  size_t slots() const { return slots_.size(); }
  size_t values_allocated() const {
    return pool_.size() + (size_t(kBlock) << blocks_.size()) - kBlock;
  }

  T* find(uint64_t key) {
    const size_t i = slot_of(key);
    return i == kAbsent ? nullptr : slots_[i].value;
  }

  /// Inserts `key`, which must be absent, with `value`.
  T& emplace(uint64_t key, T&& value) {
    T& v = emplace(key);
    v    = std::move(value);
    return v;
  }

  /// Inserts `key`, which must be absent, with a default T (built when its slot was freed).
  T& emplace(uint64_t key) {
    if (2 * (size_ + 1) > slots_.size()) rebuild(2 * slots_.size());
    T* v;
    if (!free_.empty()) {
      v = free_.back();
      free_.pop_back();
    } else {
      if (used_ == values_allocated()) blocks_.emplace_back(size_t(kBlock) << blocks_.size());
      v = &value_at(used_++);
    }
    place({key, v});
    size_ += 1;
    return *v;
  }

  /// Room for `n` entries in all (at most 2^31) made now: slots for them at most half full
  /// and values built, so that the map holds n entries without rehashing or touching fresh
  /// memory (the page faults and the values' construction happen here, as a preallocated
  /// pool's would). On a map that never had values they are one pool of exactly n; else
  /// doubling blocks are added until n fit. Kept until clear(); std::bad_alloc when out of
  /// memory.
  void reserve(size_t n) {
    if (n > (size_t(1) << 31)) throw std::bad_alloc();
    size_t slots = std::max<size_t>(slots_.size(), 16);
    while (slots < 2 * n) slots *= 2;
    if (slots > slots_.size()) rebuild(slots);
    if (values_allocated() >= n) return;
    if (used_ == 0 && blocks_.empty() && pool_.empty()) {
      pool_      = LargeVector<T>(n);
      pool_size_ = uint32_t(n);
      return;
    }
    while (values_allocated() < n) blocks_.emplace_back(size_t(kBlock) << blocks_.size());
  }

  /// The value of `key`, inserted as a default T if absent.
  T& find_or_emplace(uint64_t key) {
    T* v = find(key);
    return v ? *v : emplace(key);
  }

  /// Removes `key` if present; its value is destroyed (its memory released) and a default T
  /// built in its place, ready for the next emplace; or, for a T with recycle(), recycled
  /// (it then keeps what recycle() keeps for the next entry that takes it).
  void erase(uint64_t key) {
    size_t i = slot_of(key);
    if (i == kAbsent) return;
    T* const v = slots_[i].value;
    if constexpr (requires(T & t) { t.recycle(); }) {
      v->recycle();  // as new, keeping what the next entry may reuse
    } else {
      std::destroy_at(v);
      std::construct_at(v);
    }
    free_.push_back(v);
    size_ -= 1;
    // Backward shift: the entries after the hole move back one slot until an empty slot or one
    // at its home (in Robin Hood order, every entry after that one has its home past the hole).
    for (size_t j = (i + 1) & mask_; slots_[j].value && distance(j) > 0; j = (j + 1) & mask_) {
      slots_[i] = slots_[j];
      i         = j;
    }
    slots_[i] = {};
  }

  /// f(key, value&) for every entry, in slot order.
  template <class F>
  void for_each(F&& f) {
    for (const Slot& s : slots_)
      if (s.value) f(s.key, *s.value);
  }

  /// Empties the map, releasing the values' memory.
  void clear() {
    LargeVector<T>().swap(pool_);
    pool_size_ = 0;
    blocks_.clear();
    free_.clear();
    used_ = 0;
    slots_.clear();
    rebuild(16);
  }

 private:
  static constexpr uint32_t kBlock = 256;
  struct Slot {
    uint64_t key = 0;
    T* value     = nullptr;  ///< null: empty
  };

  // Value v is in the pool when below its size; past it, v - pool_size_ is in block
  // k = floor(log2(v / kBlock + 1)), which starts at kBlock * (2^k - 1).
  T& value_at(uint32_t v) {
    if (v < pool_size_) return pool_[v];
    v -= pool_size_;
    const uint32_t k = 31 - uint32_t(__builtin_clz((v / kBlock) + 1));
    return blocks_[k][v - kBlock * ((1u << k) - 1)];
  }
  size_t home(uint64_t key) const { return size_t(key ^ (key >> shift_)) & mask_; }
  size_t distance(size_t i) const { return (i - home(slots_[i].key)) & mask_; }

  static constexpr size_t kAbsent = ~size_t(0);
  /// The slot holding `key`, or kAbsent: an empty slot, or one whose entry is nearer its home
  /// than `key` would be (in Robin Hood order `key` would have taken it), ends the search.
  size_t slot_of(uint64_t key) const {
    size_t dist = 0;
    for (size_t i = home(key);; i = (i + 1) & mask_, ++dist) {
      const Slot& s = slots_[i];
      if (!s.value || distance(i) < dist) return kAbsent;
      if (s.key == key) return i;
    }
  }

  /// Robin Hood insertion: an entry farther from its home takes the slot of one nearer to its
  /// own, which moves on.
  void place(Slot s) {
    size_t dist = 0;
    for (size_t i = home(s.key);; i = (i + 1) & mask_, ++dist) {
      if (!slots_[i].value) {
        slots_[i] = s;
        return;
      }
      const size_t d = distance(i);
      if (d < dist) {
        std::swap(s, slots_[i]);
        dist = d;
      }
    }
  }

  void rebuild(size_t n) {
    LargeVector<Slot> old = std::move(slots_);
    slots_.assign(n, Slot{});
    mask_  = n - 1;
    shift_ = 0;
    while ((size_t(1) << shift_) < n) ++shift_;
    size_ = 0;
    for (const Slot& s : old) {
      if (!s.value) continue;
      place(s);
      size_ += 1;
    }
  }

  LargeVector<Slot> slots_;
  LargeVector<T> pool_;                 // reserve()'s values, when it made them first
  uint32_t pool_size_ = 0;              // pool_.size()
  std::vector<LargeVector<T>> blocks_;  // never resized once made: values do not move
  std::vector<T*> free_;  ///< erased values, rebuilt or recycled, for the next inserts
  uint32_t used_ = 0;  ///< values ever handed out (the free list holds the erased ones)
  size_t mask_ = 0, size_ = 0;
  unsigned shift_ = 0;
};

}  // namespace warpath::detail
