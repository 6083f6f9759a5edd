// src/modules/module_helpers.hpp: what several built-in modules share: the matcher compiled
// at build that the first worker takes (the others compile their own), and the packets' clock
// of stateful modules, moved on while the link is idle. A side queue's producer
// is found by its state type (module.hpp: producer<T>, side_queue<T>).
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/pattern/pattern.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {

/// A matcher compiled when the module is built (so pattern errors show then), handed to the
/// first worker's state; later workers compile their own from the same patterns (an engine's
/// scratch belongs to one thread).
class SpareMatcher {
 public:
  explicit SpareMatcher(std::unique_ptr<pattern::Matcher> first) : spare_(std::move(first)) {}
  Result<std::unique_ptr<pattern::Matcher>> take(
      const std::string& engine, const std::vector<pattern::Pattern>& patterns) const {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      if (spare_) return std::move(spare_);
    }
    return pattern::make_matcher(engine, patterns);
  }

 private:
  mutable std::mutex mutex_;
  mutable std::unique_ptr<pattern::Matcher> spare_;
};

/// Moves a stateful module's clock on when no packet came for a while (Module::idle): `clock`
/// is the packets' own time (a capture's stays its own), `mono` the monotonic time of the last
/// packet. By the time that passed since then, and only once a packet has set the clock
/// (before that nothing is held). False when it did not move.
inline bool advance_idle_clock(uint64_t& clock, uint64_t& mono, uint64_t mono_ns) {
  if (!clock || mono_ns <= mono) return false;
  clock += mono_ns - mono;
  mono = mono_ns;
  return true;
}

}  // namespace warpath::runtime
