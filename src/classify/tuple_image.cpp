#include "classify/tuple_image.hpp"

#include <algorithm>
#include <cstring>
#include <iterator>

namespace warpath::classify::detail {
namespace {

constexpr unsigned kMaxKicks    = 256;
constexpr unsigned kMaxAttempts = 64;  ///< rehashes; every 4th failure doubles d

uint64_t splitmix(uint64_t& s) {
  uint64_t z = (s += 0x9e37'79b9'7f4a'7c15ull);
  z          = (z ^ (z >> 30)) * 0xbf58'476d'1ce4'e5b9ull;
  z          = (z ^ (z >> 27)) * 0x94d0'49bb'1331'11ebull;
  return z ^ (z >> 31);
}

void draw_params(core::TupleTable& t, uint64_t& rng) {
  for (unsigned w = 0; w < kMaxKeyWords; ++w) t.ka[w] = splitmix(rng);
  for (unsigned i = 0; i < core::kCuckooWays; ++i) {
    t.ha[i] = 1 + splitmix(rng) % 0xFFFF'FFFFull;  // 1 <= a < 2^32
    t.hb[i] = splitmix(rng) % core::kHashPrime;
  }
  for (unsigned i = 0; i < core::kBloomHashes; ++i) {
    t.ga[i] = uint32_t(splitmix(rng)) | 1u;
    t.gb[i] = uint32_t(splitmix(rng));
  }
}

// Places every value by cuckoo insertion; false when some value could not be placed.
template <unsigned NW>
bool place(TupleTableData& d, const std::vector<TableValue>& values, uint64_t& rng) {
  core::TupleTable& t  = d.view;
  const uint32_t slots = core::kCuckooWays << t.log2d;
  std::vector<uint32_t> occ(slots, UINT32_MAX);
  std::vector<uint32_t> hash(values.size());
  for (size_t v = 0; v < values.size(); ++v) hash[v] = core::tuple_hash<NW>(values[v].value, t.ka);
  for (uint32_t v = 0; v < values.size(); ++v) {
    uint32_t cur = v;
    bool placed  = false;
    for (unsigned kick = 0; kick < kMaxKicks && !placed; ++kick) {
      for (unsigned i = 0; i < core::kCuckooWays && !placed; ++i) {
        const uint32_t s = core::cuckoo_index(t, i, hash[cur]);
        if (occ[s] == UINT32_MAX) occ[s] = cur, placed = true;
      }
      if (!placed) {
        const uint32_t s =
            core::cuckoo_index(t, unsigned(splitmix(rng) % core::kCuckooWays), hash[cur]);
        std::swap(cur, occ[s]);
      }
    }
    if (!placed) return false;
  }
  d.slots.assign(size_t(slots) * core::slot_words(NW), 0);
  for (uint32_t s = 0; s < slots; ++s) {
    if (occ[s] == UINT32_MAX) continue;
    const TableValue& tv = values[occ[s]];
    uint32_t* p          = &d.slots[size_t(s) * core::slot_words(NW)];
    for (unsigned w = 0; w < NW; ++w) p[w] = tv.value[w];
    p[NW]     = uint32_t(tv.key);
    p[NW + 1] = uint32_t(tv.key >> 32);
  }
  std::fill(d.bloom.begin(), d.bloom.end(), 0u);
  for (size_t v = 0; v < values.size(); ++v)
    for (unsigned i = 0; i < core::kBloomHashes; ++i) {
      const uint32_t j = core::bloom_bit(t, i, hash[v]);
      d.bloom[j >> 5] |= 1u << (j & 31);
    }
  return true;
}

uint64_t mask_seed(uint64_t seed, const uint32_t* mask, uint32_t part) {
  uint64_t s = seed ^ (uint64_t(part) << 40);
  for (unsigned w = 0; w < kMaxKeyWords; ++w) {
    s ^= mask[w];
    splitmix(s);
  }
  return s;
}

}  // namespace

Result<TablePtr> build_tuple_table(const uint32_t* mask, const std::vector<TableValue>& values,
                                   KeyLayout layout, uint64_t seed) {
  auto d              = std::make_shared<TupleTableData>();
  core::TupleTable& t = d->view;
  std::memcpy(t.mask, mask, sizeof t.mask);
  t.entries = uint32_t(values.size());
  t.best    = 0;
  for (const TableValue& v : values) t.best = std::max(t.best, v.key);
  t.log2d = 0;
  while ((uint64_t(core::kCuckooWays) << t.log2d) * 4 < uint64_t(values.size()) * 5) ++t.log2d;
  unsigned log2m = 6;
  while (log2m < 31 && (uint64_t(1) << log2m) < uint64_t(values.size()) * 16) ++log2m;
  t.bloom_shift = 32 - log2m;
  d->bloom.assign(core::bloom_words(t.bloom_shift), 0);
  uint64_t rng = seed;
  for (unsigned attempt = 0;; ++attempt) {
    if (attempt == kMaxAttempts)
      return Status(Errc::kCapacity, "tuple table: cuckoo insertion failed for " +
                                         std::to_string(values.size()) + " values");
    if (attempt > 0 && attempt % 4 == 0) ++t.log2d;
    draw_params(t, rng);
    const bool ok =
        layout == KeyLayout::kFiveTuple ? place<4>(*d, values, rng) : place<9>(*d, values, rng);
    if (ok) break;
  }
  t.slots = d->slots.data();
  t.bloom = d->bloom.data();
  return TablePtr(std::move(d));
}

namespace {

// ---- incremental table updates -------------------------------------------------------------

inline uint64_t slot_key(const uint32_t* p, unsigned nw) {
  return uint64_t(p[nw + 1]) << 32 | p[nw];
}

inline void set_bloom(TupleTableData& d, uint32_t x) {
  for (unsigned i = 0; i < core::kBloomHashes; ++i) {
    const uint32_t j = core::bloom_bit(d.view, i, x);
    d.bloom[j >> 5] |= 1u << (j & 31);
  }
}

/// Whether n values fit 3 subtables of 1 << log2d slots at a load of at most 80 %.
inline bool fits(uint64_t n, uint32_t log2d) {
  return (uint64_t(core::kCuckooWays) << log2d) * 4 >= n * 5;
}

// Applies `changes` to d (a private copy) in place; false when the table must be rebuilt
// instead (an insertion failed, or the load left [5 %, 80 %]); d is then garbage.
template <unsigned NW>
bool apply_changes(TupleTableData& d, const std::vector<ValueChange>& changes, uint64_t& rng) {
  core::TupleTable& t   = d.view;
  constexpr uint32_t sw = core::slot_words(NW);
  uint32_t* slots       = d.slots.data();
  bool rescan_best      = false;
  for (const ValueChange& c : changes) {
    const uint32_t x = core::tuple_hash<NW>(c.value, t.ka);
    uint32_t* p      = nullptr;
    for (unsigned i = 0; i < core::kCuckooWays && !p; ++i) {
      uint32_t* q = slots + size_t(core::cuckoo_index(t, i, x)) * sw;
      if (slot_key(q, NW) != 0 && std::memcmp(q, c.value, NW * 4) == 0) p = q;
    }
    if (p) {
      const uint64_t old = slot_key(p, NW);
      if (c.key == 0) {
        std::fill(p, p + sw, 0u);
        --t.entries;
        ++d.stale;
      } else {
        p[NW]     = uint32_t(c.key);
        p[NW + 1] = uint32_t(c.key >> 32);
      }
      if (old == t.best && c.key < old) rescan_best = true;
      t.best = std::max(t.best, c.key);
      continue;
    }
    if (c.key == 0) continue;  // not stored (cannot happen: the class map said it was)
    if (!fits(uint64_t(t.entries) + 1, t.log2d)) return false;
    // Cuckoo insertion with eviction, as place() does.
    uint32_t cur[sw];
    std::memcpy(cur, c.value, NW * 4);
    cur[NW]     = uint32_t(c.key);
    cur[NW + 1] = uint32_t(c.key >> 32);
    uint32_t h  = x;
    bool placed = false;
    for (unsigned kick = 0; kick < kMaxKicks && !placed; ++kick) {
      for (unsigned i = 0; i < core::kCuckooWays && !placed; ++i) {
        uint32_t* q = slots + size_t(core::cuckoo_index(t, i, h)) * sw;
        if (slot_key(q, NW) == 0) std::memcpy(q, cur, sizeof cur), placed = true;
      }
      if (!placed) {
        const unsigned i = unsigned(splitmix(rng) % core::kCuckooWays);
        uint32_t* q      = slots + size_t(core::cuckoo_index(t, i, h)) * sw;
        for (uint32_t w = 0; w < sw; ++w) std::swap(cur[w], q[w]);
        h = core::tuple_hash<NW>(cur, t.ka);
      }
    }
    if (!placed) return false;
    ++t.entries;
    t.best = std::max(t.best, c.key);
    set_bloom(d, x);
  }
  if (t.entries == 0 || (t.log2d >= 2 && fits(t.entries * 4, t.log2d - 2))) return false;
  const uint32_t nslots = core::kCuckooWays << t.log2d;
  if (rescan_best) {
    t.best = 0;
    for (uint32_t s = 0; s < nslots; ++s)
      t.best = std::max(t.best, slot_key(slots + size_t(s) * sw, NW));
  }
  if (d.stale > t.entries / 4 + 4) {  // drop the erased values' bits
    std::fill(d.bloom.begin(), d.bloom.end(), 0u);
    for (uint32_t s = 0; s < nslots; ++s) {
      const uint32_t* p = slots + size_t(s) * sw;
      if (slot_key(p, NW) != 0) set_bloom(d, core::tuple_hash<NW>(p, t.ka));
    }
    d.stale = 0;
  }
  return true;
}

bool apply_changes(TupleTableData& d, const std::vector<ValueChange>& changes, KeyLayout layout,
                   uint64_t& rng) {
  return layout == KeyLayout::kFiveTuple ? apply_changes<4>(d, changes, rng)
                                         : apply_changes<9>(d, changes, rng);
}

/// A copy of `t` with `changes` applied, or null when it must be rebuilt instead.
TablePtr update_tuple_table(const TupleTableData& t, const std::vector<ValueChange>& changes,
                            KeyLayout layout, uint64_t& rng) {
  auto d   = std::make_shared<TupleTableData>();
  d->view  = t.view;
  d->slots = t.slots;
  d->bloom = t.bloom;
  d->stale = t.stale;
  d->hits.store(t.hits.load(std::memory_order_relaxed), std::memory_order_relaxed);
  if (!apply_changes(*d, changes, layout, rng)) return nullptr;
  d->view.slots = d->slots.data();
  d->view.bloom = d->bloom.data();
  return d;
}

uint64_t best_of(const std::vector<uint64_t>* keys) {
  uint64_t b = 0;
  if (keys)
    for (uint64_t k : *keys) b = std::max(b, k);
  return b;
}

}  // namespace

// ---- TupleClassSet --------------------------------------------------------------------------

size_t TupleClassSet::KeyHash::operator()(const MaskKey& k) const noexcept {
  uint64_t h = 0;
  for (uint32_t w : k) h = (h ^ w) * 0x9e37'79b9'7f4a'7c15ull;
  return size_t(h ^ (h >> 29));
}

/// One class's update, computed aside: the new key lists of the touched values, the new
/// tables, the new entry count.
struct TupleClassSet::Pending {
  std::vector<std::pair<MaskKey, std::vector<uint64_t>>> lists;
  std::vector<TablePtr> tables;
  uint64_t entries    = 0;
  bool tables_changed = false;
  bool in_place       = false;       ///< tables[0] is the class's spare, updated in place
  std::vector<ValueChange> changes;  ///< of the values' best keys
};

TupleClassSet::TupleClassSet(KeyLayout layout, uint64_t seed, uint32_t max_per_table)
    : layout_(layout), seed_(seed), max_per_table_(max_per_table), rng_(seed ^ 0xc1a55e7ull) {}

Status TupleClassSet::build_tables(const MaskKey& mask, std::vector<TableValue> values,
                                   std::vector<TablePtr>& out) const {
  const unsigned nw = key_words(layout_);
  // Sorted, so that the tables (and the GPU's split) do not depend on hash-map order.
  std::sort(values.begin(), values.end(), [nw](const TableValue& a, const TableValue& b) {
    return std::memcmp(a.value, b.value, nw * 4) < 0;
  });
  const size_t per = max_per_table_ ? max_per_table_ : std::max<size_t>(values.size(), 1);
  out.clear();
  for (size_t begin = 0, part = 0; begin < values.size(); begin += per, ++part) {
    std::vector<TableValue> chunk(values.begin() + begin,
                                  values.begin() + std::min(values.size(), begin + per));
    WARPATH_ASSIGN_OR_RETURN(auto table,
                             build_tuple_table(mask.data(), chunk, layout_,
                                               mask_seed(seed_, mask.data(), uint32_t(part))));
    out.push_back(std::move(table));
  }
  return Status::ok();
}

Status TupleClassSet::add_all(const RuleSet& rules) {
  std::vector<Entry> entries;
  for (size_t i = 0; i < rules.rules.size(); ++i) {
    rules_[uint32_t(i)] = rules.rules[i];
    entries.clear();
    expand_rule(rules.rules[i], uint32_t(i), layout_, entries);
    for (const Entry& e : entries) {
      MaskKey key{}, value{};
      std::copy(e.mask, e.mask + kMaxKeyWords, key.begin());
      std::copy(e.value, e.value + kMaxKeyWords, value.begin());
      Class& c = classes_[key];
      c.values[value].push_back(order_key(e.priority, e.index));
      ++c.entries;
    }
    entries_ += entries.size();
  }
  std::vector<TableValue> values;
  for (auto& [mask, c] : classes_) {
    values.clear();
    values.reserve(c.values.size());
    for (const auto& [value, keys] : c.values) {
      TableValue& v = values.emplace_back();
      std::copy(value.begin(), value.end(), v.value);
      v.key = best_of(&keys);
    }
    WARPATH_TRY(build_tables(mask, values, c.tables));
  }
  return Status::ok();
}

// p.lists holds the touched values' new key lists; fills the rest of p.
Status TupleClassSet::update_class(const MaskKey& mask, const Class* c, Pending& p) {
  std::vector<ValueChange> changes;
  for (const auto& [value, keys] : p.lists) {
    const std::vector<uint64_t>* old = nullptr;
    if (c)
      if (auto it = c->values.find(value); it != c->values.end()) old = &it->second;
    const uint64_t before = best_of(old), after = best_of(&keys);
    if (before == after) continue;
    ValueChange& ch = changes.emplace_back();
    std::copy(value.begin(), value.end(), ch.value);
    ch.key = after;
  }
  if (c) p.tables = c->tables;
  if (changes.empty()) return Status::ok();
  p.tables_changed = true;
  if (p.entries == 0) {
    p.tables.clear();
    return Status::ok();
  }
  if (c && max_per_table_ == 0 && c->tables.size() == 1) {
    const TupleTableData& cur = *c->tables[0];
    // Left-right when the spare is free, or when waiting for readers beats copying.
    const bool free_now = epoch_ > c->spare_epoch;
    if (c->spare && c->spare->view.log2d == cur.view.log2d && quiesce_ &&
        (free_now || cur.memory_bytes() >= copy_bytes_)) {
      // Bring the spare up to date, in place, once no reader can hold it.
      if (!free_now) quiesce_();
      TupleTableData& d = *c->spare;
      if (apply_changes(d, c->lag, layout_, rng_) && apply_changes(d, changes, layout_, rng_)) {
        d.view.slots = d.slots.data();
        d.view.bloom = d.bloom.data();
        p.tables     = {c->spare};
        p.in_place   = true;
        p.changes    = std::move(changes);
        return Status::ok();
      }
      // The spare is garbage now: commit drops it.
    } else if (TablePtr t = update_tuple_table(cur, changes, layout_, rng_)) {
      p.tables  = {std::move(t)};
      p.changes = std::move(changes);
      return Status::ok();
    }
  }
  // Rebuild: every value's best, the touched ones from p.lists.
  std::vector<TableValue> values;
  std::map<MaskKey, const std::vector<uint64_t>*> touched;
  for (const auto& [value, keys] : p.lists) touched[value] = &keys;
  auto add = [&](const MaskKey& value, const std::vector<uint64_t>& keys) {
    if (keys.empty()) return;
    TableValue& v = values.emplace_back();
    std::copy(value.begin(), value.end(), v.value);
    v.key = best_of(&keys);
  };
  if (c)
    for (const auto& [value, keys] : c->values)
      if (!touched.count(value)) add(value, keys);
  for (const auto& [value, keys] : p.lists) add(value, keys);
  return build_tables(mask, std::move(values), p.tables);
}

Status TupleClassSet::apply(uint32_t index, const Rule* rule, std::vector<TableChange>* changes) {
  if (index == kNoMatch) return Status(Errc::kInvalidArgument, "rule index 0xffffffff is reserved");
  const auto old = rules_.find(index);
  if (!rule && old == rules_.end())
    return Status(Errc::kNotFound, "no rule with index " + std::to_string(index));
  std::vector<Entry> removed, added;
  if (old != rules_.end()) expand_rule(old->second, index, layout_, removed);
  if (rule) expand_rule(*rule, index, layout_, added);
  // The touched classes and values, with their new key lists (aside).
  std::map<MaskKey, Pending> pending;
  auto list = [&](const Entry& e) -> std::pair<Pending*, std::vector<uint64_t>*> {
    MaskKey key{}, value{};
    std::copy(e.mask, e.mask + kMaxKeyWords, key.begin());
    std::copy(e.value, e.value + kMaxKeyWords, value.begin());
    auto [pit, fresh] = pending.try_emplace(key);
    Pending& p        = pit->second;
    const auto cit    = classes_.find(key);
    if (fresh) p.entries = cit != classes_.end() ? cit->second.entries : 0;
    for (auto& [v, keys] : p.lists)
      if (v == value) return {&p, &keys};
    auto& [v, keys] = p.lists.emplace_back(value, std::vector<uint64_t>{});
    if (cit != classes_.end())
      if (auto it = cit->second.values.find(value); it != cit->second.values.end())
        keys = it->second;
    return {&p, &keys};
  };
  for (const Entry& e : removed) {
    auto [p, keys]   = list(e);
    const uint64_t k = order_key(e.priority, e.index);
    if (auto it = std::find(keys->begin(), keys->end(), k); it != keys->end()) {
      *it = keys->back();
      keys->pop_back();
      --p->entries;
    }
  }
  for (const Entry& e : added) {
    auto [p, keys] = list(e);
    keys->push_back(order_key(e.priority, e.index));
    ++p->entries;
  }
  for (auto& [mask, p] : pending) {
    const auto cit = classes_.find(mask);
    Status s       = update_class(mask, cit != classes_.end() ? &cit->second : nullptr, p);
    if (!s.is_ok()) {  // a spare updated in place has changes that are not committed: drop it
      for (auto& [m, q] : pending)
        if (q.in_place) classes_[m].spare = nullptr, classes_[m].lag.clear();
      return s;
    }
  }
  // Commit.
  for (auto& [mask, p] : pending) {
    if (p.entries == 0) {
      if (auto cit = classes_.find(mask); cit != classes_.end()) {
        if (changes)
          for (const TablePtr& t : cit->second.tables) changes->push_back({t, nullptr});
        classes_.erase(cit);
      }
      continue;
    }
    Class& c = classes_[mask];
    for (auto& [value, keys] : p.lists) {
      if (keys.empty()) {
        c.values.erase(value);
      } else {
        c.values[value] = std::move(keys);
      }
    }
    c.entries = p.entries;
    if (!p.tables_changed) continue;
    // The replaced table becomes the spare when it is large enough for left-right updates
    // (and it lacks just this update's changes); else there is none.
    std::shared_ptr<TupleTableData> spare;
    if (quiesce_ && max_per_table_ == 0 && c.tables.size() == 1 && p.tables.size() == 1 &&
        !p.changes.empty() && c.tables[0]->memory_bytes() >= inplace_bytes_ &&
        c.tables[0]->view.log2d == p.tables[0]->view.log2d) {
      // Every table is built by make_shared<TupleTableData>: writable behind the const.
      spare         = std::const_pointer_cast<TupleTableData>(c.tables[0]);
      c.lag         = std::move(p.changes);
      c.spare_epoch = epoch_;
    }
    c.spare = std::move(spare);
    if (!c.spare) c.lag.clear();
    if (changes) {
      const size_t n = std::max(c.tables.size(), p.tables.size());
      for (size_t i = 0; i < n; ++i)
        changes->push_back({i < c.tables.size() ? c.tables[i] : nullptr,
                            i < p.tables.size() ? p.tables[i] : nullptr, i == 0 && c.spare});
    }
    c.tables = std::move(p.tables);
  }
  entries_ += added.size();
  entries_ -= removed.size();
  if (rule) {
    rules_[index] = *rule;
  } else {
    rules_.erase(index);
  }
  return Status::ok();
}

Status TupleClassSet::insert(uint32_t index, const Rule& rule, std::vector<TableChange>* changes) {
  return apply(index, &rule, changes);
}
Status TupleClassSet::erase(uint32_t index, std::vector<TableChange>* changes) {
  return apply(index, nullptr, changes);
}

std::vector<TablePtr> TupleClassSet::tables() const {
  std::vector<TablePtr> out;
  for (const auto& [mask, c] : classes_) out.insert(out.end(), c.tables.begin(), c.tables.end());
  return out;
}

uint64_t TupleClassSet::memory_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [mask, c] : classes_) {
    for (const TablePtr& t : c.tables) bytes += t->memory_bytes();
    if (c.spare) bytes += c.spare->memory_bytes();
  }
  return bytes;
}

std::unique_ptr<TupleVersion> make_version(std::vector<TablePtr> tables, bool rank_by_hits) {
  auto v         = std::make_unique<TupleVersion>();
  auto by_best   = [](const TablePtr& a, const TablePtr& b) { return a->view.best > b->view.best; };
  uint64_t total = 0;
  if (rank_by_hits)
    for (const TablePtr& t : tables) total += t->hits.load(std::memory_order_relaxed);
  if (total > 0) {
    std::vector<std::pair<uint64_t, TablePtr>> ranked;
    ranked.reserve(tables.size());
    for (const TablePtr& t : tables)
      ranked.emplace_back(t->hits.load(std::memory_order_relaxed), t);
    std::stable_sort(ranked.begin(), ranked.end(),
                     [](const auto& a, const auto& b) { return a.first > b.first; });
    uint64_t covered = 0;
    size_t hot       = 0;
    while (hot < ranked.size() && hot < 32 && covered * 10 < total * 9 &&
           ranked[hot].first * 200 >= total)
      covered += ranked[hot++].first;
    tables.clear();
    for (auto& [hits, t] : ranked) tables.push_back(std::move(t));
    std::stable_sort(tables.begin() + hot, tables.end(), by_best);
    v->hot = uint32_t(hot);
  } else {
    std::stable_sort(tables.begin(), tables.end(), by_best);
  }
  v->tables = std::move(tables);
  for (const TablePtr& t : v->tables) v->views.push_back(t->view);
  return v;
}

std::unique_ptr<TupleVersion> update_version(const TupleVersion& cur,
                                             const std::vector<TableChange>& changes) {
  // The changes by `before`, for a binary search per current table.
  std::vector<const TableChange*> by_before;
  std::vector<TablePtr> moved;  // added, or replaced in the sorted part with another best
  for (const TableChange& c : changes) {
    if (c.before) {
      by_before.push_back(&c);
    } else if (c.after) {
      moved.push_back(c.after);
    }
  }
  auto less = [](const TableChange* a, const TableChange* b) {
    return a->before.get() < b->before.get();
  };
  std::sort(by_before.begin(), by_before.end(), less);
  auto v = std::make_unique<TupleVersion>();
  std::vector<TablePtr> tail;
  v->tables.reserve(cur.tables.size() + moved.size());
  tail.reserve(cur.tables.size() + moved.size());
  for (size_t i = 0; i < cur.tables.size(); ++i) {
    const TablePtr& t    = cur.tables[i];
    const bool is_hot    = i < cur.hot;
    const TableChange* c = nullptr;
    if (!by_before.empty()) {
      const TableChange key{t, nullptr};
      const auto it = std::lower_bound(by_before.begin(), by_before.end(), &key, less);
      if (it != by_before.end() && (*it)->before == t) c = *it;
    }
    const TablePtr& keep = c ? c->after : t;
    if (!keep) continue;  // removed
    if (is_hot) {
      v->tables.push_back(keep);
      ++v->hot;
    } else if (!c || keep->view.best == t->view.best) {
      tail.push_back(keep);
    } else {
      moved.push_back(keep);
    }
  }
  // Merge the moved tables into the tail, by best descending; a moved table goes after the
  // tail's tables with the same best (as make_version's stable sort would place it).
  auto by_best = [](const TablePtr& a, const TablePtr& b) { return a->view.best > b->view.best; };
  std::stable_sort(moved.begin(), moved.end(), by_best);
  std::merge(tail.begin(), tail.end(), moved.begin(), moved.end(), std::back_inserter(v->tables),
             by_best);
  v->views.reserve(v->tables.size());
  for (const TablePtr& t : v->tables) v->views.push_back(t->view);
  return v;
}

}  // namespace warpath::classify::detail
