// src/runtime/master.cpp: the offload master thread (master.hpp).
#include "runtime/master.hpp"

#include <algorithm>
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
      &warpath::detail::cuda_device_alloc, &warpath::detail::cuda_device_free,
      &warpath::detail::cuda_copy_async,   &warpath::detail::cuda_stream_sync,
      &detail::device_sort_order,          &detail::device_gather_rows,
      &detail::device_scatter_rows};
#else
  static const DeviceOps ops{&warpath::detail::cuda_device_alloc,
                             &warpath::detail::cuda_device_free,
                             &warpath::detail::cuda_copy_async,
                             &warpath::detail::cuda_stream_sync,
                             &no_sort,
                             &no_rows,
                             &no_rows};
#endif
  return ops;
}

OffloadMaster::OffloadMaster(const Chain& chain, uint32_t max_launch, std::vector<int> lane_cpus,
                             uint32_t lanes, const DeviceOps& device)
    : chain_(chain), dev_(device), max_launch_(max_launch), cpus_(std::move(lane_cpus)) {
  // The slab's room for a full launch of keys and answers; a packet job's bytes grow it.
  size_t bytes = 0;
  for (const Chain::JobRef& j : chain.jobs())
    bytes += size_t(max_launch) * (j.shape.columns * j.shape.key_bytes + j.shape.answer_bytes) + 64;
  for (uint32_t l = 0; l < std::max(1u, lanes); ++l) {
    auto lane  = std::make_unique<Lane>();
    lane->slab = HostBuffer(bytes, MemSpace::kPinned);
    lanes_.push_back(std::move(lane));
  }
}

bool OffloadMaster::moves_packet_bytes() const {
  for (const Chain::JobRef& j : chain_.jobs())
    if (j.shape.buffer_field >= 0 && chain_.module(j.module).job_resident(j.job)) return true;
  return false;
}

OffloadMaster::~OffloadMaster() {
  stop();
  for (auto& lane : lanes_) {
    warpath::detail::cuda_stream_destroy(lane->stream);
    dev_.free(lane->device);
  }
}

void OffloadMaster::start() {
  for (size_t i = 0; i < lanes_.size(); ++i) {
    Lane* l       = lanes_[i].get();
    l->stream     = warpath::detail::cuda_stream_create();
    const int cpu = i < cpus_.size() ? cpus_[i] : -1;
    l->thread     = std::thread([this, l, cpu] {
      if (cpu >= 0) pin_current_thread(cpu);
      loop(*l);
    });
  }
}

void OffloadMaster::submit(Frame* c) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.push_back(c);
  }
  cv_.notify_one();
}

void OffloadMaster::submit(const std::vector<Frame*>& chunks) {
  {
    std::lock_guard<std::mutex> lock(mu_);
    queue_.insert(queue_.end(), chunks.begin(), chunks.end());
  }
  cv_.notify_all();
}

void OffloadMaster::stop() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    stopping_ = true;
  }
  cv_.notify_all();
  for (auto& lane : lanes_)
    if (lane->thread.joinable()) lane->thread.join();
}

void OffloadMaster::loop(Lane& lane) {
  std::vector<Frame*> group;
  for (;;) {
    group.clear();
    {
      std::unique_lock<std::mutex> lock(mu_);
      cv_.wait(lock, [&] { return stopping_ || !queue_.empty(); });
      if (queue_.empty()) return;  // stopping, nothing left
      uint32_t packets = 0;
      while (!queue_.empty() &&
             (group.empty() || packets + queue_.front()->batch.size() <= max_launch_)) {
        packets += queue_.front()->batch.size();
        group.push_back(queue_.front());
        queue_.pop_front();
      }
    }
    // Even a group of one goes through the lane's pinned slabs: a frame's own key arrays are
    // pageable, and a copy from pageable memory is staged and synchronous.
    const Status s = shade_gathered(lane, group);
    launches_.fetch_add(1, std::memory_order_relaxed);
    for (Frame* c : group) {
      c->error = s;
      c->done.store(true, std::memory_order_release);
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

// Where each part of a launch lies in the lane's slab (shade_gathered): [keys of every job |
// sort keys | bytes of every packet job | answers of every job]; past `end`, on the device only,
// each scheduled job's order and its rows and answers in that order.
struct SlabLayout {
  std::vector<size_t> key_at, sort_at, bytes_at, answer_at, order_at, rows_at, answers_sorted_at;
  std::vector<size_t> span_at;  ///< per frame: its packet bytes' span (direct launches)
  size_t down_from = 0;   ///< what comes back (the bytes and the answers) starts here
  size_t up_to = 0;       ///< what goes up (keys, sort keys, bytes) ends here
  size_t end = 0;         ///< the host slab's size
  size_t device_end = 0;  ///< the device copy's size
};

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

Status OffloadMaster::shade_gathered(Lane& lane, const std::vector<Frame*>& group) {
  const auto& jobs = chain_.jobs();
  const size_t F   = group.size();
  if (jobs.empty()) return Status::ok();
  // The modules' data, job by job and frame by frame, checked against JobData's contract.
  lane.data.resize(jobs.size() * F);
  std::vector<uint32_t> total(jobs.size(), 0);
  std::vector<size_t> bytes(jobs.size(), 0);
  bool resident = true;
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
      lane.data[k * F + g] = d;
    }
  }
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
    spans  = frame_spans(jobs, lane.data, group);
    direct = max_span_ratio_ > 0 && spans.inside &&
             (!resident ||
              ((spans.pinned || dev_.copies_any_host_memory) &&
               double(spans.total) <= max_span_ratio_ * double(spans.useful) + 4096.0));
  }
  if (direct) std::fill(bytes.begin(), bytes.end(), size_t(0));
  const SlabLayout L = slab_layout(jobs, total, bytes, sorted,
                                   direct && resident ? spans.bytes : std::vector<size_t>{});
  if (L.end == 0) return Status::ok();  // no frame of the group has a key
  const size_t end = L.end, device_end = L.device_end;
  if (lane.slab.bytes() < end) {
    lane.slab = HostBuffer(std::max(end, lane.slab.bytes() * 2), MemSpace::kPinned);
    if (!lane.slab.data())
      return Status(Errc::kOutOfMemory,
                    "offload master: a launch slab of " + std::to_string(end) + " bytes");
  }
  if (resident && lane.device_bytes < device_end) {
    const size_t want = std::max(device_end, lane.slab.bytes());
    dev_.free(lane.device);
    lane.device       = dev_.alloc(want);
    lane.device_bytes = lane.device ? want : 0;
    if (!lane.device)
      return Status(Errc::kOutOfMemory,
                    "offload master: " + std::to_string(want) + " bytes of device memory");
  }
  uint8_t* slab = lane.slab.data();
  // Where the engines find the slab: its device copy (resident) or the slab itself.
  uint8_t* base = resident ? static_cast<uint8_t*>(lane.device) : slab;

  gather(jobs, lane.data, F, total, sorted, L, slab, base, direct ? &spans : nullptr, resident);

  ExecContext ctx;
  ctx.stream      = lane.stream;
  ctx.resident    = resident;
  const char* why = nullptr;
  if (resident && L.up_to && !dev_.copy(base, slab, L.up_to, true, lane.stream, &why))
    return cuda_failed("upload", why);
  // Once a frame's bytes are in a copy, no error returns (and marks the frame done) before the
  // stream has finished with them: a late download must not write into a frame its worker has
  // taken back.
  const bool spans_queued = resident && direct;
  auto fail = [&](Status st) {
    if (spans_queued) (void)dev_.sync(lane.stream, nullptr);
    return st;
  };
  // Each frame's span between the frame and its place on the device.
  auto copy_spans = [&](bool up) {
    for (size_t g = 0; g < F; ++g) {
      uint8_t* on_device = base + L.span_at[g];
      if (spans.bytes[g] && !dev_.copy(up ? on_device : spans.lo[g], up ? spans.lo[g] : on_device,
                                       spans.bytes[g], up, lane.stream, &why))
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
                   core::kLengthKeyBits, lane.stream, &why) ||
        !dev_.gather_rows(base + L.key_at[k], base + L.rows_at[k], order, total[k], shape.key_bytes,
                          lane.stream, &why))
      return fail(cuda_failed("schedule sort", why));
    const JobData d{base + L.rows_at[k], size_t(total[k]) * shape.key_bytes,
                    shape.answer_bytes ? base + L.answers_sorted_at[k] : nullptr, total[k]};
    if (Status st = module.run_job(Place::kOffload, job.job, d, ctx); !st.is_ok()) return fail(st);
    if (shape.answer_bytes &&
        !dev_.scatter_rows(base + L.answers_sorted_at[k], base + L.answer_at[k], order, total[k],
                           shape.answer_bytes, lane.stream, &why))
      return fail(cuda_failed("schedule scatter", why));
    scheduled_jobs_.fetch_add(1, std::memory_order_relaxed);
  }
  if (resident) {
    if (end > L.down_from &&
        !dev_.copy(slab + L.down_from, base + L.down_from, end - L.down_from, false, lane.stream, &why))
      return fail(cuda_failed("download", why));
    if (direct && !copy_spans(false)) return fail(cuda_failed("packet download", why));
    if (!dev_.sync(lane.stream, &why)) return cuda_failed("launch", why);
    resident_launches_.fetch_add(1, std::memory_order_relaxed);
  }
  if (direct) direct_launches_.fetch_add(1, std::memory_order_relaxed);

  scatter(jobs, lane.data, F, L, slab, direct);
  return Status::ok();
}

}  // namespace warpath::runtime
