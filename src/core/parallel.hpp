// src/core/parallel.hpp: splitting one batch over CPU threads (ExecContext::threads).
//
// Engines call parallel_ranges(n, ctx.threads, kMinPerThread, body): body(begin, end) runs on
// up to `threads` threads over contiguous slices of [0, n), or inline on the caller's thread
// when the batch is too small for threads to pay off (fewer than min_per_thread items each).
#pragma once
#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

namespace warpath {

template <class Body>
void parallel_ranges(uint32_t n, uint32_t threads, uint32_t min_per_thread, const Body& body) {
  threads = std::max(1u, std::min(threads, n / std::max(1u, min_per_thread)));
  if (threads == 1) {
    body(0u, n);
    return;
  }
  std::vector<std::thread> pool;
  const uint32_t chunk = (n + threads - 1) / threads;
  for (uint32_t t = 0; t < threads; ++t) {
    const uint32_t begin = t * chunk, end = std::min(n, begin + chunk);
    if (begin < end) pool.emplace_back([&body, begin, end] { body(begin, end); });
  }
  for (auto& th : pool) th.join();
}

}  // namespace warpath
