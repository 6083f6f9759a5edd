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
// One upload, every module, one download (GASPP section 3): a launch's jobs are laid out in
// one pinned slab, [every job's keys | every packet job's bytes | every job's answers], key
// columns back to back. When every job of the launch runs on engines that take device memory
// (Module::job_resident: the CUDA engines), the master copies the slab's keys and bytes to the
// device in one copy, runs every module's jobs on the device copy (ExecContext::resident), and
// copies the bytes and answers back in one copy; otherwise (CPU offload engines, a validating
// wrapper) the engines run on the slab itself and copy what they need. Either way a packet
// job's keys are pointed at the moved bytes, which go back to their packets afterwards.
//
// Packet scheduling on the GPU (GASPP section 5.3; Chain::set_schedule_sort): in a resident
// launch, a packet job's rows are sorted on the device by the length of their bytes
// (core::length_key, CUB's radix sort), gathered into that order, run, and their answers
// scattered back, so a warp's threads take packets of similar length. Key jobs (lookups,
// classification) keep their order: their kernels do not branch by packet class.
//
// Lanes: the master runs `lanes` threads (default 2) that take groups from the same queue,
// each with its own CUDA stream and its own pinned gather buffers: while one lane's kernel
// runs, the other copies its keys in or its answers out (PacketShader's concurrent copy and
// execution, with double buffers). Each lane runs on a core of its own when it has one (a
// lane waiting on its stream spins, CUDA's default: two lanes on one core would take turns
// instead of overlapping). Engines lease device scratch per call (scratch_pool.cuh),
// so the two lanes never wait on each other's buffers. Chunks may complete out of order
// across lanes; each worker still finishes its chunks in order (worker.hpp).
#pragma once
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <thread>
#include <vector>

#include "warpath/core/memory.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {

class OffloadMaster {
 public:
  /// How the master reaches device memory: CUDA's (cuda_host.hpp) by default. A test passes
  /// host memory standing in for the device, so the resident path runs where no GPU is.
  struct DeviceOps {
    void* (*alloc)(size_t bytes) noexcept;
    void (*free)(void* ptr) noexcept;
    bool (*copy)(void* dst, const void* src, size_t bytes, bool to_device, void* stream,
                 const char** why) noexcept;
    bool (*sync)(void* stream, const char** why) noexcept;
    /// Packet scheduling (schedule_device.hpp): the stable order of rows by 16-bit keys, and
    /// rows moved into (gather) and out of (scatter) that order, all in device memory.
    bool (*sort)(const uint16_t* keys, uint32_t* order, uint32_t n, unsigned bits, void* stream,
                 const char** why) noexcept;
    bool (*gather_rows)(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                        uint32_t row_bytes, void* stream, const char** why) noexcept;
    bool (*scatter_rows)(const uint8_t* src, uint8_t* dst, const uint32_t* order, uint32_t n,
                         uint32_t row_bytes, void* stream, const char** why) noexcept;
    /// Whether `copy` moves any host memory at full speed and asynchronously. CUDA's does so
    /// only from page-locked memory (a pageable copy is staged through a bounce buffer and
    /// blocks), so a resident launch takes packet bytes straight from frames only when they
    /// are pinned; a test's host-memory device does from any.
    bool copies_any_host_memory = false;
  };
  static const DeviceOps& cuda_device_ops() noexcept;

  /// Lane l runs pinned to lane_cpus[l] (not pinned past the list or where it is negative).
  OffloadMaster(const Chain& chain, uint32_t max_launch, std::vector<int> lane_cpus,
                uint32_t lanes = 2, const DeviceOps& device = cuda_device_ops());
  ~OffloadMaster();
  void start();
  /// Queues a chunk; the master sets chunk->done when its answers are in place.
  void submit(Frame* c);
  /// Queues chunks at once, so that a lane that takes them finds them all (up to max_launch
  /// packets) for one launch.
  void submit(const std::vector<Frame*>& chunks);
  /// Finishes every queued chunk, then joins the lanes.
  void stop();
  uint64_t launches() const noexcept { return launches_.load(std::memory_order_relaxed); }
  /// Of those, the launches that ran resident on the device (one upload, one download).
  uint64_t resident_launches() const noexcept {
    return resident_launches_.load(std::memory_order_relaxed);
  }
  /// Packet jobs whose rows were sorted on the device before they ran.
  uint64_t scheduled_jobs() const noexcept {
    return scheduled_jobs_.load(std::memory_order_relaxed);
  }
  /// Launches whose packet jobs' bytes stayed in their frames: one span a frame up and one
  /// down on a resident launch (frames in page-locked memory, or a device that copies any),
  /// in place on the slab path; the master copied none of them.
  uint64_t direct_launches() const noexcept {
    return direct_launches_.load(std::memory_order_relaxed);
  }
  /// The most a resident launch's frame spans may carry, as a multiple of the bytes its packet
  /// jobs name (plus 4 KiB), for the bytes to go up and down in place rather than be gathered
  /// (a span carries the cells' slack and the packets no job names). Default 4: PCIe moves
  /// bytes several times faster than a lane's memcpy, which the gather and the scatter each
  /// cost. 0: always gather. Set before start().
  void set_max_span_ratio(double r) noexcept { max_span_ratio_ = r; }
  /// Whether a launch may move packet bytes to a device: a packet job of the chain whose
  /// module runs it resident (cuda.esp). Frames then pay for being page-locked.
  bool moves_packet_bytes() const;

 private:
  struct Lane {
    std::thread thread;
    void* stream = nullptr;  ///< cudaStream_t, or nullptr (default stream / CPU engines)
    HostBuffer slab;         ///< one launch's keys, bytes and answers (pinned; grows)
    void* device = nullptr;  ///< the slab's device copy (resident launches; DeviceOps memory)
    size_t device_bytes = 0;
    std::vector<JobData> data;  ///< per job and frame of the group, as the modules gave them
  };
  void loop(Lane& lane);
  Status shade_gathered(Lane& lane, const std::vector<Frame*>& group);

  const Chain& chain_;
  const DeviceOps& dev_;
  uint32_t max_launch_;
  std::vector<int> cpus_;
  std::mutex mu_;
  std::condition_variable cv_;
  std::deque<Frame*> queue_;
  bool stopping_ = false;
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<uint64_t> launches_{0}, resident_launches_{0}, scheduled_jobs_{0},
      direct_launches_{0};
  double max_span_ratio_ = 4.0;
};

}  // namespace warpath::runtime
