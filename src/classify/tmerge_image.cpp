// TupleMerge's writer: placement, copy-on-write buckets, versioned erases and collection (see
// tmerge_image.hpp).
#include "classify/tmerge_image.hpp"

#include <algorithm>
#include <bit>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <new>

namespace warpath::classify::detail {
namespace {

constexpr uint32_t kFirstCap = 16;

template <unsigned NW>
size_t bucket_size(uint32_t count) {
  return sizeof(core::TmBucket<NW>) + size_t(count) * sizeof(core::TmEntry<NW>);
}

}  // namespace

template <unsigned NW>
TmSet<NW>::~TmSet() {
  free_retired();
  for (auto& t : tables_) {
    for (uint32_t i = 0; i < t->cap; ++i)
      if (t->slots[i] > core::kTmTomb)
        std::free(const_cast<core::TmBucket<NW>*>(core::tm_bucket_of<NW>(t->slots[i])));
    std::free(t->slots);
  }
  delete published_.load();
}

template <unsigned NW>
void TmSet<NW>::effective(const Rule& r, Value& value, Value& mask) {
  for (unsigned w = 0; w < NW; ++w) mask[w] = r.mask[w], value[w] = r.value[w] & r.mask[w];
  constexpr unsigned p = core::tm_ports_word<NW>();
  if (r.sport_lo == r.sport_hi) {
    mask[p] |= 0xFFFF'0000u;
    value[p] = (value[p] & 0x0000'FFFFu) | uint32_t(r.sport_lo) << 16;
  }
  if (r.dport_lo == r.dport_hi) {
    mask[p] |= 0x0000'FFFFu;
    value[p] = (value[p] & 0xFFFF'0000u) | r.dport_lo;
  }
}

// Relaxation levels, coarse to fine: 0 prefixes to multiples of 16 bits and no ports,
// 1 multiples of 8 and no ports, 2 multiples of 8 with exact ports, 3 the rule's own mask.
// Other masks are kept below level 3 only where every byte is whole (protocol, a MAC's
// bytes, VLAN): arbitrary bit masks (an attacker's way to a table per rule) are dropped. For
// OpenFlow rules level 0 drops every non-prefix word (their many field combinations made a
// table each: GSwitch's 12-field synthetic sets ran 2x faster with 20-27 tables, not 49-62).
template <unsigned NW>
typename TmSet<NW>::Value TmSet<NW>::relax(const Value& mask, int level) {
  if (level >= kRelaxLevels - 1) return mask;
  const int bits = level == 0 ? int(kRelaxBits) * 2 : int(kRelaxBits);
  Value m = mask;
  for (unsigned w = 0; w < NW; ++w) {
    const uint32_t x = mask[w];
    const int l      = std::countl_one(x);
    if (w == core::tm_ports_word<NW>()) {
      if (level < 2) m[w] = 0;
      continue;
    }
    if (x == 0 || l == 32) continue;
    if ((x << l) != 0) {  // not a prefix
      bool whole = true;
      for (int b = 0; b < 32; b += 8) whole &= ((x >> b) & 0xFF) == 0 || ((x >> b) & 0xFF) == 0xFF;
      if (!whole || (NW == 9 && level == 0)) m[w] = 0;
      continue;
    }
    const int r = l - l % bits;
    m[w]        = r == 0 ? 0 : ~0u << (32 - r);
  }
  return m;
}

template <unsigned NW>
typename TmSet<NW>::Table* TmSet<NW>::table_for(const Value& mask) {
  for (auto& t : tables_)
    if (t->mask == mask) return t.get();
  auto t   = std::make_unique<Table>();
  t->mask  = mask;
  for (uint32_t w : mask) t->bits += std::popcount(w);
  t->cap   = kFirstCap;
  t->slots = static_cast<uint64_t*>(std::calloc(kFirstCap, sizeof(uint64_t)));
  if (!t->slots) throw std::bad_alloc();
  tables_.push_back(std::move(t));
  list_changed_ = true;
  restructured();
  return tables_.back().get();
}

template <unsigned NW>
uint32_t TmSet<NW>::locate(const Table& t, const Value& v, uint64_t h, bool& found) const {
  uint32_t free_at = UINT32_MAX;
  for (uint32_t i = uint32_t(h) & (t.cap - 1);; i = (i + 1) & (t.cap - 1)) {
    const uint64_t s = t.slots[i];
    if (s == core::kTmEmpty) {
      found = false;
      return free_at != UINT32_MAX ? free_at : i;
    }
    if (s == core::kTmTomb) {
      if (free_at == UINT32_MAX) free_at = i;
      continue;
    }
    if (core::tm_tag_equal(s, h) &&
        std::memcmp(core::tm_bucket_of<NW>(s)->value, v.data(), sizeof(uint32_t) * NW) == 0) {
      found = true;
      return i;
    }
  }
}

template <unsigned NW>
const core::TmBucket<NW>* TmSet<NW>::bucket_at(const Table& t, const Value& v) const {
  bool found       = false;
  const uint32_t i = locate(t, v, core::tm_hash<NW>(v.data()), found);
  return found ? core::tm_bucket_of<NW>(t.slots[i]) : nullptr;
}

template <unsigned NW>
void TmSet<NW>::grow(Table& t, uint32_t cap) {
  auto* slots = static_cast<uint64_t*>(std::calloc(cap, sizeof(uint64_t)));
  if (!slots) throw std::bad_alloc();
  for (uint32_t i = 0; i < t.cap; ++i) {
    const uint64_t s = t.slots[i];
    if (s <= core::kTmTomb) continue;
    const uint64_t h = core::tm_hash<NW>(core::tm_bucket_of<NW>(s)->value);
    uint32_t j       = uint32_t(h) & (cap - 1);
    while (slots[j] != core::kTmEmpty) j = (j + 1) & (cap - 1);
    slots[j] = s;
  }
  retire(t.slots, size_t(t.cap) * sizeof(uint64_t));
  t.slots       = slots;  // readers get it with the next list
  t.cap         = cap;
  t.used        = t.buckets;
  list_changed_ = true;
  restructured();
}

template <unsigned NW>
void TmSet<NW>::put(Table& t, const Value& v, const core::TmBucket<NW>* b) {
  const uint64_t h = core::tm_hash<NW>(v.data());
  bool found       = false;
  uint32_t i       = locate(t, v, h, found);
  if (!b) {
    if (found) {
      __atomic_store_n(&t.slots[i], core::kTmTomb, __ATOMIC_RELEASE), --t.buckets;
      if (logging_) slot_log_.push_back({t.slots, i});
    }
    return;
  }
  if (!found && (t.used + 1) * 2 > t.cap) {
    grow(t, (t.buckets + 1) * 4 > t.cap ? t.cap * 2 : t.cap);
    i = locate(t, v, h, found);
  }
  if (!found) {
    if (t.slots[i] == core::kTmEmpty) ++t.used;
    ++t.buckets;
  }
  __atomic_store_n(&t.slots[i], core::tm_slot(h, b, b->count), __ATOMIC_RELEASE);
  if (logging_) slot_log_.push_back({t.slots, i});
}

template <unsigned NW>
core::TmBucket<NW>* TmSet<NW>::new_bucket(const Value& v, uint32_t count) {
  const size_t bytes = bucket_size<NW>(count);
  auto* b = static_cast<core::TmBucket<NW>*>(std::aligned_alloc(64, (bytes + 63) / 64 * 64));
  if (!b) throw std::bad_alloc();
  if (reinterpret_cast<uintptr_t>(b) >> 48) {  // the slot keeps 48 address bits
    std::free(b);
    throw std::bad_alloc();
  }
  std::memcpy(b->value, v.data(), sizeof(uint32_t) * NW);
  b->count = count;
  bucket_bytes_ += bytes;
  return b;
}

template <unsigned NW>
void TmSet<NW>::retire(void* p, size_t bytes) {
  if (building_) {
    std::free(p);
    return;
  }
  retired_.emplace_back(p, bytes);
  retired_bytes_ += bytes;
}

template <unsigned NW>
void TmSet<NW>::retire_bucket(const core::TmBucket<NW>* b) {
  const size_t bytes = bucket_size<NW>(b->count);
  bucket_bytes_ -= bytes;
  retire(const_cast<core::TmBucket<NW>*>(b), bytes);
}

template <unsigned NW>
void TmSet<NW>::free_retired() {
  if (!retired_.empty()) restructured();  // freed addresses may be handed out again
  for (auto& [p, bytes] : retired_) std::free(p);
  retired_.clear();
  retired_lists_.clear();
  retired_bytes_ = 0;
}

template <unsigned NW>
Status TmSet<NW>::insert(uint32_t index, const Rule& rule, uint64_t version) {
  if (index == kNoMatch) return Status(Errc::kInvalidArgument, "rule index 2^32-1 is reserved");
  if (rule.sport_lo > rule.sport_hi || rule.dport_lo > rule.dport_hi)
    return Status(Errc::kInvalidArgument, "rule " + std::to_string(index) + ": empty port range");
  if (where_.count(index)) WARPATH_TRY(erase(index, version));
  Value ev, em;
  effective(rule, ev, em);
  auto masked = [](const Value& v, const Value& m) {
    Value r;
    for (unsigned w = 0; w < NW; ++w) r[w] = v[w] & m[w];
    return r;
  };
  // The most specific table that can hold the rule and has room in its bucket.
  std::vector<Table*> fits;
  for (auto& t : tables_) {
    bool subset = true;
    for (unsigned w = 0; w < NW; ++w) subset &= (t->mask[w] & ~em[w]) == 0;
    if (subset) fits.push_back(t.get());
  }
  std::sort(fits.begin(), fits.end(), [](const Table* a, const Table* b) { return a->bits > b->bits; });
  Table* t = nullptr;
  for (Table* c : fits) {
    const auto* b = bucket_at(*c, masked(ev, c->mask));
    if (!b || b->count < kCollisionLimit) {
      t = c;
      break;
    }
  }
  // At kMaxTables no new table: the most specific candidate takes the rule past the limit,
  // or (none) the table of the empty mask, which takes every rule.
  if (!t && tables_.size() >= kMaxTables) {
    ++overflows_;
    t = fits.empty() ? table_for(Value{}) : fits.front();
  }
  // Else the coarsest relaxation of the rule's mask whose bucket has room (existing tables at
  // those masks were full, or they are new).
  for (int level = 0; !t && level < kRelaxLevels; ++level) {
    const Value m = relax(em, level);
    const auto it = std::find_if(tables_.begin(), tables_.end(),
                                 [&](const std::unique_ptr<Table>& x) { return x->mask == m; });
    if (it == tables_.end() || level == kRelaxLevels - 1) t = table_for(m);
  }
  const Value bv = masked(ev, t->mask);
  const auto* old = bucket_at(*t, bv);
  const uint32_t n = old ? old->count : 0;
  core::TmBucket<NW>* nb = new_bucket(bv, n + 1);
  core::TmEntry<NW> e{};
  // The effective value and mask (exact ports as mask bits): the bucket's value is the first
  // entry's under the table mask (core::tm_holds).
  for (unsigned w = 0; w < NW; ++w) e.value[w] = ev[w], e.mask[w] = em[w];
  e.sport_lo = rule.sport_lo, e.sport_span = uint16_t(rule.sport_hi - rule.sport_lo);
  e.dport_lo = rule.dport_lo, e.dport_span = uint16_t(rule.dport_hi - rule.dport_lo);
  e.key   = order_key(rule.priority, index);
  e.birth = version;
  e.death = core::kTmNever;
  // Sorted by order key, best first.
  const core::TmEntry<NW>* src = old ? core::tm_entries(old) : nullptr;
  core::TmEntry<NW>* dst       = core::tm_entries(nb);
  uint32_t i = 0, o = 0;
  while (i < n && src[i].key > e.key) dst[o++] = src[i++];
  dst[o++] = e;
  while (i < n) dst[o++] = src[i++];
  put(*t, bv, nb);
  if (old) retire_bucket(old);
  ++t->entries, ++entries_;
  if (e.key > t->best) t->best = e.key, list_changed_ = true;
  where_[index] = Where{t, bv, e.key};
  return Status::ok();
}

template <unsigned NW>
Status TmSet<NW>::erase(uint32_t index, uint64_t version) {
  const auto it = where_.find(index);
  if (it == where_.end())
    return Status(Errc::kNotFound, "no rule with index " + std::to_string(index));
  const Where& w = it->second;
  auto* b        = const_cast<core::TmBucket<NW>*>(bucket_at(*w.table, w.bucket));
  core::TmEntry<NW>* e = b ? core::tm_entries(b) : nullptr;
  for (uint32_t i = 0; b && i < b->count; ++i)
    if (e[i].key == w.key && e[i].death == core::kTmNever) {
      __atomic_store_n(&e[i].death, version, __ATOMIC_RELEASE);
      if (logging_) death_log_.push_back({b, i});
      break;
    }
  dirty_.push_back(Dirty{w.table, w.bucket});
  where_.erase(it);
  return Status::ok();
}

template <unsigned NW>
void TmSet<NW>::recompute_best(Table& t) {
  uint64_t best = 0;
  for (uint32_t i = 0; i < t.cap; ++i)
    if (t.slots[i] > core::kTmTomb) {
      const auto* b = core::tm_bucket_of<NW>(t.slots[i]);
      if (b->count) best = std::max(best, core::tm_entries(b)[0].key);
    }
  if (best != t.best) t.best = best, list_changed_ = true;
  t.recompute_best = false;
}

template <unsigned NW>
void TmSet<NW>::collect(uint64_t oldest) {
  restructured();  // buckets freed and remade: their addresses may come back for others
  std::vector<Dirty> later;
  for (const Dirty& d : dirty_) {
    Table& t      = *d.table;
    const auto* b = bucket_at(t, d.bucket);
    if (!b) continue;
    const core::TmEntry<NW>* e = core::tm_entries(b);
    uint32_t dead = 0, pending = 0;
    bool best_gone = false;
    for (uint32_t i = 0; i < b->count; ++i) {
      const uint64_t death = e[i].death;
      if (death <= oldest) ++dead, best_gone |= e[i].key >= t.best;
      else if (death != core::kTmNever) ++pending;
    }
    if (pending) later.push_back(d);
    if (dead == 0) continue;
    if (dead == b->count) {
      put(t, d.bucket, nullptr);
    } else {
      core::TmBucket<NW>* nb = new_bucket(d.bucket, b->count - dead);
      core::TmEntry<NW>* out = core::tm_entries(nb);
      for (uint32_t i = 0, o = 0; i < b->count; ++i)
        if (e[i].death > oldest) out[o++] = e[i];
      put(t, d.bucket, nb);
    }
    retire_bucket(b);
    t.entries -= dead, entries_ -= dead;
    t.recompute_best |= best_gone;
  }
  dirty_ = std::move(later);
  for (size_t i = 0; i < tables_.size();) {
    Table& t = *tables_[i];
    if (t.buckets == 0) {
      retire(t.slots, size_t(t.cap) * sizeof(uint64_t));
      tables_[i] = std::move(tables_.back());
      tables_.pop_back();
      list_changed_ = true;
      continue;
    }
    if (t.recompute_best) recompute_best(t);
    if ((t.used - t.buckets) * 4 > t.cap) grow(t, t.cap);  // clear the tombstones
    ++i;
  }
  publish_list();
}

template <unsigned NW>
void TmSet<NW>::publish_list() {
  if (!list_changed_) return;
  auto list = std::make_unique<TmList<NW>>();
  list->tables.reserve(tables_.size());
  for (const auto& t : tables_) {
    core::TmTable<NW> v{};
    std::copy(t->mask.begin(), t->mask.end(), v.mask);
    v.cap_mask = t->cap - 1;
    v.best     = t->best;
    v.slots    = t->slots;
    list->tables.push_back(v);
  }
  std::stable_sort(list->tables.begin(), list->tables.end(),
                   [](const core::TmTable<NW>& a, const core::TmTable<NW>& b) { return a.best > b.best; });
  const TmList<NW>* old = published_.exchange(list.release(), std::memory_order_acq_rel);
  if (old) {
    if (building_) delete old;
    else retired_lists_.emplace_back(old), retired_bytes_ += sizeof(*old);
  }
  list_changed_ = false;
}

template <unsigned NW>
uint64_t TmSet<NW>::memory_bytes() const {
  uint64_t bytes = bucket_bytes_ + where_.size() * (sizeof(Where) + 16);
  for (const auto& t : tables_) bytes += sizeof(Table) + uint64_t(t->cap) * sizeof(uint64_t);
  if (const auto* l = list()) bytes += l->tables.capacity() * sizeof(core::TmTable<NW>);
  return bytes;
}

template <unsigned NW>
Status TmWriter<NW>::init(const RuleSet& rules) {
  std::lock_guard<std::mutex> lock(mutex_);
  set_.set_building(true);
  for (uint32_t i = 0; i < rules.rules.size(); ++i) WARPATH_TRY(set_.insert(i, rules.rules[i], 0));
  set_.publish_list();
  set_.set_building(false);
  return Status::ok();
}

template <unsigned NW>
Status TmWriter<NW>::update(bool insert, uint32_t index, const Rule* rule,
                            void (*quiesce)(const void*), const void* arg) {
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t next = version_.load(std::memory_order_relaxed) + 1;
  WARPATH_TRY(insert ? set_.insert(index, *rule, next) : set_.erase(index, next));
  set_.publish_list();
  version_.store(next, std::memory_order_release);
  if (++since_collect_ >= kTmCollectEvery || set_.retired_bytes() >= kTmMaxRetiredBytes) {
    quiesce(arg);  // readers now take `next` or later
    set_.free_retired();
    set_.collect(next);
    since_collect_ = 0;
  }
  return Status::ok();
}

template <unsigned NW>
ClassifierStats tm_stats(const TmSet<NW>& set) {
  ClassifierStats s;
  s.rules        = set.rules();
  s.entries      = set.rules();
  s.classes      = set.tables();
  s.memory_bytes = set.memory_bytes();
  char buf[96];
  std::snprintf(buf, sizeof buf, "%u tables, %.1f rules per table, %llu placed past the limit",
                set.tables(), set.tables() ? double(s.rules) / set.tables() : 0.0,
                static_cast<unsigned long long>(set.overflows()));
  s.detail = buf;
  return s;
}
template ClassifierStats tm_stats(const TmSet<4>&);
template ClassifierStats tm_stats(const TmSet<9>&);

template class TmSet<4>;
template class TmSet<9>;
template class TmWriter<4>;
template class TmWriter<9>;

}  // namespace warpath::classify::detail
