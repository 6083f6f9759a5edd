// The defrag module in a chain (defrag -> wire) against the defragmenter run directly over the
// same generated fragments, at several frame sizes: held fragments leave as defrag_held, the
// datagram goes on in the place of its last fragment, refused fragments as defrag_drop; a frame
// without room left for a datagram drops it as defrag_no_room; an idle worker times out
// unfinished datagrams; and PacketBatch::relocate and its tail reserve.
#include <gtest/gtest.h>

#include <cstring>

#include "defrag/generate.hpp"
#include "packet/core/parse_core.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/modules/chain_check.hpp"

namespace warpath::runtime {
namespace {

Result<packet::PacketBatch> batch_of(const std::vector<std::vector<uint8_t>>& frames) {
  WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch b,
                           packet::PacketBatch::create(uint32_t(frames.size()), 2048));
  for (size_t k = 0; k < frames.size(); ++k)
    if (!b.append(frames[k].data(), uint32_t(frames[k].size()), uint32_t(frames[k].size()),
                  uint64_t(k) * 1000))
      return Status(Errc::kCapacity, "frame too large");
  return b;
}

// What the chain should answer: the reference defragmenter over the same packets.
std::vector<ChainOutcome> expected(const packet::PacketBatch& in, const defrag::DefragConfig& c) {
  auto engine = defrag::make_defragmenter("ref.defrag", c).value();
  std::vector<ChainOutcome> out;
  std::vector<uint8_t> whole;
  for (uint32_t i = 0; i < in.size(); ++i) {
    const packet::PacketMeta& m = in.meta(i);
    ChainOutcome o;
    o.reason  = "forwarded";
    o.out     = 1;  // wire: p ^ 1
    o.context = "default";
    o.bytes.assign(in.data(i), in.data(i) + m.caplen);
    const packet::PacketInfo info = packet::core::parse_packet(in.data(i), m.caplen, m.len);
    if (info.flags & packet::kFragment) {
      whole.clear();
      switch (engine->add(info, in.data(i), m.caplen, m.timestamp_ns, whole)) {
        case defrag::FragResult::kNotFragment: break;
        case defrag::FragResult::kHeld: o = {"defrag_held", 0, 0, "default", o.bytes}; break;
        case defrag::FragResult::kDropped: o = {"defrag_drop", 0, 0, "default", o.bytes}; break;
        case defrag::FragResult::kCompleted: o.bytes = whole; break;
      }
    }
    out.push_back(std::move(o));
  }
  return out;
}

Result<std::unique_ptr<Chain>> build(const std::string& text) {
  WARPATH_ASSIGN_OR_RETURN(auto specs, parse_chain(text));
  BuildEnv env;
  env.port_count = 2;
  return Chain::build(specs, env);
}

TEST(DefragModule, AnswersAsTheDefragmenterAtEveryFrameSize) {
  defrag::FragGenParams p;
  p.seed             = 7;
  p.datagrams        = 80;
  p.max_payload      = 9000;
  p.overlap_percent  = 10;
  p.conflict_percent = 5;
  const defrag::FragFrames gen = defrag::generate_fragments(p);
  auto in = batch_of(gen.frames);
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  defrag::DefragConfig c;
  c.policy = defrag::FragPolicy::kLinux;
  const std::vector<ChainOutcome> want = expected(*in, c);
  size_t completed = 0, held = 0;
  for (const ChainOutcome& o : want) {
    completed += o.reason == "forwarded" && o.bytes.size() > 2048;
    held += o.reason == "defrag_held";
  }
  ASSERT_GT(completed, 20u) << "datagrams larger than a cell go on whole";
  ASSERT_GT(held, 100u);
  auto chain = build("defrag(policy=linux, engine=validate:cpu.defrag) -> wire");
  ASSERT_TRUE(chain.is_ok()) << chain.status().message();
  EXPECT_EQ((*chain)->tail_room(1), 36 * 2048u) << "one datagram of 64 KiB at least";
  EXPECT_EQ((*chain)->tail_room(256), 256 * 8192u);
  EXPECT_EQ((*chain)->tail_room(8192), size_t(16) << 20) << "16 MiB at most";
  for (uint32_t batch : {0u, 1u, 31u, 64u, 65u, 1024u}) {
    auto got = run_chain_frames(**chain, *in, batch, Place::kCpu);
    ASSERT_TRUE(got.is_ok()) << "batch " << batch << ": " << got.status().message();
    if (batch == 0) {
      EXPECT_TRUE(got->empty());
      continue;
    }
    ASSERT_EQ(got->size(), want.size()) << "batch " << batch;
    for (size_t i = 0; i < want.size(); ++i)
      ASSERT_TRUE((*got)[i] == want[i]) << "batch " << batch << ", packet " << i << ": "
                                        << (*got)[i].reason << " (" << (*got)[i].bytes.size()
                                        << " bytes), want " << want[i].reason << " ("
                                        << want[i].bytes.size() << " bytes)";
  }
}

TEST(DefragModule, AFrameWithoutRoomDropsTheDatagramAsNoRoom) {
  // Two datagrams of 60,000 bytes in 1,480-byte fragments, interleaved: both complete in one
  // frame, whose tail room (room=1: the least, 72 KiB) holds one.
  std::vector<std::vector<uint8_t>> frames;
  std::vector<uint8_t> data(60000);
  for (size_t k = 0; k < data.size(); ++k) data[k] = uint8_t(k * 7);
  for (uint32_t off = 0; off < data.size(); off += 1480)
    for (uint32_t id : {1u, 2u}) {
      const uint32_t len = std::min<uint32_t>(1480, uint32_t(data.size()) - off);
      frames.push_back(defrag::fragment_frame(false, 17, id, off, off + len < data.size(),
                                              data.data() + off, len));
    }
  auto in = batch_of(frames);
  ASSERT_TRUE(in.is_ok());
  auto chain = build("defrag(room=1) -> wire");
  ASSERT_TRUE(chain.is_ok()) << chain.status().message();
  auto got = run_chain_frames(**chain, *in, uint32_t(frames.size()), Place::kCpu);
  ASSERT_TRUE(got.is_ok()) << got.status().message();
  ASSERT_EQ(got->size(), frames.size());
  EXPECT_EQ((*got)[frames.size() - 2].reason, "forwarded");
  EXPECT_EQ((*got)[frames.size() - 2].bytes.size(), 14 + 20 + 60000u);
  EXPECT_EQ((*got)[frames.size() - 1].reason, "defrag_no_room");
  for (size_t i = 0; i + 2 < frames.size(); ++i) EXPECT_EQ((*got)[i].reason, "defrag_held");
  // In frames of one packet each completes in a frame of its own: both go on.
  got = run_chain_frames(**chain, *in, 1, Place::kCpu);
  ASSERT_TRUE(got.is_ok());
  EXPECT_EQ((*got)[frames.size() - 1].reason, "forwarded");
}

// A stat of the chain's first module, by name.
uint64_t stat(const Chain& chain, const Chain::States& states, const std::string& name) {
  const std::vector<std::string> names = chain.module(0).stat_names();
  for (size_t s = 0; s < names.size(); ++s)
    if (names[s] == name) return states[0]->stats[s].load();
  ADD_FAILURE() << "no stat " << name;
  return 0;
}

TEST(DefragModule, AnIdleWorkerTimesOutUnfinishedDatagrams) {
  // The first fragment of a datagram whose rest never comes, received at monotonic time 1 s;
  // the worker then stays idle: at 1.9 s it is still held (timeout=1), at 2.1 s it is gone.
  std::vector<uint8_t> data(1480, 0x5A);
  const std::vector<std::vector<uint8_t>> frames = {
      defrag::fragment_frame(false, 17, 9, 0, true, data.data(), uint32_t(data.size()))};
  auto in    = batch_of(frames);
  auto chain = build("defrag(timeout=1) -> wire");
  ASSERT_TRUE(in.is_ok() && chain.is_ok());
  auto states = (*chain)->make_states();
  ASSERT_TRUE(states.is_ok()) << states.status().message();
  auto b = packet::PacketBatch::create(4, 2048, 4 * 2048 + (*chain)->tail_room(4));
  ASSERT_TRUE(b.is_ok());
  Frame f(std::move(*b));
  (*chain)->make_slots(f, &*states);
  ASSERT_TRUE(f.batch.append(in->data(0), in->meta(0).caplen, in->meta(0).len, 5'000'000'000ull));
  f.rx_ns[0] = 1'000'000'000ull;
  Chain::Scratch scratch;
  ExecContext ctx;
  ASSERT_TRUE((*chain)->pre(f).is_ok());
  ASSERT_TRUE((*chain)->shade(f, Place::kCpu, ctx).is_ok());
  ASSERT_TRUE((*chain)->post(f, scratch, nullptr).is_ok());
  EXPECT_EQ((*chain)->reasons()[f.reason[0]].name, "defrag_held");
  EXPECT_EQ(stat(**chain, *states, "held_now"), 1u);
  (*chain)->idle_states(*states, 1'900'000'000ull);
  EXPECT_EQ(stat(**chain, *states, "held_now"), 1u);
  EXPECT_EQ(stat(**chain, *states, "timed_out"), 0u);
  (*chain)->idle_states(*states, 2'100'000'000ull);
  EXPECT_EQ(stat(**chain, *states, "held_now"), 0u);
  EXPECT_EQ(stat(**chain, *states, "buffered_bytes"), 0u);
  EXPECT_EQ(stat(**chain, *states, "timed_out"), 1u);
  EXPECT_TRUE((*chain)->finish_states(*states).is_ok());
}

TEST(PacketBatch, RelocateMovesAPacketToTheTailAndKeepsTheCount) {
  auto b = packet::PacketBatch::create(4, 2048, 4 * 2048 + 8192, MemSpace::kHost, 64);
  ASSERT_TRUE(b.is_ok());
  const uint8_t x[100] = {1, 2, 3};
  ASSERT_TRUE(b->append(x, 100, 100, 5, 1));
  ASSERT_TRUE(b->append(x, 60, 60, 6, 1));
  EXPECT_EQ(b->free_bytes(), 2 * 2048u + 8192u);
  EXPECT_EQ(b->relocate(2, 10, 10), nullptr) << "no such packet";
  uint8_t* to = b->relocate(0, 5000, 5000);
  ASSERT_NE(to, nullptr);
  std::memset(to, 9, 5000);
  EXPECT_EQ(b->size(), 2u);
  EXPECT_EQ(b->data(0), to);
  EXPECT_EQ(b->meta(0).caplen, 5000u);
  EXPECT_EQ(b->meta(0).timestamp_ns, 5u) << "the rest of its metadata stays";
  EXPECT_EQ(b->headroom(0), 64u);
  EXPECT_EQ(b->room(0), 3 * 2048u - 64u);
  EXPECT_EQ(b->room(1), 2048u - 64u) << "its neighbour's room is its own";
  EXPECT_EQ(b->data(1)[0], 1);
  EXPECT_EQ(b->relocate(1, 8000, 8000), nullptr) << "no room left: nothing changes";
  EXPECT_EQ(b->meta(1).caplen, 60u);
  ASSERT_TRUE(b->append(x, 10, 10, 7, 1));
  EXPECT_EQ(b->room(2), 2048u - 64u);
}

TEST(PacketBatch, AppendLeavesTheTailReserveToRelocate) {
  // Packets as they arrive (a jumbo frame of 6 cells) stop short of the reserve; relocate()
  // still has it.
  auto b = packet::PacketBatch::create(8, 2048, 8 * 2048 + 8192);
  ASSERT_TRUE(b.is_ok());
  b->set_tail_reserve(8192);
  EXPECT_EQ(b->tail_reserve(), 8192u);
  std::vector<uint8_t> jumbo(6 * 2048, 3);
  ASSERT_TRUE(b->append(jumbo.data(), uint32_t(jumbo.size()), uint32_t(jumbo.size()), 1));
  ASSERT_TRUE(b->append(jumbo.data(), 100, 100, 2));
  ASSERT_TRUE(b->append(jumbo.data(), 100, 100, 3));
  EXPECT_FALSE(b->append(jumbo.data(), 100, 100, 4)) << "the next cell is the reserve's";
  EXPECT_EQ(b->size(), 3u);
  ASSERT_NE(b->relocate(1, 8000, 8000), nullptr);
  EXPECT_EQ(b->free_bytes(), 0u);
  b->clear();
  EXPECT_EQ(b->tail_reserve(), 8192u) << "the reserve outlives clear()";
  b->set_tail_reserve(size_t(1) << 30);
  EXPECT_EQ(b->tail_reserve(), 8 * 2048u + 8192u) << "at most the whole buffer";
  EXPECT_FALSE(b->append(jumbo.data(), 1, 1, 5));
}

}  // namespace
}  // namespace warpath::runtime
