// include/warpath/core/read_guard.hpp
//
// ReadGuard: quiescent-state reclamation for lock-free readers (RCU-lite).
//
// What
//   Images (lookup tables, classifier tables) are read by any number of data-plane threads
//   while one control-plane thread updates them. The writer never blocks readers: it writes
//   new memory, publishes it with a release store, and must not free or reuse the memory it
//   unpublished while a reader may still be looking at it. ReadGuard tells it when that is
//   safe, like DPDK's rte_rcu_qsbr or liburcu, but without reader registration: a reader brackets
//   one batch with enter()/exit() (a Section object does both), and the writer's synchronize()
//   returns once every reader that was inside a batch when it was called has left it.
//
// How
//   kSlots cache-line-padded pairs of monotone counters (entered, exited). A reading thread
//   gets a slot by its process-wide index; indices of threads that ended are given out again
//   (smallest first), so up to kSlots threads alive at once own a slot each; past that, threads
//   share slots (marked `shared`, for good).
//   synchronize() snapshots `entered` of every slot after a seq_cst fence and waits, per
//   slot, until `exited` reaches the snapshot (an owned slot: its one thread left the section
//   it was in) or the slot is seen idle (entered == exited; needed for shared slots, where
//   another thread's exit could make up the count). A reader that enters after the snapshot
//   sees the writer's earlier stores (seq_cst RMW against the fence), so it cannot be using
//   the unpublished memory. Cost to a reader: two uncontended atomic adds per batch. The
//   writer's wait is bounded by the longest batch in flight.
#pragma once
#include <atomic>
#include <cstdint>

namespace warpath {

class ReadGuard {
 public:
  static constexpr unsigned kSlots = 64;

  struct alignas(64) Slot {
    std::atomic<uint64_t> entered{0};
    std::atomic<uint64_t> exited{0};
    std::atomic<bool> shared{false};
  };


  /// RAII reader section: construct before loading any published pointer, destroy after
  /// the last read of the memory behind it.
  class Section {
   public:
    explicit Section(const ReadGuard& g) : slot_(g.enter()) {}
    ~Section() { slot_->exited.fetch_add(1, std::memory_order_release); }
    Section(const Section&)            = delete;
    Section& operator=(const Section&) = delete;

   private:
    Slot* slot_;
    friend class ReadGuard;
  };

  ReadGuard()                            = default;
  ReadGuard(const ReadGuard&)            = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;

  /// Writer side: returns when every reader section that began before the call has ended.
  void synchronize() const;
  /// Slots more than one thread has used at once (synchronize() must catch those idle).
  unsigned shared_slots() const;


 private:
  Slot* enter() const;
  mutable Slot slots_[kSlots];
};

}  // namespace warpath
