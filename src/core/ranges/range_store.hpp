// src/core/ranges/range_store.hpp: buffered bytes of a stream or datagram as a sorted sequence
// of non-overlapping ranges (in chunks of at most 64: sorted_chunks.hpp, so an insert or a
// delivery moves a bounded number of them however a sender orders its pieces), each
// remembering the extent of the piece (segment, fragment) that stored it, with a bound on the
// end of the run of bytes from the first piece (contiguous_end() does not walk it again). The
// bytes live in one arena per store: an in-order piece is appended to it, so pieces that
// arrived in order lie side by side and a run of them can be read in place
// (view(), then drop()) instead of copied out (take()). Another piece fills the free space
// between ranges and, where `wins` lets it, splits the range it overlaps into the part before,
// its own part (appended) and the part after (both still where they were). Memory: an empty
// store holds no arena (small arenas are recycled through a per-thread pool: an engine belongs
// to one worker; a pooled one is taken only if it is not much larger than the first piece), and
// a recycled store (recycle(): a finished stream's slot, taken by the next stream) keeps at
// most kKeptPieces pieces' room, outside the caps (they count buffered bytes); dead
// bytes (delivered, or overwritten) are compacted away once they outgrow the live ones plus
// kSlack, so an arena's size stays within 2 x buffered() + kSlack and, its doubling growth
// included, its capacity within about twice that. The caps count buffered bytes (every engine
// must refuse at the same points), so they bound this memory to that factor. The fast store of
// cpu.stream and cpu.defrag; byte_store.hpp is the oracle's.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <utility>
#include <vector>

#include "core/ranges/insert.hpp"
#include "core/ranges/sorted_chunks.hpp"

namespace warpath::ranges {

/// A store's bytes: a plain growable buffer. An in-order piece's append is one capacity test and
/// a memcpy (std::vector's range insert, generic over iterators, cost about twice the
/// instructions of the rest of the append).
class Arena {
 public:
  Arena() = default;
  Arena(Arena&& o) noexcept : p_(o.p_), size_(o.size_), cap_(o.cap_) {
    o.p_    = nullptr;
    o.size_ = o.cap_ = 0;
  }
  Arena& operator=(Arena&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_      = o.p_;
      size_   = o.size_;
      cap_    = o.cap_;
      o.p_    = nullptr;
      o.size_ = o.cap_ = 0;
    }
    return *this;
  }
  Arena(const Arena&)            = delete;
  Arena& operator=(const Arena&) = delete;
  ~Arena() { std::free(p_); }

  uint8_t* data() { return p_; }
  const uint8_t* data() const { return p_; }
  uint64_t size() const { return size_; }
  uint64_t capacity() const { return cap_; }
  void clear() { size_ = 0; }
  void reserve(uint64_t n) {
    if (n > cap_) grow(n);
  }
  /// n > 0 bytes appended; where they start.
  uint64_t append(const uint8_t* d, uint64_t n) {
    if (size_ + n > cap_) grow(std::max(size_ + n, 2 * cap_));
    std::memcpy(p_ + size_, d, n);
    const uint64_t at = size_;
    size_ += n;
    return at;
  }

 private:
  void grow(uint64_t cap) {
    auto* q = static_cast<uint8_t*>(std::realloc(p_, cap));
    if (!q) throw std::bad_alloc();
    p_   = q;
    cap_ = cap;
  }
  uint8_t* p_    = nullptr;
  uint64_t size_ = 0, cap_ = 0;
};

// Small arenas of stores, recycled per thread (a reassembler belongs to one worker), so a
// store costs no allocation once the pool is warm. At most kPooled are kept.
class BufferPool {
 public:
  static constexpr size_t kPooled = 4096;
  BufferPool() { free_.reserve(kPooled); }  // give() never allocates (it runs in destructors)
  ~BufferPool();
  Arena take() {
    if (free_.empty()) return {};
    Arena a = std::move(free_.back());
    free_.pop_back();
    return a;
  }
  /// Takes `a` (left empty) into the pool, or frees it.
  void give(Arena& a) {
    if (free_.size() < kPooled && a.capacity() && a.capacity() <= 4096)
      free_.push_back(std::move(a));
    else
      a = Arena();
  }

 private:
  std::vector<Arena> free_;
};

/// This thread's pool, or null once the thread's exit destroyed it (a store destroyed after
/// that frees its arena instead). The pool is a thread_local with a destructor, and each use of
/// one costs a call to its guard; plain, constant-initialised ones (no guard) are read instead.
inline constinit thread_local BufferPool* g_pool_ptr = nullptr;
inline constinit thread_local bool g_pool_gone       = false;
[[gnu::noinline]] inline BufferPool* thread_pool_slow() {
  if (g_pool_gone) return nullptr;
  thread_local BufferPool pool;
  g_pool_ptr = &pool;
  return &pool;
}
inline BufferPool* thread_pool() {
  if (g_pool_ptr) [[likely]]
    return g_pool_ptr;
  return thread_pool_slow();
}
inline BufferPool::~BufferPool() {
  if (g_pool_ptr == this) {
    g_pool_ptr  = nullptr;
    g_pool_gone = true;
  }
}

class RangeStore {
 public:
  /// Dead arena bytes tolerated beyond the live ones before a compaction.
  static constexpr uint64_t kSlack = 256;
  /// Pieces whose room recycle() keeps (40 bytes each).
  static constexpr size_t kKeptPieces = 8;

  RangeStore() = default;
  RangeStore(RangeStore&& o) noexcept
      : pieces_(std::move(o.pieces_)),
        arena_(std::move(o.arena_)),
        buffered_(o.buffered_),
        run_end_(o.run_end_) {
    o.pieces_.release();
    o.buffered_ = 0;
  }
  RangeStore& operator=(RangeStore&& o) noexcept {
    if (this != &o) {
      release();
      pieces_   = std::move(o.pieces_);
      arena_    = std::move(o.arena_);
      buffered_ = o.buffered_;
      run_end_  = o.run_end_;
      o.pieces_.release();
      o.buffered_ = 0;
    }
    return *this;
  }
  ~RangeStore() { release(); }

  uint64_t buffered() const { return buffered_; }
  /// Pieces the store has room for without allocating (what recycle() keeps, for tests).
  size_t piece_room() const { return pieces_.capacity(); }
  /// Empty, as a new store, keeping a small piece vector's capacity for the next stream that
  /// takes this store (SerialMap::erase: a malloc and a free per stream otherwise).
  void recycle() {
    release();
    buffered_ = 0;
    pieces_.recycle(kKeptPieces);
  }
  /// Bytes the arena holds, dead ones included (at most 2 * buffered() + kSlack after each call).
  /// Its capacity can be about twice that.
  uint64_t arena_bytes() const { return arena_.size(); }
  /// Pieces (and chunk headers) moved in memory by inserts and deliveries so far: the witness
  /// that a hostile order of segments costs no more than an ordinary one per piece (tests).
  uint64_t piece_moves() const { return pieces_.moved(); }
  /// Pieces contiguous_end() has looked at so far (the same witness for the run it keeps).
  uint64_t run_visits() const { return run_visits_; }
  /// Ranges stored (tests).
  size_t pieces() const { return pieces_.size(); }

  /// Stores n bytes at `at`; `wins(old_start, old_end)` says whether they overwrite a byte
  /// stored by the piece [old_start, old_end).
  template <class Wins>
  Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
                const Wins& wins) {
    if (n == 0) return Insert{};
    // In order and past everything buffered (the common case): one new range at the end,
    // inline. (Returned from the out-of-line function, the answer went through the stack, a
    // byte stored and read back as a word: a load that store forwarding cannot serve.)
    const Piece* last = pieces_.last();
    if (!last || last->end <= at) [[likely]] {
      pieces_.push_back({at, at + n, os, oe, append(data, n)});
      buffered_ += n;
      if (!last || at == run_end_) run_end_ = at + n;  // a new front, or the run goes on
      return Insert{n, false, false};
    }
    return insert_among(at, data, n, os, oe, wins);
  }

 private:
  /// insert() of bytes that do not all lie past the stored ones.
  template <class Wins>
  [[gnu::noinline]] Insert insert_among(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os,
                                        uint64_t oe, const Wins& wins) {
    Insert r;
    const uint64_t e     = at + n;
    const uint64_t front = pieces_.front().start;  // not empty: something lies past `at`
    uint64_t c           = at;
    Pos k            = pieces_.first_ending_after(c);
    bool garbage     = false;
    while (c < e) {
      if (pieces_.at_end(k) || pieces_[k].start > c) {  // free space up to the next range
        const uint64_t to = pieces_.at_end(k) ? e : std::min(e, pieces_[k].start);
        const uint64_t a  = append(data + (c - at), to - c);
        k                 = pieces_.insert(k, Piece{c, to, os, oe, a});
        pieces_.next(k);
        buffered_ += to - c;
        r.added += to - c;
        c = to;
        continue;
      }
      const Piece old   = pieces_[k];
      const uint64_t to = std::min(e, old.end);
      r.overlap         = true;
      if (std::memcmp(arena_.data() + old.at + (c - old.start), data + (c - at), to - c) != 0)
        r.differ = true;
      if (wins(old.os, old.oe)) {
        // Split into the part before (the old range's), the new part, the part after; the
        // old parts keep their bytes where they are, the new part's are appended.
        const uint64_t a = append(data + (c - at), to - c);
        pieces_[k]       = Piece{c, to, os, oe, a};
        if (old.start < c) {
          k = pieces_.insert(k, Piece{old.start, c, old.os, old.oe, old.at});
          pieces_.next(k);
        }
        pieces_.next(k);
        if (to < old.end)
          k = pieces_.insert(k, Piece{to, old.end, old.os, old.oe, old.at + (to - old.start)});
        garbage = true;
      } else if (to == old.end) {
        pieces_.next(k);
      }
      c = to;
    }
    // Every byte of [at, e) is stored now: the front run grows by them where they touch it.
    if (at < front)
      run_end_ = e >= front ? std::max(run_end_, e) : e;
    else if (at <= run_end_)
      run_end_ = std::max(run_end_, e);
    if (garbage) compact_if_sparse();
    return r;
  }

 public:
  /// One past the bytes stored contiguously from `from` (`from` if none is). From anywhere in
  /// the front run (a stream asks from its next undelivered byte), O(log pieces) amortized:
  /// the store keeps a bound on the run's end and only walks the pieces that joined it since.
  [[gnu::always_inline]] uint64_t contiguous_end(uint64_t from) const {
    if (pieces_.empty() || from < pieces_.front().start) return from;
    if (from <= run_end_) [[likely]] {
      if (pieces_.back().end > run_end_) [[unlikely]]  // pieces past the run may touch it
        extend_run();
      return std::max(from, run_end_);
    }
    const Pos k = pieces_.first_ending_after(from);
    if (pieces_.at_end(k) || pieces_[k].start > from) return from;
    uint64_t end = pieces_[k].start;
    pieces_.walk(k, [&](const Piece& p) {
      ++run_visits_;
      if (p.start != end) return false;
      end = p.end;
      return true;
    });
    return end;
  }

  uint64_t first_start() const { return pieces_.empty() ? kNever : pieces_.front().start; }
  /// One past the last byte stored (0 when empty).
  uint64_t max_end() const { return pieces_.empty() ? 0 : pieces_.back().end; }
  /// Whether any byte of [from, to) is stored.
  bool overlaps(uint64_t from, uint64_t to) const {
    const Pos k = pieces_.first_ending_after(from);
    return from < to && !pieces_.at_end(k) && pieces_[k].start < to;
  }

  // Runs start at the first range (everything below it was delivered).
  /// Copies the run [from, to) out and drops it.
  void take(uint64_t from, uint64_t to, uint8_t* out) { consume(from, to, out); }
  /// The run [from, to) in place, when its ranges lie side by side in the arena (they arrived
  /// in order); else null. Valid until the next call that changes the store.
  [[gnu::always_inline]] const uint8_t* view(uint64_t from, uint64_t to) const {
    if (pieces_.empty() || pieces_.front().start != from) return nullptr;
    uint64_t end = from, next = pieces_.front().at;
    bool side_by_side = true;
    pieces_.walk(pieces_.begin(), [&](const Piece& p) {
      if (end >= to) return false;
      if (p.start != end || p.at != next) return side_by_side = false;
      next += p.end - p.start;
      end = p.end;
      return true;
    });
    return side_by_side && end >= to ? arena_.data() + pieces_.front().at : nullptr;
  }
  /// Drops the run [from, to) (after view()).
  void drop(uint64_t from, uint64_t to) { consume(from, to, nullptr); }

 private:
  struct Piece {
    uint64_t start = 0, end = 0;
    uint64_t os = 0, oe = 0;  ///< the storing segment
    uint64_t at = 0;          ///< where its bytes start in the arena
  };
  using Pos = SortedChunks<Piece>::Pos;

  /// The arena to the pool (or freed); the store holds none after.
  void release() {
    if (!arena_.capacity()) return;
    if (BufferPool* pool = thread_pool())
      pool->give(arena_);
    else
      arena_ = Arena();
  }

  /// n bytes appended to the arena; where they start.
  uint64_t append(const uint8_t* data, uint64_t n) {
    if (arena_.capacity() == 0) [[unlikely]] {
      if (BufferPool* pool = thread_pool()) arena_ = pool->take();
      // A pooled arena far larger than the piece would hide memory from the caps: drop it.
      if (arena_.capacity() > 2 * n + kSlack) arena_ = Arena();
      arena_.clear();
    }
    return arena_.append(data, n);
  }

  void consume(uint64_t from, uint64_t to, uint8_t* out) {
    uint64_t c  = from;
    const Pos k = pieces_.walk(pieces_.begin(), [&](Piece& p) {
      if (c >= to) return false;
      if (p.end <= to) {
        const uint64_t n = p.end - p.start;
        if (out) std::memcpy(out, arena_.data() + p.at, n), out += n;
        buffered_ -= n;
        c = p.end;
        return true;
      }
      const uint64_t n = to - p.start;  // the front of a range
      if (out) std::memcpy(out, arena_.data() + p.at, n);
      buffered_ -= n;
      p.at += n;
      p.start = to;
      c       = to;
      return false;
    });
    pieces_.erase_before(k);
    // Taken inside the front run: the rest of it still lies from `to` on; else the run went
    // whole and the next piece starts the front one.
    if (!pieces_.empty() && to >= run_end_) run_end_ = pieces_.front().end;
    if (pieces_.empty()) {
      // The arena goes back to the pool (a large one is freed: the caps count buffered bytes,
      // not capacity); the next append takes the pool's most recent one, which is still in
      // cache, where keeping its own would make every stream's arena part of the working set.
      release();
    } else {
      compact_if_sparse();
    }
  }

  /// Moves the live bytes to a fresh arena, in range order, once the dead ones outgrow them.
  void compact_if_sparse() {
    if (arena_.size() <= 2 * buffered_ + kSlack) return;
    BufferPool* pool = thread_pool();
    Arena packed     = pool ? pool->take() : Arena();
    packed.clear();
    packed.reserve(buffered_);
    pieces_.for_each(
        [&](Piece& p) { p.at = packed.append(arena_.data() + p.at, p.end - p.start); });
    if (pool) pool->give(arena_);
    arena_ = std::move(packed);
  }

  /// Extends run_end_ over the pieces that touch it (each joins the run once).
  [[gnu::noinline]] void extend_run() const {
    const Pos k = pieces_.first_ending_after(run_end_);
    if (pieces_.at_end(k)) return;
    pieces_.walk(k, [&](const Piece& p) {
      ++run_visits_;
      if (p.start > run_end_) return false;
      run_end_ = p.end;
      return true;
    });
  }

  SortedChunks<Piece> pieces_;  ///< sorted, non-overlapping
  Arena arena_;
  uint64_t buffered_ = 0;
  /// Not empty: the bytes [front piece's start, run_end_) are all stored (a lower bound of the
  /// front run's end; contiguous_end() extends it).
  mutable uint64_t run_end_    = 0;
  mutable uint64_t run_visits_ = 0;
};

}  // namespace warpath::ranges
