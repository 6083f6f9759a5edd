#include "classify/tuple_image.hpp"

#include <algorithm>
#include <cstring>

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

TupleClassSet::TupleClassSet(KeyLayout layout, uint64_t seed, uint32_t max_per_table)
    : layout_(layout), seed_(seed), max_per_table_(max_per_table) {}

Status TupleClassSet::rebuild(const MaskKey& mask, Class& c, std::vector<TablePtr>& out) const {
  const unsigned nw = key_words(layout_);
  // Distinct values, each with its best order key.
  std::vector<TableValue> values(c.entries.size());
  for (size_t i = 0; i < c.entries.size(); ++i) {
    std::memcpy(values[i].value, c.entries[i].value, sizeof values[i].value);
    values[i].key = order_key(c.entries[i].priority, c.entries[i].index);
  }
  std::sort(values.begin(), values.end(), [nw](const TableValue& a, const TableValue& b) {
    const int cmp = std::memcmp(a.value, b.value, nw * 4);
    return cmp != 0 ? cmp < 0 : a.key > b.key;
  });
  values.erase(std::unique(values.begin(), values.end(),
                           [nw](const TableValue& a, const TableValue& b) {
                             return std::memcmp(a.value, b.value, nw * 4) == 0;
                           }),
               values.end());
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
      MaskKey key{};
      std::copy(e.mask, e.mask + kMaxKeyWords, key.begin());
      classes_[key].entries.push_back(e);
    }
    entries_ += entries.size();
  }
  for (auto& [mask, c] : classes_) WARPATH_TRY(rebuild(mask, c, c.tables));
  return Status::ok();
}

Status TupleClassSet::apply(uint32_t index, const Rule* rule) {
  if (index == kNoMatch) return Status(Errc::kInvalidArgument, "rule index 0xffffffff is reserved");
  const auto old = rules_.find(index);
  if (!rule && old == rules_.end())
    return Status(Errc::kNotFound, "no rule with index " + std::to_string(index));
  std::vector<Entry> removed, added;
  if (old != rules_.end()) expand_rule(old->second, index, layout_, removed);
  if (rule) expand_rule(*rule, index, layout_, added);
  // The affected classes, changed aside.
  std::map<MaskKey, Class> changed;
  auto touch = [&](const Entry& e) -> Class& {
    MaskKey key{};
    std::copy(e.mask, e.mask + kMaxKeyWords, key.begin());
    auto it = changed.find(key);
    if (it != changed.end()) return it->second;
    Class& c = changed[key];
    if (auto cur = classes_.find(key); cur != classes_.end()) c.entries = cur->second.entries;
    return c;
  };
  for (const Entry& e : removed) {
    Class& c = touch(e);
    std::erase_if(c.entries, [index](const Entry& x) { return x.index == index; });
  }
  for (const Entry& e : added) touch(e).entries.push_back(e);
  for (auto& [mask, c] : changed) WARPATH_TRY(rebuild(mask, c, c.tables));
  // Commit.
  for (auto& [mask, c] : changed) {
    if (c.entries.empty()) {
      classes_.erase(mask);
    } else {
      classes_[mask] = std::move(c);
    }
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

Status TupleClassSet::insert(uint32_t index, const Rule& rule) { return apply(index, &rule); }
Status TupleClassSet::erase(uint32_t index) { return apply(index, nullptr); }

std::vector<TablePtr> TupleClassSet::tables() const {
  std::vector<TablePtr> out;
  for (const auto& [mask, c] : classes_) out.insert(out.end(), c.tables.begin(), c.tables.end());
  return out;
}

uint64_t TupleClassSet::memory_bytes() const {
  uint64_t bytes = 0;
  for (const auto& [mask, c] : classes_)
    for (const TablePtr& t : c.tables) bytes += t->memory_bytes();
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

}  // namespace warpath::classify::detail
