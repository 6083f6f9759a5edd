// src/runtime/master.cpp: the offload master thread (master.hpp).
#include "runtime/master.hpp"

#include <cstring>

#include "runtime/thread_util.hpp"

namespace warpath::runtime {

OffloadMaster::OffloadMaster(const App& app, const ShadeEngines& engines, uint32_t max_launch,
                             int cpu)
    : app_(app), engines_(engines), max_launch_(max_launch), cpu_(cpu) {
  const size_t n = max_launch;
  if (app.has_acl()) {
    acl_words_ = HostBuffer(n * classify::key_words(app.acl_layout()) * 4, MemSpace::kPinned);
    acl_match_ = HostBuffer(n * 4, MemSpace::kPinned);
  }
  if (app.has_router()) {
    dst4_ = HostBuffer(n * sizeof(uint32_t), MemSpace::kPinned);
    nh4_  = HostBuffer(n * sizeof(lookup::NextHop), MemSpace::kPinned);
    dst6_ = HostBuffer(n * sizeof(lookup::Ip6), MemSpace::kPinned);
    nh6_  = HostBuffer(n * sizeof(lookup::NextHop), MemSpace::kPinned);
  }
}

OffloadMaster::~OffloadMaster() { stop(); }

void OffloadMaster::start() {
  thread_ = std::thread([this] {
    if (cpu_ >= 0) pin_current_thread(cpu_);
    loop();
  });
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
  cv_.notify_one();
  if (thread_.joinable()) thread_.join();
}

void OffloadMaster::loop() {
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
      s = app_.shade(engines_, *group[0], ctx);
    } else {
      s = shade_gathered(group);
    }
    launches_.fetch_add(1, std::memory_order_relaxed);
    chunks_.fetch_add(group.size(), std::memory_order_relaxed);
    for (Chunk* c : group) {
      c->error = s;
      c->done.store(true, std::memory_order_release);
    }
  }
}

Status OffloadMaster::shade_gathered(const std::vector<Chunk*>& group) {
  ExecContext ctx;
  const size_t L = max_launch_;
  if (app_.has_acl()) {
    const unsigned words = classify::key_words(app_.acl_layout());
    auto* g              = reinterpret_cast<uint32_t*>(acl_words_.data());
    uint32_t total       = 0;
    for (Chunk* c : group) {
      for (unsigned w = 0; w < words; ++w)
        std::memcpy(g + w * L + total, c->acl_words.data() + size_t(w) * c->capacity,
                    size_t(c->acl_count) * 4);
      total += c->acl_count;
    }
    auto* match = reinterpret_cast<uint32_t*>(acl_match_.data());
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
    auto* d4    = reinterpret_cast<uint32_t*>(dst4_.data());
    auto* n4    = reinterpret_cast<lookup::NextHop*>(nh4_.data());
    auto* d6    = reinterpret_cast<lookup::Ip6*>(dst6_.data());
    auto* n6    = reinterpret_cast<lookup::NextHop*>(nh6_.data());
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
