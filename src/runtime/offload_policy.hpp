// src/runtime/offload_policy.hpp
//
// Which chunks a worker sends to the offload master (PacketShader section 5.4, opportunistic
// offloading). Per worker, no locks.
//
//   cpu   never;  gpu   always.
//   auto  a share s of chunks (0..1) is offloaded, spread evenly (credit counter). Every window
//         (~20 ms) the policy computes how busy the worker was (u = 1 - the time its polling
//         loop found nothing to do, over the window's wall time), the packets that arrived, and
//         what shading cost per packet on the CPU. Inside the band 0.6 <= u <= 0.9 nothing changes
//         (hysteresis). Above it the share rises to what the measured costs say brings u back to
//         0.75:
//           s = (busy_per_packet - 0.75 / arrival_rate) / shade_cost_per_packet
//         and at least by 0.1, since an overloaded worker's arrival rate is its service rate
//         (the excess is lost at the RX queue, unseen). Below the band it falls by 0.1 (or to
//         the model's value, if lower), so light load returns to the CPU's low latency.
#pragma once
#include <algorithm>
#include <cstdint>

#include "warpath/runtime/run_config.hpp"

namespace warpath::runtime {

class OffloadPolicy {
 public:
  static constexpr uint64_t kWindowNs = 20'000'000;
  static constexpr double kHigh = 0.9, kLow = 0.6, kTarget = 0.75, kStep = 0.1;

  OffloadPolicy(Offload mode, bool offload_available) : mode_(mode), avail_(offload_available) {
    share_ = mode == Offload::kGpu && avail_ ? 1.0 : 0.0;
  }
  /// Should the next chunk go to the master?
  bool offload_next() noexcept {
    if (!avail_ || mode_ == Offload::kCpu) return false;
    if (mode_ == Offload::kGpu) return true;
    credit_ += share_;
    if (credit_ >= 1.0) {
      credit_ -= 1.0;
      return true;
    }
    return false;
  }
  /// Bookkeeping per chunk: packets received and, for chunks shaded on the CPU, the shade
  /// stage's time.
  void on_chunk(uint32_t packets, bool on_cpu, uint64_t shade_ns) noexcept {
    win_packets_ += packets;
    if (on_cpu && packets) {
      const double c = double(shade_ns) / packets;
      shade_cost_    = shade_cost_ == 0 ? c : 0.8 * shade_cost_ + 0.2 * c;
    }
  }
  /// Time a loop iteration found no work.
  void on_idle(uint64_t ns) noexcept { win_idle_ += ns; }
  /// Called with the current time; closes a window when it is due.
  void tick(uint64_t now_ns) noexcept {
    if (win_start_ == 0) win_start_ = now_ns;
    const uint64_t span = now_ns - win_start_;
    if (span < kWindowNs) return;
    const uint64_t busy = span > win_idle_ ? span - win_idle_ : 0;
    const double u      = double(busy) / double(span);
    const double rate   = double(win_packets_) * 1e9 / double(span);  // packets per second
    if (win_packets_) {
      const double b = double(busy) / double(win_packets_);
      busy_cost_     = busy_cost_ == 0 ? b : 0.7 * busy_cost_ + 0.3 * b;
    }
    if (mode_ == Offload::kAuto && avail_) {
      double model = share_;
      if (rate > 0 && shade_cost_ > 0) {
        const double full_busy = busy_cost_ + share_ * shade_cost_;  // per packet, all on CPU
        model                  = (full_busy - kTarget * 1e9 / rate) / shade_cost_;
      }
      if (u > kHigh)
        share_ = std::max(model, share_ + kStep);
      else if (u < kLow)
        share_ = std::min(model, share_ - kStep);
      share_ = std::clamp(share_, 0.0, 1.0);
    }
    win_start_   = now_ns;
    win_idle_    = 0;
    win_packets_ = 0;
  }
  double share() const noexcept { return share_; }

 private:
  Offload mode_;
  bool avail_;
  double share_ = 0, credit_ = 0, shade_cost_ = 0, busy_cost_ = 0;
  uint64_t win_start_ = 0, win_idle_ = 0, win_packets_ = 0;
};

}  // namespace warpath::runtime
