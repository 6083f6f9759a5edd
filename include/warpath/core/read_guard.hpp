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
//
// Holds (hold()): a read section that outlives the call that began it, ends on any thread and
//   in any order with others (a GPU call that returns with its kernels queued, handing the
//   hold to the offload master until the stream finished: ExecContext::keep). A slot's
//   counters cannot tell those apart (a later hold ending first would make up an earlier one's
//   count), so holds are counted by grace period, as SRCU does: a hold counts in the counter
//   of the phase it began in (re-checked after counting, so one that raced a flip moves to the
//   new phase), and synchronize() flips the phase and waits for the old phase's counter to
//   reach zero. Holds that keep beginning go to the new phase and never hold a writer off.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <optional>
#include <vector>

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

  /// A call's read: a Section, or, for a call whose work outlives it (a deferred GPU call:
  /// `keep` is a resident call's ExecContext::keep), a hold() added to *keep at once, before
  /// the call queues anything, for whoever waits for that work.
  class Scope {
   public:
    Scope(const ReadGuard& g, std::vector<std::shared_ptr<void>>* keep) {
      if (keep)
        keep->push_back(held_ = g.hold());
      else
        section_.emplace(g);
    }
    bool deferred() const noexcept { return held_ != nullptr; }

   private:
    std::shared_ptr<void> held_;
    std::optional<Section> section_;
  };

  ReadGuard()                            = default;
  ReadGuard(const ReadGuard&)            = delete;
  ReadGuard& operator=(const ReadGuard&) = delete;

  /// Writer side: returns when every reader section and every hold that began before the call
  /// has ended.
  void synchronize() const;
  /// A read section that ends when the returned pointer's last owner lets go of it, on any
  /// thread, in any order with other holds (see above). Begin it before loading any published
  /// pointer.
  std::shared_ptr<void> hold() const;
  /// Slots more than one thread has used at once (synchronize() must catch those idle).
  unsigned shared_slots() const;


 private:
  Slot* enter() const;
  mutable Slot slots_[kSlots];
  mutable std::atomic<uint64_t> holds_[2]{};  ///< holds begun in each phase parity, not ended
  mutable std::atomic<uint32_t> hold_phase_{0};
  mutable std::mutex flip_;  ///< one writer's flip and wait at a time
};

}  // namespace warpath
