// cpu.stream: buffered bytes as non-overlapping ranges (one per stored segment part, keyed by
// stream offset), each remembering the extent of the segment that stored it. A new segment
// fills the free space between ranges and, where the policy lets it win, splits the range it
// overlaps into the part before, its own part, and the part after. Delivery copies a run of
// ranges out and drops them (or the delivered front of one).
#include <cstring>
#include <iterator>
#include <map>

#include "stream/engines.hpp"
#include "stream/store_reassembler.hpp"

namespace warpath::stream::detail {
namespace {

class RangeStore {
 public:
  uint64_t buffered() const { return buffered_; }

  Insert insert(uint64_t at, const uint8_t* data, uint32_t n, uint64_t os, uint64_t oe,
                Policy policy) {
    Insert r;
    const uint64_t e = at + n;
    uint64_t c       = at;
    while (c < e) {
      auto it = covering(c);
      if (it == pieces_.end()) {  // free space from c to the next range (or the end)
        auto next         = pieces_.lower_bound(c);
        const uint64_t to = next == pieces_.end() ? e : std::min(e, next->first);
        add(c, to, os, oe, data + (c - at));
        r.added += to - c;
        c = to;
        continue;
      }
      const uint64_t ps = it->first;
      Piece& p          = it->second;
      const uint64_t to = std::min(e, p.end);
      r.overlap         = true;
      if (std::memcmp(p.bytes.data() + (c - ps), data + (c - at), to - c) != 0) r.differ = true;
      if (core::new_wins(policy, os, oe, p.os, p.oe)) {
        Piece old = std::move(p);
        pieces_.erase(it);
        buffered_ -= old.end - ps;
        if (ps < c) add(ps, c, old.os, old.oe, old.bytes.data());
        add(c, to, os, oe, data + (c - at));
        if (to < old.end) add(to, old.end, old.os, old.oe, old.bytes.data() + (to - ps));
      }
      c = to;
    }
    return r;
  }

  uint64_t contiguous_end(uint64_t from) const {
    auto it = covering(from);
    if (it == pieces_.end()) return from;
    uint64_t end = it->second.end;
    for (++it; it != pieces_.end() && it->first == end; ++it) end = it->second.end;
    return end;
  }

  uint64_t first_start() const { return pieces_.empty() ? kNever : pieces_.begin()->first; }

  void take(uint64_t from, uint64_t to, uint8_t* out) {
    uint64_t c = from;
    while (c < to) {
      auto it           = pieces_.find(c);  // runs start at a range's start
      Piece& p          = it->second;
      const uint64_t ps = it->first;
      if (p.end <= to) {
        std::memcpy(out, p.bytes.data(), p.end - ps);
        out += p.end - ps;
        buffered_ -= p.end - ps;
        c = p.end;
        pieces_.erase(it);
        continue;
      }
      std::memcpy(out, p.bytes.data(), to - ps);  // the front of a range
      Piece rest = std::move(p);
      pieces_.erase(it);
      buffered_ -= rest.end - ps;
      add(to, rest.end, rest.os, rest.oe, rest.bytes.data() + (to - ps));
      c = to;
    }
  }

 private:
  struct Piece {
    uint64_t end = 0;
    uint64_t os = 0, oe = 0;  ///< the storing segment
    std::vector<uint8_t> bytes;
  };
  using Map = std::map<uint64_t, Piece>;

  Map::iterator covering(uint64_t at) {
    auto it = pieces_.upper_bound(at);
    if (it == pieces_.begin()) return pieces_.end();
    --it;
    return it->second.end > at ? it : pieces_.end();
  }
  Map::const_iterator covering(uint64_t at) const {
    auto it = pieces_.upper_bound(at);
    if (it == pieces_.begin()) return pieces_.end();
    --it;
    return it->second.end > at ? it : pieces_.end();
  }
  void add(uint64_t from, uint64_t to, uint64_t os, uint64_t oe, const uint8_t* data) {
    Piece p;
    p.end = to;
    p.os  = os;
    p.oe  = oe;
    p.bytes.assign(data, data + (to - from));
    pieces_.emplace(from, std::move(p));
    buffered_ += to - from;
  }

  Map pieces_;
  uint64_t buffered_ = 0;
};

}  // namespace

std::unique_ptr<Reassembler> make_cpu_reassembler(const StreamConfig& config) {
  return std::make_unique<StoreReassembler<RangeStore>>("cpu.stream", config);
}

}  // namespace warpath::stream::detail
