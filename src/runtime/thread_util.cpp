// src/runtime/thread_util.cpp: the tick clock's calibration (thread_util.hpp).
#include "runtime/thread_util.hpp"

namespace warpath::runtime {

double ns_per_tick() noexcept {
  static const double ratio = [] {
#if defined(__x86_64__)
    const uint64_t t0 = mono_ns(), c0 = ticks();
    uint64_t t1 = t0;
    while (t1 - t0 < 2'000'000) t1 = mono_ns();
    const uint64_t c1 = ticks();
    return c1 > c0 ? double(t1 - t0) / double(c1 - c0) : 1.0;
#else
    return 1.0;
#endif
  }();
  return ratio;
}

}  // namespace warpath::runtime
