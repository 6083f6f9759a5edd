// src/modules/switch_state.hpp: the switch module's per-worker state: the flows'
// counters (pages of atomics the worker writes and the OpenFlow agent reads) and the MAC table
// of `normal`.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <vector>

#include "warpath/runtime/frame.hpp"

namespace warpath::runtime::switch_detail {

// An L2 learning table of fixed size: a MAC hashes to one entry, a newer MAC on the same entry
// replaces it (a hardware switch's hash collisions), so memory is bounded whatever arrives.
class MacTable {
 public:
  static constexpr uint32_t kEntries = 1u << 16;
  MacTable() : e_(kEntries) {}
  void learn(uint64_t mac, uint16_t port, uint64_t now) {
    Entry& x = e_[slot(mac)];
    learned += !(x.used && x.mac == mac);
    x = {mac, now, port, true};
  }
  /// The port of `mac`, or -1 when unknown or aged out.
  int port_of(uint64_t mac, uint64_t now, uint64_t aging_ns) const {
    const Entry& x = e_[slot(mac)];
    if (!x.used || x.mac != mac || now - x.seen > aging_ns) return -1;
    return x.port;
  }
  uint64_t learned = 0;

 private:
  struct Entry {
    uint64_t mac = 0, seen = 0;
    uint16_t port = 0;
    bool used     = false;
  };
  static uint32_t slot(uint64_t mac) {
    return uint32_t((mac * 0x9E37'79B9'7F4A'7C15ull) >> 48) & (kEntries - 1);
  }
  std::vector<Entry> e_;
};

inline uint64_t mac_at(const uint8_t* p) {
  uint64_t m = 0;
  for (int i = 0; i < 6; ++i) m = m << 8 | p[i];
  return m;
}

enum Stat : size_t { kHits, kMisses, kFlooded, kToController, kLearned, kStatCount };

// One worker's counters per flow id, readable by the agent while the worker counts: pages of
// relaxed atomics (one writer each), allocated when an id is first hit and never moved.
class FlowCounters {
 public:
  static constexpr uint32_t kPageBits = 10, kPage = 1u << kPageBits;
  struct Page {
    std::atomic<uint64_t> packets[kPage], bytes[kPage], used[kPage], order[kPage];
  };
  explicit FlowCounters(uint32_t capacity) : pages_((capacity + kPage - 1) / kPage) {
    for (auto& p : pages_) p.store(nullptr, std::memory_order_relaxed);
  }
  ~FlowCounters() {
    for (auto& p : pages_) delete p.load(std::memory_order_relaxed);
  }
  /// The writer's page of `id` (allocated on first use). Ids stay below the table's capacity
  /// (FlowTable); one past it counts into a scratch page nobody reads rather than out of bounds.
  Page& page(uint32_t id) {
    if (id >> kPageBits >= pages_.size()) {
      if (!scratch_) scratch_ = std::make_unique<Page>();
      return *scratch_;
    }
    Page* p = pages_[id >> kPageBits].load(std::memory_order_relaxed);
    if (!p) {
      p = new Page{};
      pages_[id >> kPageBits].store(p, std::memory_order_release);
    }
    return *p;
  }
  /// A reader's page of `id`, or nullptr.
  const Page* peek(uint32_t id) const {
    return id >> kPageBits < pages_.size() ? pages_[id >> kPageBits].load(std::memory_order_acquire)
                                           : nullptr;
  }
  uint32_t pages() const noexcept { return uint32_t(pages_.size()); }

 private:
  std::vector<std::atomic<Page*>> pages_;
  std::unique_ptr<Page> scratch_;
};

inline void bump(std::atomic<uint64_t>& a, uint64_t by) {
  a.store(a.load(std::memory_order_relaxed) + by, std::memory_order_relaxed);
}

struct SwitchState final : ModuleState {
  explicit SwitchState(uint32_t capacity) : ModuleState(kStatCount), counters(capacity) {}
  FlowCounters counters;
  // The control side's (under the module's table mutex): what fold() has taken per id.
  std::vector<uint64_t> taken_packets, taken_bytes, taken_order;
  MacTable macs;
  uint64_t hits = 0, misses = 0, flooded = 0, to_controller = 0;
};

}  // namespace warpath::runtime::switch_detail
