// src/runtime/offload_policy.hpp
//
// Which chunks a worker sends to the offload master (PacketShader section 5.4, opportunistic
// offloading). Per worker, no locks.
//
//   cpu   never;  gpu   always.
//   auto  a share s of chunks (0..1) is offloaded, spread evenly (credit counter). Every window
//         (~20 ms) the policy computes how busy the worker was (u = 1 - the time its polling
//         loop found nothing to do, over the window's wall time) and the packets that arrived.
//         What a chunk costs the worker is measured on each path (on_done: the worker's own
//         time for the chunk, from its pre stage to its last send, ns a packet; not the time
//         it waited for the master): c_cpu where it was shaded on the CPU, c_off where it was
//         offloaded. Each offloaded packet saves the worker d = c_cpu - c_off. Inside the band
//         0.6 <= u <= 0.9 nothing changes (hysteresis). Above it the share rises to what the
//         measured costs say brings u back to 0.75,
//           s = (busy_per_packet_all_on_cpu - 0.75 / arrival_rate) / d,
//         the busy time a packet being the window's own plus d for each packet it offloaded
//         (a moving average over windows would still carry the last share's cost after the
//         share moved, and overshoot), and at least by 0.1, since an overloaded worker's
//         arrival rate is its service rate (the excess is lost at the RX queue, unseen). Below
//         the band it falls by 0.1 (or to the model's value, if lower), so light load returns
//         to the CPU's low latency. Until both paths have been measured, d is the CPU shade's
//         cost (what offloading would save if the offloaded path cost the worker nothing
//         more). Once they are (8 chunks each, after 4 unmeasured ones), a GPU path that saves
//         the worker less than 5% of c_cpu is declined: the share goes to 0, since offloading
//         cannot raise this worker's rate and costs latency; under overload it is tried again
//         every second (a step of share until 8 offloaded chunks have measured c_off anew), in
//         case the traffic or the device changed.
#pragma once
#include <algorithm>
#include <cstdint>

#include "warpath/runtime/run_config.hpp"

namespace warpath::runtime {

class OffloadPolicy {
 public:
  static constexpr uint64_t kWindowNs = 20'000'000;
  static constexpr double kHigh = 0.9, kLow = 0.6, kTarget = 0.75, kStep = 0.1;
  /// Least saving per offloaded packet, as a share of c_cpu, for the GPU path to be taken.
  static constexpr double kMinSaving = 0.05;
  /// Overloaded windows between two tries of a declined GPU path (1 s).
  static constexpr uint32_t kRetryWindows = 50;
  /// Chunks on each path before the two are compared: the first kWarmup are not measured (the
  /// first offloaded chunks pay for cold caches, a device's first launches), then kMinSamples.
  static constexpr uint32_t kWarmup = 4, kMinSamples = 8;

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
  /// Does on_done() matter (auto with an offload master)? The worker times chunks only then.
  bool wants_costs() const noexcept { return mode_ == Offload::kAuto && avail_; }
  /// Bookkeeping per chunk: packets received and, for chunks shaded on the CPU, the shade
  /// stage's time.
  void on_chunk(uint32_t packets, bool on_cpu, uint64_t shade_ns) noexcept {
    win_packets_ += packets;
    if (!on_cpu) win_offloaded_ += packets;
    if (on_cpu && packets) shade_cost_ = ema(shade_cost_, double(shade_ns) / packets, 0.2);
  }
  /// A chunk finished: the worker's own time for it (pre stage to its last send, without
  /// waiting for the master) and which path it took.
  void on_done(uint32_t packets, bool offloaded, uint64_t worker_ns) noexcept {
    if (!packets) return;
    uint32_t& seen = offloaded ? off_samples_ : cpu_samples_;
    if (++seen <= kWarmup) return;
    double& c = offloaded ? cost_off_ : cost_cpu_;
    c         = seen == kWarmup + 1 ? double(worker_ns) / packets
                                    : ema(c, double(worker_ns) / packets, 0.2);
  }
  /// Time a loop iteration found no work.
  void on_idle(uint64_t ns) noexcept { win_idle_ += ns; }
  /// Called with the current time; closes a window when it is due (then true).
  bool tick(uint64_t now_ns) noexcept {
    if (win_start_ == 0) win_start_ = now_ns;
    const uint64_t span = now_ns - win_start_;
    if (span < kWindowNs) return false;
    const uint64_t busy = span > win_idle_ ? span - win_idle_ : 0;
    const double u      = double(busy) / double(span);
    const double rate   = double(win_packets_) * 1e9 / double(span);  // packets per second
    if (mode_ == Offload::kAuto && avail_) decide(u, rate, busy);
    win_start_     = now_ns;
    win_idle_      = 0;
    win_packets_   = 0;
    win_offloaded_ = 0;
    return true;
  }
  double share() const noexcept { return share_; }
  /// The measured worker costs of the two paths, ns a packet (0: not measured yet).
  double cost_cpu() const noexcept { return cost_cpu_; }
  double cost_offload() const noexcept { return cost_off_; }
  /// The GPU path was found no cheaper for the worker, and is not being used.
  bool declined() const noexcept { return declined_; }

 private:
  static double ema(double old, double x, double w) noexcept {
    return old == 0 ? x : (1 - w) * old + w * x;
  }
  // Both paths measured: kMinSamples chunks each after their warm-up.
  bool measured() const noexcept {
    return cpu_samples_ >= kWarmup + kMinSamples && off_samples_ >= kWarmup + kMinSamples;
  }
  // What one offloaded packet saves the worker, ns (see the file's comment).
  double saving() const noexcept {
    if (measured()) return cost_cpu_ - cost_off_;
    return shade_cost_;
  }
  void decide(double u, double rate, uint64_t busy) noexcept {
    if (declined_ && share_ > 0 && !measured()) return;  // a retry still measuring c_off
    const double d = saving();
    if (measured() && d < kMinSaving * cost_cpu_) {
      // The GPU path does not pay for this worker: stay on the CPU, try again later.
      if (!declined_) retry_in_ = kRetryWindows;
      declined_ = true;
      share_    = 0;
      if (u > kHigh && --retry_in_ == 0) {
        share_       = kStep;  // offloaded chunks again, until kMinSamples measure c_off anew
        off_samples_ = 0;
        retry_in_    = kRetryWindows;
      }
      return;
    }
    declined_    = false;
    double model = share_;
    if (win_packets_ && d > 0) {
      // This window's busy time a packet, as it would be with every chunk on the CPU (its own
      // window's, not an average over windows: after the share moves, an average would still
      // carry the old share's cost and overshoot).
      const double offloaded = double(win_offloaded_) / double(win_packets_);
      const double full_busy = double(busy) / double(win_packets_) + offloaded * d;
      model                  = (full_busy - kTarget * 1e9 / rate) / d;
    }
    if (u > kHigh)
      share_ = std::max(model, share_ + kStep);
    else if (u < kLow)
      share_ = std::min(model, share_ - kStep);
    share_ = std::clamp(share_, 0.0, 1.0);
  }

  Offload mode_;
  bool avail_;
  bool declined_     = false;
  uint32_t retry_in_ = 0, cpu_samples_ = 0, off_samples_ = 0;
  double share_ = 0, credit_ = 0, shade_cost_ = 0, cost_cpu_ = 0, cost_off_ = 0;
  uint64_t win_start_ = 0, win_idle_ = 0, win_packets_ = 0, win_offloaded_ = 0;
};

}  // namespace warpath::runtime
