// src/runtime/master.cpp: the offload master thread (master.hpp).
#include "runtime/master.hpp"

#include <algorithm>
#include <chrono>
#include <cstring>

#include "core/cuda_host.hpp"
#include "runtime/core/schedule_key.hpp"
#include "runtime/schedule_device.hpp"
#include "runtime/thread_util.hpp"

namespace warpath::runtime {

namespace {

#if !defined(WARPATH_HAVE_CUDA)
// Without CUDA nothing is resident (no engine takes device memory), so these never run.
bool no_sort(const uint16_t*, uint32_t*, uint32_t, unsigned, void*, const char** why) noexcept {
  if (why) *why = "built without CUDA";
  return false;
}
bool no_rows(const uint8_t*, uint8_t*, const uint32_t*, uint32_t, uint32_t, void*,
             const char** why) noexcept {
  if (why) *why = "built without CUDA";
  return false;
}
#endif

}  // namespace

const OffloadMaster::DeviceOps& OffloadMaster::cuda_device_ops() noexcept {
#if defined(WARPATH_HAVE_CUDA)
  static const DeviceOps ops{
      &warpath::detail::cuda_device_alloc,  &warpath::detail::cuda_device_free,
      &warpath::detail::cuda_copy_async,    &warpath::detail::cuda_stream_sync,
      &detail::device_sort_order,           &detail::device_gather_rows,
      &detail::device_scatter_rows,         &warpath::detail::cuda_stream_create,
      &warpath::detail::cuda_stream_destroy, &warpath::detail::cuda_stream_query};
#else
  static const DeviceOps ops{&warpath::detail::cuda_device_alloc,
                             &warpath::detail::cuda_device_free,
                             &warpath::detail::cuda_copy_async,
                             &warpath::detail::cuda_stream_sync,
                             &no_sort,
                             &no_rows,
                             &no_rows,
                             &warpath::detail::cuda_stream_create,
                             &warpath::detail::cuda_stream_destroy,
                             &warpath::detail::cuda_stream_query};
#endif
  return ops;
}

// A ring entry: a frame, or a SubmitGroup with bit 0 set.
constexpr uintptr_t kGroup = 1;
// Room for every frame the workers keep in flight (worker.hpp) many times over.
constexpr size_t kRingFrames = 4096;

OffloadMaster::OffloadMaster(const Chain& chain, uint32_t max_launch, std::vector<int> lane_cpus,
                             uint32_t lanes, const DeviceOps& device)
    : chain_(chain), dev_(device), max_launch_(max_launch), cpus_(std::move(lane_cpus)),
      ring_(kRingFrames) {
  static_assert(alignof(Frame) > kGroup && alignof(SubmitGroup) > kGroup,
                "an entry's address leaves bit 0 free");
  // A slot's room for a full launch of keys and answers; a packet job's bytes grow it.
  for (const Chain::JobRef& j : chain.jobs())
    slab_bytes_ +=
        size_t(max_launch) * (j.shape.columns * j.shape.key_bytes + j.shape.answer_bytes) + 64;
  for (uint32_t l = 0; l < std::max(1u, lanes); ++l) lanes_.push_back(std::make_unique<Lane>());
}

bool OffloadMaster::moves_packet_bytes() const {
  for (const Chain::JobRef& j : chain_.jobs())
    if (j.shape.buffer_field >= 0 && chain_.module(j.module).job_resident(j.job)) return true;
  return false;
}

OffloadMaster::~OffloadMaster() {
  stop();
  // Entries never taken (a master destroyed unstarted): their groups.
  for (uintptr_t e = 0; ring_.try_pop(e);)
    if (e & kGroup) delete reinterpret_cast<SubmitGroup*>(e & ~kGroup);
  for (auto& lane : lanes_) {
    delete lane->group;
    for (Slot& s : lane->slots) {
      dev_.stream_destroy(s.stream);
      dev_.free(s.device);
    }
  }
}

void OffloadMaster::start() {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane* l = lanes_[i].get();
    l->slots.resize(depth_);
    for (Slot& s : l->slots) {
      s.stream = dev_.stream_create();
      s.slab   = HostBuffer(slab_bytes_, MemSpace::kPinned);
    }
    const int cpu = i < cpus_.size() ? cpus_[i] : -1;
    l->thread     = std::thread([this, l, cpu] {
      if (cpu >= 0) pin_current_thread(cpu);
      loop(*l);
    });
  }
}

void OffloadMaster::submit(Frame* c) { push(reinterpret_cast<uintptr_t>(c)); }

void OffloadMaster::submit(const std::vector<Frame*>& chunks) {
  if (chunks.size() == 1) return submit(chunks[0]);
  if (chunks.empty()) return;
  auto* g = new SubmitGroup{chunks, 0};
  push(reinterpret_cast<uintptr_t>(g) | kGroup);
}

void OffloadMaster::push(uintptr_t entry) {
  while (!ring_.try_push(entry)) std::this_thread::yield();  // full: the lanes are draining it
  // A lane that found the ring empty sleeps only after counting itself among the sleepers and
  // seeing work_seq_ unchanged (wait_for_work): one of the two sees the other.
  work_seq_.fetch_add(1, std::memory_order_seq_cst);
  if (sleepers_.load(std::memory_order_seq_cst)) work_seq_.notify_all();
}

void OffloadMaster::stop() {
  stopping_.store(true, std::memory_order_seq_cst);
  work_seq_.fetch_add(1, std::memory_order_seq_cst);
  work_seq_.notify_all();
  for (auto& lane : lanes_)
    if (lane->thread.joinable()) lane->thread.join();
}

void OffloadMaster::wait_for_work() {
  const uint32_t seen = work_seq_.load(std::memory_order_seq_cst);
  sleepers_.fetch_add(1, std::memory_order_seq_cst);
  if (!ring_.maybe_nonempty() && !stopping_.load(std::memory_order_seq_cst))
    work_seq_.wait(seen, std::memory_order_seq_cst);
  sleepers_.fetch_sub(1, std::memory_order_seq_cst);
}

// The frames waiting, from the lane's carried frame or group on, up to max_launch packets (at
// least one frame).
bool OffloadMaster::take_group(Lane& lane, std::vector<Frame*>& group) {
  group.clear();
  uint32_t packets = 0;
  for (;;) {
    if (!lane.holds()) {
      uintptr_t e = 0;
      if (!ring_.try_pop(e)) break;
      if (e & kGroup)
        lane.group = reinterpret_cast<SubmitGroup*>(e & ~kGroup);
      else
        lane.carry = reinterpret_cast<Frame*>(e);
    }
    Frame* f = lane.group ? lane.group->frames[lane.group->next] : lane.carry;
    if (!group.empty() && packets + f->batch.size() > max_launch_) break;  // the next launch's
    packets += f->batch.size();
    group.push_back(f);
    if (!lane.group) {
      lane.carry = nullptr;
    } else if (++lane.group->next == lane.group->frames.size()) {
      delete lane.group;
      lane.group = nullptr;
    }
  }
  return !group.empty();
}

void OffloadMaster::loop(Lane& lane) {
  for (;;) {
    bool progress = false, in_flight = false, only_held = true;
    Slot* free_slot = nullptr;
    const uint64_t now = min_round_trip_ns_ ? mono_ns() : 0;
    for (Slot& s : lane.slots) {
      const bool due = !min_round_trip_ns_ || now - s.staged_ns >= min_round_trip_ns_;
      if (s.busy && s.held && due) {
        complete(s, Status::ok());
        progress = true;
      } else if (s.busy && s.queued && due) {
        const char* why = nullptr;
        const int q     = dev_.query(s.stream, &why);
        if (q != 0) {
          complete(s, q > 0 ? Status::ok()
                            : Status(Errc::kCudaError,
                                     std::string("offload master: launch: ") + (why ? why : "?")));
          progress = true;
        }
      }
      in_flight = in_flight || s.busy;
      only_held = only_held && (!s.busy || s.held);
      if (!s.busy && !free_slot) free_slot = &s;
    }
    if (free_slot && take_group(lane, free_slot->group)) {
      Slot& s = *free_slot;
      s.busy  = true;
      launches_.fetch_add(1, std::memory_order_relaxed);
      // The launch's round trip starts here (Frame::staged_ns): the frames' wait in the submit
      // ring is queueing at the master, which more frames would not shorten.
      s.staged_ns = mono_ns();
      for (Frame* f : s.group) f->staged_ns = s.staged_ns;
      const Status st = stage(s);
      if (st.is_ok() && !s.queued && min_round_trip_ns_) {
        s.held = true;  // finished on the slab; completed once the round trip has passed
        count_in_flight();
      } else if (!st.is_ok() || !s.queued) {
        complete(s, st);
      }
      continue;
    }
    if (progress) continue;
    if (in_flight && only_held) {
      // Emulated round trips only (set_min_round_trip_ns): nothing to poll, and the workers
      // may need this core.
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    } else if (in_flight) {
      std::this_thread::yield();  // polling the device: the lane's own core
    } else if (stopping_.load(std::memory_order_acquire) && !lane.holds() &&
               !ring_.maybe_nonempty()) {
      return;  // nothing queued, nothing in flight
    } else if (!lane.holds()) {
      wait_for_work();
    }
  }
}

namespace {

constexpr size_t align16(size_t n) { return (n + 15) & ~size_t(15); }

uint8_t* buffer_of(const JobData& d, const JobShape& shape, uint32_t k) {
  uint8_t* p = nullptr;
  std::memcpy(&p, d.keys + size_t(k) * shape.key_bytes + size_t(shape.buffer_field), sizeof p);
  return p;
}

Status cuda_failed(const char* what, const char* why) {
  return Status(Errc::kCudaError,
                std::string("offload master: ") + what + ": " + (why ? why : "?"));
}

}  // namespace

// Where each part of a launch lies in its slot's slab (stage): [keys of every job | sort keys |
// bytes of every packet job | answers of every job]; past `end`, on the device only, each
// scheduled job's order and its rows and answers in that order.
struct detail::SlabLayout {
  std::vector<size_t> key_at, sort_at, bytes_at, answer_at, order_at, rows_at, answers_sorted_at;
  std::vector<size_t> span_at;  ///< per frame: its packet bytes' span (direct launches)
  size_t down_from = 0;   ///< what comes back (the bytes and the answers) starts here
  size_t up_to = 0;       ///< what goes up (keys, sort keys, bytes) ends here
  size_t end = 0;         ///< the host slab's size
  size_t device_end = 0;  ///< the device copy's size
};

namespace {

using detail::SlabLayout;

SlabLayout slab_layout(const std::vector<Chain::JobRef>& jobs, const std::vector<uint32_t>& total,
                       const std::vector<size_t>& bytes, const std::vector<uint8_t>& sorted,
                       const std::vector<size_t>& span_bytes) {
  const size_t J = jobs.size();
  SlabLayout L;
  for (auto* v : {&L.key_at, &L.sort_at, &L.bytes_at, &L.answer_at, &L.order_at, &L.rows_at,
                  &L.answers_sorted_at})
    v->assign(J, 0);
  size_t at = 0;
  for (size_t k = 0; k < J; ++k) {
    L.key_at[k] = at;
    at += align16(size_t(total[k]) * jobs[k].shape.columns * jobs[k].shape.key_bytes);
  }
  for (size_t k = 0; k < J; ++k) {
    L.sort_at[k] = at;
    if (sorted[k]) at += align16(size_t(total[k]) * sizeof(uint16_t));
  }
  L.down_from = at;
  for (size_t k = 0; k < J; ++k) {
    L.bytes_at[k] = at;
    at += bytes[k];
  }
  L.up_to = at;
  for (size_t k = 0; k < J; ++k) {
    L.answer_at[k] = at;
    at += align16(size_t(total[k]) * jobs[k].shape.answer_bytes);
  }
  L.end = at;
  for (size_t k = 0; k < J; ++k) {
    if (!sorted[k]) continue;
    L.order_at[k] = at;
    at += align16(size_t(total[k]) * sizeof(uint32_t));
    L.rows_at[k] = at;
    at += align16(size_t(total[k]) * jobs[k].shape.key_bytes);
    L.answers_sorted_at[k] = at;
    at += align16(size_t(total[k]) * jobs[k].shape.answer_bytes);
  }
  L.span_at.assign(span_bytes.size(), 0);
  for (size_t g = 0; g < span_bytes.size(); ++g) {
    L.span_at[g] = at;
    at += align16(span_bytes[g]);
  }
  L.device_end = at;
  return L;
}

// A direct launch's frames: per frame the span [lo, hi) of every packet job's bytes (lo
// aligned down to 16 where the cells allow, so that each buffer keeps its alignment on the
// device: the span's copy starts 16-aligned), and what the spans and the buffers come to.
struct FrameSpans {
  std::vector<uint8_t*> lo;
  std::vector<size_t> bytes;  ///< hi - lo; 0: the frame has no packet bytes
  size_t total = 0, useful = 0;
  bool inside  = true;  ///< every buffer lies in its frame's own cells
  bool pinned  = true;  ///< every frame with bytes is in page-locked memory
};

FrameSpans frame_spans(const std::vector<Chain::JobRef>& jobs, const std::vector<JobData>& data,
                       const std::vector<Frame*>& group) {
  const size_t F = group.size();
  FrameSpans s;
  s.lo.assign(F, nullptr);
  s.bytes.assign(F, 0);
  for (size_t g = 0; g < F; ++g) {
    uint8_t *lo = nullptr, *hi = nullptr;
    for (size_t k = 0; k < jobs.size(); ++k) {
      const JobShape& shape = jobs[k].shape;
      if (shape.buffer_field < 0) continue;
      const JobData& d = data[k * F + g];
      for (uint32_t i = 0; i < d.count; ++i) {
        const uint32_t n = d.buffer_bytes[i];
        if (!n) continue;
        uint8_t* p = buffer_of(d, shape, i);
        s.inside         = s.inside && group[g]->batch.in_cells(p, n);
        lo               = lo && lo < p ? lo : p;
        hi               = hi && hi > p + n ? hi : p + n;
        s.useful += n;
      }
    }
    if (!lo) continue;
    s.pinned = s.pinned && group[g]->batch.space() == MemSpace::kPinned;
    // Down to 16 where that stays in the cells (they start aligned in every batch made today).
    auto* down = reinterpret_cast<uint8_t*>(reinterpret_cast<uintptr_t>(lo) & ~uintptr_t(15));
    if (group[g]->batch.in_cells(down, size_t(hi - down))) lo = down;
    s.lo[g]     = lo;
    s.bytes[g]  = size_t(hi - lo);
    s.total    += s.bytes[g];
  }
  return s;
}

// Gather: key columns back to back; a packet job's bytes, its keys pointed at them (at `base`,
// where the engines will find the slab), and their length keys when the job is scheduled.
// Direct (`spans` given): the bytes stay in their frames; on a resident launch each key is
// pointed at its bytes' place in its frame's span on the device, else it keeps the host's.
void gather(const std::vector<Chain::JobRef>& jobs, const std::vector<JobData>& data, size_t F,
            const std::vector<uint32_t>& total, const std::vector<uint8_t>& sorted,
            const SlabLayout& L, uint8_t* slab, uint8_t* base, const FrameSpans* spans,
            bool resident) {
  for (size_t k = 0; k < jobs.size(); ++k) {
    const JobShape& shape = jobs[k].shape;
    const size_t kb = shape.key_bytes, column = size_t(total[k]) * kb;
    uint32_t row  = 0;
    size_t cursor = L.bytes_at[k];
    for (size_t g = 0; g < F; ++g) {
      const JobData& d = data[k * F + g];
      for (uint32_t c = 0; c < shape.columns && d.count; ++c)
        std::memcpy(slab + L.key_at[k] + c * column + row * kb, d.keys + c * d.column_stride,
                    d.count * kb);
      if (shape.buffer_field >= 0)
        for (uint32_t i = 0; i < d.count; ++i) {
          uint8_t* moved = nullptr;
          if (!spans) {
            std::memcpy(slab + cursor, buffer_of(d, shape, i), d.buffer_bytes[i]);
            moved = base + cursor;
          } else if (resident) {  // (an empty buffer: a valid device address, never read)
            moved = d.buffer_bytes[i] ? base + L.span_at[g] +
                                            size_t(buffer_of(d, shape, i) - spans->lo[g])
                                      : base;
          }
          if (moved)
            std::memcpy(slab + L.key_at[k] + (row + i) * kb + shape.buffer_field, &moved,
                        sizeof moved);
          if (sorted[k]) {
            const uint16_t key = core::length_key(d.buffer_bytes[i]);
            std::memcpy(slab + L.sort_at[k] + (row + i) * sizeof key, &key, sizeof key);
          }
          cursor += align16(d.buffer_bytes[i]);
        }
      row += d.count;
    }
  }
}

// Scatter: answers to their frames, bytes to their packets.
void scatter(const std::vector<Chain::JobRef>& jobs, const std::vector<JobData>& data, size_t F,
             const SlabLayout& L, const uint8_t* slab, bool direct) {
  for (size_t k = 0; k < jobs.size(); ++k) {
    const JobShape& shape = jobs[k].shape;
    const size_t ab       = shape.answer_bytes;
    uint32_t row          = 0;
    size_t cursor         = L.bytes_at[k];
    for (size_t g = 0; g < F; ++g) {
      const JobData& d = data[k * F + g];
      if (ab && d.count && d.answers)
        std::memcpy(d.answers, slab + L.answer_at[k] + row * ab, d.count * ab);
      if (shape.buffer_field >= 0 && !direct)
        for (uint32_t i = 0; i < d.count; ++i) {
          std::memcpy(buffer_of(d, shape, i), slab + cursor, d.buffer_bytes[i]);
          cursor += align16(d.buffer_bytes[i]);
        }
      row += d.count;
    }
  }
}

}  // namespace

// The modules' data, job by job and frame by frame, checked against JobData's contract: per
// job its keys (`total`) and packet bytes (`bytes`, each buffer 16-aligned), and whether every
// job runs resident.
Status OffloadMaster::collect(Slot& slot, std::vector<uint32_t>& total, std::vector<size_t>& bytes,
                              bool& resident) const {
  const std::vector<Frame*>& group = slot.group;
  const auto& jobs                 = chain_.jobs();
  const size_t F                   = group.size();
  slot.data.resize(jobs.size() * F);
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Chain::JobRef& job = jobs[k];
    const Module& module     = chain_.module(job.module);
    if (job.shape.buffer_field >= 0 &&
        (job.shape.columns != 1 ||
         size_t(job.shape.buffer_field) + sizeof(uint8_t*) > job.shape.key_bytes))
      return Status(Errc::kInvalidArgument, "module " + std::string(module.kind()) + ": job " +
                                                std::to_string(job.job) +
                                                " has a buffer field outside its key");
    resident = resident && module.job_resident(job.job);
    for (size_t g = 0; g < F; ++g) {
      Frame* f        = group[g];
      const JobData d = module.job_data(*f, f->slots[job.module].get(), job.job);
      if (d.count > f->batch.size() || total[k] + d.count > max_launch_)
        return Status(Errc::kInvalidArgument,
                      "module " + std::string(module.kind()) + ": job " + std::to_string(job.job) +
                          " has " + std::to_string(d.count) + " keys for a frame of " +
                          std::to_string(f->batch.size()) + " packets (launch room " +
                          std::to_string(max_launch_ - total[k]) + ")");
      if (job.shape.buffer_field >= 0 && d.count && !d.buffer_bytes)
        return Status(Errc::kInvalidArgument, "module " + std::string(module.kind()) + ": job " +
                                                  std::to_string(job.job) +
                                                  " gives no buffer lengths");
      if (job.shape.buffer_field >= 0)
        for (uint32_t i = 0; i < d.count; ++i) bytes[k] += align16(d.buffer_bytes[i]);
      total[k] += d.count;
      slot.data[k * F + g] = d;
    }
  }
  return Status::ok();
}

Status OffloadMaster::stage(Slot& slot) {
  const std::vector<Frame*>& group = slot.group;
  const auto& jobs                 = chain_.jobs();
  const size_t F                   = group.size();
  slot.queued = slot.resident = slot.direct = false;
  if (!slot.layout) slot.layout = std::make_unique<SlabLayout>();
  if (jobs.empty()) {
    *slot.layout = SlabLayout{};
    return Status::ok();
  }
  std::vector<uint32_t> total(jobs.size(), 0);
  std::vector<size_t> bytes(jobs.size(), 0);
  bool resident = true;
  WARPATH_TRY(collect(slot, total, bytes, resident));
  // Packet jobs of a resident launch are scheduled on the device when the chain sorts.
  std::vector<uint8_t> sorted(jobs.size(), 0);
  for (size_t k = 0; k < jobs.size(); ++k)
    sorted[k] =
        resident && chain_.schedule_sort() && jobs[k].shape.buffer_field >= 0 && total[k] > 1;
  // Packet bytes straight from their frames (one span a frame each way on a resident launch;
  // in place on the slab path) unless a buffer lies outside its frame's cells, or, resident,
  // the frames are pageable (CUDA would stage and block) or the spans carry more than
  // max_span_ratio_ times the bytes the jobs name (small packets in large cells, few of them
  // in a job): then they are gathered into the slab and scattered back.
  FrameSpans spans;
  bool any_bytes = false;
  for (size_t k = 0; k < jobs.size(); ++k) any_bytes = any_bytes || bytes[k] > 0;
  bool direct = false;
  if (any_bytes) {
    spans  = frame_spans(jobs, slot.data, group);
    direct = max_span_ratio_ > 0 && spans.inside &&
             (!resident ||
              ((spans.pinned || dev_.copies_any_host_memory) &&
               double(spans.total) <= max_span_ratio_ * double(spans.useful) + 4096.0));
  }
  if (direct) std::fill(bytes.begin(), bytes.end(), size_t(0));
  *slot.layout = slab_layout(jobs, total, bytes, sorted,
                            direct && resident ? spans.bytes : std::vector<size_t>{});
  const SlabLayout& L = *slot.layout;
  slot.direct         = direct;
  if (L.end == 0) return Status::ok();  // no frame of the group has a key
  const size_t end = L.end, device_end = L.device_end;
  if (slot.slab.bytes() < end) {
    slot.slab = HostBuffer(std::max(end, slot.slab.bytes() * 2), MemSpace::kPinned);
    if (!slot.slab.data())
      return Status(Errc::kOutOfMemory,
                    "offload master: a launch slab of " + std::to_string(end) + " bytes");
  }
  if (resident && slot.device_bytes < device_end) {
    const size_t want = std::max(device_end, slot.slab.bytes());
    dev_.free(slot.device);
    slot.device       = dev_.alloc(want);
    slot.device_bytes = slot.device ? want : 0;
    if (!slot.device)
      return Status(Errc::kOutOfMemory,
                    "offload master: " + std::to_string(want) + " bytes of device memory");
  }
  uint8_t* slab = slot.slab.data();
  // Where the engines find the slab: its device copy (resident) or the slab itself.
  uint8_t* base = resident ? static_cast<uint8_t*>(slot.device) : slab;

  gather(jobs, slot.data, F, total, sorted, L, slab, base, direct ? &spans : nullptr, resident);

  ExecContext ctx;
  ctx.stream      = slot.stream;
  ctx.resident    = resident;
  ctx.keep        = resident ? &slot.keep : nullptr;
  slot.resident   = resident;
  const char* why = nullptr;
  // Once anything is queued, no error returns (and marks the frames done) before the stream
  // has finished: a late copy must not read a slab the slot reuses, nor write into a frame its
  // worker has taken back.
  auto fail = [&](Status st) {
    if (resident) (void)dev_.sync(slot.stream, nullptr);
    slot.keep.clear();
    return st;
  };
  if (resident && L.up_to && !dev_.copy(base, slab, L.up_to, true, slot.stream, &why))
    return fail(cuda_failed("upload", why));
  const bool spans_queued = resident && direct;
  // Each frame's span between the frame and its place on the device.
  auto copy_spans = [&](bool up) {
    for (size_t g = 0; g < F; ++g) {
      uint8_t* on_device = base + L.span_at[g];
      if (spans.bytes[g] && !dev_.copy(up ? on_device : spans.lo[g], up ? spans.lo[g] : on_device,
                                       spans.bytes[g], up, slot.stream, &why))
        return false;
    }
    return true;
  };
  if (spans_queued && !copy_spans(true)) return fail(cuda_failed("packet upload", why));
  for (size_t k = 0; k < jobs.size(); ++k) {
    if (!total[k]) continue;
    const Chain::JobRef& job = jobs[k];
    const JobShape& shape    = job.shape;
    const Module& module     = chain_.module(job.module);
    if (!sorted[k]) {
      const JobData d{base + L.key_at[k], size_t(total[k]) * shape.key_bytes,
                      shape.answer_bytes ? base + L.answer_at[k] : nullptr, total[k]};
      if (Status st = module.run_job(Place::kOffload, job.job, d, ctx); !st.is_ok()) return fail(st);
      continue;
    }
    // Scheduled: the rows sorted by length, run in that order, the answers put back.
    auto* order = reinterpret_cast<uint32_t*>(base + L.order_at[k]);
    if (!dev_.sort(reinterpret_cast<const uint16_t*>(base + L.sort_at[k]), order, total[k],
                   core::kLengthKeyBits, slot.stream, &why) ||
        !dev_.gather_rows(base + L.key_at[k], base + L.rows_at[k], order, total[k], shape.key_bytes,
                          slot.stream, &why))
      return fail(cuda_failed("schedule sort", why));
    const JobData d{base + L.rows_at[k], size_t(total[k]) * shape.key_bytes,
                    shape.answer_bytes ? base + L.answers_sorted_at[k] : nullptr, total[k]};
    if (Status st = module.run_job(Place::kOffload, job.job, d, ctx); !st.is_ok()) return fail(st);
    if (shape.answer_bytes &&
        !dev_.scatter_rows(base + L.answers_sorted_at[k], base + L.answer_at[k], order, total[k],
                           shape.answer_bytes, slot.stream, &why))
      return fail(cuda_failed("schedule scatter", why));
    scheduled_jobs_.fetch_add(1, std::memory_order_relaxed);
  }
  if (resident) {
    if (end > L.down_from &&
        !dev_.copy(slab + L.down_from, base + L.down_from, end - L.down_from, false, slot.stream, &why))
      return fail(cuda_failed("download", why));
    if (direct && !copy_spans(false)) return fail(cuda_failed("packet download", why));
    slot.queued = true;  // the lane polls the stream (loop) and completes it then
    count_in_flight();
  }
  return Status::ok();
}

void OffloadMaster::count_in_flight() noexcept {
  const uint64_t now = in_flight_.fetch_add(1, std::memory_order_relaxed) + 1;
  uint64_t most      = max_in_flight_.load(std::memory_order_relaxed);
  while (now > most &&
         !max_in_flight_.compare_exchange_weak(most, now, std::memory_order_relaxed)) {
  }
}

void OffloadMaster::complete(Slot& slot, Status status) {
  if (slot.queued || slot.held) in_flight_.fetch_sub(1, std::memory_order_relaxed);
  if (slot.queued && !status.is_ok()) (void)dev_.sync(slot.stream, nullptr);  // a failed query
  slot.held = false;
  slot.keep.clear();  // the engines' scratch and read sections: the stream is done with them
  if (status.is_ok() && slot.layout && slot.layout->end) {
    if (slot.resident) resident_launches_.fetch_add(1, std::memory_order_relaxed);
    if (slot.direct) direct_launches_.fetch_add(1, std::memory_order_relaxed);
    scatter(chain_.jobs(), slot.data, slot.group.size(), *slot.layout, slot.slab.data(),
            slot.direct);
  }
  const uint64_t done_ns = mono_ns();
  for (Frame* c : slot.group) {
    c->error   = status;
    c->done_ns = done_ns;
    c->done.store(true, std::memory_order_release);
  }
  slot.group.clear();
  slot.busy = slot.queued = false;
}

}  // namespace warpath::runtime
