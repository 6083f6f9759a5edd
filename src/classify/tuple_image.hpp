// src/classify/tuple_image.hpp: the control plane of tuple and Bloom search (GSwitch 4.2-4.3).
//
// TupleClassSet is the writer's state: the rules by index, and per class (distinct mask
// vector of the expanded entries, expand.hpp) the order keys of the class's entries by masked
// value and its built tables. A table (TupleTableData) is immutable once published and shared
// through shared_ptr by every version that contains it.
//
// Building a table: entries with the same masked value keep only the best one (highest
// order_key); values are inserted by cuckoo insertion with eviction (at most kMaxKicks moves),
// and a failure rehashes everything with new parameters (and after a few failures, with a
// larger d). d is the smallest power of two with 3d >= 1.25 n (load <= 80 %). The Bloom filter
// has m = the power of two >= 16 n bits (at least 64): false positive rate about 1.4 %.
//
// Updating (insert/erase of one rule): only the values whose best order key changes touch a
// table. With one table per class (max_per_table 0, the CPU engines) the class's table is
// copied and the changes are applied to the copy (copy-on-write): a changed key is rewritten in
// its slot, a removed value's slot is cleared, a new value is placed by cuckoo insertion with
// eviction in the copy. Erased values leave their Bloom bits set (only more false positives)
// until they outnumber a quarter of the table, when the filter is rebuilt from the slots. The
// table is rebuilt from scratch instead when insertion fails or the load would pass 80 % or
// fall under 5 %. Large tables are updated left-right instead of copied (set_quiesce): the
// previously published copy is brought up to date in place once no reader holds it. Split
// classes (the GPU's <= 256-value tables) are rebuilt whole. The caller gets the replaced,
// added and removed tables (TableChange), and update_version() derives the next published
// version from the current one in O(tables) without re-sorting. On ClassBench acl1_10K this
// took updates from ~2,300/s to ~210,000/s, and acl1_100K from ~120/s to ~180,000/s
// (bench/README.md, "Updates").
//
// Not thread-safe: one writer at a time (the engines hold a mutex).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <unordered_map>
#include <vector>

#include "classify/core/tuple_core.hpp"
#include "classify/expand.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/status.hpp"

namespace warpath::classify::detail {

/// One built class table: view points into the vectors below.
struct TupleTableData {
  core::TupleTable view{};
  std::vector<uint32_t> slots;
  std::vector<uint32_t> bloom;
  /// Values erased since the Bloom filter was built: their bits are still set.
  uint32_t stale = 0;
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

/// One value whose best order key changes in a table; key 0 removes the value.
struct ValueChange {
  uint32_t value[kMaxKeyWords];
  uint64_t key;
};

/// What an update did to the published tables: `before` replaced by `after`, or added
/// (before null), or removed (after null).
struct TableChange {
  TablePtr before, after;
  bool before_kept = false;  ///< `before` stays as the class's spare (not freed)
};

class TupleClassSet {
 public:
  /// max_per_table: split classes into tables of at most this many values (0: never).
  TupleClassSet(KeyLayout layout, uint64_t seed, uint32_t max_per_table);

  /// Adds every rule of the set and builds all tables.
  Status add_all(const RuleSet& rules);
  /// Inserts (or replaces) rule `index` / erases it, updating the affected classes' tables
  /// copy-on-write; appends to `changes` (when given) what happened to the tables. On failure
  /// nothing changes.
  Status insert(uint32_t index, const Rule& rule, std::vector<TableChange>* changes = nullptr);
  Status erase(uint32_t index, std::vector<TableChange>* changes = nullptr);

  /// Left-right updates for tables of at least `inplace_bytes`: the set keeps such a table's
  /// previous copy (the spare) once it is replaced, and the next update of the class applies
  /// the missed and the new changes to the spare in place and publishes it, instead of
  /// copying the table. A spare may be written only after no reader can hold it: when no
  /// quiesced() came since it was replaced, a table under `copy_bytes` is copied as usual (the
  /// replaced one becomes the spare), a larger one calls `quiesce`, which must wait for
  /// readers (ReadGuard::synchronize) and call quiesced(). The engine also calls quiesced()
  /// after every synchronize of its own. Without quiesce: always copy-on-write.
  void set_quiesce(std::function<void()> quiesce, size_t inplace_bytes, size_t copy_bytes) {
    quiesce_       = std::move(quiesce);
    inplace_bytes_ = inplace_bytes;
    copy_bytes_    = copy_bytes;
  }
  /// No reader holds a table replaced before this call any more.
  void quiesced() { ++epoch_; }
  /// Moves the copy-or-wait threshold (e.g. as the measured wait for readers changes).
  void set_copy_bytes(size_t copy_bytes) { copy_bytes_ = copy_bytes; }

  /// Every current table (any order).
  std::vector<TablePtr> tables() const;
  KeyLayout layout() const { return layout_; }
  uint64_t rules() const { return rules_.size(); }
  uint64_t entries() const { return entries_; }
  uint32_t classes() const { return uint32_t(classes_.size()); }
  uint64_t memory_bytes() const;
  /// An engine's stats of the set's host side: rules, entries, classes and memory (the engine
  /// adds what it holds beside, and its detail).
  ClassifierStats stats() const {
    ClassifierStats s;
    s.rules        = rules();
    s.entries      = entries();
    s.classes      = classes();
    s.memory_bytes = memory_bytes();
    return s;
  }

 private:
  using MaskKey = std::array<uint32_t, kMaxKeyWords>;
  struct KeyHash {
    size_t operator()(const MaskKey& k) const noexcept;
  };
  /// A masked value -> the order keys of the class's entries with it (one per rule).
  using ValueMap = std::unordered_map<MaskKey, std::vector<uint64_t>, KeyHash>;
  struct Class {
    ValueMap values;
    uint64_t entries = 0;
    std::vector<TablePtr> tables;
    /// Left-right (tables of at least inplace_bytes_): the table published before tables[0],
    /// which lacks the changes `lag`; updated in place once epoch_ > spare_epoch.
    std::shared_ptr<TupleTableData> spare;
    std::vector<ValueChange> lag;
    uint64_t spare_epoch = 0;
  };
  struct Pending;  // one class's update, computed aside (tuple_image.cpp)
  Status build_tables(const MaskKey& mask, std::vector<TableValue> values,
                      std::vector<TablePtr>& out) const;
  Status update_class(const MaskKey& mask, const Class* c, Pending& p);
  Status apply(uint32_t index, const Rule* rule, std::vector<TableChange>* changes);

  KeyLayout layout_;
  uint64_t seed_;
  uint32_t max_per_table_;
  std::map<MaskKey, Class> classes_;
  std::unordered_map<uint32_t, Rule> rules_;
  uint64_t entries_ = 0;
  uint64_t rng_;  ///< cuckoo eviction choices of incremental inserts
  std::function<void()> quiesce_;
  size_t inplace_bytes_ = SIZE_MAX;
  size_t copy_bytes_    = SIZE_MAX;
  uint64_t epoch_       = 1;  ///< quiesced() calls + 1
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

/// The version after `changes`, in O(tables): a replaced hot table keeps its rank, a replaced
/// table with the same best keeps its place, the others (and added tables) are merged into the
/// part sorted by best; removed tables are dropped.
std::unique_ptr<TupleVersion> update_version(const TupleVersion& cur,
                                             const std::vector<TableChange>& changes);

/// Bytes a version holds beside its tables.
inline size_t version_bytes(const TupleVersion& v) {
  return sizeof v + v.tables.capacity() * sizeof(TablePtr) +
         v.views.capacity() * sizeof(core::TupleTable);
}

}  // namespace warpath::classify::detail
