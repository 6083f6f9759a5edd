// src/classify/tmerge_image.hpp: the writer's side of TupleMerge (core/tmerge_core.hpp has the
// layout readers probe).
//
// TmSet<NW> owns the tables, buckets and published table lists, and applies one update at a
// time (the engine holds a mutex). Every update is versioned: insert(index, rule, v) and
// erase(index, v) make the change visible from version v on, and the engine publishes v after
// the call, so a reader that took version v - 1 still sees the rule set before the update.
//
// Placing a rule (TupleMerge's insertion): among the tables whose mask is a subset of the
// rule's effective mask, the most specific one whose bucket for the rule holds fewer than
// kCollisionLimit entries; else a new table at the coarsest relaxation of the rule's mask
// that has no table yet: level 0 rounds address prefixes down to multiples of 16 bits and
// drops the ports, 1 rounds to 8 bits, 2 keeps exact ports too, 3 is the rule's own mask, where
// a bucket may grow past the limit (rules equal in every hashed bit). On the 10K ClassBench
// sets this gives 12-17 tables and 2.8-5.9 table probes per key; one level (8 bits, ports
// kept) gave 31-58 tables and ran 1.5-2.8x slower (docs/adr/0014).
//
// Memory: a bucket is copied to add an entry (copy-on-write, a slot store publishes it); an
// erase only writes the entry's death. Dead entries, emptied buckets and tables, replaced
// slot arrays and table lists are collected by collect(v) once no reader can use a version
// below v, and freed by free_retired() after the next grace period (ReadGuard::synchronize in
// the engine). Slot arrays are rebuilt (same size, or doubled) when live buckets plus
// tombstones pass half of the slots.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "classify/core/tmerge_core.hpp"
#include "warpath/classify/classifier.hpp"
#include "warpath/core/status.hpp"

namespace warpath::classify::detail {

inline constexpr uint32_t kCollisionLimit = 32;  ///< entries per bucket before a finer table
inline constexpr unsigned kRelaxBits       = 8;   ///< prefix rounding of levels 1 and 2
inline constexpr int kRelaxLevels          = 4;   ///< TmSet::relax()
/// Tables at most (plus the empty mask's): the bound on probes per key whatever the rules'
/// masks (Open vSwitch's tuple space explosion, CVE-2019-25076); rules that would need more
/// go past the collision limit into the most specific table that can hold them (counted).
inline constexpr size_t kMaxTables = 128;
/// Engines collect dead entries and free retired memory every this many updates, or once
/// this much memory is retired, whichever comes first (after a grace period).
inline constexpr uint32_t kTmCollectEvery  = 1024;
inline constexpr size_t kTmMaxRetiredBytes = 8u << 20;

/// A published list of tables, sorted by best, descending.
template <unsigned NW>
struct TmList {
  std::vector<core::TmTable<NW>> tables;
};

template <unsigned NW>
class TmSet {
 public:
  TmSet() = default;
  ~TmSet();
  TmSet(const TmSet&)            = delete;
  TmSet& operator=(const TmSet&) = delete;

  /// Inserts (or replaces) rule `index`, visible from `version` on.
  Status insert(uint32_t index, const Rule& rule, uint64_t version);
  /// Erases rule `index` from `version` on; kNotFound when there is none.
  Status erase(uint32_t index, uint64_t version);

  /// The table list readers should use (republished when tables or their bests change).
  /// seq_cst: a reader's loads stay after its ReadGuard section's entry on every architecture.
  const TmList<NW>* list() const { return published_.load(std::memory_order_seq_cst); }
  /// Publishes the list when the last updates changed it (call before publishing a version).
  void publish_list();

  /// No reader uses a version below `oldest` any more: drops the entries dead by then, the
  /// buckets and tables they leave empty, and lowers tables' bests; what readers may still
  /// hold is retired.
  void collect(uint64_t oldest);
  /// Frees what was retired before the last grace period (the engine synchronizes first).
  void free_retired();
  /// While building (no reader yet) retired memory is freed at once.
  void set_building(bool b) { building_ = b; }

  uint64_t rules() const { return where_.size(); }
  bool contains(uint32_t index) const { return where_.count(index) != 0; }
  uint64_t entries() const { return entries_; }  ///< including dead ones not collected
  uint32_t tables() const { return uint32_t(tables_.size()); }
  uint64_t memory_bytes() const;
  size_t retired_bytes() const { return retired_bytes_; }
  uint64_t dirty() const { return dirty_.size(); }

  /// What changed in place since the log was last cleared, for a copy of the set elsewhere
  /// (cuda.tuplemerge's device image takes these as small uploads): slots stored (a bucket
  /// put or removed) and entries' deaths written. Anything else (a new table, a slot array
  /// replaced, a collection) moves the epoch instead, and the copy is made again whole.
  struct SlotChange {
    const uint64_t* slots;  ///< the table's slot array
    uint32_t index;
  };
  struct DeathChange {
    const core::TmBucket<NW>* bucket;
    uint32_t entry;
  };
  void set_logging(bool on) { logging_ = on; }
  uint64_t epoch() const { return epoch_; }
  const std::vector<SlotChange>& slot_log() const { return slot_log_; }
  const std::vector<DeathChange>& death_log() const { return death_log_; }
  void clear_logs() {
    slot_log_.clear();
    death_log_.clear();
  }
  uint64_t overflows() const { return overflows_; }  ///< rules placed past kCollisionLimit at kMaxTables

 private:
  using Value = std::array<uint32_t, NW>;
  struct Table {
    Value mask{};
    int bits = 0;                 ///< popcount of the mask: more specific tables first
    uint64_t* slots = nullptr;    ///< cap slots (published through the list)
    uint32_t cap = 0, used = 0;   ///< used: live buckets + tombstones
    uint32_t buckets = 0;
    uint64_t entries = 0, best = 0;
    bool recompute_best = false;  ///< an entry with the best key was collected
  };
  struct Where {
    Table* table;
    Value bucket;  ///< the table-masked value
    uint64_t key;
  };
  struct Dirty {
    Table* table;
    Value bucket;
  };

  static void effective(const Rule& r, Value& value, Value& mask);
  static Value relax(const Value& mask, int level);
  Table* table_for(const Value& mask);
  /// Slot index of the bucket of `v` in t, or of the first free slot (empty/tomb) on its chain
  /// (found: whether the bucket exists).
  uint32_t locate(const Table& t, const Value& v, uint64_t h, bool& found) const;
  const core::TmBucket<NW>* bucket_at(const Table& t, const Value& v) const;
  void put(Table& t, const Value& v, const core::TmBucket<NW>* b);  // b null: remove
  void grow(Table& t, uint32_t cap);
  core::TmBucket<NW>* new_bucket(const Value& v, uint32_t count);
  void retire_bucket(const core::TmBucket<NW>* b);
  void retire(void* p, size_t bytes);
  void recompute_best(Table& t);
  void drop_table(Table* t);

  std::vector<std::unique_ptr<Table>> tables_;
  std::unordered_map<uint32_t, Where> where_;
  std::vector<Dirty> dirty_;
  std::atomic<const TmList<NW>*> published_{nullptr};
  bool list_changed_ = true;
  bool building_     = false;
  uint64_t entries_  = 0;
  uint64_t overflows_ = 0;
  std::vector<std::pair<void*, size_t>> retired_;  ///< buckets and slot arrays (std::free)
  std::vector<std::unique_ptr<const TmList<NW>>> retired_lists_;
  size_t retired_bytes_ = 0;
  uint64_t bucket_bytes_ = 0;
  bool logging_ = false;
  uint64_t epoch_ = 0;
  std::vector<SlotChange> slot_log_;
  std::vector<DeathChange> death_log_;
  void restructured() {  // a change the logs cannot describe
    ++epoch_;
    clear_logs();
  }
};

extern template class TmSet<4>;
extern template class TmSet<9>;

/// The update side every TupleMerge engine shares: a TmSet, the published version, one writer
/// at a time. An update is applied for version v + 1, the table list is published, then
/// v + 1; every kTmCollectEvery updates (or kTmMaxRetiredBytes retired) `quiesce` must return
/// once no reader can use a version below the current one (the CPU engine:
/// ReadGuard::synchronize; the CUDA engine, whose readers never touch host memory: nothing),
/// and retired memory is freed and dead entries collected.
template <unsigned NW>
class TmWriter {
 public:
  Status init(const RuleSet& rules);
  Status update(bool insert, uint32_t index, const Rule* rule, void (*quiesce)(const void*),
                const void* arg);
  uint64_t version() const { return version_.load(std::memory_order_seq_cst); }
  const TmSet<NW>& set() const { return set_; }
  /// For a copy that follows the set's logs (TmFlat), with mutex() held.
  TmSet<NW>& mutable_set() const { return set_; }
  std::mutex& mutex() const { return mutex_; }

 private:
  mutable TmSet<NW> set_;
  std::atomic<uint64_t> version_{0};
  mutable std::mutex mutex_;
  uint32_t since_collect_ = 0;
};

extern template class TmWriter<4>;
extern template class TmWriter<9>;

/// Builds engine E<4> or E<9> (by the rule set's layout): E(layout), then init(rules). The
/// TupleMerge engines' one factory.
template <template <unsigned> class E>
Result<std::unique_ptr<Classifier>> make_by_width(const RuleSet& rules) {
  auto build = [&](auto engine) -> Result<std::unique_ptr<Classifier>> {
    WARPATH_TRY(engine->init(rules));
    return std::unique_ptr<Classifier>(std::move(engine));
  };
  if (rules.layout == KeyLayout::kFiveTuple) return build(std::make_unique<E<4>>(rules.layout));
  return build(std::make_unique<E<9>>(rules.layout));
}

/// rules, tables (as classes), memory and a detail line (writer's mutex held).
template <unsigned NW>
ClassifierStats tm_stats(const TmSet<NW>& set);

}  // namespace warpath::classify::detail
