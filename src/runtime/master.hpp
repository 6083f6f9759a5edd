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
// Lanes: the master runs `lanes` threads (default 2) that take frames from one lock-free
// submit ring (mpmc_ring.hpp; workers never wait on a lane, and a lane sleeps only when it has
// nothing queued and nothing in flight). Asynchronous launches (NBA's offload tasks in flight,
// PacketShader's concurrent copy and execution): each lane keeps up to `launch_depth` launches
// (default 4) in flight, each in a slot of its own (its own stream, pinned slab and device
// copy), so one launch's copies overlap another's kernels and a lane gathers the next launch
// while the device runs the last. A resident launch only enqueues: its upload, every module's
// jobs (ExecContext::keep: a CUDA engine returns once its work is queued, handing what its
// kernels still use to the launch) and its download; the lane then polls each slot's stream
// (DeviceOps::query, never a wait per launch) and, when one has finished, scatters its answers
// and marks its frames done. Launches complete out of order, within a lane and across lanes;
// each worker still finishes its frames in order (worker.hpp). A launch that runs on the slab
// (CPU offload engines) completes before the lane takes the next. Each lane runs on a core of
// its own when it has one, polling rather than sleeping while it has launches in flight.
// Engines lease device scratch per call (scratch_pool.cuh), so slots never share buffers.
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <thread>
#include <vector>

#include "runtime/mpmc_ring.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {

namespace detail {
struct SlabLayout;  // master.cpp
}

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
    /// A stream of its own for each launch slot (nullptr: the device's default stream).
    void* (*stream_create)() noexcept;
    void (*stream_destroy)(void* stream) noexcept;
    /// Whether everything queued on `stream` has finished, without waiting: 1 yes, 0 not yet,
    /// -1 a queued call failed (the reason in `why`). How a lane completes a launch.
    int (*query)(void* stream, const char** why) noexcept;
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
  /// Queues a chunk; the master sets chunk->done when its answers are in place. Lock-free;
  /// spins (yielding) only while the submit ring (4,096 entries) is full, which only started
  /// lanes drain.
  void submit(Frame* c);
  /// Queues chunks together, so that the lane that takes the first takes them all (up to
  /// max_launch packets) for one launch.
  void submit(const std::vector<Frame*>& chunks);
  /// Finishes every queued chunk and every launch in flight, then joins the lanes.
  void stop();
  /// Launches each lane keeps in flight at most (1: a lane waits for each launch before it
  /// takes the next, as before the asynchronous master). Set before start(); at least 1.
  void set_launch_depth(uint32_t depth) noexcept { depth_ = depth ? depth : 1; }
  uint64_t launches() const noexcept { return launches_.load(std::memory_order_relaxed); }
  /// The most launches that were queued on the device at once, over every lane (held ones
  /// count too: set_min_round_trip_ns).
  uint64_t max_in_flight() const noexcept {
    return max_in_flight_.load(std::memory_order_relaxed);
  }
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
  /// A test aid (RunConfig::offload_delay_us): no launch completes sooner than `ns` after it
  /// was staged, as if a device took that long, its frames held in their slot meanwhile (a
  /// slot of launch_depth). With CPU offload engines, whose launches finish as they are
  /// staged, this emulates a device's round trip where there is none. Set before start().
  void set_min_round_trip_ns(uint64_t ns) noexcept { min_round_trip_ns_ = ns; }
  /// Whether a launch may move packet bytes to a device: a packet job of the chain whose
  /// module runs it resident (cuda.esp). Frames then pay for being page-locked.
  bool moves_packet_bytes() const;

 private:
  /// One launch in flight: its frames, the modules' data, and its own stream, pinned slab and
  /// device copy, reused by the lane's next launch in this slot once it completes.
  struct Slot {
    void* stream = nullptr;  ///< cudaStream_t, or nullptr (default stream / CPU engines)
    HostBuffer slab;         ///< keys, bytes and answers (pinned; grows)
    void* device = nullptr;  ///< the slab's device copy (resident launches; DeviceOps memory)
    size_t device_bytes = 0;
    std::vector<Frame*> group;
    std::vector<JobData> data;  ///< per job and frame of the group, as the modules gave them
    std::vector<std::shared_ptr<void>> keep;  ///< what queued engine calls still use
    bool busy     = false;  ///< holds a launch not yet completed
    bool queued   = false;  ///< ... whose work is on the stream, to be polled
    bool held          = false;  ///< ... finished, held until min_round_trip_ns_ has passed
    uint64_t staged_ns = 0;      ///< when it was staged (Frame::staged_ns of its frames)
    bool resident = false, direct = false;
    std::unique_ptr<detail::SlabLayout> layout;  ///< where the launch lies in the slab
  };
  /// The frames of one submit(vector) of more than one, a single ring entry, so that the lane
  /// that takes it takes them together.
  struct SubmitGroup {
    std::vector<Frame*> frames;
    size_t next = 0;  ///< the first not yet launched
  };
  struct Lane {
    std::thread thread;
    std::vector<Slot> slots;
    Frame* carry       = nullptr;  ///< a frame taken that did not fit the last launch
    SubmitGroup* group = nullptr;  ///< a submit group taken, not launched whole yet
    bool holds() const noexcept { return carry || group; }
  };
  void loop(Lane& lane);
  void push(uintptr_t entry);
  bool take_group(Lane& lane, std::vector<Frame*>& group);
  void wait_for_work();
  /// Gathers the slot's group and queues its launch; runs it whole when it is not resident.
  Status stage(Slot& slot);
  Status collect(Slot& slot, std::vector<uint32_t>& total, std::vector<size_t>& bytes,
                 bool& resident) const;
  /// Scatters a finished launch (or gives its frames `status`) and frees the slot.
  void complete(Slot& slot, Status status);

  const Chain& chain_;
  const DeviceOps& dev_;
  uint32_t max_launch_;
  std::vector<int> cpus_;
  uint32_t depth_    = 4;
  size_t slab_bytes_ = 0;  ///< a full launch's keys and answers, each slot's first slab
  detail::MpmcRing<uintptr_t> ring_;  ///< Frame*, or SubmitGroup* with bit 0 set
  std::atomic<uint32_t> work_seq_{0};  ///< bumped by each submit and by stop (lanes wait on it)
  std::atomic<uint32_t> sleepers_{0};
  std::atomic<bool> stopping_{false};
  std::vector<std::unique_ptr<Lane>> lanes_;
  std::atomic<uint64_t> launches_{0}, resident_launches_{0}, scheduled_jobs_{0},
      direct_launches_{0}, in_flight_{0}, max_in_flight_{0};
  double max_span_ratio_ = 4.0;
  uint64_t min_round_trip_ns_ = 0;
  /// Counts a launch into in_flight_ and max_in_flight_ (queued on the device, or held).
  void count_in_flight() noexcept;
};

}  // namespace warpath::runtime
