// src/runtime/thread_util.hpp: thread pinning and the pipeline's clock.
#pragma once
#include <pthread.h>
#include <sched.h>
#include <time.h>

#include <cstdint>
#include <thread>

namespace warpath::runtime {

/// Monotonic nanoseconds (CLOCK_MONOTONIC): receive times and latency.
inline uint64_t mono_ns() noexcept {
  timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_nsec);
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
