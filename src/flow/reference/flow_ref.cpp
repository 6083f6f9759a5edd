// ref.flow: the deliberately naive flow table, the oracle of the other engines. An ordered map
// finds flows; expiry and eviction scan every flow; a free entry is the first unused one.
#include <array>
#include <cstring>
#include <map>

#include "flow/engines.hpp"
#include "flow/table_tracker.hpp"

namespace warpath::flow::detail {
namespace {

using Bytes = std::array<uint8_t, sizeof(core::FlowKey)>;

Bytes bytes_of(const core::FlowKey& k) {
  Bytes b;
  std::memcpy(b.data(), &k, b.size());
  return b;
}

class RefTable {
 public:
  explicit RefTable(const FlowConfig& c) : cfg_(c), flows_(size_t(c.capacity) + 1) {}

  uint32_t size() const { return uint32_t(index_.size()); }
  uint64_t seed() const { return 0; }  // the map does not hash
  core::FlowCore& at(uint32_t h) { return flows_[h].core; }
  void prefetch_buckets(const uint64_t*, const Track*, uint32_t) {}
  uint32_t prefetch_entries(const uint64_t*, const Track*, uint32_t, uint32_t = 0) { return 0; }

  uint32_t find(const core::FlowKey& key, uint64_t) {
    auto it = index_.find(bytes_of(key));
    return it == index_.end() ? 0 : it->second;
  }

  uint32_t insert(const core::FlowKey& key, uint64_t) {
    uint32_t h = 1;
    while (flows_[h].used) ++h;
    flows_[h].used      = true;
    index_[bytes_of(key)] = h;
    return h;
  }

  void touched(core::TrackerState& st, uint32_t h) { flows_[h].touch = st.touches; }

  void end(core::TrackerState& st, uint32_t h, FlowEnd why, std::vector<FlowRecord>& ended) {
    ended.push_back(core::to_record(flows_[h].core, why));
    index_.erase(bytes_of(flows_[h].core.key));
    flows_[h].used = false;
    st.counters.ended[unsigned(why)] += 1;
  }

  void expire_due(core::TrackerState& st, std::vector<FlowRecord>& ended) {
    for (;;) {
      uint32_t best = 0;
      uint64_t best_deadline = 0;
      for (uint32_t h = 1; h < flows_.size(); ++h) {
        if (!flows_[h].used) continue;
        const core::FlowCore& f = flows_[h].core;
        const uint64_t deadline = f.last_ns + core::timeout_ns(cfg_, core::class_of(f), core::state_of(f), st.emergency);
        if (deadline > st.now) continue;
        if (!best || deadline < best_deadline ||
            (deadline == best_deadline && flows_[h].touch < flows_[best].touch)) {
          best          = h;
          best_deadline = deadline;
        }
      }
      if (!best) return;
      end(st, best, FlowEnd::kTimeout, ended);
    }
  }

  void evict_oldest(core::TrackerState& st, std::vector<FlowRecord>& ended) {
    uint32_t best = 0;
    for (uint32_t h = 1; h < flows_.size(); ++h)
      if (flows_[h].used && (!best || flows_[h].touch < flows_[best].touch)) best = h;
    if (best) end(st, best, FlowEnd::kEvicted, ended);
  }

  std::vector<uint32_t> live_handles() const {
    std::vector<uint32_t> v;
    for (uint32_t h = 1; h < flows_.size(); ++h)
      if (flows_[h].used) v.push_back(h);
    return v;
  }

 private:
  struct Entry {
    core::FlowCore core{};
    uint64_t touch = 0;
    bool used      = false;
  };
  const FlowConfig& cfg_;
  std::vector<Entry> flows_;  // handle 0 unused
  std::map<Bytes, uint32_t> index_;
};

}  // namespace

std::unique_ptr<FlowTracker> make_ref_tracker(const FlowConfig& config) {
  return std::make_unique<TableTracker<RefTable>>("ref.flow", config);
}

}  // namespace warpath::flow::detail
