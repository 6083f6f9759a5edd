// src/classify/split_image.hpp: the builder of address-split images (core/split_core.hpp),
// used by cpu.split and cuda.split.
//
// Building
//   Rules are ranked by (priority desc, index asc). Each rule's port conditions become one
//   inclusive range per port (the ClassBench range intersected with a prefix-shaped mask; a
//   rule whose ranges do not meet can never match and is left out). A rule whose source is a
//   prefix of at least min_prefix bits is filed by source, one whose destination is by
//   destination; with both, under the address whose exact prefix fewer rules share (the
//   shorter candidate run), then the longer prefix, then the source. The rest (short or wild
//   addresses, non-prefix address or port masks) go to an RFC tree of their own
//   (rfc_image.hpp), built on the rest alone.
//   Per part, the distinct prefixes are sorted by (start, end desc), which puts every prefix
//   after the prefixes that contain it; a stack gives each its innermost container, and its
//   candidate run is its own rules merged with its container's run. One sweep over the same
//   order cuts the address space into intervals, each naming the run of its innermost prefix;
//   neighbouring intervals with the same run are merged. The bounds go into the B+ tree.
//
// Memory
//   Runs repeat a prefix's rules under every prefix nested in it, so the image is checked
//   against max_bytes (default 1 GiB) as runs are written; kCapacity names the part. The rest
//   tree gets what is left of the limit.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "classify/core/split_core.hpp"
#include "classify/rfc_image.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

/// Shortest address prefix that is filed under its address (shorter ones go to the rest), in
/// the order build() tries them: where the rest's RFC tree does not fit (sets with thousands
/// of rules that have only short addresses, as GSwitch's synthetic ones), shorter prefixes are
/// indexed too, at the cost of longer runs (a short prefix's rules repeat in the run of every
/// prefix nested in it).
inline constexpr uint32_t kSplitMinPrefix     = 17;
inline constexpr uint32_t kSplitMinPrefixes[] = {17, 8, 1};

class SplitImage {
 public:
  /// min_prefix 0: try kSplitMinPrefixes in turn (the rest's RFC tree gets a quarter of
  /// max_bytes before the last); otherwise that threshold only.
  static Result<std::unique_ptr<SplitImage>> build(const RuleSet& rules,
                                                   uint64_t max_bytes  = kRfcMaxImageBytes,
                                                   uint32_t min_prefix = 0);
  core::SplitView view() const { return view(tables_.data()); }
  /// The same view over a copy of data() at `base` (a device copy).
  core::SplitView view(const uint8_t* base) const;
  const uint8_t* data() const { return tables_.data(); }
  uint64_t bytes() const { return tables_.bytes(); }
  const std::string& detail() const { return detail_; }

  /// Where the rules went (for tests and the detail text).
  struct Counts {
    uint32_t by_source = 0, by_destination = 0, rest = 0, never_match = 0;
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
  IndexLayout part_[2];
  PackedTables::Slot cands_, rest_tables_, rest_rank_, rest_index_;
  std::unique_ptr<RfcImage> rest_;  ///< slots only: its tables are copied into tables_
  Counts counts_;
  uint32_t min_prefix_ = 0;
  std::string detail_;

  static Result<std::unique_ptr<SplitImage>> build_with(const RuleSet& rules, uint64_t max_bytes,
                                                        uint32_t min_prefix, uint64_t rest_bytes);
};

}  // namespace warpath::classify::detail
