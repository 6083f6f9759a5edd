// ReadGuard: threads that come and go give their slots back, so a program that reads from
// many short-lived threads never ends with shared slots; and synchronize() waits for a section
// in progress and no longer.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "warpath/core/read_guard.hpp"

namespace warpath {
namespace {

TEST(ReadGuard, ShortLivedThreadsGiveTheirSlotsBack) {
  ReadGuard g;
  for (int round = 0; round < 3 * int(ReadGuard::kSlots); ++round) {
    std::thread t([&] { ReadGuard::Section s(g); });
    t.join();
  }
  // A few at once, repeatedly: still within the slots.
  for (int round = 0; round < 20; ++round) {
    std::vector<std::thread> ts;
    for (int k = 0; k < 8; ++k) ts.emplace_back([&] { ReadGuard::Section s(g); });
    for (auto& t : ts) t.join();
  }
  EXPECT_EQ(g.shared_slots(), 0u);
  g.synchronize();  // nothing inside: returns
}

TEST(ReadGuard, SynchronizeWaitsForASectionInProgress) {
  ReadGuard g;
  std::atomic<int> stage{0};
  std::thread reader([&] {
    ReadGuard::Section s(g);
    stage = 1;
    while (stage.load() != 2) std::this_thread::yield();
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    stage = 3;
  });
  while (stage.load() != 1) std::this_thread::yield();
  stage = 2;
  g.synchronize();
  EXPECT_EQ(stage.load(), 3) << "synchronize returned while a section that began before it ran";
  reader.join();
}

}  // namespace
}  // namespace warpath
