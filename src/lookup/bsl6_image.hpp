// src/lookup/bsl6_image.hpp
//
// The host image of IPv6 binary search on prefix lengths (layout and lookup:
// src/lookup/core/bsl6_core.hpp). Built once from a route list and immutable afterwards; the
// CPU engines use view() directly, cuda/bsl6_cuda.hpp mirrors the same bytes on a GPU.
//
// Build (O(routes x depth) entries, O(markers x lengths) for the marker next hops)
//   1. The distinct lengths 1..128 become the nodes of a binary search tree; ::/0 becomes the
//      view's default next hop. The tree is Knuth's optimal binary search tree for a traffic
//      model (Waldvogel's asymmetric binary search): kMissShare of the lookups match nothing
//      but ::/0 (uniform random addresses), the rest fall under a prefix chosen uniformly
//      among the table's. On the full 2024 table that makes the root /16 (a uniform address
//      misses there: 1 probe) and the prefix half take 4.4 probes, against 6 probes for
//      both halves in a balanced tree; markers fall from 106K to 23K. Equal weights give a
//      balanced tree.
//   2. Every prefix is entered in its length's table, then walked from the root to its node:
//      wherever the walk turns to longer lengths it leaves a marker (the prefix cut to the
//      node's length) unless that key is already there.
//   3. A marker that is not a prefix gets the next hop of the longest real prefix covering it
//      (lengths <= its own, down to ::/0), found in the per-length prefix sets.
//   4. Each table is hashed into 64-byte buckets at half its slots used (kLoad): a probe
//      rarely needs a second line, and the full table takes 4.5 MiB. A table whose keys cannot
//      all be placed within kBsl6MaxProbe buckets of their home, or whose probe runs would
//      exceed that bound, is grown by a quarter and rehashed.
//
// Thread safety: build() is a pure function; an image is immutable and may be shared.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

#include "lookup/core/bsl6_core.hpp"
#include "warpath/core/status.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup::detail {

class Bsl6Image {
 public:
  /// Compiles `routes`: unique (prefix, len), host bits zero, len 0..128, nh <= kMaxNextHop.
  /// kInvalidArgument names the first bad route; kCapacity if the image would exceed 2^32
  /// buckets.
  static Result<std::unique_ptr<Bsl6Image>> build(const std::vector<Route6>& routes);

  /// The image as the core functions see it (host pointers, valid while the image lives).
  core::Bsl6View view() const noexcept;
  /// Bytes of the lookup structures (nodes and buckets).
  uint64_t memory_bytes() const noexcept;
  /// Distinct prefix lengths other than 0, i.e. hash tables.
  uint32_t lengths() const noexcept { return terminal_; }
  /// Marker entries that are not also prefixes.
  uint64_t markers() const noexcept { return markers_; }
  /// Routes compiled (the default route included).
  uint64_t routes() const noexcept { return routes_; }

  const std::vector<core::Bsl6Node>& nodes() const noexcept { return nodes_; }
  const std::vector<core::Bsl6Bucket>& buckets() const noexcept { return buckets_; }

 private:
  Bsl6Image() = default;

  std::vector<core::Bsl6Node> nodes_;      // terminal_ + 1 nodes
  std::vector<core::Bsl6Bucket> buckets_;  // 64-byte aligned (over-aligned new)
  uint32_t root_      = 0;
  uint32_t terminal_  = 0;
  uint32_t height_    = 0;
  NextHop default_nh_ = kNoRoute;
  uint64_t markers_   = 0;
  uint64_t routes_    = 0;
};

}  // namespace warpath::lookup::detail
