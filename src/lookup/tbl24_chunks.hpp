// src/lookup/tbl24_chunks.hpp: a DIR-24-8 image's tbl24, compressed by /16 chunk (layout in
// core/tbl24_chunks_core.hpp), and its single writer.
//
// The DIR-24-8 image stays the writer's truth: its add()/remove() rewrite tbl24 in place, then
// refresh() re-derives the chunks the route covers from tbl24. A chunk whose entries did not
// change keeps its record; a changed one gets a new record in free pool space, published by one
// release store of its chunk[] entry, and the old record is retired. Retired records are
// reused after release_retired(), which the owner calls once ReadGuard::synchronize() says no
// reader can still be inside them. Chunks whose 256 entries are equal share one record per
// value; those are never retired (at most one per distinct value).
//
// Space: the pool is sized at build with room for updates; reserve() says, before an update
// writes anything, whether the worst case of its chunks fits (kCapacity: the caller rebuilds).
#pragma once
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "lookup/core/tbl24_chunks_core.hpp"
#include "lookup/huge_array.hpp"
#include "warpath/core/status.hpp"

namespace warpath::lookup::detail {

class Tbl24Chunks {
 public:
  /// Compresses the 2^24 entries of tbl24 (E = uint16_t or uint32_t).
  template <class E>
  static Result<std::unique_ptr<Tbl24Chunks>> build(const E* tbl24);

  /// kCapacity when the records of chunks [lo, hi] might not fit in the free pool space.
  Status reserve(uint32_t lo, uint32_t hi) const;
  /// Re-derives chunks [lo, hi] from tbl24 and publishes those that changed.
  template <class E>
  void refresh(const E* tbl24, uint32_t lo, uint32_t hi);

  /// Enough replaced records wait for release_retired() that the owner should synchronize.
  bool wants_release() const { return retired_units_ >= release_units_; }
  bool has_retired() const { return !retired_.empty(); }
  /// Makes the retired records reusable; call after ReadGuard::synchronize().
  void release_retired();

  core::Tbl24ChunksView view() const;
  uint64_t memory_bytes() const;  ///< chunk[] and the pool (data plane)
  uint64_t writer_bytes() const;
  uint32_t records() const { return records_; }  ///< distinct records in use
  uint64_t used_bytes() const;                   ///< pool bytes in use

 private:
  Tbl24Chunks() = default;
  /// Compresses one chunk into `rec` (zeroed, max_units_ units); returns its units, 0 when
  /// the chunk's entries are all equal (then *uniform holds the value).
  template <class E>
  uint32_t compress(const E* entries, uint8_t* rec, uint32_t* uniform) const;
  template <class E>
  uint32_t uniform_record(E value);  // offset of the shared record, made on first use
  uint32_t allocate(uint32_t units);
  uint32_t* chunk() const { return static_cast<uint32_t*>(chunk_.data); }
  uint8_t* pool() const { return static_cast<uint8_t*>(pool_.data); }

  uint32_t entry_bytes_ = 2, max_units_ = 0;
  HugeArray chunk_, pool_;
  uint32_t pool_units_ = 0, bump_ = 0;       // capacity and first never-used unit
  std::vector<uint8_t> units_;               // per chunk: its record's units, 0 when shared
  std::vector<std::vector<uint32_t>> free_;  // free records by units
  std::vector<std::pair<uint32_t, uint32_t>> retired_;  // (offset, units)
  uint64_t retired_units_ = 0, release_units_ = 0, free_units_ = 0;
  std::unordered_map<uint32_t, uint32_t> uniform_;  // value -> shared record
  uint32_t records_ = 0;
};

}  // namespace warpath::lookup::detail
