// src/runtime/frame_window.hpp
//
// How many frames a worker needs to keep its offload busy: its rate times the offload's round
// trip (Little's law), in frames. A worker that offloads closes a frame every `interval` (full
// at its batch size, or at the delay bound when traffic is light) and gets it back a round trip
// after the master took it into a launch (Frame::staged_ns; the wait in the submit ring before
// that is queueing at a busy master, which more frames would only lengthen), so about
// round_trip / interval frames are at the master at once, plus the one filling and the one
// being finished. Fewer, and the worker stops receiving until a
// frame comes back (the NIC ring fills, then drops); more is memory and, under overload,
// queueing delay. PacketShader and NBA fix this number (NBA: 64 offload tasks in flight);
// warpath measures both terms as it runs and grows the worker's frames to what they need,
// up to the cap its memory was sized for (pipeline.cpp: frames_in_flight).
//
// Both estimates are moving averages (1/8 of the way to each new sample). The interval is
// sampled per window of kWindowNs (its length over the frames closed in it), not per frame: a
// worker refilling its frames after a launch returned many at once closes them back to back,
// and such a burst, read as its rate, would ask for frames it cannot use (frames are never
// given back). The round trip is sampled per frame; one slow launch is one sample of eight.
// The jitter left is covered by a quarter more frames at the master than the averages ask for:
// a worker that its frames hold back (it runs at frames / round trip) asks for a quarter more
// than it has, until they no longer do. Plain integer arithmetic, no clock of its own.
#pragma once
#include <algorithm>
#include <cstdint>

namespace warpath::runtime {

class FrameWindow {
 public:
  /// Intervals longer than this (an idle link) count as this long: the frames they ask for are
  /// the minimum anyway, and one quiet second should not take long to forget.
  static constexpr uint64_t kMaxIntervalNs = 10'000'000;
  /// Round trips longer than this (a stalled device) count as this long.
  static constexpr uint64_t kMaxRoundTripNs = 10'000'000'000;
  /// The interval's sampling window.
  static constexpr uint64_t kWindowNs = 2'000'000;

  explicit FrameWindow(uint32_t cap) noexcept : cap_(std::max(cap, 2u)) {}

  /// A frame closed at `now_ns` (the worker's clock).
  void on_close(uint64_t now_ns) noexcept {
    if (!window_ns_ || now_ns < window_ns_) {  // the first close (or a clock gone back)
      window_ns_ = now_ns, closes_ = 0;
      return;
    }
    ++closes_;
    if (now_ns - window_ns_ < kWindowNs) return;
    interval_ns_ = average(interval_ns_, std::min((now_ns - window_ns_) / closes_, kMaxIntervalNs));
    window_ns_ = now_ns, closes_ = 0;
  }
  /// An offloaded frame's launch took `ns` (worker.cpp: from the master taking it to its
  /// completion).
  void on_round_trip(uint64_t ns) noexcept {
    round_trip_ns_ = average(round_trip_ns_, std::min(ns, kMaxRoundTripNs));
    ++samples_;
  }
  /// Frames that keep the offload busy: 1.25 x round trip / interval at the master (rounded
  /// up), one filling and one being finished; 2 until both are measured. Not capped (what a
  /// report shows: above the cap, the cap bounds the worker's rate).
  uint32_t wanted() const noexcept {
    if (!round_trip_ns_ || !interval_ns_) return 2;
    const uint64_t at_master = (round_trip_ns_ * 5 + interval_ns_ * 4 - 1) / (interval_ns_ * 4);
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
  // The first sample as it is, then 1/8 of the way to each new one.
  static uint64_t average(uint64_t avg, uint64_t sample) noexcept {
    if (!avg) return sample;
    return sample >= avg ? avg + (sample - avg) / 8 : avg - (avg - sample) / 8;
  }
  uint32_t cap_;
  uint64_t window_ns_ = 0, closes_ = 0;  ///< the interval's window: its start, closes since
  uint64_t interval_ns_ = 0, round_trip_ns_ = 0, samples_ = 0;
};

}  // namespace warpath::runtime
