// tests/runtime/frame_window_test.cpp: a worker's frames sized from its rate and the offload's
// round trip (src/runtime/frame_window.hpp): the arithmetic, the cap, and which way each
// estimate leans.
#include "runtime/frame_window.hpp"

#include <gtest/gtest.h>

namespace warpath::runtime {
namespace {

// A frame closed every `interval` ns, `count` times from `t`; returns the last close's time.
uint64_t close_every(FrameWindow& w, uint64_t t, uint64_t interval, int count) {
  for (int k = 0; k < count; ++k) w.on_close(t += interval);
  return t;
}

TEST(FrameWindow, WithoutMeasurementsTwoFramesAreNeeded) {
  FrameWindow w(64);
  EXPECT_EQ(w.needed(), 2u);
  w.on_close(1000);  // one close gives no interval yet
  EXPECT_EQ(w.interval_ns(), 0u);
  EXPECT_EQ(w.needed(), 2u);
  w.on_round_trip(200'000);
  EXPECT_EQ(w.needed(), 2u) << "a round trip without a rate";
  EXPECT_FALSE(w.capped());
}

TEST(FrameWindow, NeedsTheRoundTripInFramesPlusTheOneFillingAndTheOneFinishing) {
  FrameWindow w(64);
  close_every(w, 1'000'000, 10'000, 5);  // a frame every 10 us
  EXPECT_EQ(w.interval_ns(), 10'000u);
  w.on_round_trip(200'000);  // 200 us: 20 frames at the master
  EXPECT_EQ(w.needed(), 22u);
  w.on_round_trip(200'001);  // a part of a frame is a whole frame
  EXPECT_EQ(w.needed(), 23u);
  EXPECT_EQ(w.samples(), 2u);
  EXPECT_FALSE(w.capped());
}

TEST(FrameWindow, TheCapBoundsWhatIsNeededAndSaysSo) {
  FrameWindow w(8);
  close_every(w, 0, 1'000, 3);
  w.on_round_trip(1'000'000);  // 1,000 frames' worth
  EXPECT_EQ(w.needed(), 8u);
  EXPECT_EQ(w.wanted(), 1'002u) << "what a report shows";
  EXPECT_TRUE(w.capped());
  EXPECT_EQ(FrameWindow(0).cap(), 2u) << "at least the frame filling and one in flight";
}

TEST(FrameWindow, ALongerRoundTripCountsAtOnceAndAShorterOneSlowly) {
  FrameWindow w(1024);
  w.on_round_trip(100'000);
  w.on_round_trip(1'000'000);
  EXPECT_EQ(w.round_trip_ns(), 1'000'000u) << "rises at once";
  w.on_round_trip(100'000);
  EXPECT_EQ(w.round_trip_ns(), 1'000'000u - 900'000u / 16) << "falls a sixteenth of the way";
  for (int k = 0; k < 200; ++k) w.on_round_trip(100'000);
  EXPECT_LT(w.round_trip_ns(), 101'000u) << "and gets there";
}

TEST(FrameWindow, AShorterIntervalCountsHalfwayAtOnceAndALongerOneSlowly) {
  FrameWindow w(1024);
  uint64_t t = close_every(w, 0, 16'000, 2);
  EXPECT_EQ(w.interval_ns(), 16'000u);
  t = close_every(w, t, 4'000, 1);
  EXPECT_EQ(w.interval_ns(), 10'000u) << "halfway down at once";
  t = close_every(w, t, 26'000, 1);
  EXPECT_EQ(w.interval_ns(), 11'000u) << "a sixteenth of the way up";
  // An idle link counts as kMaxIntervalNs, not as the whole pause.
  FrameWindow idle(1024);
  t = close_every(idle, 0, 1'000, 2);
  idle.on_close(t + 60'000'000'000ull);
  EXPECT_EQ(idle.interval_ns(), 1'000u + (FrameWindow::kMaxIntervalNs - 1'000u) / 16);
  // A clock that does not advance gives no sample.
  const uint64_t before = idle.interval_ns();
  idle.on_close(5);
  idle.on_close(5);
  EXPECT_EQ(idle.interval_ns(), before);
}

}  // namespace
}  // namespace warpath::runtime
