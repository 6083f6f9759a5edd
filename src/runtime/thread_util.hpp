// src/runtime/thread_util.hpp: thread pinning and the pipeline's clocks.
#pragma once
#include <pthread.h>
#include <sched.h>
#include <time.h>
#if defined(__x86_64__)
#include <x86intrin.h>
#endif

#include <atomic>
#include <cstdint>
#include <thread>

namespace warpath::runtime {

/// Monotonic nanoseconds (CLOCK_MONOTONIC): receive times and latency.
inline uint64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
}

/// Cheap timestamps for per-module accounting (VPP's clib_cpu_time_now): the TSC on x86-64
/// (invariant on every CPU warpath targets: constant_tsc), CLOCK_MONOTONIC elsewhere. A module
/// boundary costs one read; clock_gettime cost 8% of a 2-module chain at batch 32 (ADR 0005).
inline uint64_t ticks() noexcept {
#if defined(__x86_64__)
  return __rdtsc();
#else
  return mono_ns();
#endif
}
/// Nanoseconds per tick, measured once against CLOCK_MONOTONIC (about 2 ms, on the first call;
/// call it before the hot path starts).
double ns_per_tick() noexcept;

/// Adds to a counter that only the calling thread writes (others only read it, relaxed): a
/// plain load and store, without the locked read-modify-write of fetch_add.
inline void add_owned(std::atomic<uint64_t>& counter, uint64_t v) noexcept {
  counter.store(counter.load(std::memory_order_relaxed) + v, std::memory_order_relaxed);
}

/// Pins the calling thread to `cpu` (modulo the CPUs present). False when the OS refuses.
inline bool pin_current_thread(int cpu) noexcept {
  const unsigned n = std::thread::hardware_concurrency();
  if (n == 0) return false;
  cpu_set_t set;
  CPU_ZERO(&set);
  CPU_SET(unsigned(cpu) % n, &set);
  return pthread_setaffinity_np(pthread_self(), sizeof(set), &set) == 0;
}

}  // namespace warpath::runtime
