#include "warpath/core/read_guard.hpp"

#include <thread>

namespace warpath {
namespace {

// Process-wide thread index: the first kSlots reading threads own a slot each.
unsigned thread_index() {
  static std::atomic<unsigned> next{0};
  thread_local const unsigned index = next.fetch_add(1, std::memory_order_relaxed);
  return index;
}

}  // namespace

ReadGuard::Slot* ReadGuard::enter() const {
  const unsigned index = thread_index();
  Slot* s              = &slots_[index % kSlots];
  if (index >= kSlots && !s->shared.load(std::memory_order_relaxed))
    s->shared.store(true, std::memory_order_seq_cst);
  s->entered.fetch_add(1, std::memory_order_seq_cst);
  return s;
}

void ReadGuard::synchronize() const {
  std::atomic_thread_fence(std::memory_order_seq_cst);
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
