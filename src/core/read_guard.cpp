#include "warpath/core/read_guard.hpp"

#include <algorithm>
#include <mutex>
#include <thread>
#include <vector>

namespace warpath {
namespace {

// Process-wide thread indices, given back when a thread ends and given out again smallest
// first, so the threads alive at a time own a slot each as long as there are at most kSlots of
// them, however many short-lived threads came and went. (Leaked: threads may end after static
// destruction.)
struct IndexPool {
  std::mutex mutex;
  std::vector<unsigned> free;
  unsigned next = 0;
};
IndexPool& pool() {
  static IndexPool* p = new IndexPool;
  return *p;
}

struct ThreadIndex {
  unsigned value;
  ThreadIndex() {
    IndexPool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    if (p.free.empty()) {
      value = p.next++;
      return;
    }
    const auto smallest = std::min_element(p.free.begin(), p.free.end());
    value               = *smallest;
    p.free.erase(smallest);
  }
  ~ThreadIndex() {
    IndexPool& p = pool();
    std::lock_guard<std::mutex> lock(p.mutex);
    p.free.push_back(value);
  }
};

unsigned thread_index() {
  thread_local const ThreadIndex index;
  return index.value;
}

}  // namespace

unsigned ReadGuard::shared_slots() const {
  unsigned n = 0;
  for (const Slot& s : slots_) n += s.shared.load(std::memory_order_relaxed);
  return n;
}

ReadGuard::Slot* ReadGuard::enter() const {
  const unsigned index = thread_index();
  Slot* s              = &slots_[index % kSlots];
  if (index >= kSlots && !s->shared.load(std::memory_order_relaxed))
    s->shared.store(true, std::memory_order_seq_cst);
  s->entered.fetch_add(1, std::memory_order_seq_cst);
  return s;
}

std::shared_ptr<void> ReadGuard::hold() const {
  for (;;) {
    const unsigned i = hold_phase_.load(std::memory_order_seq_cst) & 1u;
    holds_[i].fetch_add(1, std::memory_order_seq_cst);
    if ((hold_phase_.load(std::memory_order_seq_cst) & 1u) == i)
      return std::shared_ptr<void>(&holds_[i], [](std::atomic<uint64_t>* c) {
        c->fetch_sub(1, std::memory_order_release);
      });
    holds_[i].fetch_sub(1, std::memory_order_seq_cst);  // a writer flipped meanwhile: again
  }
}

void ReadGuard::synchronize() const {
  std::atomic_thread_fence(std::memory_order_seq_cst);
  {
    // Holds: those of the phase before the flip end (new ones count in the other phase).
    std::lock_guard<std::mutex> lock(flip_);
    const unsigned old = hold_phase_.fetch_add(1, std::memory_order_seq_cst) & 1u;
    while (holds_[old].load(std::memory_order_seq_cst) != 0) std::this_thread::yield();
  }
  uint64_t snapshot[kSlots];
  for (unsigned i = 0; i < kSlots; ++i)
    snapshot[i] = slots_[i].entered.load(std::memory_order_seq_cst);
  for (unsigned i = 0; i < kSlots; ++i) {
    const Slot& s = slots_[i];
    for (;;) {
      const uint64_t exited = s.exited.load(std::memory_order_acquire);
      if (exited >= snapshot[i] && !s.shared.load(std::memory_order_acquire)) break;
      // Idle at the moment `exited` was read: entered is monotone, so entered == exited then.
      if (s.entered.load(std::memory_order_acquire) == exited) break;
      std::this_thread::yield();
    }
  }
}

}  // namespace warpath
