// src/lookup/core/bsl6_core.hpp
//
// IPv6 longest-prefix match by binary search on prefix lengths (Waldvogel, Varghese, Turner
// and Plattner, SIGCOMM'97), the algorithm of PacketShader's IPv6 forwarding (section 6.2.2).
// One body for every engine: cpu.lpm.scalar and cpu.lpm loop over the step functions below,
// cuda.lpm runs bsl6_lookup one thread per address. No STL and no CUDA header is used here;
// route.hpp is included for Ip6, NextHop and kNoRoute (its STL headers are host-only
// declarations that nvcc compiles; Ip6 and mask6 are WARPATH_HD).
//
// What the image holds (built by src/lookup/bsl6_image.cpp)
//   - Waldvogel's initial array, in two levels: starts[0, 2^16) indexed by the first 16
//     address bits, and for each /16 that holds longer prefixes (up to a cap) a block of 256
//     starts indexed by the next 8 bits. A start is a *leaf* of depth d = 16 or 24: its bmp
//     is the next hop of the longest prefix of length <= d covering it (::/0 included, so
//     routes of length <= d never reach a hash table), and its node is the root of the
//     leaf's own search tree over the lengths > d present under it (node 0: none, done).
//     A /16 start with a block has node = kBsl6Block | block.
//   - One hash table per prefix length > 16 in use. A table holds the prefixes of its length
//     that some leaf's tree reaches and the *markers* of longer prefixes: the first `len` bits
//     of every prefix whose search path (in its leaf's tree) turns towards longer lengths at
//     this table. Tables are shared by all trees: a key holds its leaf's address bits.
//   - Every entry carries a next hop. A prefix carries its own; a marker that is not also a
//     prefix carries its best matching prefix (bmp): the next hop of the longest real prefix
//     of length <= the marker's length that covers the marker, or kNoRoute.
//   - The search trees (nodes[]; node 0 is the terminal node that ends every search), one per
//     distinct set of lengths below a leaf, shaped by expected traffic rather than balanced
//     (see bsl6_image.hpp). A hit moves to the right child (longer lengths), a miss to the
//     left child. On the full 2024 table 3/4 of the prefixes sit under a /24 whose tree has
//     at most 8 lengths, against 46 lengths in one global tree.
//
// Why it is exact
//   The leaf of an address is fixed by its first d bits, and so is every prefix of length > d
//   that covers the address: they are all under the leaf, in its tree. Invariant: when the
//   search is at node n with range (lo, hi) of the leaf's lengths, the answer is bmp (the
//   last hit's entry, or the leaf's) unless a prefix with a length in (lo, hi) matches. A
//   hit at length l: every prefix of length <= l covering the address is summarised by the
//   hit entry's next hop (the prefix itself or the marker's bmp), so only longer lengths can
//   improve it. A miss at length l: every prefix longer than l in the range has a marker at
//   l on its path (the path turns right at n), so a miss proves none of them matches and
//   only shorter lengths remain. Hits only ever move to longer lengths, so the last hit has
//   the longest bmp.
//
// Hash tables
//   Open addressing over 64-byte buckets (one cache line, 64-byte aligned). A bucket holds 5
//   entries of a table of length <= 64 (key: the first 64 address bits masked, one word) or 3
//   entries of a longer length (two words), the next hops, and a meta word: the count of used
//   slots (low byte; slots fill from 0) and kBsl6Overflow, set when keys whose home is this
//   bucket or an earlier one continue in the next bucket. A key is placed at most
//   kBsl6MaxProbe buckets from its home; the builder grows a table that cannot place a key.
//   Buckets of a table are contiguous and followed by kBsl6MaxProbe - 1 spare buckets, so a
//   probe never wraps. home = fastrange(hash(key), buckets) (Lemire: the high 32 bits of the
//   hash times the bucket count), hash = multiply-shift of the masked key (hi * C, or
//   hi * C + lo * C' for two words). On the full table 4% of buckets overflow, none by more
//   than a few buckets, so the keys do not cluster.
//
// Step functions (for the G-Opt loop in cpu/bsl6_cpu.cpp)
//   c = bsl6_start(v, a); while (!bsl6_done(c)) { b = bsl6_probe_address(v, c, a);
//   prefetch(b); ...; bsl6_step(v, c, a, b); }  bsl6_lookup is exactly this loop.
//   A finished cursor sits on the terminal node, whose one empty bucket turns every further
//   step into a no-op: finished slots of a G-Opt group can idle there until the group drains.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/lookup/route.hpp"

// The step functions are small but called from loops g++ would otherwise not inline them into
// (measured: a call per step cost half the throughput). nvcc's WARPATH_HD already forces it.
#if defined(__CUDACC__)
#define WARPATH_BSL6_INLINE
#else
#define WARPATH_BSL6_INLINE __attribute__((always_inline))
#endif

namespace warpath::lookup::core {

inline constexpr uint32_t kBsl6NarrowSlots = 5;       ///< entries per bucket, lengths <= 64
inline constexpr uint32_t kBsl6WideSlots   = 3;       ///< entries per bucket, lengths 65..128
inline constexpr uint32_t kBsl6MaxProbe    = 8;       ///< buckets a key may be from its home
inline constexpr uint32_t kBsl6Overflow    = 0x100u;  ///< meta: the probe run continues

/// One cache line of a hash table: 5 entries of a table of length <= 64 or 3 of a longer one.
/// A table uses one member for all its buckets (wide iff Bsl6Node::mask_lo != 0), so reads always
/// go through the member that was written. vals[] holds the slots' next hops, then the meta
/// word (used slots | kBsl6Overflow), so vals[ctz(match | 1 << slots)] is a branch-free read
/// that yields the hit's next hop, or the meta word (ignored) on a miss.
struct Bsl6Narrow {
  uint64_t keys[kBsl6NarrowSlots];      ///< first address word, masked to the length
  uint32_t vals[kBsl6NarrowSlots + 1];  ///< next hops, then meta
};
struct Bsl6Wide {
  uint64_t his[kBsl6WideSlots];       ///< first address word (all 64 bits: length > 64)
  uint64_t los[kBsl6WideSlots];       ///< second word, masked to the length
  uint32_t vals[kBsl6WideSlots + 1];  ///< next hops, then meta
};
union alignas(64) Bsl6Bucket {
  Bsl6Narrow narrow;
  Bsl6Wide wide;
};
static_assert(sizeof(Bsl6Narrow) == 64 && sizeof(Bsl6Wide) == 64 && sizeof(Bsl6Bucket) == 64,
              "a bucket is one cache line");

/// One node of a search tree: the table of one prefix length, and where to go next. The
/// length itself is implied by the masks (a table is wide, len > 64, iff mask_lo != 0).
struct Bsl6Node {
  uint64_t mask_hi;       ///< first-word mask of the length (all ones for length >= 64)
  uint64_t mask_lo;       ///< second-word mask (zero for length <= 64)
  uint32_t first_bucket;  ///< index of the table's first bucket in Bsl6View::buckets
  uint32_t buckets;       ///< home buckets (the table has kBsl6MaxProbe - 1 more)
  uint32_t left;          ///< next node on a miss (shorter lengths)
  uint32_t right;         ///< next node on a hit (longer lengths)
};
static_assert(sizeof(Bsl6Node) == 32, "two nodes per cache line");

/// Node 0 ends every search: masks zero, its one bucket (bucket 0) empty, both children 0.
inline constexpr uint32_t kBsl6Terminal = 0;

/// One entry of the initial array (see above).
struct Bsl6Start {
  NextHop bmp;    ///< longest match of length <= the leaf's depth (kNoRoute: none)
  uint32_t node;  ///< root of the leaf's tree (kBsl6Terminal: done), or kBsl6Block | block
};
inline constexpr uint32_t kBsl6Block      = 0x8000'0000u;
inline constexpr uint32_t kBsl6TopEntries = 1u << 16;  ///< starts indexed by bits 0..15
inline constexpr uint32_t kBsl6BlockBits  = 8;         ///< a block is indexed by bits 16..23

/// A compiled image: POD pointers into host or device memory (the layout is the same).
struct Bsl6View {
  const Bsl6Start* starts   = nullptr;   ///< kBsl6TopEntries, then 256 per block
  const Bsl6Node* nodes     = nullptr;   ///< node 0 is the terminal node
  const Bsl6Bucket* buckets = nullptr;   ///< bucket 0 is the terminal node's empty bucket
  uint32_t height           = 0;         ///< probes of the longest search path
  NextHop default_nh        = kNoRoute;  ///< next hop of ::/0 (already in every start's bmp)
};

/// The state of one lookup between steps.
struct Bsl6Cursor {
  uint32_t node;
  NextHop bmp;
};

/// Hash of a masked key: multiply-shift (Dietzfelbinger), whose high bits mix every key bit;
/// bsl6_home uses only the high half. One multiply, which matters at 3 to 5 probes per lookup.
WARPATH_HD WARPATH_BSL6_INLINE uint64_t bsl6_hash64(uint64_t hi) {
  return hi * 0x9E37'79B9'7F4A'7C15ull;
}
WARPATH_HD WARPATH_BSL6_INLINE uint64_t bsl6_hash128(uint64_t hi, uint64_t lo) {
  return hi * 0x9E37'79B9'7F4A'7C15ull + lo * 0xC2B2'AE3D'27D4'EB4Full;
}
/// Home bucket of a hash in a table of `buckets` buckets (Lemire's fastrange on the high half).
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_home(uint64_t hash, uint32_t buckets) {
  return uint32_t(((hash >> 32) * uint64_t(buckets)) >> 32);
}

/// The start of a lookup: the /16 entry, then (for a /16 with a block) its /24 entry. Both
/// loads always happen (the second reloads the /16 entry when there is no block), so uniform
/// and prefix-bound addresses mixed in a batch cost no branch misprediction.
/// The steps of bsl6_start, for loops that prefetch between them: the /16 entry's index, then
/// from that entry the index of the start to use.
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_top_index(Ip6 a) { return uint32_t(a.hi >> 48); }
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_start_index(Ip6 a, const Bsl6Start& s16) {
  const uint32_t block = s16.node & ~kBsl6Block;
  const uint32_t sub = kBsl6TopEntries + (block << kBsl6BlockBits) + (uint32_t(a.hi >> 40) & 0xFFu);
  return (s16.node & kBsl6Block) ? sub : bsl6_top_index(a);
}
WARPATH_HD WARPATH_BSL6_INLINE Bsl6Cursor bsl6_start(const Bsl6View& v, Ip6 a) {
  const Bsl6Start s = v.starts[bsl6_start_index(a, v.starts[bsl6_top_index(a)])];
  return Bsl6Cursor{s.node, s.bmp};
}
WARPATH_HD WARPATH_BSL6_INLINE bool bsl6_done(const Bsl6Cursor& c) {
  return c.node == kBsl6Terminal;
}

/// The home bucket of the cursor's next probe (what the G-Opt loop prefetches).
WARPATH_HD WARPATH_BSL6_INLINE const Bsl6Bucket* bsl6_probe_address(const Bsl6View& v,
                                                                    const Bsl6Cursor& c, Ip6 a) {
  const Bsl6Node& n = v.nodes[c.node];
  const uint64_t hi = a.hi & n.mask_hi;
  const uint64_t h  = n.mask_lo != 0 ? bsl6_hash128(hi, a.lo & n.mask_lo) : bsl6_hash64(hi);
  return v.buckets + n.first_bucket + bsl6_home(h, n.buckets);
}

/// Index of the lowest set bit of x (x != 0).
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_ctz(uint32_t x) {
#if defined(__CUDA_ARCH__)
  return uint32_t(__ffs(int(x)) - 1);
#else
  return uint32_t(__builtin_ctz(x));
#endif
}

/// Bit i set for each used slot i of a bucket (slots fill from 0; the count is the low byte of
/// the bucket's meta word).
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_used(uint32_t meta) {
  return (1u << (meta & 0xFFu)) - 1u;
}

/// Bit i set when used slot i holds the key. Branch-free: compares become a bit mask.
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_match_narrow(const Bsl6Narrow& b, uint64_t key) {
  const uint32_t m = uint32_t(b.keys[0] == key) | uint32_t(b.keys[1] == key) << 1 |
                     uint32_t(b.keys[2] == key) << 2 | uint32_t(b.keys[3] == key) << 3 |
                     uint32_t(b.keys[4] == key) << 4;
  return m & bsl6_used(b.vals[kBsl6NarrowSlots]);
}
WARPATH_HD WARPATH_BSL6_INLINE uint32_t bsl6_match_wide(const Bsl6Wide& b, uint64_t hi,
                                                        uint64_t lo) {
  const uint32_t m = uint32_t((b.his[0] == hi) & (b.los[0] == lo)) |
                     uint32_t((b.his[1] == hi) & (b.los[1] == lo)) << 1 |
                     uint32_t((b.his[2] == hi) & (b.los[2] == lo)) << 2;
  return m & bsl6_used(b.vals[kBsl6WideSlots]);
}

/// The bucket compares of bsl6_step, portable. A CPU engine may pass its own type with the
/// same two functions and results (cpu/bsl6_cpu.cpp: one AVX-512 compare of all the keys).
struct Bsl6PortableMatch {
  WARPATH_HD WARPATH_BSL6_INLINE static uint32_t narrow(const Bsl6Narrow& b, uint64_t key) {
    return bsl6_match_narrow(b, key);
  }
  WARPATH_HD WARPATH_BSL6_INLINE static uint32_t wide(const Bsl6Wide& b, uint64_t hi, uint64_t lo) {
    return bsl6_match_wide(b, hi, lo);
  }
};

/// True when a bucket missed (m == 0) and its probe run goes on. Written as arithmetic: with
/// `&&` compilers test m first, a branch that mispredicts on every other step.
WARPATH_HD WARPATH_BSL6_INLINE bool bsl6_miss_goes_on(uint32_t m, uint32_t meta) {
  return (((m - 1u) >> 31) & (meta >> 8) & 1u) != 0;  // m <= 31, so m - 1 < 0 iff m == 0
}

/// Consumes the probe of bsl6_probe_address (`home`): on a hit records the entry's next hop
/// and moves to longer lengths, on a miss to shorter ones. A no-op on a finished cursor.
/// Hit or miss is a data-dependent 50/50 outcome, so it only selects values (no branch).
template <class Match = Bsl6PortableMatch>
WARPATH_HD WARPATH_BSL6_INLINE void bsl6_step(const Bsl6View& v, Bsl6Cursor& c, Ip6 a,
                                              const Bsl6Bucket* home) {
  const Bsl6Node& n   = v.nodes[c.node];
  const uint64_t hi   = a.hi & n.mask_hi;
  const Bsl6Bucket* b = home;
  uint32_t m, nh;
  if (n.mask_lo == 0) {
    m = Match::narrow(b->narrow, hi);
    // Rare (about 4% of buckets at the chosen load): a miss in a bucket whose run goes on.
    while (bsl6_miss_goes_on(m, b->narrow.vals[kBsl6NarrowSlots]))
      m = Match::narrow((++b)->narrow, hi);
    nh = b->narrow.vals[bsl6_ctz(m | 1u << kBsl6NarrowSlots)];
  } else {  // lengths 65..128: few tables, a predictable branch
    const uint64_t lo = a.lo & n.mask_lo;
    m                 = Match::wide(b->wide, hi, lo);
    while (bsl6_miss_goes_on(m, b->wide.vals[kBsl6WideSlots])) m = Match::wide((++b)->wide, hi, lo);
    nh = b->wide.vals[bsl6_ctz(m | 1u << kBsl6WideSlots)];
  }
  const uint32_t hit = 0u - uint32_t(m != 0);  // all ones on a hit
  c.bmp              = c.bmp ^ ((c.bmp ^ nh) & hit);
  c.node             = n.left ^ ((uint32_t(n.left) ^ n.right) & hit);
}

/// The next hop of the longest prefix matching `addr`, or kNoRoute.
WARPATH_HD NextHop bsl6_lookup(const Bsl6View& v, Ip6 addr) {
  Bsl6Cursor c = bsl6_start(v, addr);
  while (!bsl6_done(c)) bsl6_step(v, c, addr, bsl6_probe_address(v, c, addr));
  return c.bmp;
}

}  // namespace warpath::lookup::core
