// src/classify/tmerge_flat.cpp: a TupleMerge set copied into one buffer and patched
// (tmerge_flat.hpp).
#include "classify/tmerge_flat.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <new>

namespace warpath::classify::detail {
namespace {

size_t align64(size_t x) { return (x + 63) & ~size_t(63); }

template <unsigned NW>
size_t bucket_bytes(const core::TmBucket<NW>* b) {
  return sizeof(core::TmBucket<NW>) + size_t(b->count) * sizeof(core::TmEntry<NW>);
}

// A slot as the copy holds it: the same tag and count bits, the bucket's address in the copy.
uint64_t rebased(uint64_t slot, uint64_t at) { return (slot & 0xFFFF'0000'0000'003Full) | at; }

}  // namespace

template <unsigned NW>
size_t TmFlat<NW>::bytes_for(const TmSet<NW>& set) {
  const TmList<NW>& list = *set.list();
  size_t bytes = align64(list.tables.size() * sizeof(core::TmTable<NW>));
  for (const auto& t : list.tables) {
    bytes += align64(size_t(t.cap_mask + 1) * 8);
    for (uint32_t i = 0; i <= t.cap_mask; ++i)
      if (t.slots[i] > core::kTmTomb) bytes += bucket_bytes(core::tm_bucket_of<NW>(t.slots[i]));
  }
  return std::max<size_t>(bytes, 64);
}

template <unsigned NW>
void TmFlat<NW>::write_views(const TmList<NW>& list) {
  auto* views = reinterpret_cast<core::TmTable<NW>*>(buf_.get());
  for (size_t c = 0; c < list.tables.size(); ++c) {
    views[c]       = list.tables[c];
    views[c].slots = reinterpret_cast<const uint64_t*>(base_ + slots_.at(list.tables[c].slots).first);
  }
  views_changed_ = true;
}

template <unsigned NW>
void TmFlat<NW>::word(size_t off, uint64_t v) {
  std::memcpy(buf_.get() + off, &v, 8);
  words_.emplace_back(off, v);
}

template <unsigned NW>
size_t TmFlat<NW>::append_bucket(const core::TmBucket<NW>* b) {
  const size_t n = bucket_bytes(b);
  if (used_ + n > capacity_) return SIZE_MAX;
  const size_t at = used_;
  std::memcpy(buf_.get() + at, b, n);
  used_ += n;
  buckets_[b] = at;
  return at;
}

template <unsigned NW>
void TmFlat<NW>::rebuild(TmSet<NW>& set, uint64_t base, size_t capacity) {
  const TmList<NW>& list = *set.list();
  capacity  = std::max(align64(capacity), bytes_for(set));
  if (capacity != capacity_ || !buf_) {
    buf_.reset(static_cast<unsigned char*>(std::aligned_alloc(64, capacity)));
    if (!buf_) throw std::bad_alloc();
    capacity_ = capacity;
  }
  base_  = base ? base : uint64_t(reinterpret_cast<uintptr_t>(buf_.get()));
  epoch_ = set.epoch();
  list_  = &list;
  tables_ = uint32_t(list.tables.size());
  slots_.clear();
  buckets_.clear();
  bulk_.clear();
  words_.clear();
  used_ = align64(list.tables.size() * sizeof(core::TmTable<NW>));
  std::memset(buf_.get(), 0, used_);
  for (const auto& t : list.tables) {  // slot arrays first: the views point at them
    slots_[t.slots] = {used_, t.cap_mask};
    used_ += align64(size_t(t.cap_mask + 1) * 8);
  }
  for (const auto& t : list.tables) {
    auto* slots = reinterpret_cast<uint64_t*>(buf_.get() + slots_[t.slots].first);
    for (uint32_t i = 0; i <= t.cap_mask; ++i) {
      const uint64_t s = t.slots[i];
      slots[i] = s <= core::kTmTomb ? s : rebased(s, base_ + append_bucket(core::tm_bucket_of<NW>(s)));
    }
  }
  write_views(list);
  bulk_.assign(1, {0, used_});
  set.clear_logs();
}

template <unsigned NW>
bool TmFlat<NW>::update(TmSet<NW>& set) {
  const size_t appended_from = used_;  // new buckets go one after the other from here
  bulk_.clear();
  words_.clear();
  views_changed_ = false;
  if (!buf_ || set.epoch() != epoch_) return false;
  const TmList<NW>& list = *set.list();
  const bool republished = &list != list_;
  if (republished) {  // the same tables (slot arrays) with other bests, maybe in another order
    if (list.tables.size() != tables_) return false;
    for (const auto& t : list.tables) {
      const auto it = slots_.find(t.slots);
      if (it == slots_.end() || it->second.second != t.cap_mask) return false;
    }
    list_ = &list;
  }
  for (const auto& c : set.slot_log()) {
    const auto it = slots_.find(c.slots);
    if (it == slots_.end()) return false;
    const uint64_t s = c.slots[c.index];  // its value now (a later change logged it again)
    uint64_t v       = s;
    if (s > core::kTmTomb) {
      const auto* b = core::tm_bucket_of<NW>(s);
      auto known    = buckets_.find(b);
      const size_t at = known != buckets_.end() ? known->second : append_bucket(b);
      if (at == SIZE_MAX) return false;
      v = rebased(s, base_ + at);
    }
    word(it->second.first + size_t(c.index) * 8, v);
  }
  for (const auto& d : set.death_log()) {
    const auto it = buckets_.find(d.bucket);
    if (it == buckets_.end()) return false;
    const size_t off = it->second + sizeof(core::TmBucket<NW>) +
                       size_t(d.entry) * sizeof(core::TmEntry<NW>) + offsetof(core::TmEntry<NW>, death);
    word(off, core::tm_entries(d.bucket)[d.entry].death);
  }
  if (republished) write_views(list);
  if (used_ > appended_from) bulk_.assign(1, {appended_from, used_ - appended_from});
  set.clear_logs();
  return true;
}

template class TmFlat<4>;
template class TmFlat<9>;

}  // namespace warpath::classify::detail
