// src/openflow/flow_image.cpp: the data side of the flow table (flow_table.hpp: FlowImage):
// compiled from a FlowTable, looked up in batches.
#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <memory>
#include <new>
#include <cstring>
#include <unordered_map>
#include <string>

#include "openflow/core/flow_hash_core.hpp"
#include "warpath/core/hd.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

namespace {

// Memory for the big arrays of an image: 2 MB aligned and marked for transparent huge pages
// from 2 MB on, so a million-flow table costs a handful of TLB entries instead of thousands
// (with 4 KB pages the lookups of such a table wait on page walks as much as on the lines).
template <class T>
struct HugePageAllocator {
  using value_type = T;
  HugePageAllocator() = default;
  template <class U>
  HugePageAllocator(const HugePageAllocator<U>&) noexcept {}
  static constexpr size_t kHuge = size_t(2) << 20;
  T* allocate(size_t n) {
    const size_t bytes = n * sizeof(T);
    if (bytes < kHuge) return std::allocator<T>().allocate(n);
    void* p = std::aligned_alloc(kHuge, (bytes + kHuge - 1) / kHuge * kHuge);
    if (!p) throw std::bad_alloc();
    (void)madvise(p, (bytes + kHuge - 1) / kHuge * kHuge, MADV_HUGEPAGE);
    return static_cast<T*>(p);
  }
  void deallocate(T* p, size_t n) noexcept {
    if (n * sizeof(T) < kHuge)
      std::allocator<T>().deallocate(p, n);
    else
      std::free(p);
  }
  template <class U>
  bool operator==(const HugePageAllocator<U>&) const noexcept { return true; }
};
template <class T>
using LargeVector = std::vector<T, HugePageAllocator<T>>;

}  // namespace

struct FlowImage::Table {
  LargeVector<core::Bucket> buckets;
  LargeVector<packet::OfTuple> keys;
  LargeVector<uint32_t> flows;
  packet::OfTuple mask{};
  uint64_t max_rank = 0;

  core::HashView view() const {
    return {buckets.data(), uint32_t(buckets.size() - 1), keys.data(), flows.data(), mask};
  }
  void build() {
    size_t n = 1;
    while (n * core::kBucketWays < 2 * keys.size()) n <<= 1;  // at most half full
    buckets.assign(n, core::Bucket{});
    const uint32_t bmask = uint32_t(n - 1);
    for (uint32_t s = 0; s < keys.size(); ++s) {
      const uint64_t h = core::hash_key(keys[s]);
      for (uint32_t b = uint32_t(h) & bmask;; b = (b + 1) & bmask) {
        core::Bucket& bk = buckets[b];
        uint32_t j       = 0;
        while (j < core::kBucketWays && bk.sig[j]) ++j;
        if (j == core::kBucketWays) continue;
        bk.sig[j]  = core::signature(h);
        bk.slot[j] = s;
        break;
      }
    }
  }
};

// What a full image and the incremental images built on it share. `programs` has room for ids
// past the full image's (a quarter more, at least 1,024): an incremental image writes the
// programs of the flows it adds into their (never reused, FlowTable::rebuilt) ids before it is
// published, which images already published never read. Their rewrites go to `late`, a buffer
// of fixed capacity written only past what published images use.
struct FlowImage::Shared {
  std::vector<ActionProgram> programs;
  std::vector<uint64_t> ranks;
  std::vector<Action> rewrites;
  std::unique_ptr<Action[]> late;
  uint32_t late_capacity = 0, late_used = 0;
  uint32_t full_id_limit = 0;  ///< the full image's
  size_t full_exact      = 0;  ///< exact flows of the full image
};

FlowImage::FlowImage()  = default;
FlowImage::~FlowImage() = default;

const Action* FlowImage::rewrites(const ActionProgram& p) const noexcept {
  return (p.special & kLateRewrites ? shared_->late.get() : shared_->rewrites.data()) + p.first;
}

namespace {

// Larger is better: priority, then the earlier install (orders below 2^40).
uint64_t rank_of(const FlowEntry& e) {
  const uint64_t order = std::min<uint64_t>(e.order, (1ull << 40) - 1);
  return uint64_t(e.spec.priority) << 40 | ((1ull << 40) - 1 - order);
}

bool is_output(const Action& a) {
  return a.type == ActionType::kOutput || a.type == ActionType::kEnqueue;
}

}  // namespace

Result<ActionProgram> compile_actions(const std::vector<Action>& actions, uint32_t port_count,
                                      std::vector<Action>& rewrites) {
  ActionProgram p;
  p.first    = uint32_t(rewrites.size());
  int last   = -1;
  int first  = -1;
  for (size_t i = 0; i < actions.size(); ++i)
    if (is_output(actions[i])) {
      last = int(i);
      if (first < 0) first = int(i);
    }
  for (int i = 0; i < last; ++i) {
    const Action& a = actions[size_t(i)];
    if (is_output(a)) continue;
    if (i > first)
      return Status(Errc::kInvalidArgument,
                    "actions=" + format_actions(actions) +
                        ": headers change between two outputs (each copy would need its own "
                        "headers; not supported yet)");
    rewrites.push_back(a);
    ++p.rewrites;
  }
  for (int i = 0; i <= last; ++i) {
    const Action& a = actions[size_t(i)];
    if (!is_output(a)) continue;
    switch (a.port) {
      case kPortInPort: p.special |= kToInPort; break;
      case kPortFlood: p.special |= kToFlood; break;
      case kPortAll: p.special |= kToAll; break;
      case kPortController:
        p.special |= kToController;
        p.max_len = std::max(p.max_len, a.max_len);
        break;
      case kPortNormal: p.special |= kToNormal; break;
      case kPortLocal: p.special |= kToLocal; break;
      default:
        if (a.port >= 1 && a.port <= port_count)
          p.ports |= uint64_t(1) << (a.port - 1);
        else
          p.special |= kNoSuchPort;
    }
  }
  return p;
}

namespace {

struct TupleHash {
  size_t operator()(const packet::OfTuple& t) const noexcept { return size_t(core::hash_key(t)); }
};
struct TupleEq {
  bool operator()(const packet::OfTuple& a, const packet::OfTuple& b) const noexcept {
    return core::same_key(a, b);
  }
};

}  // namespace

// One pass over the live entries (no precedence sort: within a subtable the entry of best rank
// wins its masked value, and ranks are total), hashing masks and values instead of ordered maps:
// a million exact flows build in about a third of the time a sorted pass took.
Result<std::shared_ptr<const FlowImage>> FlowImage::build(const FlowTable& table,
                                                          uint32_t port_count) {
  if (port_count > 64)
    return Status(Errc::kInvalidArgument,
                  "the switch handles at most 64 ports, not " + std::to_string(port_count));
  auto img      = std::shared_ptr<FlowImage>(new FlowImage());
  img->version_ = table.version();
  img->id_limit_ = table.id_limit();
  auto shared    = std::make_shared<Shared>();
  shared->programs.assign(table.id_limit() + std::max<uint32_t>(1024, table.id_limit() / 4), ActionProgram{});
  shared->ranks.assign(table.id_limit(), 0);
  shared->late_capacity = 16384;
  shared->late          = std::make_unique<Action[]>(shared->late_capacity);
  shared->full_id_limit = table.id_limit();
  auto exact            = std::make_shared<Table>();
  exact->mask           = exact_mask();
  std::vector<std::shared_ptr<Table>> subtables;
  // Per subtable: its masked values and the slot (in keys/flows) holding each one's best flow.
  std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> by_mask;
  std::vector<std::unordered_map<packet::OfTuple, uint32_t, TupleHash, TupleEq>> slot_of;
  for (uint32_t id = 0; id < table.id_limit(); ++id) {
    const FlowEntry* e = table.entry(id);
    if (!e) continue;
    ++img->flows_;
    Result<ActionProgram> p = compile_actions(e->spec.actions, port_count, shared->rewrites);
    if (!p.is_ok())
      return Status(Errc::kInvalidArgument,
                    "flow " + format_flow(e->spec) + ": " + p.status().message());
    shared->programs[id]       = *p;
    shared->programs[id].order = e->order;
    const uint64_t rank        = rank_of(*e);
    shared->ranks[id]          = rank;
    const packet::OfTuple value = e->spec.match.value();
    if (e->spec.match.exact()) {  // at most one flow per exact match (priority 65535)
      exact->keys.push_back(value);
      exact->flows.push_back(id);
      ++img->exact_flows_;
      continue;
    }
    auto [it, fresh] = by_mask.emplace(e->spec.match.mask(), subtables.size());
    if (fresh) {
      subtables.push_back(std::make_shared<Table>());
      subtables.back()->mask = it->first;
      slot_of.emplace_back();
    }
    Table& t   = *subtables[it->second];
    auto& slot = slot_of[it->second];
    t.max_rank = std::max(t.max_rank, rank);
    auto [at, added] = slot.emplace(value, uint32_t(t.keys.size()));
    if (added) {
      t.keys.push_back(value);
      t.flows.push_back(id);
    } else if (rank > shared->ranks[t.flows[at->second]]) {
      t.flows[at->second] = id;  // the same masked value: the better flow answers
    }
  }
  for (auto& t : subtables) t->build();
  exact->build();
  std::stable_sort(subtables.begin(), subtables.end(),
                   [](const auto& a, const auto& b) { return a->max_rank > b->max_rank; });
  img->exact_ = std::move(exact);
  img->subtables_.assign(subtables.begin(), subtables.end());
  shared->full_exact = img->exact_flows_;
  img->programs_     = shared->programs.data();
  img->ranks_        = &shared->ranks;
  img->shared_       = std::move(shared);
  return std::shared_ptr<const FlowImage>(std::move(img));
}

Result<std::shared_ptr<const FlowImage>> FlowImage::publish(const std::shared_ptr<const FlowImage>& current,
                                                            FlowTable& table, uint32_t port_count) {
  auto full = [&]() -> Result<std::shared_ptr<const FlowImage>> {
    WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> img, build(table, port_count));
    table.rebuilt();
    return img;
  };
  if (!current) return full();
  if (current->version_ == table.version()) return current;
  Shared& shared = *current->shared_;
  const auto& changes = table.changes();
  if (table.needs_full() || changes.size() > std::max<size_t>(4096, shared.full_exact / 16)) return full();
  std::vector<uint32_t> added, removed;
  for (const FlowTable::Change& c : changes) {
    if (!c.exact || c.kind == FlowTable::Change::kModified) return full();
    if (c.id >= shared.programs.size()) return full();
    (c.kind == FlowTable::Change::kAdded ? added : removed).push_back(c.id);
  }
  // An id is added at most once and removed at most once between full images (ids are not
  // reused until then): the full image's flows removed since, and the flows added since that
  // are still there.
  std::sort(added.begin(), added.end());
  std::sort(removed.begin(), removed.end());
  auto img       = std::shared_ptr<FlowImage>(new FlowImage());
  img->exact_    = current->exact_;
  img->subtables_ = current->subtables_;
  img->shared_   = current->shared_;
  img->programs_ = current->programs_;
  img->ranks_    = current->ranks_;
  img->version_  = table.version();
  img->id_limit_ = std::max(shared.full_id_limit, table.id_limit());
  img->flows_    = table.size();
  size_t removed_count = 0;
  for (uint32_t id : removed)
    if (id < shared.full_id_limit && !std::binary_search(added.begin(), added.end(), id)) {
      if (img->removed_.empty()) img->removed_.assign((shared.full_id_limit + 63) / 64, 0);
      img->removed_[id / 64] |= uint64_t(1) << (id % 64);
      ++removed_count;
    }
  auto delta  = std::make_shared<Table>();
  delta->mask = exact_mask();
  for (uint32_t id : added) {
    const FlowEntry* e = table.entry(id);
    if (!e) continue;  // added, then removed again
    ActionProgram& prog = shared.programs[id];
    if (prog.order != e->order) {  // not yet written by an earlier incremental image
      std::vector<Action> rw;
      Result<ActionProgram> p = compile_actions(e->spec.actions, port_count, rw);
      if (!p.is_ok()) return full();  // reports the flow
      if (shared.late_used + rw.size() > shared.late_capacity) return full();
      ActionProgram q = *p;
      q.order         = e->order;
      q.first         = shared.late_used;
      if (!rw.empty()) q.special |= kLateRewrites;
      std::copy(rw.begin(), rw.end(), shared.late.get() + shared.late_used);
      shared.late_used += uint32_t(rw.size());
      prog = q;  // an id no published image maps a key to
    }
    delta->keys.push_back(e->spec.match.value());
    delta->flows.push_back(id);
  }
  img->exact_flows_ = shared.full_exact - removed_count + delta->keys.size();
  if (!delta->keys.empty()) {
    delta->build();
    img->delta_ = std::move(delta);
  }
  return std::shared_ptr<const FlowImage>(std::move(img));
}

std::vector<FlowImage::TableData> FlowImage::tables() const {
  std::vector<TableData> out;
  auto add = [&](const Table& t) {
    out.push_back({t.buckets.data(), uint32_t(t.buckets.size()), t.keys.data(), t.flows.data(),
                   uint32_t(t.keys.size()), t.mask, t.max_rank});
  };
  add(*exact_);
  for (const auto& t : subtables_) add(*t);
  return out;
}

uint32_t FlowImage::lookup_one(const packet::OfTuple& key) const {
  uint32_t id = kNoFlow;
  lookup({&key, 1}, {&id, 1});
  return id;
}

// Per chunk of keys and per table: hash every key and prefetch its bucket; then read each
// bucket's matching way and prefetch that slot's key; then compare (G-Opt's staged prefetch:
// a key's two memory accesses overlap the other keys' work). A bucket that overflowed, or a
// signature that matched the wrong key, takes the plain probe.
void FlowImage::lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  constexpr uint32_t kChunk = 64;
  constexpr uint32_t kNone = 0xFFFF'FFFFu, kSlow = 0xFFFF'FFFEu;
  uint64_t h[kChunk], best[kChunk];
  uint32_t cand[kChunk], todo[kChunk];
  packet::OfTuple mk[kChunk];
  const std::vector<uint64_t>& ranks = *ranks_;
  const bool filter                  = !removed_.empty();
  // One table for `count` keys. kFirst: the first exact table, keys q = 0..count, every key's
  // answer set (no memset per chunk, whose cost shows at bursts of 32). kExact: a second exact
  // table (the full image's, after an incremental image's added flows) for keys todo[q]. kWild:
  // a subtable for keys todo[q]. A flow the incremental image removed is no answer.
  enum Mode { kFirst, kExact, kWild };
  auto run = [&](const Table& t, const packet::OfTuple* k, uint32_t* out, uint32_t count,
                 Mode mode) __attribute__((always_inline)) {
    const core::HashView v = t.view();
    for (uint32_t q = 0; q < count; ++q) {
      mk[q] = core::apply_mask(k[mode == kFirst ? q : todo[q]], v.mask);
      h[q]  = core::hash_key(mk[q]);
      WARPATH_PREFETCH(&v.buckets[uint32_t(h[q]) & v.bucket_mask]);
    }
    for (uint32_t q = 0; q < count; ++q) {
      const core::Bucket& bk = v.buckets[uint32_t(h[q]) & v.bucket_mask];
      bool open              = false;
      const uint32_t m       = core::sig_matches(bk, core::signature(h[q]), open);
      if (m && !(m & (m - 1))) {
        cand[q] = bk.slot[__builtin_ctz(m)];
        WARPATH_PREFETCH(&v.keys[cand[q]]);
      } else {
        cand[q] = m || !open ? kSlow : kNone;
      }
    }
    for (uint32_t q = 0; q < count; ++q) {
      uint32_t f = core::kMiss;
      if (cand[q] < kSlow && core::same_key(v.keys[cand[q]], mk[q]))
        f = v.flows[cand[q]];
      else if (cand[q] != kNone)
        f = core::probe(v, mk[q], h[q]);
      if (filter && f != core::kMiss && mode != kWild && &t == exact_.get() &&
          (removed_[f / 64] >> (f % 64) & 1))
        f = core::kMiss;
      if (mode == kFirst) {
        out[q]  = f == core::kMiss ? kNoFlow : f;
        best[q] = f == core::kMiss ? 0 : ~0ull;  // exact beats every subtable
        continue;
      }
      if (f == core::kMiss) continue;
      const uint32_t i = todo[q];
      const uint64_t r = mode == kExact ? ~0ull : ranks[f];
      if (r > best[i]) {
        best[i] = r;
        out[i]  = f;
      }
    }
  };
  const bool has_exact = !exact_->keys.empty();
  for (uint32_t base = 0; base < keys.size; base += kChunk) {
    const uint32_t n         = std::min(kChunk, keys.size - base);
    const packet::OfTuple* k = keys.data + base;
    uint32_t* out            = ids.data + base;
    if (delta_) {
      run(*delta_, k, out, n, kFirst);
      if (has_exact) {
        uint32_t count = 0;
        for (uint32_t i = 0; i < n; ++i)
          if (best[i] == 0) todo[count++] = i;
        if (count) run(*exact_, k, out, count, kExact);
      }
    } else if (has_exact) {
      run(*exact_, k, out, n, kFirst);
    } else {
      for (uint32_t i = 0; i < n; ++i) out[i] = kNoFlow, best[i] = 0;
    }
    for (const auto& t : subtables_) {
      uint32_t count = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (best[i] < t->max_rank) todo[count++] = i;
      if (count == 0) break;  // ranked: no later subtable can beat what every key has
      run(*t, k, out, count, kWild);
    }
  }
}

}  // namespace warpath::openflow
