// ref.stream: the deliberately naive store, the oracle of the other engines: one map entry per
// buffered byte, holding the byte and the extent of the segment that stored it, and the
// overlap rule applied byte by byte.
#include <map>

#include "stream/engines.hpp"
#include "stream/store_reassembler.hpp"

namespace warpath::stream::detail {
namespace {

class ByteStore {
 public:
  uint64_t buffered() const { return bytes_.size(); }

  Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
                Policy policy) {
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
      if (core::new_wins(policy, os, oe, it->second.start, it->second.end))
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

}  // namespace

std::unique_ptr<Reassembler> make_ref_reassembler(const StreamConfig& config) {
  return std::make_unique<StoreReassembler<ByteStore>>("ref.stream", config);
}

}  // namespace warpath::stream::detail
