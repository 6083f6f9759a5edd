// src/classify/tmerge_flat.hpp: a copy of a TupleMerge set in one buffer, kept up to date by
// small patches (cuda.tuplemerge's device image; tested on the host, where the copy can be
// probed in place).
//
// Layout: the tables' views (core::TmTable, sorted as the set's list), each table's slot array,
// then the buckets, each 64-byte aligned; every pointer is rebased to `base`, the address the
// buffer has where its readers are (the device's copy; the buffer itself for a host reader).
// The buffer is made with room to spare (twice the set, plus 64 KiB) for buckets added later.
//
// update() follows the writer's logs (TmSet::slot_log / death_log): a stored slot is rewritten
// (a new bucket is appended in the spare room first), a written death is copied, a list
// republished with the same tables (their bests changed, maybe their order) rewrites the views.
// It refuses (the caller rebuilds) when the set was restructured since (a new table, a slot
// array replaced, a collection: TmSet::epoch, at least every kTmCollectEvery updates) or the
// room is used up.
//
// A remote copy with readers running applies an update in this order: the new buckets' bytes
// (bulk(): nothing points at them yet), then the 8-byte words (words(): slots and deaths), each
// stored whole (a reader may load it meanwhile), then, if views_changed(), a fresh copy of the
// views for the readers that start after it (views are read field by field: never rewritten
// under a reader). Readers at older versions stay right meanwhile: buckets are copy-on-write
// and a death only hides an entry from later versions, as in the set itself.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <utility>
#include <vector>

#include "classify/tmerge_image.hpp"

namespace warpath::classify::detail {

template <unsigned NW>
class TmFlat {
 public:
  /// Bytes a buffer for `set` needs now (without the room to spare).
  static size_t bytes_for(const TmSet<NW>& set);
  /// The buffer to make for `set`: with room for buckets added later.
  static size_t capacity_for(const TmSet<NW>& set) { return bytes_for(set) * 2 + (64u << 10); }

  /// Copies `set` whole into a buffer of `capacity` bytes whose readers see it at `base` (0: at
  /// this buffer's own address; the caller holds the writer's mutex; the logs are cleared).
  /// bulk() is then the one range written, [0, used()).
  void rebuild(TmSet<NW>& set, uint64_t base, size_t capacity);
  /// Brings the copy to `set`'s state by patches (the caller holds the writer's mutex; the logs
  /// are cleared); false when it cannot: rebuild.
  bool update(TmSet<NW>& set);

  /// After rebuild(): the whole buffer, [0, used()). After update(): the new buckets, one
  /// range (they are appended one after the other), or none.
  const std::vector<std::pair<size_t, size_t>>& bulk() const { return bulk_; }
  /// After update(): the 8-byte words written in place, (offset, value).
  const std::vector<std::pair<size_t, uint64_t>>& words() const { return words_; }
  /// After update(): the views (at offset 0, tables() of them) were rewritten.
  bool views_changed() const { return views_changed_; }
  const unsigned char* data() const { return buf_.get(); }
  size_t used() const { return used_; }
  size_t capacity() const { return capacity_; }
  uint32_t tables() const { return tables_; }
  /// The tables' views, for a reader of this buffer on the host (base 0).
  const core::TmTable<NW>* views() const {
    return reinterpret_cast<const core::TmTable<NW>*>(buf_.get());
  }

 private:
  struct Free {
    void operator()(unsigned char* p) const { std::free(p); }
  };
  size_t append_bucket(const core::TmBucket<NW>* b);  // its offset, or SIZE_MAX (no room)
  void write_views(const TmList<NW>& list);
  void word(size_t off, uint64_t v);

  std::unique_ptr<unsigned char[], Free> buf_;
  size_t capacity_ = 0, used_ = 0;
  uint64_t base_   = 0;
  uint64_t epoch_  = 0;
  uint32_t tables_ = 0;
  const TmList<NW>* list_ = nullptr;
  std::unordered_map<const uint64_t*, std::pair<size_t, uint32_t>> slots_;  // -> offset, cap_mask
  std::unordered_map<const void*, size_t> buckets_;                        // -> offset
  std::vector<std::pair<size_t, size_t>> bulk_;
  std::vector<std::pair<size_t, uint64_t>> words_;
  bool views_changed_ = false;
};

extern template class TmFlat<4>;
extern template class TmFlat<9>;

}  // namespace warpath::classify::detail
