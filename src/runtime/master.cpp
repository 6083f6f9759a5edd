// src/runtime/master.cpp: the offload master thread (master.hpp).
#include "runtime/master.hpp"

#include <algorithm>
#include <cstring>

#include "core/cuda_host.hpp"
#include "runtime/thread_util.hpp"

namespace warpath::runtime {

OffloadMaster::OffloadMaster(const Chain& chain, uint32_t max_launch, int cpu, uint32_t lanes)
    : chain_(chain), max_launch_(max_launch), cpu_(cpu) {
  const size_t n = max_launch;
  for (uint32_t l = 0; l < std::max(1u, lanes); ++l) {
    auto lane = std::make_unique<Lane>();
    for (const Chain::JobRef& j : chain.jobs()) {
      lane->keys.emplace_back(n * j.shape.columns * j.shape.key_bytes, MemSpace::kPinned);
      lane->answers.emplace_back(n * j.shape.answer_bytes, MemSpace::kPinned);
    }
    lanes_.push_back(std::move(lane));
  }
}

OffloadMaster::~OffloadMaster() {
  stop();
  for (auto& lane : lanes_) detail::cuda_stream_destroy(lane->stream);
}

void OffloadMaster::start() {
  for (auto& lane : lanes_) {
    lane->stream = detail::cuda_stream_create();
    Lane* l      = lane.get();
    lane->thread = std::thread([this, l] {
      if (cpu_ >= 0) pin_current_thread(cpu_);
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

Status OffloadMaster::shade_gathered(Lane& lane, const std::vector<Frame*>& group) {
  ExecContext ctx;
  ctx.stream     = lane.stream;
  const size_t L = max_launch_;
  const auto& jobs = chain_.jobs();
  for (size_t k = 0; k < jobs.size(); ++k) {
    const Chain::JobRef& job = jobs[k];
    const Module& module     = chain_.module(job.module);
    const size_t kb = job.shape.key_bytes, ab = job.shape.answer_bytes;
    uint8_t* keys    = lane.keys[k].data();
    uint8_t* answers = lane.answers[k].data();
    uint32_t total   = 0;
    for (Frame* f : group) {
      const JobData d = module.job_data(*f, f->slots[job.module].get(), job.job);
      if (d.count > f->batch.size() || total + d.count > L)  // JobData's contract, checked
        return Status(Errc::kInvalidArgument,
                      "module " + std::string(module.kind()) + ": job " + std::to_string(job.job) +
                          " has " + std::to_string(d.count) + " keys for a frame of " +
                          std::to_string(f->batch.size()) + " packets (launch room " +
                          std::to_string(L - total) + ")");
      for (uint32_t c = 0; c < job.shape.columns && d.count; ++c)
        std::memcpy(keys + (c * L + total) * kb, d.keys + c * d.column_stride, d.count * kb);
      total += d.count;
    }
    if (total) WARPATH_TRY(module.run_job(Place::kOffload, job.job, {keys, L * kb, answers, total}, ctx));
    uint32_t off = 0;
    for (Frame* f : group) {
      const JobData d = module.job_data(*f, f->slots[job.module].get(), job.job);
      if (d.count) std::memcpy(d.answers, answers + off * ab, d.count * ab);
      off += d.count;
    }
  }
  return Status::ok();
}

}  // namespace warpath::runtime
