// src/core/ranges/range_store.hpp: buffered bytes of a stream or datagram as a sorted vector
// of non-overlapping ranges, each remembering the extent of the piece (segment, fragment) that
// stored it. An in-order piece is appended; another fills the free space between ranges and,
// where `wins` lets it, splits the range it overlaps into the part before, its own part and the
// part after. take() copies a run out and drops it (or the front of a range). Range buffers are
// recycled through a per-thread pool (an engine belongs to one worker). The fast store of
// cpu.stream and cpu.defrag; byte_store.hpp is the oracle's.
#pragma once
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "core/ranges/insert.hpp"

namespace warpath::ranges {

// Byte buffers of stored ranges, recycled per thread (a reassembler belongs to one worker), so
// a buffered segment costs no allocation once the pool is warm. At most kPooled are kept.
class BufferPool {
 public:
  static constexpr size_t kPooled = 4096;
  std::vector<uint8_t> take() {
    if (free_.empty()) return {};
    std::vector<uint8_t> v = std::move(free_.back());
    free_.pop_back();
    return v;
  }
  void give(std::vector<uint8_t>&& v) {
    if (free_.size() < kPooled && v.capacity() <= 4096) free_.push_back(std::move(v));
  }

 private:
  std::vector<std::vector<uint8_t>> free_;
};
inline thread_local BufferPool g_pool;

class RangeStore {
 public:
  RangeStore() = default;
  RangeStore(RangeStore&&) noexcept = default;
  RangeStore& operator=(RangeStore&&) noexcept = default;
  ~RangeStore() {
    for (Piece& p : pieces_) g_pool.give(std::move(p.bytes));
  }

  uint64_t buffered() const { return buffered_; }

  /// Stores n bytes at `at`; `wins(old_start, old_end)` says whether they overwrite a byte
  /// stored by the piece [old_start, old_end).
  template <class Wins>
  Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
                const Wins& wins) {
    Insert r;
    if (n == 0) return r;
    const uint64_t e = at + n;
    // In order and past everything buffered (the common case): one new range at the end.
    if (pieces_.empty() || pieces_.back().end <= at) {
      pieces_.push_back(make(at, e, os, oe, data));
      r.added = n;
      return r;
    }
    uint64_t c = at;
    size_t k   = first_ending_after(c);
    while (c < e) {
      if (k == pieces_.size() || pieces_[k].start > c) {  // free space up to the next range
        const uint64_t to = k == pieces_.size() ? e : std::min(e, pieces_[k].start);
        pieces_.insert(pieces_.begin() + long(k), make(c, to, os, oe, data + (c - at)));
        r.added += to - c;
        c = to;
        ++k;
        continue;
      }
      const uint64_t ps = pieces_[k].start, pe = pieces_[k].end;
      const uint64_t to = std::min(e, pe);
      r.overlap         = true;
      if (std::memcmp(pieces_[k].bytes.data() + (c - ps), data + (c - at), to - c) != 0)
        r.differ = true;
      if (wins(pieces_[k].os, pieces_[k].oe)) {
        // Split into the part before (the old range's), the new part, the part after.
        Piece old = std::move(pieces_[k]);
        pieces_.erase(pieces_.begin() + long(k));
        buffered_ -= pe - ps;
        if (ps < c) pieces_.insert(pieces_.begin() + long(k++), make(ps, c, old.os, old.oe, old.bytes.data()));
        pieces_.insert(pieces_.begin() + long(k++), make(c, to, os, oe, data + (c - at)));
        if (to < pe)
          pieces_.insert(pieces_.begin() + long(k), make(to, pe, old.os, old.oe, old.bytes.data() + (to - ps)));
        g_pool.give(std::move(old.bytes));
      } else if (to == pe) {
        ++k;
      }
      c = to;
    }
    return r;
  }

  uint64_t contiguous_end(uint64_t from) const {
    size_t k = first_ending_after(from);
    if (k == pieces_.size() || pieces_[k].start > from) return from;
    uint64_t end = pieces_[k].end;
    for (++k; k < pieces_.size() && pieces_[k].start == end; ++k) end = pieces_[k].end;
    return end;
  }

  uint64_t first_start() const { return pieces_.empty() ? kNever : pieces_.front().start; }
  /// One past the last byte stored (0 when empty).
  uint64_t max_end() const { return pieces_.empty() ? 0 : pieces_.back().end; }
  /// Whether any byte of [from, to) is stored.
  bool overlaps(uint64_t from, uint64_t to) const {
    const size_t k = first_ending_after(from);
    return k < pieces_.size() && pieces_[k].start < to;
  }

  // Runs start at the first range (everything below it was delivered).
  void take(uint64_t from, uint64_t to, uint8_t* out) {
    size_t k = 0;
    uint64_t c = from;
    while (c < to) {
      Piece& p = pieces_[k];
      if (p.end <= to) {
        std::memcpy(out, p.bytes.data(), p.end - p.start);
        out += p.end - p.start;
        buffered_ -= p.end - p.start;
        c = p.end;
        ++k;
        continue;
      }
      std::memcpy(out, p.bytes.data(), to - p.start);  // the front of a range
      buffered_ -= to - p.start;
      p.bytes.erase(p.bytes.begin(), p.bytes.begin() + long(to - p.start));
      p.start = to;
      c       = to;
    }
    for (size_t i = 0; i < k; ++i) g_pool.give(std::move(pieces_[i].bytes));
    pieces_.erase(pieces_.begin(), pieces_.begin() + long(k));
  }

 private:
  struct Piece {
    uint64_t start = 0, end = 0;
    uint64_t os = 0, oe = 0;  ///< the storing segment
    std::vector<uint8_t> bytes;
  };

  Piece make(uint64_t from, uint64_t to, uint64_t os, uint64_t oe, const uint8_t* data) {
    Piece p;
    p.start = from;
    p.end   = to;
    p.os    = os;
    p.oe    = oe;
    p.bytes = g_pool.take();
    // A pooled buffer far larger than the piece would hide memory from the caps: drop it.
    if (p.bytes.capacity() > 2 * (to - from) + 256) p.bytes = std::vector<uint8_t>();
    p.bytes.assign(data, data + (to - from));
    buffered_ += to - from;
    return p;
  }
  // The first range ending after `at` (the one covering it, or the next).
  size_t first_ending_after(uint64_t at) const {
    size_t lo = 0, hi = pieces_.size();
    while (lo < hi) {
      const size_t mid = (lo + hi) / 2;
      if (pieces_[mid].end <= at)
        lo = mid + 1;
      else
        hi = mid;
    }
    return lo;
  }

  std::vector<Piece> pieces_;  ///< sorted, non-overlapping
  uint64_t buffered_ = 0;
};

}  // namespace warpath::ranges
