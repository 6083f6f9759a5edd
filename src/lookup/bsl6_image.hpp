// src/lookup/bsl6_image.hpp
//
// The host image of IPv6 binary search on prefix lengths (layout and lookup:
// src/lookup/core/bsl6_core.hpp). Built once from a route list and immutable afterwards; the
// CPU engines use view() directly, cuda/bsl6_cuda.hpp mirrors the same bytes on a GPU.
//
// Build (O(routes x depth) entries, O(markers x lengths) for the marker next hops)
//   1. Blocks: the /16s holding prefixes longer than /16 get a block of 256 /24 starts, the
//      densest first, up to max_blocks (default 4,096: 8 MiB); the others stay /16 leaves.
//   2. The initial array (Waldvogel's, two levels): every leaf's bmp, painted shortest route
//      first (routes of length <= 16 over /16 leaves, then 17..24 over each block).
//   3. Each leaf's lengths longer than its depth become a search tree, one per distinct
//      profile (lengths and their prefix counts under the leaf, rounded to half powers of
//      two). The tree is Knuth's optimal binary search tree for a traffic model (Waldvogel's
//      asymmetric binary search): each prefix under the leaf equally likely, so the leaf's
//      common lengths sit near the root, a small share of lookups that match nothing longer
//      than the leaf, and a floor on every weight that bounds the longest search. The full
//      2024 table (46 lengths): 59 blocks, 1,975 trees, at most 23 lengths under a leaf; an
//      address under a random prefix takes 1.92 probes on average and at most 6, against 4.4
//      and 9 with one tree of all lengths and no initial array; a uniform address in 2000::/3
//      takes none.
//   4. Every prefix longer than its leaf's depth is entered in its length's table, then walked
//      from its leaf's root to its node: wherever the walk turns to longer lengths it leaves
//      a marker (the prefix cut to the node's length) unless that key is already there.
//   5. A marker that is not a prefix gets the next hop of the longest real prefix covering it
//      (lengths <= its own, down to ::/0), found in the per-length prefix sets.
//   6. Each table is hashed into 64-byte buckets at half its slots used (kLoad): a probe
//      rarely needs a second line. A table whose keys cannot all be placed within
//      kBsl6MaxProbe buckets of their home, or whose probe runs would exceed that bound, is
//      grown by a quarter and rehashed.
//
// Updates (updated(): one route added, replaced or removed) copy the image and rewrite only the
// entries of the leaves the route touches: its own leaf when it is longer than the leaf's
// depth (the leaf's tree may change with its profile: a new tree is appended, the old one
// stays for leaves that still use it), else every leaf it covers (their bmp and their markers'
// next hops; at most 1,024 leaves). Each leaf's entries are computed before and after from the
// writer state kept beside the image (routes by length, each leaf's routes, trees by profile,
// table geometry) and the difference is applied to the copied hash tables. An update that
// needs a table the image lacks (a length no leaf probed), finds a table full within the probe
// bound, or would leave too many retired trees answers kCapacity: the caller rebuilds.
//
// Thread safety: build() and updated() are pure functions of their inputs, except that
// updated() advances the writer state the images of one build share: only the newest image
// may be updated (FibState's writer lock). An image is immutable and may be shared.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "lookup/core/bsl6_core.hpp"
#include "warpath/core/status.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup::detail {

struct Bsl6Writer;  // bsl6_image.cpp

class Bsl6Image {
 public:
  /// Compiles `routes`: unique (prefix, len), host bits zero, len 0..128, nh <= kMaxNextHop.
  /// kInvalidArgument names the first bad route; kCapacity if the image would exceed 2^32
  /// buckets.
  static constexpr uint32_t kDefaultMaxBlocks = 4096;
  static Result<std::unique_ptr<Bsl6Image>> build(const std::vector<Route6>& routes,
                                                  uint32_t max_blocks = kDefaultMaxBlocks);

  /// A copy of this image with route `r` added or replaced (remove: removed; r.nh ignored).
  /// kNotFound: removing an absent route; kCapacity: rebuild from the RIB instead (see above;
  /// this image may then not be updated again).
  Result<std::unique_ptr<Bsl6Image>> updated(const Route6& r, bool remove) const;

  /// The image as the core functions see it (host pointers, valid while the image lives).
  core::Bsl6View view() const noexcept;
  /// Bytes of the lookup structures (initial array, nodes and buckets).
  uint64_t memory_bytes() const noexcept;
  /// Hash tables: the distinct prefix lengths that some leaf's search tree probes (lengths
  /// of 16 or less, and 17..24 under a block, are answered by the initial array).
  uint32_t lengths() const noexcept { return lengths_; }
  /// Search trees (distinct sets of lengths under a leaf) and /24 blocks of the initial array.
  uint32_t trees() const noexcept { return trees_; }
  uint32_t blocks() const noexcept { return blocks_; }
  /// Marker entries that are not also prefixes.
  uint64_t markers() const noexcept { return markers_; }
  /// Routes compiled (the default route included).
  uint64_t routes() const noexcept { return routes_; }

  const std::vector<core::Bsl6Start>& starts() const noexcept { return starts_; }
  const std::vector<core::Bsl6Node>& nodes() const noexcept { return nodes_; }
  const std::vector<core::Bsl6Bucket>& buckets() const noexcept { return buckets_; }

 private:
  Bsl6Image()                            = default;
  Bsl6Image(const Bsl6Image&)            = default;
  Bsl6Image& operator=(const Bsl6Image&) = delete;

  std::vector<core::Bsl6Start> starts_;    // kBsl6TopEntries + 256 per block
  std::vector<core::Bsl6Node> nodes_;      // node 0: terminal
  std::vector<core::Bsl6Bucket> buckets_;  // 64-byte aligned (over-aligned new)
  uint32_t lengths_   = 0;
  uint32_t trees_     = 0;
  uint32_t blocks_    = 0;
  uint32_t height_    = 0;
  NextHop default_nh_ = kNoRoute;
  uint64_t markers_   = 0;
  uint64_t routes_    = 0;
  std::shared_ptr<Bsl6Writer> writer_;  // the build's writer state (bsl6_image.cpp)
};

}  // namespace warpath::lookup::detail
