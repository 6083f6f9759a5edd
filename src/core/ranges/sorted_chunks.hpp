// src/core/ranges/sorted_chunks.hpp: a sorted sequence kept in chunks of at most kChunk
// elements (a one-level B+-tree without the index: the chunks' last elements are searched
// directly). RangeStore's pieces live here: a vector of them cost O(pieces) per insert before
// the end and per delivery from the front, so a hostile flow's pieces in descending order (or
// holes filled one by one) cost O(pieces^2); here an insert or an erase moves at most kChunk
// elements plus one chunk header (16 bytes) per chunk, and a search is two binary
// searches.
//
// The first chunk is a member (head_), the others a vector of chunks (rest_): a stream that
// holds at most kChunk pieces (every ordinary one) touches only head_, a plain array, as the
// store's single vector did before (its in-order paths cost about the same instructions:
// docs/adr/0009).
//
// Invariants: the elements are sorted by `end` (T has a member `end`, non-decreasing); head_ is
// empty only when the whole list is (rest_ then is too: an emptied list keeps head_'s storage,
// which in-order streams fill and empty once per delivery); every chunk holds 1..kChunk
// elements. A Pos is (chunk, index), chunk 0 being head_, valid until the next insert or erase
// (insert returns the inserted element's); the end is (chunks(), 0). An allocation that fails
// (bad_alloc) leaves the list as it was.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <new>
#include <type_traits>
#include <utility>
#include <vector>

namespace warpath::ranges {

/// A chunk's elements: a growable array of trivially copyable T, at most kMax of them. Its own
/// (not std::vector) so that the in-order push stays inline in the stream engine's loop
/// (std::vector's push_back was left out of line there: 29 instructions a segment more).
template <class T, uint32_t kMax>
class SmallArray {
  static_assert(std::is_trivially_copyable_v<T>);

 public:
  SmallArray() = default;
  SmallArray(SmallArray&& o) noexcept : p_(o.p_), n_(o.n_), cap_(o.cap_) {
    o.p_ = nullptr;
    o.n_ = o.cap_ = 0;
  }
  SmallArray& operator=(SmallArray&& o) noexcept {
    if (this != &o) {
      std::free(p_);
      p_   = o.p_;
      n_   = o.n_;
      cap_ = o.cap_;
      o.p_ = nullptr;
      o.n_ = o.cap_ = 0;
    }
    return *this;
  }
  SmallArray(const SmallArray&)            = delete;
  SmallArray& operator=(const SmallArray&) = delete;
  ~SmallArray() { std::free(p_); }

  uint32_t size() const { return n_; }
  uint32_t capacity() const { return cap_; }
  bool empty() const { return n_ == 0; }
  T* data() { return p_; }
  const T* data() const { return p_; }
  T& operator[](uint32_t i) { return p_[i]; }
  const T& operator[](uint32_t i) const { return p_[i]; }
  const T& front() const { return p_[0]; }
  const T& back() const { return p_[n_ - 1]; }
  T* begin() { return p_; }
  T* end() { return p_ + n_; }
  const T* begin() const { return p_; }
  const T* end() const { return p_ + n_; }

  void push_back(const T& v) {
    if (n_ == cap_) [[unlikely]]
      grow();
    p_[n_++] = v;
  }
  /// v before element i (n_ < kMax).
  void insert(uint32_t i, const T& v) {
    if (n_ == cap_) grow();
    std::memmove(p_ + i + 1, p_ + i, sizeof(T) * (n_ - i));
    p_[i] = v;
    ++n_;
  }
  /// Drops the first k elements.
  void erase_front(uint32_t k) {
    std::memmove(p_, p_ + k, sizeof(T) * (n_ - k));
    n_ -= k;
  }
  /// Room for n elements (n <= kMax), in one allocation.
  void reserve(uint32_t n) {
    if (n > cap_) resize_storage(n);
  }
  /// Elements [from, n) of `o` moved to the end of this one (which has room for them).
  void take_tail(SmallArray& o, uint32_t from) {
    std::memcpy(p_ + n_, o.p_ + from, sizeof(T) * (o.n_ - from));
    n_ += o.n_ - from;
    o.n_ = from;
  }
  void clear() { n_ = 0; }
  void swap(SmallArray& o) noexcept {
    std::swap(p_, o.p_);
    std::swap(n_, o.n_);
    std::swap(cap_, o.cap_);
  }

 private:
  [[gnu::noinline]] void grow() { resize_storage(cap_ ? (2 * cap_ < kMax ? 2 * cap_ : kMax) : 1); }
  void resize_storage(uint32_t cap) {
    auto* q = static_cast<T*>(std::realloc(p_, sizeof(T) * cap));
    if (!q) throw std::bad_alloc();  // this array unchanged
    p_   = q;
    cap_ = cap;
  }
  T* p_       = nullptr;
  uint32_t n_ = 0, cap_ = 0;
};

template <class T, uint32_t kChunk = 64>
class SortedChunks {
  static_assert(kChunk >= 4 && kChunk % 2 == 0);

 public:
  struct Pos {
    uint32_t c = 0, i = 0;
  };
  using Chunk = SmallArray<T, kChunk>;

  SortedChunks() = default;
  SortedChunks(SortedChunks&& o) noexcept
      : head_(std::move(o.head_)), rest_(std::move(o.rest_)), moved_(o.moved_) {
    o.release();
  }
  SortedChunks& operator=(SortedChunks&& o) noexcept {
    if (this != &o) {
      head_  = std::move(o.head_);
      rest_  = std::move(o.rest_);
      moved_ = o.moved_;
      o.release();
    }
    return *this;
  }

  bool empty() const { return head_.empty(); }
  /// Chunks holding elements (0 when empty).
  uint32_t chunks() const { return head_.empty() ? 0 : 1 + uint32_t(rest_.size()); }
  Pos begin() const { return empty() ? end() : Pos{0, 0}; }
  Pos end() const { return Pos{chunks(), 0}; }
  bool at_end(Pos p) const { return p.c == chunks(); }
  T& operator[](Pos p) { return chunk(p.c)[p.i]; }
  const T& operator[](Pos p) const { return chunk(p.c)[p.i]; }
  void next(Pos& p) const {
    if (++p.i == chunk(p.c).size()) p = Pos{p.c + 1, 0};
  }
  const T& front() const { return head_.front(); }  ///< !empty()
  const T& back() const { return rest_.empty() ? head_.back() : rest_.back().back(); }
  /// The last element, or null when empty (the in-order test: one branch on the common path).
  const T* last() const {
    if (rest_.empty()) [[likely]]
      return head_.empty() ? nullptr : &head_.back();
    return &rest_.back().back();
  }

  [[gnu::always_inline]] void push_back(const T& v) {
    if (rest_.empty() && head_.size() < kChunk) [[likely]]
      head_.push_back(v);
    else
      push_back_past_head(v);
  }

  /// The first element whose end is past `at` (end() if none). The first element answers
  /// most calls (a stream asks about its next undelivered byte): it is tried first.
  [[gnu::always_inline]] Pos first_ending_after(uint64_t at) const {
    if (head_.empty()) return end();
    if (head_[0].end > at) return Pos{0, 0};
    uint32_t c = 0;
    if (!rest_.empty() && head_.back().end <= at) {  // past head_: which chunk of rest_
      uint32_t lo = 0, hi = uint32_t(rest_.size());
      while (lo < hi) {
        const uint32_t mid = (lo + hi) / 2;
        if (rest_[mid].back().end <= at)
          lo = mid + 1;
        else
          hi = mid;
      }
      if (lo == rest_.size()) return end();
      c = lo + 1;
    }
    const Chunk& ch = chunk(c);
    uint32_t a = 0, b = uint32_t(ch.size());
    while (a < b) {
      const uint32_t mid = (a + b) / 2;
      if (ch[mid].end <= at)
        a = mid + 1;
      else
        b = mid;
    }
    return a == ch.size() ? end() : Pos{c, a};  // a == size only for head_ without rest_
  }

  /// Inserts v before p (at the end when p is end()); where v now is.
  Pos insert(Pos p, const T& v) {
    if (at_end(p)) {
      push_back(v);
      return Pos{chunks() - 1, uint32_t(chunk(chunks() - 1).size() - 1)};
    }
    if (chunk(p.c).size() == kChunk) {  // split: the upper half to a new chunk after it
      Chunk upper;
      upper.reserve(kChunk / 2);  // allocations first: a failure changes nothing
      add_chunk(p.c);             // rest_[p.c] is chunk p.c + 1
      rest_[p.c].swap(upper);
      rest_[p.c].take_tail(chunk(p.c), kChunk / 2);
      moved_ += kChunk / 2;
      if (p.i > kChunk / 2) p = Pos{p.c + 1, p.i - kChunk / 2};
    }
    Chunk& ch = chunk(p.c);
    moved_ += ch.size() - p.i;
    ch.insert(p.i, v);
    return p;
  }

  /// Erases every element before p; the list keeps head_'s storage when emptied.
  [[gnu::always_inline]] void erase_before(Pos p) {
    if (at_end(p))
      clear();
    else
      erase_some(p);
  }

  /// Empty, keeping head_'s storage.
  void clear() {
    head_.clear();
    if (!rest_.empty()) rest_.clear();
  }
  /// Empty, keeping head_'s storage if it has room for at most `keep` elements and no other
  /// chunk was ever needed; else holding none.
  void recycle(size_t keep) {
    if (head_.capacity() > keep || rest_.capacity())
      release();
    else
      head_.clear();
  }
  /// Empty, holding no storage.
  void release() {
    Chunk().swap(head_);
    std::vector<Chunk>().swap(rest_);
  }
  /// Elements the list has room for without allocating (its chunks' capacities).
  size_t capacity() const {
    size_t n = head_.capacity();
    for (const Chunk& ch : rest_) n += ch.capacity();
    return n;
  }
  size_t size() const {
    size_t n = head_.size();
    for (const Chunk& ch : rest_) n += ch.size();
    return n;
  }

  /// f(element) from p on while it returns true; the position of the first element it refused
  /// (end() if none). The in-order paths' walks (runs from the front) go through here.
  template <class F>
  [[gnu::always_inline]] Pos walk(Pos p, F&& f) {
    return walk_from(*this, p, f);
  }
  template <class F>
  [[gnu::always_inline]] Pos walk(Pos p, F&& f) const {
    return walk_from(*this, p, f);
  }

  template <class F>
  void for_each(F&& f) {
    for (T& v : head_) f(v);
    for (Chunk& ch : rest_)
      for (T& v : ch) f(v);
  }

  /// Elements and chunk headers moved by inserts and erases so far: the work bound's witness
  /// (tests check it grows linearly with the operations however they are ordered).
  uint64_t moved() const { return moved_; }

 private:
  Chunk& chunk(uint32_t c) { return c ? rest_[c - 1] : head_; }
  const Chunk& chunk(uint32_t c) const { return c ? rest_[c - 1] : head_; }

  template <class Self, class F>
  [[gnu::always_inline]] static Pos walk_from(Self& self, Pos p, F& f) {
    if (p.c == 0) {
      auto* d = self.head_.data();
      for (uint32_t i = p.i, n = uint32_t(self.head_.size()); i < n; ++i)
        if (!f(d[i])) return Pos{0, i};
      if (self.rest_.empty()) [[likely]]
        return Pos{self.head_.empty() ? 0u : 1u, 0};
      p = Pos{1, 0};
    }
    for (uint32_t c = p.c, n = uint32_t(self.rest_.size()); c <= n; ++c) {
      auto* d = self.rest_[c - 1].data();
      for (uint32_t i = c == p.c ? p.i : 0, m = uint32_t(self.rest_[c - 1].size()); i < m; ++i)
        if (!f(d[i])) return Pos{c, i};
    }
    return self.end();
  }

  [[gnu::noinline]] void push_back_past_head(const T& v) {
    if (!rest_.empty() && rest_.back().size() < kChunk) {
      rest_.back().push_back(v);
      return;
    }
    Chunk last;
    last.push_back(v);  // allocations first: a failure changes nothing
    rest_.push_back(std::move(last));
  }
  [[gnu::noinline]] void erase_some(Pos p) {
    if (p.c) {  // chunks 0..p.c-1 go: chunk p.c becomes head_
      moved_ += rest_.size() - p.c + 1;
      head_.swap(rest_[p.c - 1]);
      rest_.erase(rest_.begin(), rest_.begin() + p.c);
    }
    if (p.i) {
      moved_ += head_.size() - p.i;
      head_.erase_front(p.i);
    }
  }
  /// A new, empty chunk at rest_[at] (chunk at + 1).
  void add_chunk(size_t at) {
    moved_ += rest_.size() - at;
    rest_.emplace(rest_.begin() + long(at));
  }

  Chunk head_;
  std::vector<Chunk> rest_;
  uint64_t moved_ = 0;
};

}  // namespace warpath::ranges
