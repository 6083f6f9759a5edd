// src/runtime/master.hpp
//
// The offload master: one thread per GPU (PacketShader section 5.3). Workers submit closed,
// pre-shaded chunks to one shared input queue; the master takes every chunk waiting (up to
// `max_launch` packets), gathers each shade job of the chain (chain.hpp: jobs(), a module's
// keys of a fixed shape) from all of them into one (pinned) array, runs the job once over all
// of them on the offload engines, scatters the answers back into the chunks and marks each
// done, without knowing what the keys are; the
// owning worker picks it up from its in-order pending list (its output queue). Gathering is
// opportunistic: the master never waits for more chunks than are already queued, so under
// light load a launch is one chunk and under heavy load launches grow (GSwitch section 5).
//
// Lanes: the master runs `lanes` threads (default 2) that take groups from the same queue,
// each with its own CUDA stream and its own pinned gather buffers: while one lane's kernel
// runs, the other copies its keys in or its answers out (PacketShader's concurrent copy and
// execution, with double buffers). Engines lease device scratch per call (scratch_pool.cuh),
// so the two lanes never wait on each other's buffers. Chunks may complete out of order
// across lanes; each worker still finishes its chunks in order (worker.hpp).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "warpath/core/memory.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {

class OffloadMaster {
 public:
  OffloadMaster(const Chain& chain, uint32_t max_launch, int cpu, uint32_t lanes = 2);
  ~OffloadMaster();
  void start();
  /// Queues a chunk; the master sets chunk->done when its answers are in place.
  void submit(Frame* c);
  /// Finishes every queued chunk, then joins the lanes.
  void stop();
  uint64_t launches() const noexcept { return launches_.load(std::memory_order_relaxed); }

 private:
  struct Lane {
    std::thread thread;
    void* stream = nullptr;  ///< cudaStream_t, or nullptr (default stream / CPU engines)
    // Gathered keys and answers of each job of the chain, allocated once (pinned).
    std::vector<HostBuffer> keys, answers;
  };
  void loop(Lane& lane);
  Status shade_gathered(Lane& lane, const std::vector<Frame*>& group);

  const Chain& chain_;
  uint32_t max_launch_;
  int cpu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frame*> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<uint64_t> launches_{0};
};

}  // namespace warpath::runtime
