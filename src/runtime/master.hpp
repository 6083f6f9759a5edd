// src/runtime/master.hpp
//
// The offload master: one thread per GPU (PacketShader section 5.3). Workers submit closed,
// pre-shaded chunks to one shared input queue; the master takes every chunk waiting (up to
// `max_launch` packets), gathers their keys into one set of (pinned) arrays, runs each engine
// once over all of them, scatters the answers back into the chunks and marks each done; the
// owning worker picks it up from its in-order pending list (its output queue). Gathering is
// opportunistic: the master never waits for more chunks than are already queued, so under
// light load a launch is one chunk and under heavy load launches grow (GSwitch section 5).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <mutex>
#include <thread>
#include <vector>

#include "runtime/app.hpp"
#include "runtime/chunk.hpp"
#include "warpath/core/memory.hpp"

namespace warpath::runtime {

class OffloadMaster {
 public:
  OffloadMaster(const App& app, const ShadeEngines& engines, uint32_t max_launch, int cpu);
  ~OffloadMaster();
  void start();
  /// Queues a chunk; the master sets chunk->done when its answers are in place.
  void submit(Chunk* c);
  /// Finishes every queued chunk, then joins the thread.
  void stop();
  uint64_t launches() const noexcept { return launches_.load(std::memory_order_relaxed); }
  uint64_t launched_chunks() const noexcept { return chunks_.load(std::memory_order_relaxed); }

 private:
  void loop();
  Status shade_gathered(const std::vector<Chunk*>& group);

  const App& app_;
  const ShadeEngines& engines_;
  uint32_t max_launch_;
  int cpu_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Chunk*> queue_;
  bool stopping_ = false;
  std::thread thread_;
  std::atomic<uint64_t> launches_{0}, chunks_{0};
  // Gathered keys and answers, allocated once (pinned when a GPU is present).
  HostBuffer acl_words_, acl_match_, dst4_, nh4_, dst6_, nh6_;
};

}  // namespace warpath::runtime
