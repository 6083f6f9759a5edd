// src/flow/cpu/cpu_table.hpp: the flow table of cpu.flow (and of cuda.flow, whose keys come
// from the GPU).
//
//   - Entries: one preallocated array of 128-byte entries (two cache lines; on huge pages from
//     2 MiB, core/huge_pages.hpp), a free stack.
//   - Lookup: a chained hash (power-of-two bucket array of head handles, at least one bucket
//     per entry, so chains stay short); the batch loop prefetches a chunk's buckets, a chunk
//     later their first entries (for an empty bucket, the free entry a new flow will take),
//     and a chunk later still runs the per-packet policy (G-Opt's batched prefetch).
//   - Expiry: one list per (protocol class, state) in order of last touch. Within a list every
//     flow has the same timeout and the clock never goes back, so deadlines are ordered too:
//     only the heads can be due, and the heads' deadlines and touches are cached. A lower
//     bound of those deadlines (lowered whenever a head's is lower, made exact again only when
//     the clock reaches it) lets a packet that ends nothing cost one comparison.
//   - An end hook: `OnEnd` is told the handle of every flow that ends (timeout, eviction, reuse,
//     flush) before its entry is freed, so an engine that keeps more per flow beside the table
//     (cpu.flowstream's reassembly state) lets it go with the flow.
#pragma once
#include <algorithm>
#include <cstring>
#include <random>
#include <vector>

#include "core/huge_pages.hpp"
#include "flow/core/flow_core.hpp"

namespace warpath::flow::detail {

constexpr uint32_t kLists  = unsigned(ProtoClass::kCount) * unsigned(FlowState::kCount);
constexpr uint8_t kNoList  = 0xFF;
constexpr uint64_t kNever  = ~uint64_t(0);

struct alignas(64) FlowEntry {
  core::FlowCore core;
  uint64_t touch;
  uint32_t chain;       ///< next handle in the bucket, 0 = end
  uint32_t prev, next;  ///< neighbours in the timeout list, 0 = none
  uint8_t list;         ///< kNoList while not linked
};
static_assert(sizeof(FlowEntry) == 128, "an entry is two cache lines");

/// The table that tells nobody when a flow ends (cpu.flow, cuda.flow).
struct NoEndHook {
  void operator()(uint32_t) const {}
};

template <class OnEnd = NoEndHook>
class BasicCpuTable {
 public:
  explicit BasicCpuTable(const FlowConfig& c, OnEnd on_end = {})
      : cfg_(c), entries_(size_t(c.capacity) + 1, c.prefault), on_end_(on_end) {
    uint32_t buckets = 1;
    while (buckets < c.capacity) buckets <<= 1;
    heads_.assign(buckets, 0);
    mask_ = buckets - 1;
    free_.reserve(c.capacity);
    for (uint32_t h = c.capacity; h >= 1; --h) free_.push_back(h);
    for (uint32_t l = 0; l < kLists; ++l) {
      head_[l] = tail_[l] = 0;
      head_deadline_[l]   = kNever;
      head_touch_[l]      = kNever;
    }
  }

  uint32_t size() const { return cfg_.capacity - uint32_t(free_.size()); }
  uint64_t seed() const { return seed_; }
  core::FlowCore& at(uint32_t h) { return entries_[h].core; }

  void prefetch_buckets(const uint64_t* hashes, const Track* keyed, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i)
      if (keyed[i] == Track::kTracked) __builtin_prefetch(&heads_[hashes[i] & mask_]);
  }
  /// Prefetches both lines of each tracked packet's first bucket entry; for a packet whose
  /// bucket is empty (a new flow, most likely) the free entry its insert will take instead,
  /// counting `ahead` inserts expected before this chunk's. Returns how many it expected here.
  uint32_t prefetch_entries(const uint64_t* hashes, const Track* keyed, uint32_t n,
                            uint32_t ahead = 0) {
    uint32_t fresh = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (keyed[i] != Track::kTracked) continue;
      uint32_t h = heads_[hashes[i] & mask_];
      if (!h) {
        const size_t next = size_t(ahead) + fresh++;
        if (next >= free_.size()) continue;
        h = free_[free_.size() - 1 - next];
      }
      const char* e = reinterpret_cast<const char*>(&entries_[h]);
      __builtin_prefetch(e);
      __builtin_prefetch(e + 64);
    }
    return fresh;
  }

  uint32_t find(const core::FlowKey& key, uint64_t hash) {
    for (uint32_t h = heads_[hash & mask_]; h; h = entries_[h].chain)
      if (core::key_equal(entries_[h].core.key, key)) return h;
    return 0;
  }

  uint32_t insert(const core::FlowKey&, uint64_t hash) {
    const uint32_t h = free_.back();
    free_.pop_back();
    FlowEntry& e           = entries_[h];
    uint32_t& bucket   = heads_[hash & mask_];
    e.chain            = bucket;
    bucket             = h;
    e.list             = kNoList;
    e.prev = e.next    = 0;
    return h;
  }

  void touched(core::TrackerState& st, uint32_t h) {
    FlowEntry& e = entries_[h];
    e.touch         = st.touches;
    const uint8_t l = uint8_t(unsigned(core::class_of(e.core)) * unsigned(FlowState::kCount) +
                              unsigned(core::state_of(e.core)));
    if (e.list == l && tail_[l] == h) {  // already last of its list (a flow's packets in a row):
      if (head_[l] == h) set_head(st, l, h);  // it stays there; only a head's cache changes
      return;
    }
    unlink(st, h);
    e.list          = l;
    e.prev          = tail_[l];
    e.next          = 0;
    if (tail_[l])
      entries_[tail_[l]].next = h;
    else
      set_head(st, l, h);
    tail_[l] = h;
  }

  void end(core::TrackerState& st, uint32_t h, FlowEnd why, std::vector<FlowRecord>& ended) {
    FlowEntry& e = entries_[h];
    on_end_(h);
    ended.push_back(core::to_record(e.core, why));
    uint32_t* link = &heads_[core::key_hash(e.core.key, seed_) & mask_];
    while (*link != h) link = &entries_[*link].chain;
    *link = e.chain;
    unlink(st, h);
    free_.push_back(h);
    st.counters.ended[unsigned(why)] += 1;
  }

  void expire_due(core::TrackerState& st, std::vector<FlowRecord>& ended) {
    // Every packet asks; almost every answer is "nothing due", inline.
    if (cached_emergency_ == st.emergency && st.now < due_bound_) return;
    expire_some(st, ended);
  }

  void evict_oldest(core::TrackerState& st, std::vector<FlowRecord>& ended) {
    uint32_t best = kLists;
    for (uint32_t l = 0; l < kLists; ++l)
      if (head_[l] && (best == kLists || head_touch_[l] < head_touch_[best])) best = l;
    if (best != kLists) end(st, head_[best], FlowEnd::kEvicted, ended);
  }

  std::vector<uint32_t> live_handles() const {
    std::vector<uint32_t> v;
    for (uint32_t l = 0; l < kLists; ++l)
      for (uint32_t h = head_[l]; h; h = entries_[h].next) v.push_back(h);
    return v;
  }

 private:
  __attribute__((noinline)) void expire_some(core::TrackerState& st,
                                             std::vector<FlowRecord>& ended) {
    if (cached_emergency_ != st.emergency) {
      cached_emergency_ = st.emergency;
      for (uint32_t l = 0; l < kLists; ++l) set_head(st, l, head_[l]);
    }
    if (st.now < due_bound_) return;  // no head is due yet
    for (;;) {
      uint32_t best = kLists;
      for (uint32_t l = 0; l < kLists; ++l) {
        if (head_deadline_[l] > st.now) continue;
        if (best == kLists || head_deadline_[l] < head_deadline_[best] ||
            (head_deadline_[l] == head_deadline_[best] && head_touch_[l] < head_touch_[best]))
          best = l;
      }
      if (best == kLists) break;
      end(st, head_[best], FlowEnd::kTimeout, ended);
    }
    due_bound_ = kNever;  // exact again: the earliest head deadline
    for (uint32_t l = 0; l < kLists; ++l) due_bound_ = std::min(due_bound_, head_deadline_[l]);
  }

  void set_head(const core::TrackerState& st, uint32_t l, uint32_t h) {
    head_[l] = h;
    if (!h) {
      head_deadline_[l] = head_touch_[l] = kNever;
      return;
    }
    const core::FlowCore& f = entries_[h].core;
    head_deadline_[l] = f.last_ns + core::timeout_ns(cfg_, core::class_of(f), core::state_of(f), st.emergency);
    head_touch_[l]    = entries_[h].touch;
    due_bound_              = std::min(due_bound_, head_deadline_[l]);
  }

  void unlink(const core::TrackerState& st, uint32_t h) {
    FlowEntry& e = entries_[h];
    if (e.list == kNoList) return;
    const uint8_t l = e.list;
    if (e.next)
      entries_[e.next].prev = e.prev;
    else
      tail_[l] = e.prev;
    if (e.prev)
      entries_[e.prev].next = e.next;
    else
      set_head(st, l, e.next);
    e.list = kNoList;
    e.prev = e.next = 0;
  }

  const FlowConfig& cfg_;
  warpath::detail::ZeroedArray<FlowEntry> entries_;  // handle 0 unused
  warpath::detail::LargeVector<uint32_t> heads_;
  uint32_t mask_ = 0;
  std::vector<uint32_t> free_;
  uint32_t head_[kLists], tail_[kLists];
  uint64_t head_deadline_[kLists], head_touch_[kLists];
  uint64_t due_bound_    = kNever;  ///< at most the earliest head_deadline_ (expire_due)
  bool cached_emergency_ = false;
  OnEnd on_end_;
  uint64_t seed_ = uint64_t(std::random_device{}()) << 32 ^ std::random_device{}();
};

using CpuTable = BasicCpuTable<>;

}  // namespace warpath::flow::detail
