// Flow tracking and reassembly in one engine (include/warpath/stream/flowstream.hpp): every
// engine against ref.flowstream (ref.flow chained to ref.stream) on generated connections, the
// hostile ones among them (evictions, port reuse, timeouts, SYN floods, RSTs, caps, a table that
// drops, inline mode, depth), at batch sizes 0, 1, the lane edges and whole inputs; and the
// reference itself against the generated truth.
#include "warpath/stream/flowstream.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/generate.hpp"

namespace warpath::stream {
namespace {

// Runs frames through an engine in batches of `batch`; per (flow, dir), the bytes delivered with
// gaps as '#'; the records of every flow ended.
struct Outcome {
  std::map<std::pair<uint64_t, uint8_t>, std::string> text;
  std::vector<flow::FlowRecord> ended;
  std::vector<flow::PacketFlow> answers;
  Status status;
};

Outcome run(FlowStream& e, const GeneratedFrames& frames, uint32_t batch) {
  Outcome out;
  auto parser = packet::make_parser("cpu.parse");
  auto b      = packet::PacketBatch::create(batch, 2048);
  EXPECT_TRUE(parser.is_ok() && b.is_ok());
  std::vector<packet::PacketInfo> infos(batch);
  std::vector<flow::PacketFlow> answers(batch);
  const ChunkSink sink = [&out](const Chunk& c) {
    std::string& t = out.text[{c.flow, c.dir}];
    EXPECT_EQ(c.offset, t.size()) << "chunks in order";
    if (c.gap)
      t.append(c.len, '#');
    else
      t.append(reinterpret_cast<const char*>(c.data), c.len);
  };
  ExecContext ctx;
  for (size_t at = 0; at < frames.size() && out.status.is_ok();) {
    b->clear();
    for (uint32_t k = 0; k < batch && at < frames.size(); ++k, ++at)
      b->append(frames.bytes.data() + frames.offset[at], frames.length[at], frames.length[at],
                frames.ts_ns[at]);
    const uint32_t n = b->size();
    EXPECT_TRUE((*parser)->parse(b->view(), {infos.data(), n}, ctx).is_ok());
    out.status = e.process(b->view(), infos.data(), {answers.data(), n}, out.ended, sink);
    out.answers.insert(out.answers.end(), answers.begin(), answers.begin() + n);
  }
  if (out.status.is_ok()) out.status = e.flush(out.ended, sink);
  return out;
}

TEST(FlowStreamRegistry, ListsTheReferenceTheChainedPairAndTheFusedEngine) {
  std::vector<std::string> ids;
  for (const EngineInfo& i : flowstream_engines()) ids.emplace_back(i.id);
  EXPECT_EQ(ids, (std::vector<std::string>{"ref.flowstream", "cpu.chained", "cpu.flowstream"}));
  auto e = make_flowstream("auto");
  ASSERT_TRUE(e.is_ok());
  EXPECT_EQ((*e)->id(), "cpu.chained");  // as fast or faster so far (docs/adr/0009, "One pass")
  EXPECT_EQ(make_flowstream("gpu.nothing").status().code(), Errc::kNotFound);
  StreamConfig bad;
  bad.max_flows = 0;
  EXPECT_EQ(make_flowstream("cpu.flowstream", {}, bad).status().code(), Errc::kInvalidArgument);
  flow::FlowConfig bad_flow;
  bad_flow.capacity = 0;
  EXPECT_EQ(make_flowstream("cpu.flowstream", bad_flow).status().code(), Errc::kInvalidArgument);
}

TEST(FlowStreamRegistry, AnswersMustMatchTheBatch) {
  auto e = make_flowstream("cpu.flowstream");
  ASSERT_TRUE(e.is_ok());
  auto b = packet::PacketBatch::create(4, 2048);
  ASSERT_TRUE(b.is_ok());
  const uint8_t frame[60] = {};
  b->append(frame, 60, 60, 1);
  packet::PacketInfo info;
  flow::PacketFlow answers[2];
  std::vector<flow::FlowRecord> ended;
  EXPECT_EQ((*e)->process(b->view(), &info, {answers, 2}, ended, nullptr).code(),
            Errc::kInvalidArgument);
}

// Every engine equals ref.flowstream on every setup of the check (its rounds cycle through the
// setups and the batch sizes 1, 7, 31, 32, 33, 256 and whole inputs, after an empty batch).
TEST(FlowStreamRandom, EveryEngineEqualsTheReference) {
  for (const char* id : {"cpu.flowstream", "cpu.chained"})
    for (uint64_t seed : {1, 2}) {
      const CheckReport r = check_flowstream_engine(id, seed, 30000);
      EXPECT_TRUE(r.passed()) << id << " seed " << seed << ": " << r.detail;
      EXPECT_GE(r.items, 30000u);
    }
}

// The oracle itself: a clean capture's streams come out as generated, every flow ends once.
TEST(FlowStreamRandom, TheReferenceDeliversTheGeneratedBytes) {
  FrameGenParams g;
  g.streams.seed            = 5;
  g.streams.flows           = 20;
  g.streams.reorder_percent = 20;
  g.streams.duplicate_percent = 10;
  const GeneratedStreams truth = generate_streams(g.streams);
  const GeneratedFrames frames = generate_frames(g);
  for (const char* id : {"ref.flowstream", "cpu.flowstream"}) {
    auto e = make_flowstream(id);
    ASSERT_TRUE(e.is_ok());
    const Outcome r = run(**e, frames, 64);
    ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
    EXPECT_EQ(r.ended.size(), 20u) << id;
    for (const flow::FlowRecord& rec : r.ended)  // the tracker numbers flows as they come
      for (uint8_t dir = 0; dir < 2; ++dir) {
        const uint64_t f = rec.sport - 1024u;  // generate_frames' client port
        ASSERT_TRUE(f >= 1 && f <= 20);
        const auto& want = truth.payload[2 * f + dir];
        const auto it    = r.text.find({rec.serial, dir});
        const std::string got = it == r.text.end() ? std::string() : it->second;
        EXPECT_EQ(got, std::string(want.begin(), want.end())) << id << " flow " << f;
      }
    EXPECT_EQ((*e)->streams(), 0u) << "every flow closed by the flush";
    const flow::FlowCounters fc = (*e)->flow_counters();
    EXPECT_EQ(fc.packets, frames.size());
    EXPECT_EQ(fc.track[size_t(flow::Track::kTracked)], frames.size());
  }
}

// A flow ended inside a batch (here: evicted from a table of two) keeps its state to the batch's
// end, and its last bytes come after the batch's other chunks, in both engines alike; the same
// at every batch size against the reference.
TEST(FlowStreamOrder, FlowsEndedInABatchCloseAtItsEnd) {
  FrameGenParams g;
  g.streams.seed  = 9;
  g.streams.flows = 6;
  g.streams.fin   = false;  // nothing finished: each eviction delivers what the flow held
  g.streams.loss_percent = 10;
  const GeneratedFrames frames = generate_frames(g);
  flow::FlowConfig fc;
  fc.capacity = 2;
  for (uint32_t batch : {1u, 2u, 33u, 100000u}) {
    auto e = make_flowstream("validate:cpu.flowstream", fc);
    ASSERT_TRUE(e.is_ok());
    const Outcome r = run(**e, frames, batch);
    EXPECT_TRUE(r.status.is_ok()) << "batch " << batch << ": " << r.status.to_string();
    EXPECT_GT((*e)->flow_counters().ended[size_t(flow::FlowEnd::kEvicted)], 0u);
  }
}

}  // namespace
}  // namespace warpath::stream

namespace warpath::stream {
namespace {

// The check's hostile setups reach what they aim at (their traffic through validate:, with the
// counters that show it): port reuse after a close, and flows ended inside a batch while
// max_flows is tight (they keep counting until the batch ends: flows_refused agrees).
TEST(FlowStreamHostile, PortReuseAndTightMaxFlowsAreReached) {
  FrameGenParams again;
  again.streams.seed  = 3;
  again.streams.flows = 10;
  again.again         = true;
  StreamConfig tight;
  tight.max_flows = 6;
  auto e = make_flowstream("validate:cpu.flowstream", {}, tight);
  ASSERT_TRUE(e.is_ok());
  Outcome r = run(**e, generate_frames(again), 33);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_GT((*e)->flow_counters().ended[size_t(flow::FlowEnd::kReused)], 0u);
  EXPECT_GT((*e)->stream_counters().flows_refused, 0u);

  FrameGenParams flood;
  flood.streams.seed  = 4;
  flood.streams.fin   = false;
  flood.syn_flood     = 30;
  flow::FlowConfig small;
  small.capacity = 8;
  StreamConfig four;
  four.max_flows = 4;
  auto f = make_flowstream("validate:cpu.flowstream", small, four);
  ASSERT_TRUE(f.is_ok());
  r = run(**f, generate_frames(flood), 64);
  ASSERT_TRUE(r.status.is_ok()) << r.status.to_string();
  EXPECT_GT((*f)->flow_counters().ended[size_t(flow::FlowEnd::kEvicted)], 0u);
  EXPECT_GT((*f)->stream_counters().flows_refused, 0u);
}

// advance() ends idle flows and closes their streams, in both engines alike.
TEST(FlowStreamHostile, AdvanceEndsIdleFlowsAndClosesTheirStreams) {
  FrameGenParams g;
  g.streams.seed = 6;
  g.streams.fin  = false;
  g.streams.loss_percent = 10;
  const GeneratedFrames frames = generate_frames(g);
  auto e = make_flowstream("validate:cpu.flowstream");
  ASSERT_TRUE(e.is_ok());
  auto parser = packet::make_parser("cpu.parse");
  auto b      = packet::PacketBatch::create(uint32_t(frames.size()), 2048);
  ASSERT_TRUE(parser.is_ok() && b.is_ok());
  for (size_t i = 0; i < frames.size(); ++i)
    b->append(frames.bytes.data() + frames.offset[i], frames.length[i], frames.length[i],
              frames.ts_ns[i]);
  std::vector<packet::PacketInfo> infos(frames.size());
  std::vector<flow::PacketFlow> answers(frames.size());
  ExecContext ctx;
  ASSERT_TRUE((*parser)->parse(b->view(), {infos.data(), b->size()}, ctx).is_ok());
  std::vector<flow::FlowRecord> ended;
  ASSERT_TRUE((*e)->process(b->view(), infos.data(), {answers.data(), b->size()}, ended, nullptr)
                  .is_ok());
  EXPECT_TRUE(ended.empty());
  EXPECT_GT((*e)->streams(), 0u);
  uint64_t gap_chunks = 0;
  const ChunkSink count_gaps = [&gap_chunks](const Chunk& c) { gap_chunks += c.gap; };
  ASSERT_TRUE((*e)->advance(frames.ts_ns.back() + 3600'000'000'000ull, ended, count_gaps).is_ok());
  EXPECT_EQ(ended.size(), g.streams.flows);
  EXPECT_EQ((*e)->streams(), 0u);
  EXPECT_GT(gap_chunks, 0u) << "the holes the capture lost, declared when the flows closed";
}

}  // namespace
}  // namespace warpath::stream

namespace warpath::stream {
namespace {

// segment_of reads TCP Fast Open's option on a SYN (kind 34, or 254 with the magic 0xF989),
// nothing on other segments, and stops at a malformed option list without reading past it.
TEST(SegmentOf, FindsTheFastOpenOptionOnSyns) {
  auto parser = packet::make_parser("cpu.parse");
  ASSERT_TRUE(parser.is_ok());
  auto tfo_of = [&](uint8_t flags, std::vector<uint8_t> options) {
    while (options.size() % 4) options.push_back(1);  // no-operations to a whole word
    std::vector<uint8_t> f(14 + 20 + 20 + options.size() + 3, 0);
    f[12] = 0x08;
    uint8_t* ip = f.data() + 14;
    ip[0] = 0x45, ip[8] = 64, ip[9] = 6;
    const uint32_t ip_len = uint32_t(f.size() - 14);
    ip[2] = uint8_t(ip_len >> 8), ip[3] = uint8_t(ip_len);
    ip[12] = 10, ip[15] = 1, ip[16] = 10, ip[19] = 2;
    uint32_t sum = 0;
    for (int i = 0; i < 20; i += 2) sum += uint32_t(ip[i] << 8 | ip[i + 1]);
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    ip[10] = uint8_t(~sum >> 8), ip[11] = uint8_t(~sum);
    uint8_t* tcp = ip + 20;
    tcp[0] = 0x9c, tcp[1] = 0x40, tcp[3] = 80;
    tcp[12] = uint8_t((20 + options.size()) / 4 << 4), tcp[13] = flags;
    std::copy(options.begin(), options.end(), tcp + 20);
    std::memcpy(tcp + 20 + options.size(), "GET", 3);
    auto b = packet::PacketBatch::create(1, 2048);
    EXPECT_TRUE(b.is_ok());
    b->append(f.data(), uint32_t(f.size()), uint32_t(f.size()), 1);
    packet::PacketInfo info;
    ExecContext ctx;
    EXPECT_TRUE((*parser)->parse(b->view(), {&info, 1}, ctx).is_ok());
    Segment s;
    EXPECT_TRUE(segment_of(info, b->view().data(0), uint32_t(f.size()), s));
    EXPECT_EQ(std::string(reinterpret_cast<const char*>(s.data), s.len), "GET");
    return int(s.tfo);
  };
  const std::vector<uint8_t> cookie = {34, 10, 1, 2, 3, 4, 5, 6, 7, 8};
  EXPECT_EQ(tfo_of(0x02, cookie), 1);
  EXPECT_EQ(tfo_of(0x12, {2, 4, 5, 180, 1, 34, 2}), 1);  // MSS, a no-op, an empty cookie request
  EXPECT_EQ(tfo_of(0x02, {254, 4, 0xF9, 0x89}), 1);      // the experimental kind
  EXPECT_EQ(tfo_of(0x02, {254, 4, 0x12, 0x34}), 0);      // another experiment
  EXPECT_EQ(tfo_of(0x02, {2, 4, 5, 180}), 0);            // MSS only
  EXPECT_EQ(tfo_of(0x18, cookie), 0) << "only a SYN's option counts";
  EXPECT_EQ(tfo_of(0x02, {2, 0, 34, 2}), 0) << "a zero length stops the walk";
  EXPECT_EQ(tfo_of(0x02, {2, 40, 34, 2}), 0) << "a length past the header stops it";
  EXPECT_EQ(tfo_of(0x02, {0, 34, 2, 1}), 0) << "past the end of the list";
}

}  // namespace
}  // namespace warpath::stream
