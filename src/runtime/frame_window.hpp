// src/runtime/frame_window.hpp
//
// How many frames a worker needs to keep its offload busy: its rate times the offload's round
// trip (Little's law), in frames. A worker that offloads closes a frame every `interval` (full
// at its batch size, or at the delay bound when traffic is light) and gets it back a round trip
// after submitting it, so about round_trip / interval frames are at the master at once, plus
// the one filling and the one being finished. Fewer, and the worker stops receiving until a
// frame comes back (the NIC ring fills, then drops); more is memory and, under overload,
// queueing delay. PacketShader and NBA fix this number (NBA: 64 offload tasks in flight);
// warpath measures both terms as it runs and grows the worker's frames to what they need,
// up to the cap its memory was sized for (pipeline.cpp: frames_in_flight).
//
// Both estimates lean the safe way: the round trip rises at once to a longer sample and decays
// slowly (1/16 a sample) after; the interval falls at once halfway to a shorter one and rises
// slowly. One sample a frame; plain integer arithmetic, no clock of its own.
#pragma once
#include <algorithm>
#include <cstdint>

namespace warpath::runtime {

class FrameWindow {
 public:
  /// Intervals longer than this (an idle link) count as this long: the frames they ask for are
  /// the minimum anyway, and one quiet second should not take long to forget.
  static constexpr uint64_t kMaxIntervalNs = 10'000'000;

  explicit FrameWindow(uint32_t cap) noexcept : cap_(std::max(cap, 2u)) {}

  /// A frame closed at `now_ns` (the worker's clock).
  void on_close(uint64_t now_ns) noexcept {
    if (last_close_ns_ && now_ns > last_close_ns_) {
      const uint64_t s = std::min(now_ns - last_close_ns_, kMaxIntervalNs);
      interval_ns_     = !interval_ns_      ? s
                         : s < interval_ns_ ? interval_ns_ - (interval_ns_ - s) / 2
                                            : interval_ns_ + (s - interval_ns_) / 16;
    }
    last_close_ns_ = now_ns;
  }
  /// An offloaded frame came back `ns` after it was submitted.
  void on_round_trip(uint64_t ns) noexcept {
    round_trip_ns_ = ns >= round_trip_ns_ ? ns : round_trip_ns_ - (round_trip_ns_ - ns) / 16;
    ++samples_;
  }
  /// Frames that keep the offload busy: ceil(round trip / interval) at the master, one
  /// filling and one being finished; 2 until both are measured. Not capped (what a report
  /// shows: above the cap, the cap bounds the worker's rate).
  uint32_t wanted() const noexcept {
    if (!round_trip_ns_ || !interval_ns_) return 2;
    const uint64_t at_master = (round_trip_ns_ + interval_ns_ - 1) / interval_ns_;
    return uint32_t(std::min<uint64_t>(at_master + 2, UINT32_MAX));
  }
  /// wanted(), at most the cap: the frames the worker grows to.
  uint32_t needed() const noexcept { return std::min(wanted(), cap_); }
  /// Whether the cap, not the measurements, decides needed().
  bool capped() const noexcept { return wanted() > cap_; }
  uint64_t round_trip_ns() const noexcept { return round_trip_ns_; }
  uint64_t interval_ns() const noexcept { return interval_ns_; }
  uint64_t samples() const noexcept { return samples_; }
  uint32_t cap() const noexcept { return cap_; }

 private:
  uint32_t cap_;
  uint64_t last_close_ns_ = 0, interval_ns_ = 0, round_trip_ns_ = 0, samples_ = 0;
};

}  // namespace warpath::runtime
