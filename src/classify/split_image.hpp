// src/classify/split_image.hpp: the builder of address-split images (core/split_core.hpp),
// used by cpu.split and cuda.split.
//
// Building
//   Rules are ranked by (priority desc, index asc). Each rule's port conditions become one
//   inclusive range per port (the ClassBench range intersected with a prefix-shaped mask; a
//   rule whose ranges do not meet can never match and is left out). A rule can be filed under
//   a field whose condition is narrow: a source or destination prefix of at least min_prefix
//   bits, else a source or destination port range of at most kSplitMaxPortSpan values. Of its
//   fields it goes under the one whose exact condition fewer rules share (the shorter run),
//   then the narrower, then in SplitField order. The rest (wild or short addresses and wide
//   ports, non-prefix masks, protocol masks over 16 bits) go to an RFC tree of their own
//   (rfc_image.hpp), built on the rest alone.
//   Per part, one sweep over the conditions' ends, in order, keeps the set of conditions that
//   cover the current position; at each end the set, in rank order, is the run of the interval
//   that starts there (a run already written is reused; neighbouring intervals with the same
//   run are merged). The bounds go into the B+ tree.
//
// Memory
//   Runs repeat a condition's rules in every interval it covers (for prefixes: under every
//   prefix nested in it), so the image is checked against max_bytes (default 1 GiB) as runs
//   are written; kCapacity names the part. The rest tree gets what is left of the limit.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "classify/core/split_core.hpp"
#include "classify/rfc_image.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

/// Shortest address prefix that is filed under its address (shorter ones go to the rest).
inline constexpr uint32_t kSplitMinPrefix = 17;
/// Widest port range filed under its port, where ports are indexed (wider ones go to the rest).
inline constexpr uint32_t kSplitMaxPortSpan = 256;
/// What build() tries in turn until the rest's RFC tree fits: (shortest prefix indexed,
/// ports indexed). The first suits ClassBench-like sets; the others are for sets with
/// thousands of rules that have only short addresses (GSwitch's synthetic ones), at the cost
/// of longer runs (a short prefix's rules repeat in the run of every prefix nested in it) and
/// more indexes to search.
struct SplitTry {
  uint32_t min_prefix;
  bool ports;
};
inline constexpr SplitTry kSplitTries[] = {
    {kSplitMinPrefix, false}, {kSplitMinPrefix, true}, {8, true}, {1, true}};

class SplitImage {
 public:
  /// min_prefix 0: kSplitTries in turn (the rest's RFC tree gets a quarter of max_bytes
  /// before the last); otherwise that threshold, with port indexes when `ports`.
  static Result<std::unique_ptr<SplitImage>> build(const RuleSet& rules,
                                                   uint64_t max_bytes  = kRfcMaxImageBytes,
                                                   uint32_t min_prefix = 0, bool ports = true);
  core::SplitView view() const { return view(tables_.data()); }
  /// The same view over a copy of data() at `base` (a device copy).
  core::SplitView view(const uint8_t* base) const;
  const uint8_t* data() const { return tables_.data(); }
  uint64_t bytes() const { return tables_.bytes(); }
  const std::string& detail() const { return detail_; }

  /// Where the rules went (for tests and the detail text).
  struct Counts {
    uint32_t by_field[core::kSplitFields] = {};  ///< by source, destination, sport, dport
    uint32_t rest = 0, never_match = 0;
  };
  const Counts& counts() const { return counts_; }
  uint32_t min_prefix() const { return min_prefix_; }

 private:
  struct IndexLayout {
    PackedTables::Slot nodes, lists;
    uint32_t layer_start[core::kSplitMaxLayers] = {};
    uint32_t layer_nodes[core::kSplitMaxLayers] = {};
    uint32_t layers = 0, bounds = 0;
  };
  PackedTables tables_;
  IndexLayout part_[core::kSplitFields];
  PackedTables::Slot cands_, rank_index_, rest_tables_, rest_rank_;
  std::unique_ptr<RfcImage> rest_;  ///< slots only: its tables are copied into tables_
  Counts counts_;
  uint32_t min_prefix_    = 0;
  bool ranks_are_indices_ = false;
  std::string detail_;

  static Result<std::unique_ptr<SplitImage>> build_with(const RuleSet& rules, uint64_t max_bytes,
                                                        SplitTry how, uint64_t rest_bytes);
};

}  // namespace warpath::classify::detail
