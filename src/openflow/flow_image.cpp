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

FlowImage::FlowImage()  = default;
FlowImage::~FlowImage() = default;

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
  img->programs_.assign(table.id_limit(), ActionProgram{});
  img->ranks_.assign(table.id_limit(), 0);
  img->exact_       = std::make_unique<Table>();
  img->exact_->mask = exact_mask();
  // Per subtable: its masked values and the slot (in keys/flows) holding each one's best flow.
  std::unordered_map<packet::OfTuple, size_t, TupleHash, TupleEq> by_mask;
  std::vector<std::unordered_map<packet::OfTuple, uint32_t, TupleHash, TupleEq>> slot_of;
  for (uint32_t id = 0; id < table.id_limit(); ++id) {
    const FlowEntry* e = table.entry(id);
    if (!e) continue;
    ++img->flows_;
    Result<ActionProgram> p = compile_actions(e->spec.actions, port_count, img->rewrites_);
    if (!p.is_ok())
      return Status(Errc::kInvalidArgument,
                    "flow " + format_flow(e->spec) + ": " + p.status().message());
    img->programs_[id]       = *p;
    img->programs_[id].order = e->order;
    const uint64_t rank      = rank_of(*e);
    img->ranks_[id]          = rank;
    const packet::OfTuple value = e->spec.match.value();
    if (e->spec.match.exact()) {  // at most one flow per exact match (priority 65535)
      img->exact_->keys.push_back(value);
      img->exact_->flows.push_back(id);
      ++img->exact_flows_;
      continue;
    }
    auto [it, fresh] = by_mask.emplace(e->spec.match.mask(), img->subtables_.size());
    if (fresh) {
      img->subtables_.push_back(std::make_unique<Table>());
      img->subtables_.back()->mask = it->first;
      slot_of.emplace_back();
    }
    Table& t   = *img->subtables_[it->second];
    auto& slot = slot_of[it->second];
    t.max_rank = std::max(t.max_rank, rank);
    auto [at, added] = slot.emplace(value, uint32_t(t.keys.size()));
    if (added) {
      t.keys.push_back(value);
      t.flows.push_back(id);
    } else if (rank > img->ranks_[t.flows[at->second]]) {
      t.flows[at->second] = id;  // the same masked value: the better flow answers
    }
  }
  for (auto& t : img->subtables_) t->build();
  img->exact_->build();
  std::stable_sort(img->subtables_.begin(), img->subtables_.end(),
                   [](const auto& a, const auto& b) { return a->max_rank > b->max_rank; });
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
  // One table for `count` keys: todo[q] (or q itself for the exact table, which comes first
  // and sets every key's answer: no memset per chunk, whose cost shows at bursts of 32).
  auto run = [&](const Table& t, const packet::OfTuple* k, uint32_t* out, uint32_t count,
                 bool exact) __attribute__((always_inline)) {
    const core::HashView v = t.view();
    for (uint32_t q = 0; q < count; ++q) {
      mk[q] = core::apply_mask(k[exact ? q : todo[q]], v.mask);
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
      if (exact) {
        out[q]  = f == core::kMiss ? kNoFlow : f;
        best[q] = f == core::kMiss ? 0 : ~0ull;  // exact beats every subtable
        continue;
      }
      if (f == core::kMiss) continue;
      const uint32_t i = todo[q];
      if (ranks_[f] > best[i]) {
        best[i] = ranks_[f];
        out[i]  = f;
      }
    }
  };
  const bool has_exact = !exact_->keys.empty();
  for (uint32_t base = 0; base < keys.size; base += kChunk) {
    const uint32_t n         = std::min(kChunk, keys.size - base);
    const packet::OfTuple* k = keys.data + base;
    uint32_t* out            = ids.data + base;
    if (has_exact) {
      run(*exact_, k, out, n, true);
    } else {
      for (uint32_t i = 0; i < n; ++i) out[i] = kNoFlow, best[i] = 0;
    }
    for (const auto& t : subtables_) {
      uint32_t count = 0;
      for (uint32_t i = 0; i < n; ++i)
        if (best[i] < t->max_rank) todo[count++] = i;
      if (count == 0) break;  // ranked: no later subtable can beat what every key has
      run(*t, k, out, count, false);
    }
  }
}

}  // namespace warpath::openflow
