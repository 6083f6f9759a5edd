// tests/runtime/frame_window_test.cpp: a worker's frames sized from its rate and the offload's
// round trip (src/runtime/frame_window.hpp): the arithmetic, the cap, the averages and the
// interval's windows.
#include "runtime/frame_window.hpp"

#include <gtest/gtest.h>

namespace warpath::runtime {
namespace {

constexpr uint64_t kWindow = FrameWindow::kWindowNs;

// A frame closed every `interval` ns from `t`, for `span` ns; returns the last close's time.
uint64_t close_every(FrameWindow& w, uint64_t t, uint64_t interval, uint64_t span) {
  for (const uint64_t end = t + span; t + interval <= end;) w.on_close(t += interval);
  return t;
}

TEST(FrameWindow, WithoutMeasurementsTwoFramesAreNeeded) {
  FrameWindow w(64);
  EXPECT_EQ(w.needed(), 2u);
  w.on_close(1000);
  w.on_close(2000);  // closes inside the first window give no interval yet
  EXPECT_EQ(w.interval_ns(), 0u);
  EXPECT_EQ(w.needed(), 2u);
  w.on_round_trip(200'000);
  EXPECT_EQ(w.needed(), 2u) << "a round trip without a rate";
  EXPECT_FALSE(w.capped());
}

TEST(FrameWindow, NeedsAQuarterMoreThanTheRoundTripInFramesPlusTheFillingAndTheFinishing) {
  FrameWindow w(64);
  close_every(w, 1'000'000, 10'000, 3 * kWindow);  // a frame every 10 us
  EXPECT_EQ(w.interval_ns(), 10'000u);
  w.on_round_trip(160'000);  // 160 us: 16 frames at the master, 20 with the quarter
  EXPECT_EQ(w.needed(), 22u);
  FrameWindow v(64);
  close_every(v, 1'000'000, 10'000, 3 * kWindow);
  v.on_round_trip(160'001);  // a part of a frame is a whole frame
  EXPECT_EQ(v.needed(), 23u);
  EXPECT_EQ(v.samples(), 1u);
  EXPECT_FALSE(v.capped());
}

TEST(FrameWindow, TheCapBoundsWhatIsNeededAndSaysSo) {
  FrameWindow w(8);
  close_every(w, 1, 1'000, 2 * kWindow);
  w.on_round_trip(1'000'000);  // 1,000 frames' worth
  EXPECT_EQ(w.needed(), 8u);
  EXPECT_EQ(w.wanted(), 1'252u) << "what a report shows";
  EXPECT_TRUE(w.capped());
  EXPECT_EQ(FrameWindow(0).cap(), 2u) << "at least the frame filling and one in flight";
}

TEST(FrameWindow, TheRoundTripIsAMovingAverageOfAnEighth) {
  FrameWindow w(1024);
  w.on_round_trip(100'000);
  EXPECT_EQ(w.round_trip_ns(), 100'000u) << "the first as it is";
  w.on_round_trip(900'000);
  EXPECT_EQ(w.round_trip_ns(), 200'000u) << "one slow launch moves it an eighth of the way";
  w.on_round_trip(40'000);
  EXPECT_EQ(w.round_trip_ns(), 180'000u);
  for (int k = 0; k < 100; ++k) w.on_round_trip(100'000);
  EXPECT_LT(w.round_trip_ns(), 100'010u) << "and it gets there";
  w.on_round_trip(~uint64_t(0));
  EXPECT_LE(w.round_trip_ns(), FrameWindow::kMaxRoundTripNs) << "a stalled device is bounded";
}

TEST(FrameWindow, TheIntervalIsAWindowsLengthOverItsFramesNotOneGap) {
  FrameWindow w(1024);
  uint64_t t = 1;
  w.on_close(t);                                         // the first window begins
  for (int k = 0; k < 250; ++k) w.on_close(t += 8'000);  // 250 frames in 2 ms: one sample
  EXPECT_EQ(w.interval_ns(), 8'000u);
  // A refill: 200 frames closed back to back (100 ns apart), then the worker waits for its
  // launches (the next close ends the window 2 ms after it began): the window's average, not
  // the burst's gaps, is the sample.
  const uint64_t begun = t;
  for (int k = 0; k < 200; ++k) w.on_close(t += 100);
  EXPECT_EQ(w.interval_ns(), 8'000u) << "no sample inside a window";
  w.on_close(begun + kWindow);
  EXPECT_EQ(w.interval_ns(), 8'000u + (kWindow / 201u - 8'000u) / 8u);
  EXPECT_GT(w.interval_ns(), 8'000u) << "a burst of frames is not a rate";
  // An idle link counts as kMaxIntervalNs, not as the whole pause.
  FrameWindow idle(1024);
  t = 1;
  idle.on_close(t);
  for (int k = 0; k < 2000; ++k) idle.on_close(t += 1'000);
  EXPECT_EQ(idle.interval_ns(), 1'000u);
  idle.on_close(t + 60'000'000'000ull);
  EXPECT_EQ(idle.interval_ns(), 1'000u + (FrameWindow::kMaxIntervalNs - 1'000u) / 8u);
  // A clock that goes back restarts the window and gives no sample.
  const uint64_t before = idle.interval_ns();
  idle.on_close(5);
  EXPECT_EQ(idle.interval_ns(), before);
  idle.on_close(5 + kWindow);
  EXPECT_EQ(idle.interval_ns(), before + (kWindow - before) / 8u) << "one window: one sample";
}

}  // namespace
}  // namespace warpath::runtime
