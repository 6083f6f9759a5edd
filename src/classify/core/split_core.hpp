// src/classify/core/split_core.hpp
//
// Address split: the one lookup body of cpu.split and cuda.split (image: split_image.hpp).
// No STL, no CUDA includes.
//
// Why
//   RFC (rfc_core.hpp) answers in 12 table reads, but its cross-product tables grow with the
//   product of class counts: on 100K-rule sets, where nearly every rule has an address of its
//   own, the source table alone would need billions of entries. Yet such rules are easy to
//   tell apart by one address: in ClassBench's acl1_100K, 99,563 of 99,597 rules have a
//   distinct source prefix. So each rule is filed under one of its addresses, and a key needs
//   only the few rules whose prefix on that address covers the key's address.
//
// Parts (the builder files every rule in one)
//   by source       rules whose source is a prefix of at least min_prefix bits (/17, or /8
//                   or /1 where the rest would not fit: split_image.hpp kSplitTries)
//   by destination  the same on the destination (a rule with both goes where fewer rules
//                   share its prefix: see split_image.cpp)
//   by source port, by destination port
//                   where the rest would not fit otherwise: rules with neither, whose port
//                   is a narrow range (a short or wild address and an exact service port)
//   rest            the others (wild or short addresses and wide ports, non-prefix masks): an
//                   RFC tree of their own (rfc_core.hpp), small because they are few
//   The answer is the best (lowest rank: priority desc, index asc) of the five.
//
// An index (one per part)
//   The part's conditions on its field (prefixes, port ranges) cut the field's values into
//   elementary intervals; the intervals' start points (bounds, ascending, the first 0) sit in
//   a static B+ tree of 16-key nodes (one 64-byte line; fanout 17; layers top first, each
//   packed left to right, only a layer's last node partly filled: keys past the end read
//   UINT32_MAX). A search counts in each node the keys <= the value: at an inner node that
//   count is the child, at the leaf layer it gives the interval (upper bound - 1). A value of
//   UINT32_MAX also counts the padding keys, so the child and the position are clamped to what
//   exists. lists[interval] names the run of the rules whose condition covers the interval: a
//   run of 32-byte candidates in ascending rank (runs shared by intervals with the same rules
//   are stored once; for prefixes, which nest or are disjoint, a run is the rules of the
//   innermost prefix and its ancestors). A candidate checks the whole rule; the first match
//   in a run is the part's best, and a run is cut short at the best rank found so far.
#pragma once
#include <cstdint>

#include "classify/core/rfc_core.hpp"
#include "warpath/core/hd.hpp"

namespace warpath::classify::core {

inline constexpr uint32_t kSplitNodeKeys  = 16;  ///< keys per node: one 64-byte line
inline constexpr uint32_t kSplitFanout    = kSplitNodeKeys + 1;
inline constexpr uint32_t kSplitMaxLayers = 8;             ///< 16 * 17^7 > 2^33 bounds
inline constexpr uint32_t kSplitNone      = 0xFFFF'FFFFu;  ///< no rank / no rule (kNoMatch)

/// Parts, in the order of SplitView::part and of their key fields.
enum SplitField : uint32_t { kSplitSrc, kSplitDst, kSplitSport, kSplitDport, kSplitFields };

/// A rule in a run: the whole rule, checked against a key. 32 bytes.
struct SplitCand {
  uint32_t src = 0, src_mask = 0, dst = 0, dst_mask = 0;  ///< (key & mask) == value
  uint16_t sport_lo = 0, sport_hi = 0xFFFF, dport_lo = 0, dport_hi = 0xFFFF;  ///< inclusive
  uint16_t proto = 0, proto_mask = 0;  ///< key word 3 (16-bit masks at most, as RFC)
  uint32_t rank = 0;                   ///< lower wins (priority desc, index asc)
};

/// The candidates of one interval: cands[offset, offset + count).
struct SplitList {
  uint32_t offset = 0, count = 0;
};

/// One part's index (see the header comment). layers == 0: the part is empty.
struct SplitIndex {
  const uint32_t* nodes                 = nullptr;  ///< 16 keys per node, layers top first
  const SplitList* lists                = nullptr;  ///< per interval
  uint32_t layer_start[kSplitMaxLayers] = {};       ///< first node of each layer
  uint32_t layer_nodes[kSplitMaxLayers] = {};
  uint32_t layers                       = 0;
  uint32_t bounds                       = 0;  ///< intervals
};

struct SplitView {
  SplitIndex part[kSplitFields];
  const SplitCand* cands     = nullptr;
  const uint32_t* rank_index = nullptr;  ///< rank -> rule index; nullptr: ranks are indices
  RfcView rest;                          ///< valid when has_rest
  const uint32_t* rest_rank = nullptr;   ///< per rule of the rest tree: its rank
  uint32_t has_rest         = 0;
};

/// The key field part p searches.
WARPATH_HD uint32_t split_field(uint32_t p, uint32_t src, uint32_t dst, uint32_t ports) {
  return p == kSplitSrc     ? src
         : p == kSplitDst   ? dst
         : p == kSplitSport ? ports >> 16
                            : ports & 0xFFFFu;
}

/// Keys of `node` that are <= x.
WARPATH_HD uint32_t split_count_le(const uint32_t* node, uint32_t x) {
  uint32_t c = 0;
  for (uint32_t j = 0; j < kSplitNodeKeys; ++j) c += node[j] <= x ? 1u : 0u;
  return c;
}

/// Node k of `layer`.
WARPATH_HD const uint32_t* split_node(const SplitIndex& ix, uint32_t layer, uint32_t k) {
  return ix.nodes + uint64_t(ix.layer_start[layer] + k) * kSplitNodeKeys;
}

/// One step down from node k of `layer` for address x, given that node's count c: the node
/// of the next layer, or at the last layer the interval.
WARPATH_HD uint32_t split_descend(const SplitIndex& ix, uint32_t layer, uint32_t k, uint32_t c) {
  if (layer + 1 < ix.layers) {
    const uint32_t child = k * kSplitFanout + c, last = ix.layer_nodes[layer + 1] - 1;
    return child < last ? child : last;
  }
  const uint32_t pos = k * kSplitNodeKeys + c;  // >= 1: the first bound is 0
  return (pos < ix.bounds ? pos : ix.bounds) - 1;
}

/// The interval of address x (ix.layers > 0).
WARPATH_HD uint32_t split_interval(const SplitIndex& ix, uint32_t x) {
  uint32_t k = 0;
  for (uint32_t l = 0; l < ix.layers; ++l)
    k = split_descend(ix, l, k, split_count_le(split_node(ix, l, k), x));
  return k;
}

WARPATH_HD bool split_cand_matches(const SplitCand& c, uint32_t src, uint32_t dst, uint32_t ports,
                                   uint32_t proto) {
  const uint32_t sp = ports >> 16, dp = ports & 0xFFFFu;
  return (src & c.src_mask) == c.src && (dst & c.dst_mask) == c.dst && sp >= c.sport_lo &&
         sp <= c.sport_hi && dp >= c.dport_lo && dp <= c.dport_hi &&
         (proto & c.proto_mask) == c.proto;
}

/// Scans run `l` for the first candidate that matches and ranks below `rank`; on a match
/// lowers rank to it.
WARPATH_HD void split_scan(const SplitCand* cands, SplitList l, uint32_t src, uint32_t dst,
                           uint32_t ports, uint32_t proto, uint32_t& rank) {
  const SplitCand* c = cands + l.offset;
  for (uint32_t i = 0; i < l.count && c[i].rank < rank; ++i)
    if (split_cand_matches(c[i], src, dst, ports, proto)) {
      rank = c[i].rank;
      return;
    }
}

/// The rest tree's answer (a rule of the rest, or kSplitNone) as a rank.
WARPATH_HD uint32_t split_rest_rank(const SplitView& v, uint32_t j) {
  return j == kSplitNone ? kSplitNone : v.rest_rank[j];
}

/// The answer of a best rank.
WARPATH_HD uint32_t split_answer(const SplitView& v, uint32_t rank) {
  return rank == kSplitNone || !v.rank_index ? rank : v.rank_index[rank];
}

/// The whole lookup: the index of the best rule matching the key, or kSplitNone.
WARPATH_HD uint32_t split_lookup(const SplitView& v, uint32_t src, uint32_t dst, uint32_t ports,
                                 uint32_t proto) {
  uint32_t rank =
      v.has_rest ? split_rest_rank(v, rfc_lookup(v.rest, src, dst, ports, proto)) : kSplitNone;
  for (uint32_t p = 0; p < kSplitFields; ++p) {
    const SplitIndex& ix = v.part[p];
    if (!ix.layers) continue;
    split_scan(v.cands, ix.lists[split_interval(ix, split_field(p, src, dst, ports))], src, dst,
               ports, proto, rank);
  }
  return split_answer(v, rank);
}

}  // namespace warpath::classify::core
