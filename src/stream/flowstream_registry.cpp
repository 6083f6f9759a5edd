// The flow-and-stream engine registry (the only list of them), the validating wrapper and the
// self-test's check (include/warpath/stream/flowstream.hpp).
#include <algorithm>
#include <new>
#include <string>
#include <vector>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "stream/flowstream_engines.hpp"
#include "stream/recorded_chunk.hpp"
#include "warpath/core/exec.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/flowstream.hpp"
#include "warpath/stream/generate.hpp"

namespace warpath::stream {
namespace {

using detail::Recorded;

std::string describe_record(const flow::FlowRecord& r) {
  return "flow " + std::to_string(r.serial) + " (" + std::to_string(r.packets[0]) + "+" +
         std::to_string(r.packets[1]) + " packets, " + flow::flow_end_name(r.end) + ")";
}

// An engine and ref.flowstream side by side: fails on the first difference in the packets'
// answers (the table's handles aside: each engine numbers its own), the flow records, the chunks
// or either set of counters.
class ValidatingFlowStream final : public ValidatingPair<FlowStream> {
 public:
  ValidatingFlowStream(std::unique_ptr<FlowStream> engine, std::unique_ptr<FlowStream> ref)
      : ValidatingPair(std::move(engine), std::move(ref), "ref.flowstream") {}
  const flow::FlowConfig& flow_config() const noexcept override { return engine_->flow_config(); }
  const StreamConfig& stream_config() const noexcept override { return engine_->stream_config(); }
  flow::FlowCounters flow_counters() const override { return engine_->flow_counters(); }
  StreamCounters stream_counters() const override { return engine_->stream_counters(); }
  size_t streams() const override { return engine_->streams(); }

  Status process(const packet::BatchView& batch, const packet::PacketInfo* infos,
                 Span<flow::PacketFlow> out, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink, const uint8_t* mask) override {
    std::vector<flow::PacketFlow> want(out.size);
    WARPATH_TRY(both(ended, sink, [&](FlowStream& e, bool ref, std::vector<flow::FlowRecord>& into,
                                      const ChunkSink& k) {
      return e.process(batch, infos, ref ? Span<flow::PacketFlow>{want.data(), out.size} : out,
                       into, k, mask);
    }));
    return first_difference(
        out.size, "packet",
        [&](uint32_t i) {
          return out[i].serial == want[i].serial && out[i].dir == want[i].dir &&
                 out[i].track == want[i].track && out[i].created == want[i].created;
        },
        [&](uint32_t i) {
          return ": flow " + std::to_string(out[i].serial) + " dir " +
                 std::to_string(out[i].dir) + ", ref.flowstream flow " +
                 std::to_string(want[i].serial) + " dir " + std::to_string(want[i].dir);
        });
  }
  Status advance(uint64_t now_ns, std::vector<flow::FlowRecord>& ended,
                 const ChunkSink& sink) override {
    return both(ended, sink, [&](FlowStream& e, bool, std::vector<flow::FlowRecord>& into,
                                 const ChunkSink& k) { return e.advance(now_ns, into, k); });
  }
  Status flush(std::vector<flow::FlowRecord>& ended, const ChunkSink& sink) override {
    return both(ended, sink, [&](FlowStream& e, bool, std::vector<flow::FlowRecord>& into,
                                 const ChunkSink& k) { return e.flush(into, k); });
  }

 private:
  // The call on both (the engine's records to `ended`, its chunks also to `sink`), then the
  // records, chunks and counters compared.
  template <class Call>
  Status both(std::vector<flow::FlowRecord>& ended, const ChunkSink& sink, const Call& call) {
    std::vector<Recorded> got, want;
    std::vector<flow::FlowRecord> ref_ended;
    const size_t from = ended.size();
    WARPATH_TRY(call(*engine_, false, ended, detail::recording(got, &sink)));
    WARPATH_TRY(call(*ref_, true, ref_ended, detail::recording(want)));
    WARPATH_TRY(same_records(ended, from, ref_ended, "flow records", describe_record));
    if (std::string d = detail::chunk_difference(got, want, "ref.flowstream"); !d.empty())
      return differs(d);
    WARPATH_TRY(same_counters(engine_->flow_counters(), ref_->flow_counters()));
    WARPATH_TRY(same_counters(engine_->stream_counters(), ref_->stream_counters()));
    if (engine_->streams() != ref_->streams())
      return differs(" keeps " + std::to_string(engine_->streams()) + " flows' stream state, " +
                     "ref.flowstream " + std::to_string(ref_->streams()));
    return Status::ok();
  }
};

using FlowStreamTable = EngineTable<FlowStream(const flow::FlowConfig&, const StreamConfig&)>;

FlowStreamTable::Made make_reference(const flow::FlowConfig& fc, const StreamConfig& sc) {
  return detail::make_chained_flowstream("ref.flowstream", "ref.flow", "ref.stream", fc, sc);
}

FlowStreamTable::Made validated(std::unique_ptr<FlowStream> engine, const flow::FlowConfig& fc,
                                const StreamConfig& sc) {
  WARPATH_ASSIGN_OR_RETURN(auto ref, make_reference(fc, sc));
  return std::unique_ptr<FlowStream>(
      std::make_unique<ValidatingFlowStream>(std::move(engine), std::move(ref)));
}

const FlowStreamTable& engine_table() {
  static const FlowStreamTable table(
      "flowstream",
      {
          {{"ref.flowstream", "ref.flow chained to ref.stream (the oracle)", 0, engine_always},
           make_reference},
          // auto: the chained pair, 1-4% faster than the fused engine in paired rounds (the same
          // instructions a packet: bench/results/stream-flowstream-2026-11-28-61ffe2a-amd.md).
          {{"cpu.chained", "cpu.flow chained to cpu.stream", 10, engine_always},
           [](const flow::FlowConfig& fc, const StreamConfig& sc) -> FlowStreamTable::Made {
             return detail::make_chained_flowstream("cpu.chained", "cpu.flow", "cpu.stream", fc,
                                                    sc);
           }},
          {{"cpu.flowstream",
            "one pass: a packet's flow found once, its segment reassembled as it is tracked, "
            "the stream state reached from the flow's entry",
            5, engine_always},
           [](const flow::FlowConfig& fc, const StreamConfig& sc) -> FlowStreamTable::Made {
             return detail::make_cpu_flowstream(fc, sc);
           }},
      },
      &validated);
  return table;
}

}  // namespace

std::vector<EngineInfo> flowstream_engines() { return engine_table().infos(); }

Result<std::unique_ptr<FlowStream>> make_flowstream(std::string_view requested,
                                                    const flow::FlowConfig& flow_config,
                                                    const StreamConfig& stream_config) {
  WARPATH_TRY(flow_config.validate());
  WARPATH_TRY(stream_config.validate());
  try {  // the storage prealloc_flows asks for is made here
    return engine_table().make(requested, flow_config, stream_config);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "flowstream engine " + std::string(requested) +
                                          ": no memory for the flow table or prealloc_flows");
  }
}

namespace {

/// One round of the check: a configuration and the hostile traffic it is meant to meet, and
/// how the round is fed (advance() between batches, a mask).
struct Feed {
  uint64_t advance_ns = 0;  ///< after each batch, advance() to its last packet + this; 0: never
  bool mask           = false;  ///< every seventh packet masked out
};
struct Setup {
  const char* name;
  void (*configure)(flow::FlowConfig&, StreamConfig&, FrameGenParams&, Feed&);
};

constexpr Setup kSetups[] = {
    {"bsd, reordered and overlapping",
     [](flow::FlowConfig&, StreamConfig&, FrameGenParams&, Feed&) {}},
    {"a table of 8 flows (evictions), shared ports, UDP",
     [](flow::FlowConfig& fc, StreamConfig& sc, FrameGenParams& g, Feed&) {
       fc.capacity    = 8;
       sc.policy      = Policy::kLinux;
       g.shared_ports = true;
       g.udp_percent  = 10;
     }},
    {"timeouts: TCP 2 / 5 / 2 s, idle gaps of 3 s, advance() between batches",
     [](flow::FlowConfig& fc, StreamConfig& sc, FrameGenParams& g, Feed& feed) {
       for (auto& t : fc.timeout_s) t[0] = 2, t[1] = 5, t[2] = 2;
       for (auto& t : fc.emergency_timeout_s) t[0] = 1, t[1] = 2, t[2] = 1;
       fc.capacity     = 16;
       sc.policy       = Policy::kOldLinux;
       g.idle_permille = 20;
       g.idle_ns       = 3'000'000'000ull;
       feed.advance_ns = 1'500'000'000ull;
     }},
    {"max_flows 5, small caps, RSTs and a SYN flood",
     [](flow::FlowConfig&, StreamConfig& sc, FrameGenParams& g, Feed&) {
       sc.max_flows   = 5;
       sc.stream_cap  = 600;
       sc.memcap      = 4000;
       g.rst_percent  = 5;
       g.syn_flood    = 40;
       g.streams.loss_percent = 3;
     }},
    {"max_flows 4 over a table of 8: flows ended inside a batch still count",
     [](flow::FlowConfig& fc, StreamConfig& sc, FrameGenParams& g, Feed&) {
       fc.capacity  = 8;
       sc.max_flows = 4;
       g.syn_flood  = 30;
       g.streams.fin = false;
     }},
    {"connections again on the same ports after they closed (port reuse), max_flows 6",
     [](flow::FlowConfig&, StreamConfig& sc, FrameGenParams& g, Feed&) {
       sc.max_flows = 6;
       g.again      = true;
       g.rst_percent = 2;
     }},
    {"inline, solaris, midstream, a full table that drops",
     [](flow::FlowConfig& fc, StreamConfig& sc, FrameGenParams& g, Feed&) {
       fc.capacity    = 10;
       fc.on_full     = flow::OnFull::kDrop;
       sc.mode        = Mode::kInline;
       sc.policy      = Policy::kSolaris;
       sc.midstream   = true;
       g.syn_flood    = 10;
       g.streams.loss_percent = 5;
     }},
    {"a full table that passes, host policies, any checksum, a mask",
     [](flow::FlowConfig& fc, StreamConfig& sc, FrameGenParams& g, Feed& feed) {
       fc.capacity             = 6;
       fc.on_full              = flow::OnFull::kPass;
       fc.ignore_ipv4_checksum = true;
       g.bad_checksum_percent  = 5;
       sc.hosts.push_back(parse_host_policy("10.0.0.0/29=first").value());
       sc.hosts.push_back(parse_host_policy("192.168.0.1=vista").value());
       g.streams.conflict_percent = 30;
       feed.mask = true;
     }},
    {"depth 3000, last, preallocated finished flows",
     [](flow::FlowConfig&, StreamConfig& sc, FrameGenParams& g, Feed&) {
       sc.depth          = 3000;
       sc.policy         = Policy::kLast;
       sc.prealloc_flows = 4;
       g.shared_ports    = true;
     }},
};

/// Runs `frames` through `e` in batches of `batch` (with an empty batch first), then advances
/// past the last packet and flushes.
Status run_frames(FlowStream& e, const GeneratedFrames& frames, uint32_t batch, const Feed& feed) {
  batch = uint32_t(std::clamp<size_t>(batch, 1, std::max<size_t>(frames.size(), 1)));
  WARPATH_ASSIGN_OR_RETURN(auto parser, packet::make_parser("cpu.parse"));
  WARPATH_ASSIGN_OR_RETURN(auto b, packet::PacketBatch::create(batch, 2048));
  std::vector<packet::PacketInfo> infos(batch);
  std::vector<flow::PacketFlow> answers(batch);
  std::vector<uint8_t> mask(batch);
  std::vector<flow::FlowRecord> ended;
  ExecContext ctx;
  WARPATH_TRY(e.process(b.view(), infos.data(), {answers.data(), 0}, ended, nullptr));
  for (size_t at = 0; at < frames.size();) {
    b.clear();
    for (uint32_t k = 0; k < batch && at < frames.size(); ++k, ++at) {
      b.append(frames.bytes.data() + frames.offset[at], frames.length[at], frames.length[at],
               frames.ts_ns[at]);
      mask[k] = at % 7 != 3;
    }
    const uint32_t n = b.size();
    WARPATH_TRY(parser->parse(b.view(), {infos.data(), n}, ctx));
    WARPATH_TRY(e.process(b.view(), infos.data(), {answers.data(), n}, ended, nullptr,
                          feed.mask ? mask.data() : nullptr));
    if (feed.advance_ns) WARPATH_TRY(e.advance(frames.ts_ns[at - 1] + feed.advance_ns, ended, nullptr));
  }
  WARPATH_TRY(e.advance(frames.ts_ns.empty() ? 0 : frames.ts_ns.back() + 1, ended, nullptr));
  return e.flush(ended, nullptr);
}

}  // namespace

CheckReport check_flowstream_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"flowstream", std::string(id), seed, 0, false, {}};
  static constexpr uint32_t kBatch[] = {1, 7, 31, 32, 33, 256, 1u << 20};
  for (uint64_t round = 0; report.items < std::max<uint64_t>(items, 1); ++round) {
    const Setup& setup = kSetups[round % std::size(kSetups)];
    flow::FlowConfig fc;
    fc.capacity = 1024;  // the default's 32 MiB table, made per round, would be most of the time
    StreamConfig sc;
    FrameGenParams g;
    g.streams.seed              = seed + round;
    g.streams.flows             = 12;
    g.streams.reorder_percent   = 20;
    g.streams.duplicate_percent = 10;
    g.streams.overlap_percent   = 20;
    g.streams.conflict_percent  = 10;
    Feed feed;
    setup.configure(fc, sc, g, feed);
    auto e = make_flowstream("validate:" + std::string(id), fc, sc);
    if (!e.is_ok()) {
      report.skipped = e.status().code() == Errc::kNotSupported;
      report.detail  = e.status().message();
      return report;
    }
    const GeneratedFrames frames = generate_frames(g);
    // Every setup meets every batch size once in size(kSetups) x size(kBatch) rounds.
    const uint32_t batch = kBatch[(round / std::size(kSetups)) % std::size(kBatch)];
    if (Status st = run_frames(**e, frames, batch, feed); !st.is_ok()) {
      report.detail = std::string(setup.name) + ", batches of " + std::to_string(batch) + ": " +
                      st.message();
      return report;
    }
    report.items += frames.size();
  }
  return report;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(flowstream, "flowstream", 70, &flowstream_engines,
                               &check_flowstream_engine);

}  // namespace warpath::stream
