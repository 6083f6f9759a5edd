// src/lookup/dir24_8_image.hpp: a DIR-24-8 image in host memory and its single writer.
//
// build() paints the routes of a Rib4 into tbl24/tbl8 (see core/dir24_8_core.hpp for the
// layout). add()/remove() then keep the image equal to the RIB route by route, rewriting
// entries in place while readers look up (DPDK rte_lpm's algorithm): the writer keeps, beside
// each entry, the depth (prefix length + 1, 0 = none) of the route that set it, so an added
// route overwrites exactly the entries whose route is no longer than it, and a removed route's
// entries fall back to the best shorter route in the RIB. A tbl8 group is filled before the
// tbl24 store that publishes it; a group that no longer holds a route longer than /24 is
// collapsed into its tbl24 entry and retired: the owner calls release_retired() once no reader
// (host or device) can still reach it, and only then is it reused.
//
// kCapacity from add() means the image cannot take the route as it is (no free group, or a
// 16-bit image with 32,767 distinct next hops): the caller rebuilds a larger image from the RIB
// and publishes it. Every entry written is logged in dirty() for device mirrors.
#pragma once
#include <cstdint>
#include <functional>
#include <memory>
#include <unordered_map>
#include <vector>

#include "lookup/core/dir24_8_core.hpp"
#include "lookup/huge_array.hpp"
#include "lookup/rib.hpp"
#include "lookup/tbl24_chunks.hpp"
#include "warpath/core/status.hpp"

namespace warpath::lookup::detail {

/// A range of entries written since the last drain: table 0 = tbl24, 1 = tbl8, 2 = nh.
struct DirtyRange {
  uint8_t table;
  uint32_t begin, end;
};

class Dir24_8Image {
 public:
  /// entry_bits: 16, 32, or 0 for the narrowest that fits with `spare_groups` free groups.
  /// compress: also keep tbl24 compressed by /16 (tbl24_chunks.hpp) for cpu.lpm.compressed.
  static Result<std::unique_ptr<Dir24_8Image>> build(const Rib4& rib, unsigned entry_bits,
                                                     uint32_t spare_groups, bool compress = false);
  ~Dir24_8Image();

  /// The RIB already holds `r` (after insert). kCapacity: rebuild needed.
  Status add(const Route4& r);
  /// The RIB no longer holds the route (after erase).
  Status remove(const Rib4& rib, uint32_t prefix, uint8_t len);
  /// Groups collapsed by remove(), or enough replaced tbl24 chunk records, not yet reusable.
  bool has_retired() const;
  /// Makes the retired groups and chunk records reusable; call after ReadGuard::synchronize().
  void release_retired();

  unsigned entry_bits() const { return bits_; }
  core::Dir24_8View<uint16_t> view16() const;
  core::Dir24_8View<uint32_t> view32() const;
  /// The compressed tbl24 (built with compress), or nullptr.
  const Tbl24Chunks* chunks() const { return chunks_.get(); }
  uint32_t groups_used() const { return groups_used_; }
  uint32_t group_capacity() const { return group_cap_; }
  /// Data-plane tables: tbl24 (or, compressed, its chunks: tbl24 is then the writer's), tbl8,
  /// next hops.
  uint64_t memory_bytes() const;
  uint64_t writer_bytes() const;  ///< depth shadows and free lists
  /// Moves the log of written entries out (coalesced ranges, in write order).
  std::vector<DirtyRange> drain_dirty();

 private:
  Dir24_8Image() = default;
  template <class E>
  E* tbl24() const {
    return static_cast<E*>(tbl24_.data);
  }
  template <class E>
  E* tbl8() const {
    return static_cast<E*>(tbl8_.data);
  }
  template <class E>
  Status add_impl(const Route4& r);
  template <class E>
  Status update(uint32_t prefix, uint8_t len, const std::function<Status()>& write);
  template <class E>
  Status remove_impl(const Rib4& rib, uint32_t prefix, uint8_t len);
  template <class E>
  Status value_of(NextHop nh, E& out);
  template <class E>
  void paint_group(uint32_t g, uint32_t lo, uint32_t hi, E value, uint8_t depth, bool replace_eq);
  void mark(uint8_t table, uint32_t begin, uint32_t end);

  unsigned bits_ = 0;
  HugeArray tbl24_, tbl8_;
  std::vector<uint8_t> depth24_, depth8_;  // prefix length + 1 of the route behind each entry
  // 16-bit: value -> next hop (data plane). Sized once at build, never reallocated, since
  // readers index it while the writer appends.
  std::vector<NextHop> nh_;
  std::unordered_map<NextHop, uint32_t> nh_index_;  // 16-bit: next hop -> value
  uint32_t group_cap_ = 0, groups_used_ = 0, groups_next_ = 0;
  std::vector<uint32_t> free_groups_, retired_;
  std::vector<DirtyRange> dirty_;
  std::unique_ptr<Tbl24Chunks> chunks_;
  bool logging_ = false;  // off during build(): a mirror uploads a fresh image whole
};

}  // namespace warpath::lookup::detail
