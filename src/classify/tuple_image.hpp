// src/classify/tuple_image.hpp: the control plane of tuple and Bloom search (GSwitch 4.2-4.3).
//
// TupleClassSet is the writer's state: the rules by index, and per class (distinct mask
// vector of the expanded entries, expand.hpp) the class's entries and its built tables.
// A table (TupleTableData) is immutable once built and shared through shared_ptr by every
// published version that contains it, so an update rebuilds only the tables of the classes
// it touches (aside, while readers use the old ones) and the engines publish a new
// TupleVersion (the table list in probe order) by pointer swap.
//
// Building a table: entries with the same masked value keep only the best one (highest
// order_key); values are inserted by cuckoo insertion with eviction (at most kMaxKicks moves),
// and a failure rehashes everything with new parameters (and after a few failures, with a
// larger d). d is the smallest power of two with 3d >= 1.25 n (load <= 80 %). The Bloom filter
// has m = the power of two >= 16 n bits (at least 64): false positive rate about 1.4 %.
//
// Not thread-safe: one writer at a time (the engines hold a mutex).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "classify/core/tuple_core.hpp"
#include "classify/expand.hpp"
#include "warpath/core/status.hpp"

namespace warpath::classify::detail {

/// One built class table: view points into the vectors below.
struct TupleTableData {
  core::TupleTable view{};
  std::vector<uint32_t> slots;
  std::vector<uint32_t> bloom;
  /// Lookups whose best match came from this table (sampled; cpu.* ranking).
  mutable std::atomic<uint64_t> hits{0};
  size_t memory_bytes() const { return (slots.size() + bloom.size()) * 4 + sizeof(*this); }
};

using TablePtr = std::shared_ptr<const TupleTableData>;

/// Builds one table over `values` (distinct masked values, each with its best order key).
/// seed drives every hash parameter (deterministic). kCapacity if cuckoo insertion fails
/// even at a large d (cannot happen for distinct values short of 2^32-hash collisions).
struct TableValue {
  uint32_t value[kMaxKeyWords];
  uint64_t key;  ///< order_key of the best entry with this value
};
Result<TablePtr> build_tuple_table(const uint32_t* mask, const std::vector<TableValue>& values,
                                   KeyLayout layout, uint64_t seed);

class TupleClassSet {
 public:
  /// max_per_table: split classes into tables of at most this many values (0: never).
  TupleClassSet(KeyLayout layout, uint64_t seed, uint32_t max_per_table);

  /// Adds every rule of the set and builds all tables.
  Status add_all(const RuleSet& rules);
  /// Inserts (or replaces) rule `index` / erases it; rebuilds the affected classes' tables.
  /// On failure nothing changes.
  Status insert(uint32_t index, const Rule& rule);
  Status erase(uint32_t index);

  /// Every current table (any order).
  std::vector<TablePtr> tables() const;
  KeyLayout layout() const { return layout_; }
  uint64_t rules() const { return rules_.size(); }
  uint64_t entries() const { return entries_; }
  uint32_t classes() const { return uint32_t(classes_.size()); }
  uint64_t memory_bytes() const;

 private:
  using MaskKey = std::array<uint32_t, kMaxKeyWords>;
  struct Class {
    std::vector<Entry> entries;
    std::vector<TablePtr> tables;
  };
  Status rebuild(const MaskKey& mask, Class& c, std::vector<TablePtr>& out) const;
  Status apply(uint32_t index, const Rule* rule);  // rule == nullptr: erase

  KeyLayout layout_;
  uint64_t seed_;
  uint32_t max_per_table_;
  std::map<MaskKey, Class> classes_;
  std::unordered_map<uint32_t, Rule> rules_;
  uint64_t entries_ = 0;
};

/// A published table list: tables in probe order and a contiguous copy of their views.
/// views[0, hot) are ranked by hits (probed unless the key's best beats them); views[hot, n)
/// are sorted by best, descending, so a group of keys stops at the first it cannot improve.
struct TupleVersion {
  std::vector<TablePtr> tables;
  std::vector<core::TupleTable> views;
  uint32_t hot = 0;
};

/// Orders `tables`: with rank_by_hits, the tables holding most of the sampled hits first
/// (at most 32 of them), then the rest by best order key, descending.
std::unique_ptr<TupleVersion> make_version(std::vector<TablePtr> tables, bool rank_by_hits);

}  // namespace warpath::classify::detail
