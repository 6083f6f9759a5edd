// src/runtime/master.cpp: the offload master thread (master.hpp).
#include "runtime/master.hpp"

#include <algorithm>
#include <cstring>

#include "core/cuda_host.hpp"
#include "runtime/thread_util.hpp"

namespace warpath::runtime {

OffloadMaster::OffloadMaster(const App& app, const ShadeEngines& engines, uint32_t max_launch,
                             int cpu, uint32_t lanes)
    : app_(app), engines_(engines), max_launch_(max_launch), cpu_(cpu) {
  const size_t n = max_launch;
  for (uint32_t l = 0; l < std::max(1u, lanes); ++l) {
    auto lane = std::make_unique<Lane>();
    if (app.has_acl()) {
      lane->acl_words =
          HostBuffer(n * classify::key_words(app.acl_layout()) * 4, MemSpace::kPinned);
      lane->acl_match = HostBuffer(n * 4, MemSpace::kPinned);
    }
    if (app.has_router()) {
      lane->dst4 = HostBuffer(n * sizeof(uint32_t), MemSpace::kPinned);
      lane->nh4  = HostBuffer(n * sizeof(lookup::NextHop), MemSpace::kPinned);
      lane->dst6 = HostBuffer(n * sizeof(lookup::Ip6), MemSpace::kPinned);
      lane->nh6  = HostBuffer(n * sizeof(lookup::NextHop), MemSpace::kPinned);
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

void OffloadMaster::submit(Chunk* c) {
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
  std::vector<Chunk*> group;
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
    Status s;
    if (group.size() == 1) {
      ExecContext ctx;
      ctx.stream = lane.stream;
      s          = app_.shade(engines_, *group[0], ctx);
    } else {
      s = shade_gathered(lane, group);
    }
    launches_.fetch_add(1, std::memory_order_relaxed);
    for (Chunk* c : group) {
      c->error = s;
      c->done.store(true, std::memory_order_release);
    }
  }
}

Status OffloadMaster::shade_gathered(Lane& lane, const std::vector<Chunk*>& group) {
  ExecContext ctx;
  ctx.stream     = lane.stream;
  const size_t L = max_launch_;
  if (app_.has_acl()) {
    const unsigned words = classify::key_words(app_.acl_layout());
    auto* g              = reinterpret_cast<uint32_t*>(lane.acl_words.data());
    uint32_t total       = 0;
    for (Chunk* c : group) {
      for (unsigned w = 0; w < words; ++w)
        std::memcpy(g + w * L + total, c->acl_words.data() + size_t(w) * c->capacity,
                    size_t(c->acl_count) * 4);
      total += c->acl_count;
    }
    auto* match = reinterpret_cast<uint32_t*>(lane.acl_match.data());
    if (total) {
      const classify::KeyBatch keys{g, total, uint32_t(L), app_.acl_layout()};
      WARPATH_TRY(engines_.acl->classify(keys, {match, total}, ctx));
    }
    uint32_t off = 0;
    for (Chunk* c : group) {
      std::memcpy(c->acl_match.data(), match + off, size_t(c->acl_count) * 4);
      off += c->acl_count;
    }
  }
  if (app_.has_router()) {
    auto* d4    = reinterpret_cast<uint32_t*>(lane.dst4.data());
    auto* n4    = reinterpret_cast<lookup::NextHop*>(lane.nh4.data());
    auto* d6    = reinterpret_cast<lookup::Ip6*>(lane.dst6.data());
    auto* n6    = reinterpret_cast<lookup::NextHop*>(lane.nh6.data());
    uint32_t t4 = 0, t6 = 0;
    for (Chunk* c : group) {
      const auto a4 = c->route_keys.dst4();
      const auto a6 = c->route_keys.dst6();
      std::memcpy(d4 + t4, a4.data, a4.size * sizeof(uint32_t));
      std::memcpy(d6 + t6, a6.data, a6.size * sizeof(lookup::Ip6));
      t4 += a4.size;
      t6 += a6.size;
    }
    if (t4) WARPATH_TRY(engines_.fib->lookup4({d4, t4}, {n4, t4}, ctx));
    if (t6) WARPATH_TRY(engines_.fib->lookup6({d6, t6}, {n6, t6}, ctx));
    t4 = t6 = 0;
    for (Chunk* c : group) {
      auto o4 = c->route_keys.nexthops4();
      auto o6 = c->route_keys.nexthops6();
      std::memcpy(o4.data, n4 + t4, o4.size * sizeof(lookup::NextHop));
      std::memcpy(o6.data, n6 + t6, o6.size * sizeof(lookup::NextHop));
      t4 += o4.size;
      t6 += o6.size;
    }
  }
  return Status::ok();
}

}  // namespace warpath::runtime
