// ReadGuard: threads that come and go give their slots back, so a program that reads from
// many short-lived threads never ends with shared slots; synchronize() waits for a section in
// progress and no longer; and holds (a deferred GPU call's) that end in any order are each
// waited for, while holds begun after a writer started never keep it waiting.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <memory>
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

// A writer's synchronize() on a thread of its own; `done` set when it returned.
std::thread writer_of(const ReadGuard& g, std::atomic<bool>& done) {
  done = false;
  return std::thread([&g, &done] {
    g.synchronize();
    done = true;
  });
}

// Whether the writer is still waiting after a while.
bool still_waiting(const std::atomic<bool>& done) {
  std::this_thread::sleep_for(std::chrono::milliseconds(30));
  return !done.load();
}

// Two holds begun on one thread end in the other order (a later launch finished first): the
// writer waits for the earlier one too, which a slot's entered/exited counts would not.
TEST(ReadGuard, HoldsEndingInAnyOrderAreEachWaitedFor) {
  ReadGuard g;
  auto first  = g.hold();
  auto second = g.hold();
  std::atomic<bool> done{false};
  std::thread writer = writer_of(g, done);
  EXPECT_TRUE(still_waiting(done));
  second.reset();
  EXPECT_TRUE(still_waiting(done)) << "returned while the first hold was still held";
  {
    ReadGuard::Section s(g);  // a section on this thread meanwhile changes nothing
  }
  EXPECT_TRUE(still_waiting(done));
  first.reset();
  writer.join();
  EXPECT_TRUE(done.load());
}

// A hold begun while a writer waits counts in the new phase: the writer returns once the holds
// begun before it ended, though new ones are still held (no writer starvation under load).
TEST(ReadGuard, HoldsBegunAfterAWriterStartedDoNotKeepItWaiting) {
  ReadGuard g;
  auto before = g.hold();
  std::atomic<bool> done{false};
  std::thread writer = writer_of(g, done);
  EXPECT_TRUE(still_waiting(done));
  std::vector<std::shared_ptr<void>> after;
  for (int k = 0; k < 4; ++k) after.push_back(g.hold());
  before.reset();
  writer.join();
  EXPECT_TRUE(done.load());
  // The next writer waits for those.
  std::thread next = writer_of(g, done);
  EXPECT_TRUE(still_waiting(done));
  after.clear();
  next.join();
  EXPECT_TRUE(done.load());
  g.synchronize();  // nothing held: returns
}

}  // namespace
}  // namespace warpath
