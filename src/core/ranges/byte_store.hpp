// src/core/ranges/byte_store.hpp: buffered bytes of a stream or datagram, one map entry per
// byte with the extent of the piece (segment, fragment) that stored it: the deliberately naive
// store of the reference engines (ref.stream, ref.defrag). range_store.hpp is the fast one;
// both answer the same calls the same way.
#pragma once
#include <cstdint>
#include <map>

#include "core/ranges/insert.hpp"

namespace warpath::ranges {

class ByteStore {
 public:
  uint64_t buffered() const { return bytes_.size(); }

  /// Stores n bytes at `at`; `wins(old_start, old_end)` says whether they overwrite a byte
  /// stored by the piece [old_start, old_end).
  template <class Wins>
  Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
                const Wins& wins) {
    Insert r;
    for (uint32_t i = 0; i < n; ++i) {
      auto it = bytes_.find(at + i);
      if (it == bytes_.end()) {
        bytes_[at + i] = {data[i], os, oe};
        r.added += 1;
        continue;
      }
      r.overlap = true;
      if (it->second.value != data[i]) r.differ = true;
      if (wins(it->second.start, it->second.end))
        it->second = {data[i], os, oe};
    }
    return r;
  }

  uint64_t contiguous_end(uint64_t from) const {
    uint64_t at = from;
    while (bytes_.count(at)) ++at;
    return at;
  }

  uint64_t first_start() const { return bytes_.empty() ? kNever : bytes_.begin()->first; }
  /// One past the last byte stored (0 when empty).
  uint64_t max_end() const { return bytes_.empty() ? 0 : bytes_.rbegin()->first + 1; }
  /// Whether any byte of [from, to) is stored.
  bool overlaps(uint64_t from, uint64_t to) const {
    auto it = bytes_.lower_bound(from);
    return it != bytes_.end() && it->first < to;
  }

  void take(uint64_t from, uint64_t to, uint8_t* out) {
    for (uint64_t at = from; at < to; ++at) {
      auto it  = bytes_.find(at);
      *out++   = it->second.value;
      bytes_.erase(it);
    }
  }

 private:
  struct Byte {
    uint8_t value;
    uint64_t start, end;  ///< the storing segment
  };
  std::map<uint64_t, Byte> bytes_;
};

}  // namespace warpath::ranges
