// The stateful modules in a chain: flow -> stream on a real capture at several frame sizes,
// with a consumer of the stream module's side queue, against the flow tracker and reassembler
// run directly over the same packets; and the build errors of a stream module without a flow
// module.
#include <gtest/gtest.h>

#include <map>
#include <string>

#include "modules/stream_state.hpp"
#include "support/test_support.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/runtime/chain.hpp"
#include "warpath/modules/chain_check.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::runtime {
namespace {

using Streams = std::map<std::pair<uint64_t, uint8_t>, std::string>;

void append(Streams& into, const stream::Chunk& c) {
  std::string& s = into[{c.flow, c.dir}];
  if (c.gap)
    s.append(c.len, '#');
  else
    s.append(reinterpret_cast<const char*>(c.data), c.len);
}

// Reads the stream module's side queue: every chunk of every frame, in order.
class StreamSink final : public Module {
 public:
  explicit StreamSink(size_t stream_slot) : slot_(stream_slot) {}
  std::string_view kind() const noexcept override { return "test-stream-sink"; }
  ModuleContract contract() const override { return {field_bit(Field::kParse), 0, {}}; }
  void post(Frame& f, ModuleSlot*, const Selection&) const override {
    const auto& st = static_cast<const StreamWorkerState&>(*f.slots[slot_]->state);
    for (const stream::Chunk& c : st.chunks) append(seen, c);
  }
  Status finish(ModuleState&) const override { return Status::ok(); }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    return std::unique_ptr<ModuleState>(std::make_unique<ModuleState>());
  }
  static inline Streams seen;

 private:
  size_t slot_;
};

void register_sink() {
  static bool done = [] {
    ModuleInfo i;
    i.kind  = "test-stream-sink";
    i.contract.reads = field_bit(Field::kParse);
    i.make  = [](const ModuleArgs&, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
      for (size_t k = env.earlier.size(); k-- > 0;)
        if (env.earlier[k]->kind() == "stream")
          return std::unique_ptr<Module>(std::make_unique<StreamSink>(k));
      return Status(Errc::kInvalidArgument, "needs a stream module before it");
    };
    return register_module_kind(std::move(i)).is_ok();
  }();
  ASSERT_TRUE(done);
}

Result<packet::PacketBatch> read_capture(const std::string& path) {
  WARPATH_ASSIGN_OR_RETURN(io::PcapReader reader, io::PcapReader::open(path));
  WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch all, packet::PacketBatch::create(4096, 2048));
  WARPATH_TRY(reader.read(all).status());
  return all;
}

// The same packets through the flow tracker and the reassembler directly.
Streams direct(const packet::PacketBatch& in, const stream::StreamConfig& sc, uint64_t& gaps) {
  Streams out;
  auto infos   = packet::parse_batch(in, "ref.parse");
  flow::FlowConfig fc;
  fc.capacity  = 256;  // ref.flow scans its whole table per packet
  auto tracker = flow::make_flow_tracker("ref.flow", fc);
  auto r       = stream::make_reassembler("ref.stream", sc);
  EXPECT_TRUE(infos.is_ok() && tracker.is_ok() && r.is_ok());
  std::vector<flow::PacketFlow> answers(in.size());
  std::vector<flow::FlowRecord> ended;
  const packet::BatchView v = in.view();
  EXPECT_TRUE((*tracker)->track({infos->data(), in.size()}, {v.metas, in.size()},
                                {answers.data(), in.size()}, ended)
                  .is_ok());
  const stream::ChunkSink sink = [&](const stream::Chunk& c) { append(out, c); };
  for (uint32_t i = 0; i < in.size(); ++i) {
    stream::Segment s;
    if (!answers[i].serial || !stream::segment_of((*infos)[i], in.data(i), in.meta(i).caplen, s))
      continue;
    s.flow = answers[i].serial;
    s.dir  = answers[i].dir;
    EXPECT_TRUE((*r)->segment(s, sink).is_ok());
  }
  for (const flow::FlowRecord& e : ended) EXPECT_TRUE((*r)->close(e.serial, sink).is_ok());
  EXPECT_TRUE((*r)->close_all(sink).is_ok());
  gaps = (*r)->counters().gaps;
  return out;
}

TEST(StreamChain, SideQueueCarriesTheStreamsAtEveryFrameSize) {
  if (!testing::have_data()) GTEST_SKIP() << "no data directory";
  register_sink();
  auto in = read_capture(testing::data_path("pcap/zeek/http-bro.org.pcap"));
  ASSERT_TRUE(in.is_ok()) << in.status().message();
  stream::StreamConfig sc;
  sc.midstream = true;
  sc.depth     = 0;
  uint64_t gaps      = 0;
  const Streams want = direct(*in, sc, gaps);
  ASSERT_EQ(want.size(), 16u);  // directions that carried data (as tshark follows them)
  EXPECT_EQ(gaps, 1u);          // the capture lost 7,240 bytes of one response
  // cpu.stream, and emu.stream (cuda.stream's schedule: each frame's segments one batch).
  for (const char* engine : {"validate:cpu.stream", "validate:emu.stream"})
    for (uint32_t batch : {1u, 7u, 64u, 4096u}) {
      SCOPED_TRACE(std::string(engine) + ", frame of " + std::to_string(batch));
      auto specs = parse_chain(
          "flow(capacity=256, engine=validate:cpu.flow) -> stream(midstream=on, depth=0, "
          "engine=" +
          std::string(engine) + ") -> test-stream-sink -> wire");
      ASSERT_TRUE(specs.is_ok());
      auto chain = Chain::build(*specs, BuildEnv{});
      ASSERT_TRUE(chain.is_ok()) << chain.status().message();
      StreamSink::seen.clear();
      auto out = run_chain_frames(**chain, *in, batch, Place::kCpu);
      ASSERT_TRUE(out.is_ok()) << out.status().message();
      EXPECT_EQ(StreamSink::seen, want);
    }
}

TEST(StreamChain, NeedsAFlowModuleBeforeIt) {
  auto specs = parse_chain("stream -> wire");
  ASSERT_TRUE(specs.is_ok());
  auto chain = Chain::build(*specs, BuildEnv{});
  ASSERT_FALSE(chain.is_ok());
  EXPECT_EQ(chain.status().message(),
            "chain position 1 (stream): needs a flow module before it (e.g. flow -> stream): it "
            "consumes 'flows'");
  specs = parse_chain("flow -> stream(policy=hpux) -> wire");
  chain = Chain::build(*specs, BuildEnv{});
  ASSERT_FALSE(chain.is_ok());
  EXPECT_NE(chain.status().message().find("chain position 2 (stream): overlap policy 'hpux'"),
            std::string::npos);
}

// Room for finished connections: by default what the flow module's table holds (they stay
// until it ends them), at most max_flows; prealloc= sets it, 0 grows it as they finish.
TEST(StreamChain, RoomForFinishedConnectionsFollowsTheFlowTable) {
  auto describe = [](const std::string& text) -> std::string {
    auto specs = parse_chain(text);
    EXPECT_TRUE(specs.is_ok());
    auto chain = Chain::build(*specs, BuildEnv{});
    if (!chain.is_ok()) return "error: " + chain.status().message();
    return (*chain)->module(1).describe();
  };
  EXPECT_NE(describe("flow(capacity=300) -> stream -> wire").find("room for 300 finished"),
            std::string::npos);
  EXPECT_NE(describe("flow(capacity=4194304) -> stream -> wire").find("room for 1048576 finished"),
            std::string::npos);  // max_flows
  EXPECT_NE(describe("flow -> stream(prealloc=77) -> wire").find("room for 77 finished"),
            std::string::npos);
  EXPECT_EQ(describe("flow -> stream(prealloc=0) -> wire").find("room for"), std::string::npos);
  EXPECT_NE(describe("flow -> stream(prealloc=1048577) -> wire")
                .find("error: chain position 2 (stream): prealloc=1048577"),
            std::string::npos);
  // A worker's state is made with it: a chain with the room runs as one without.
  auto specs = parse_chain("flow(capacity=64) -> stream(prealloc=64) -> wire");
  ASSERT_TRUE(specs.is_ok());
  auto chain = Chain::build(*specs, BuildEnv{});
  ASSERT_TRUE(chain.is_ok());
  EXPECT_TRUE((*chain)->make_states().is_ok());
}

}  // namespace
}  // namespace warpath::runtime

namespace warpath::runtime {
namespace {

TEST(FlowModule, IdleWorkersEndQuietFlows) {
  auto specs = parse_chain("flow -> wire");
  ASSERT_TRUE(specs.is_ok());
  auto chain = Chain::build(*specs, BuildEnv{});
  ASSERT_TRUE(chain.is_ok()) << chain.status().message();
  auto states = (*chain)->make_states();
  ASSERT_TRUE(states.is_ok());
  auto batch = packet::PacketBatch::create(8, 2048);
  ASSERT_TRUE(batch.is_ok());
  Frame f(std::move(*batch));
  (*chain)->make_slots(f, &*states);
  // One UDP packet at capture time T, received at monotonic time M.
  gen::TrafficParams p;
  p.count = 1;
  p.seed  = 3;
  p.tcp_share = 0, p.icmp_share = 0, p.udp_share = 1;
  ASSERT_TRUE(gen::generate_traffic(p, f.batch).is_ok());
  const uint64_t mono = 5'000'000'000ull;
  f.rx_ns[0]          = mono;
  ASSERT_TRUE((*chain)->pre(f).is_ok());
  ExecContext ctx;
  ASSERT_TRUE((*chain)->shade(f, Place::kCpu, ctx).is_ok());
  Chain::Scratch scratch;
  ASSERT_TRUE((*chain)->post(f, scratch, nullptr).is_ok());
  const ModuleState& st = *(*states)[0];
  const auto names      = (*chain)->module(0).stat_names();
  auto stat             = [&](const std::string& name) {
    for (size_t k = 0; k < names.size(); ++k)
      if (names[k] == name) return st.stats[k].load();
    return uint64_t(~0ull);
  };
  EXPECT_EQ(stat("active"), 1u);
  (*chain)->idle_states(*states, mono + 29'000'000'000ull);  // 29 s of quiet: still alive
  EXPECT_EQ(stat("ended_timeout"), 0u);
  (*chain)->idle_states(*states, mono + 31'000'000'000ull);  // past UDP's 30 s
  EXPECT_EQ(stat("ended_timeout"), 1u);
  EXPECT_EQ(stat("active"), 0u);
  ASSERT_TRUE((*chain)->finish_states(*states).is_ok());
  EXPECT_EQ(stat("ended_end"), 0u);
}

}  // namespace
}  // namespace warpath::runtime
