// cuda.stream's schedule (src/stream/slot_reassembler.hpp, core/slot_chain.hpp) on the host:
// flows in fixed slots run as per-flow chains over batches, flows that outgrow their slot or
// find none on the host's stores, batches near memcap in arrival order. At every batch size the
// chunks (in order) and the counters equal ref.stream's, and each of those paths is taken.
#include <gtest/gtest.h>

#include <algorithm>
#include <random>
#include <set>
#include <string>
#include <vector>

#include "core/ranges/range_store.hpp"
#include "stream/slot_reassembler.hpp"
#include "stream/store_reassembler.hpp"
#include "warpath/stream/generate.hpp"

namespace warpath::stream {
namespace {

struct Got {
  uint64_t flow;
  uint8_t dir;
  bool gap;
  uint64_t offset;
  uint32_t len;
  std::string bytes;
  bool operator==(const Got&) const = default;
};

ChunkSink into(std::vector<Got>& out) {
  return [&out](const Chunk& c) {
    out.push_back(
        {c.flow, c.dir, c.gap, c.offset, c.len,
         c.gap ? std::string() : std::string(reinterpret_cast<const char*>(c.data), c.len)});
  };
}

// Runs `g` through emu.stream's schedule (`slots` slots) in batches of `batch` and through
// ref.stream one segment at a time; expects the same chunks and counters.
detail::SlotStats same_as_ref(const GeneratedStreams& g, uint32_t flows, const StreamConfig& c,
                              uint32_t batch, uint32_t slots) {
  detail::SlotReassembler emu("emu.stream", c, detail::make_host_slots(slots));
  auto ref = make_reassembler("ref.stream", c);
  EXPECT_TRUE(ref.is_ok());
  std::vector<Got> got, want;
  EXPECT_TRUE(emu.segments(nullptr, 0, into(got)).is_ok());  // an empty batch
  for (size_t at = 0; at < g.segments.size();) {
    const uint32_t n = uint32_t(std::min<size_t>(batch, g.segments.size() - at));
    EXPECT_TRUE(emu.segments(g.segments.data() + at, n, into(got)).is_ok());
    for (uint32_t i = 0; i < n; ++i)
      EXPECT_TRUE((*ref)->segment(g.segments[at + i], into(want)).is_ok());
    at += n;
    EXPECT_EQ(emu.counters(), (*ref)->counters()) << "after segment " << at;
  }
  for (uint64_t f = 1; f <= flows / 4; ++f) {  // some closed one by one, the rest at the end
    EXPECT_TRUE(emu.close(f, into(got)).is_ok());
    EXPECT_TRUE((*ref)->close(f, into(want)).is_ok());
  }
  // Some at once: one named twice, one with no state (both closed once, as by close()).
  std::vector<uint64_t> ids;
  for (uint64_t f = flows / 4 + 1; f <= flows / 2; ++f) ids.push_back(f);
  ids.push_back(flows / 2);
  ids.push_back(1u << 30);
  EXPECT_TRUE(emu.close_many(ids.data(), uint32_t(ids.size()), into(got)).is_ok());
  for (uint64_t f : ids) EXPECT_TRUE((*ref)->close(f, into(want)).is_ok());
  EXPECT_TRUE(emu.close_all(into(got)).is_ok());
  EXPECT_TRUE((*ref)->close_all(into(want)).is_ok());
  EXPECT_EQ(got.size(), want.size());
  for (size_t i = 0; i < std::min(got.size(), want.size()); ++i)
    if (!(got[i] == want[i])) {
      ADD_FAILURE() << "chunk " << i << ": flow " << got[i].flow << " dir " << int(got[i].dir)
                    << " at " << got[i].offset << " len " << got[i].len << ", ref.stream flow "
                    << want[i].flow << " dir " << int(want[i].dir) << " at " << want[i].offset
                    << " len " << want[i].len;
      break;
    }
  EXPECT_EQ(emu.counters(), (*ref)->counters());
  EXPECT_EQ(emu.flows(), 0u);
  return emu.stats();
}

TEST(SlotStream, EveryBatchSizeGivesRefStreamsChunksAndCounters) {
  detail::SlotStats total;
  for (uint32_t batch : {1u, 2u, 31u, 32u, 33u, 64u, 1000u, ~0u})
    for (Policy policy : {Policy::kBsd, Policy::kLinux, Policy::kFirst})
      for (Mode mode : {Mode::kIds, Mode::kInline}) {
        SCOPED_TRACE(std::to_string(batch) + " " + policy_name(policy));
        StreamGenParams p;
        p.seed                   = batch * 7 + uint32_t(policy);
        p.flows                  = 12;     // more than the 8 slots: some flows start on the host
        p.bytes                  = 30000;  // more than a slot's 8 KiB: some flows outgrow theirs
        p.max_segment            = 1400;
        p.reorder_percent        = 20;
        p.duplicate_percent      = 10;
        p.overlap_percent        = 20;
        p.conflict_percent       = 5;
        p.loss_percent           = 2;
        const GeneratedStreams g = generate_streams(p);
        StreamConfig c;
        c.policy                  = policy;
        c.mode                    = mode;
        c.depth                   = batch % 2 ? 0 : 20000;
        const detail::SlotStats s = same_as_ref(g, p.flows, c, batch, 8);
        total.chains += s.chains;
        total.moved += s.moved;
        total.host_flows += s.host_flows;
      }
  EXPECT_GT(total.chains, 0u);
  EXPECT_GT(total.moved, 0u);
  EXPECT_GT(total.host_flows, 0u);
}

TEST(SlotStream, SmallFlowsStayInTheirSlots) {
  StreamGenParams p;
  p.seed                    = 3;
  p.flows                   = 6;
  p.bytes                   = 600;  // up to a dozen segments in flight: within a slot's 16
  p.max_segment             = 200;
  const GeneratedStreams g  = generate_streams(p);
  const detail::SlotStats s = same_as_ref(g, p.flows, {}, 64, 8);
  EXPECT_EQ(s.moved, 0u);
  EXPECT_EQ(s.host_flows, 0u);
  EXPECT_GT(s.chains, 0u);
}

TEST(SlotStream, BatchesNearMemcapRunInArrivalOrder) {
  StreamGenParams p;
  p.seed                   = 5;
  p.flows                  = 10;
  p.bytes                  = 20000;
  p.reorder_percent        = 30;
  p.loss_percent           = 5;
  const GeneratedStreams g = generate_streams(p);
  StreamConfig c;
  c.stream_cap              = 6000;
  c.memcap                  = 20000;
  const detail::SlotStats s = same_as_ref(g, p.flows, c, 50, 8);
  EXPECT_GT(s.serial_batches, 0u);
}

TEST(SlotStream, ASlotStoreSplitsAndTakesAsTheRangeStore) {
  // Novak's overlaps through one slot: every piece split, bytes compared in the ring.
  core::SlotStore<16, 64> st;
  const auto never    = [](uint64_t, uint64_t) { return false; };
  const auto always   = [](uint64_t, uint64_t) { return true; };
  const std::string a = "AAAAAAAAAA", b = "BBBB";
  EXPECT_EQ(st.insert(60, reinterpret_cast<const uint8_t*>(a.data()), 10, 60, 70, never).added,
            10u);
  EXPECT_TRUE(st.fits(60, 62, 4));
  EXPECT_FALSE(st.fits(60, 120, 8));  // past the ring from base 60
  const ranges::Insert r =
      st.insert(62, reinterpret_cast<const uint8_t*>(b.data()), 4, 62, 66, always);
  EXPECT_TRUE(r.overlap && r.differ);
  EXPECT_EQ(r.added, 0u);
  EXPECT_EQ(st.pieces(), 3u);  // before, new, after
  EXPECT_EQ(st.contiguous_end(60), 70u);
  std::string out(10, '?');
  st.take(60, 70, reinterpret_cast<uint8_t*>(out.data()));
  EXPECT_EQ(out, "AABBBBAAAA");  // across the ring's wrap at 64
  EXPECT_EQ(st.buffered(), 0u);
  EXPECT_EQ(st.first_start(), core::kNever);
}

TEST(SlotStream, ASlotStoreAnswersAsTheRangeStoreOnRandomInserts) {
  // Random overlapping inserts (random winners) and deliveries from the front, while the slot
  // can hold them: the same Insert results, runs, first offsets, buffered bytes and bytes taken.
  std::mt19937_64 rng(7);
  uint64_t inserts = 0, splits = 0;
  for (int round = 0; round < 400; ++round) {
    core::SlotStore<16, 256> slot;
    ranges::RangeStore range;
    uint64_t base = rng() % 1000;
    std::vector<uint8_t> data(64);
    for (int step = 0; step < 60; ++step) {
      const uint64_t at  = base + rng() % 200;
      const uint32_t len = 1 + uint32_t(rng() % 48);
      if (!slot.fits(base, at, len)) continue;
      for (uint8_t& b : data) b = uint8_t('a' + rng() % 3);
      const bool wins        = rng() % 2;
      const auto decide      = [wins](uint64_t, uint64_t) { return wins; };
      const uint32_t had     = slot.pieces();
      const ranges::Insert a = slot.insert(at, data.data(), len, at, at + len, decide);
      const ranges::Insert b = range.insert(at, data.data(), len, at, at + len, decide);
      ++inserts;
      splits += slot.pieces() > had + 1;
      ASSERT_EQ(a.added, b.added) << "round " << round << " step " << step;
      ASSERT_EQ(a.overlap, b.overlap);
      ASSERT_EQ(a.differ, b.differ);
      ASSERT_EQ(slot.buffered(), range.buffered());
      ASSERT_EQ(slot.first_start(), range.first_start());
      ASSERT_EQ(slot.contiguous_end(base), range.contiguous_end(base));
      if (rng() % 3 == 0) {  // deliver the run at the front, as deliver() does
        const uint64_t first = slot.first_start();
        if (first == core::kNever) continue;
        const uint64_t end = slot.contiguous_end(first);
        const uint64_t to  = first + 1 + rng() % (end - first);
        std::string x(to - first, '?'), y(to - first, '?');
        slot.take(first, to, reinterpret_cast<uint8_t*>(x.data()));
        range.take(first, to, reinterpret_cast<uint8_t*>(y.data()));
        ASSERT_EQ(x, y);
        base = to;
      }
    }
  }
  EXPECT_GT(inserts, 4000u);
  EXPECT_GT(splits, 100u);
}

// A device that fails (out of memory, a lost GPU): the call that met it and every later one
// fail with its error, rather than running on slots that were never reset.
class FailingSlots final : public detail::SlotBackend {
 public:
  uint32_t slots() const override { return 4; }
  Status run(const core::Limits&, const detail::SlotBatch&, detail::SlotBatchOut&) override {
    return Status(Errc::kCudaError, "device lost");
  }
  Status read(uint32_t, core::SlotFlow&) override {
    return Status(Errc::kCudaError, "device lost");
  }
};

// The held ends, on the device's ring and in the host's queue (a heap): the smallest first
// whatever the order of arrival (a segment parked ahead must not hide the ones after it), also
// across the ring's wrap and the queue's spill; popped from the front as delivery passes them.
TEST(SlotStream, HeldEndsStaySortedOnTheRingAndInTheQueue) {
  std::mt19937_64 rng(91);
  for (int round = 0; round < 200; ++round) {
    core::FixedEnds<core::kSlotHeld> ring;
    detail::EndQueue queue;
    std::multiset<uint64_t> want;
    for (int step = 0; step < 400; ++step) {
      if (ring.size() < core::kSlotHeld && rng() % 3) {
        const uint64_t v = rng() % 4 ? 1000 + step * 10 + rng() % 25 : 1000 + step * 10 + 5000;
        ring.push_sorted(v);
        queue.push_sorted(v);
        want.insert(v);
      } else if (!want.empty()) {  // delivery passed some ends: pop those
        const uint64_t base = *want.begin() + rng() % 40;
        while (!ring.empty() && ring.front() <= base) ring.pop_front();
        while (!queue.empty() && queue.front() <= base) queue.pop_front();
        want.erase(want.begin(), want.upper_bound(base));
      }
      ASSERT_EQ(ring.size(), want.size());
      ASSERT_EQ(queue.size(), want.size());
      uint32_t k = 0;
      for (uint64_t v : want) ASSERT_EQ(ring.at(k++), v) << "round " << round << " step " << step;
      if (!want.empty()) ASSERT_EQ(queue.front(), *want.begin());
    }
  }
}

// The host's queue in the orders a hostile sender picks (descending, alternating ends, equal
// ends): every end comes back, smallest first.
TEST(SlotStream, HostQueueGivesEveryEndBackInOrderWhateverTheArrival) {
  for (int kind = 0; kind < 3; ++kind) {
    detail::EndQueue queue;
    std::vector<uint64_t> want;
    for (uint64_t k = 0; k < 5000; ++k) {
      const uint64_t v = kind == 0 ? 10000 - k : kind == 1 ? (k % 2 ? 10000 - k : k) : 7 + k % 3;
      queue.push_sorted(v);
      want.push_back(v);
    }
    std::sort(want.begin(), want.end());
    ASSERT_EQ(queue.size(), want.size());
    for (const uint64_t v : want) {
      ASSERT_EQ(queue.front(), v) << "kind " << kind;
      queue.pop_front();
    }
    EXPECT_TRUE(queue.empty());
  }
}

TEST(SlotStream, ADeviceErrorFailsThatCallAndEveryLaterOne) {
  StreamGenParams p;
  p.flows                  = 2;
  const GeneratedStreams g = generate_streams(p);
  detail::SlotReassembler r("cuda.stream", {}, std::make_unique<FailingSlots>());
  const Status first = r.segments(g.segments.data(), uint32_t(g.segments.size()), nullptr);
  EXPECT_EQ(first.code(), Errc::kCudaError);
  EXPECT_EQ(first.message(), "device lost");
  EXPECT_EQ(r.segment(g.segments[0], nullptr).code(), Errc::kCudaError);
  EXPECT_EQ(r.segments(nullptr, 0, nullptr).code(), Errc::kCudaError);
  EXPECT_EQ(r.close(1, nullptr).code(), Errc::kCudaError);
  EXPECT_EQ(r.close_all(nullptr).code(), Errc::kCudaError);
}

}  // namespace
}  // namespace warpath::stream
