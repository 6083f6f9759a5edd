// src/runtime/worker.hpp
//
// A worker thread: RX from its own queues into chunks (closed when full or when the oldest
// packet has waited the delay bound), pre-shade, shade here or hand to the master (offload
// policy), then, strictly in chunk order, post-shade and TX. Counters are written only by the
// worker (relaxed atomics, so the progress display can read them at any time).
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <utility>
#include <vector>

#include "runtime/actions.hpp"
#include "runtime/app.hpp"
#include "runtime/chunk.hpp"
#include "runtime/latency_histogram.hpp"
#include "runtime/master.hpp"
#include "runtime/offload_policy.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::runtime {

struct WorkerCounters {
  std::atomic<uint64_t> rx{0}, rx_bytes{0}, tx_bytes{0};
  std::atomic<uint64_t> chunks{0}, cpu_chunks{0}, gpu_chunks{0}, cpu_packets{0}, gpu_packets{0};
  std::atomic<uint64_t> shade_cpu_ns{0};
  /// Router-originated ICMP Time Exceeded errors (outside rx = tx + dropped + slow_path).
  std::atomic<uint64_t> icmp_sent{0}, icmp_suppressed{0};
  std::array<std::atomic<uint64_t>, kAllReasons> by_reason{};
  std::atomic<double> share{0};
};

struct WorkerSetup {
  uint32_t id           = 0;
  const App* app        = nullptr;
  OffloadMaster* master = nullptr;  ///< nullptr: everything on the CPU
  Offload policy        = Offload::kCpu;
  std::vector<Port*> ports;                           ///< numbered ports (index = port number)
  std::vector<std::pair<Port*, uint32_t>> rx_queues;  ///< this worker's (port, queue)
  Port* slow_path = nullptr;
  uint32_t batch = 1024, delay_us = 200, in_flight = 4;
  bool pinned_memory            = false;
  int cpu                       = -1;
  const std::atomic<bool>* stop = nullptr;
};

class Worker {
 public:
  explicit Worker(WorkerSetup setup);
  /// Allocates the chunk pool; kOutOfMemory when it cannot.
  Status init();
  /// The thread body: returns when stopped (or its sources ended) and everything is sent.
  void run();
  const Status& error() const noexcept { return error_; }
  const WorkerCounters& counters() const noexcept { return counters_; }
  /// Valid after run() returned.
  const LatencyHistogram& latency() const noexcept { return latency_; }

 private:
  bool receive(Chunk& c, uint64_t& now);
  Status close(Chunk* c);
  Status finish(Chunk& c);
  void send_time_exceeded(Chunk& c);
  Chunk* take_free();

  WorkerSetup cfg_;
  OffloadPolicy policy_;
  std::vector<std::unique_ptr<Chunk>> pool_;
  std::vector<Chunk*> free_;
  std::deque<Chunk*> pending_;
  std::vector<std::vector<uint32_t>> out_lists_;
  std::vector<uint32_t> slow_list_;
  packet::PacketBatch icmp_;  ///< Time Exceeded frames of the chunk being finished
  std::vector<std::vector<uint32_t>> icmp_lists_;
  std::vector<uint8_t> icmp_frame_;
  std::array<uint64_t, kAllReasons> reason_scratch_{};
  WorkerCounters counters_;
  LatencyHistogram latency_;
  Status error_;
  uint32_t next_queue_ = 0;
};

}  // namespace warpath::runtime
