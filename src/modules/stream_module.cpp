// src/modules/stream_module.cpp: the `stream` module: TCP stream reassembly in a chain
// (include/warpath/stream/stream.hpp has the rules).
//
// What: for every TCP packet the flow module before it tracked in this frame, the segment goes
// to this worker's reassembler; flows the flow module ended are closed. The stream bytes each
// frame delivers are the module's side queue (stream_state.hpp: chunks) for the modules after
// it. Packets continue undecided: reassembly observes, later modules decide.
//
// State: a reassembler per worker, beside the flow module's table (flows stay on one worker).
// When the worker stops, finish() delivers what is still buffered; no post runs after it, so
// those last chunks reach the module's counters but not the modules after it (a consumer
// that needs them reads the state in its own finish, which runs later in chain order).
//
// Contract: reads parse and flow (and needs a flow module before it: its answers are the
// flows' serials and directions); sets nothing of the packets'.
#include "warpath/runtime/module.hpp"
#include "modules/flow_state.hpp"
#include "modules/module_helpers.hpp"
#include "modules/stream_state.hpp"

namespace warpath::runtime {
namespace {

// Reads the flow module's answers ("flows"); its state is the "streams" side queue.
ModuleContract stream_contract() {
  return {field_bit(Field::kParse) | field_bit(Field::kFlow), 0, {},
          {std::string(StreamWorkerState::kQueue)}, {std::string(FlowWorkerState::kQueue)}, {}};
}

enum Stat : size_t {
  kStreams,
  kDelivered,
  kGaps,
  kGapBytes,
  kUnackedHoles,
  kOverlaps,
  kOverlapDiff,
  kRetransmitted,
  kBeforeHandshake,
  kMidstream,
  kAfterClose,
  kCapped,
  kDepth,
  kBuffered,
  kStatCount
};

class StreamModule final : public Module {
 public:
  StreamModule(std::string engine, stream::StreamConfig config, size_t flow_slot)
      : engine_(std::move(engine)), config_(config), flow_slot_(flow_slot) {}
  std::string_view kind() const noexcept override { return "stream"; }
  ModuleContract contract() const override {
    return stream_contract();
  }
  std::string describe() const override {
    return engine_ + ", policy " + stream::policy_name(config_.policy) +
           (config_.hosts.empty() ? "" : " (" + std::to_string(config_.hosts.size()) + " host prefixes)") +
           (config_.mode == stream::Mode::kInline ? ", inline" : ", ids") +
           (config_.depth ? ", depth " + std::to_string(config_.depth) : "") +
           (config_.midstream ? ", midstream" : "") +
           (config_.prealloc_flows
                ? ", room for " + std::to_string(config_.prealloc_flows) + " finished connections"
                : "");
  }
  std::string engines(Place) const override { return engine_; }
  std::vector<std::string> stat_names() const override {
    return {"streams",          "delivered_bytes", "gaps",         "gap_bytes",
            "unacked_holes",    "overlaps",         "overlap_diff",    "retransmitted_bytes",
            "before_handshake", "midstream",       "after_close",  "capped",
            "depth_reached",    "buffered_bytes"};
  }

  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<StreamWorkerState>(kStatCount);
    WARPATH_ASSIGN_OR_RETURN(st->reassembler, stream::make_reassembler(engine_, config_));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st       = static_cast<StreamWorkerState&>(*slot->state);
    const auto& fs = side_queue<FlowWorkerState>(f, flow_slot_);
    st.chunks.clear();
    st.bytes.clear();
    const stream::ChunkSink sink = [&st](const stream::Chunk& c) { keep(st, c); };
    // Arrival order; fails under validate: engines and on a GPU engine's device error: the
    // first failure is kept for finish to return (post cannot).
    const auto n = uint32_t(std::min<size_t>(f.size(), fs.by_packet.size()));
    Status s     = stream::reassemble_batch(*st.reassembler, f.batch.view(), f.infos.data(),
                                            fs.by_packet.data(), n, sink, false, sel.mask);
    st.closing.clear();
    for (const flow::FlowRecord& r : fs.ended)
      if (r.proto == 6) st.closing.push_back(r.serial);
    if (s.is_ok() && !st.closing.empty())
      s = st.reassembler->close_many(st.closing.data(), uint32_t(st.closing.size()), sink);
    if (!s.is_ok() && st.failed.is_ok()) st.failed = s;
    rebase(st);
    publish(st);
  }

  Status finish(ModuleState& state) const override {
    auto& st = static_cast<StreamWorkerState&>(state);
    st.chunks.clear();
    st.bytes.clear();
    WARPATH_TRY(st.failed);
    WARPATH_TRY(st.reassembler->close_all([&st](const stream::Chunk& c) { keep(st, c); }));
    rebase(st);
    publish(st);
    return Status::ok();
  }

 private:
  // Chunks keep their bytes' offsets in `bytes` until the frame is done (it may grow), then
  // rebase() turns the offsets into pointers.
  static void keep(StreamWorkerState& st, const stream::Chunk& c) {
    stream::Chunk k = c;
    if (!c.gap) {
      k.data = reinterpret_cast<const uint8_t*>(uintptr_t(st.bytes.size()));
      st.bytes.insert(st.bytes.end(), c.data, c.data + c.len);
    }
    st.chunks.push_back(k);
  }
  static void rebase(StreamWorkerState& st) {
    for (stream::Chunk& c : st.chunks)
      if (!c.gap) c.data = st.bytes.data() + reinterpret_cast<uintptr_t>(c.data);
  }
  static void publish(StreamWorkerState& st) {
    const stream::StreamCounters c = st.reassembler->counters();
    auto set = [&](Stat s, uint64_t v) { st.stats[s].store(v, std::memory_order_relaxed); };
    set(kStreams, c.streams);
    set(kDelivered, c.delivered_bytes);
    set(kGaps, c.gaps);
    set(kGapBytes, c.gap_bytes);
    set(kUnackedHoles, c.unacked_holes);
    set(kOverlaps, c.overlaps);
    set(kOverlapDiff, c.overlap_diff);
    set(kRetransmitted, c.retransmitted_bytes);
    set(kBeforeHandshake, c.before_handshake);
    set(kMidstream, c.midstream);
    set(kAfterClose, c.after_close);
    set(kCapped, c.stream_cap + c.memcap + c.beyond_window + c.flows_refused);
    set(kDepth, c.depth_reached);
    set(kBuffered, c.buffered_bytes);
  }

  std::string engine_;
  stream::StreamConfig config_;
  size_t flow_slot_;
};

}  // namespace

ModuleInfo stream_module_info() {
  ModuleInfo i;
  i.kind    = "stream";
  i.summary = "reassemble TCP streams of the flows a flow module tracks (side queue: chunks)";
  i.args    = {
      {"policy", "bsd", "overlap policy: first, last, bsd, linux, old-linux, solaris, vista, windows"},
      {"hosts", "", "per receiving host: PREFIX=POLICY[|PREFIX=POLICY...], longest prefix first"},
      {"mode", "ids", "ids (deliver acknowledged bytes) or inline (at once, first copy wins)"},
      {"depth", "1048576", "bytes per direction delivered; 0 = no limit"},
      {"midstream", "off", "pick up connections whose handshake was missed: on or off"},
      {"stream_cap", "1048576", "bytes buffered per direction"},
      {"memcap", "67108864", "bytes buffered per worker"},
      {"prealloc", "(flow capacity)",
       "cpu.stream: finished connections kept per worker in storage made at start (about 128 "
       "bytes each); default: the flow module's capacity, at most 1048576; 0: grown as needed"},
      {"engine", "cpu.stream", "reassembly engine: cpu.stream, ref.stream, cuda.stream, emu.stream, validate:<engine>"},
  };
  i.contract = stream_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    const size_t flow_slot = producer<FlowWorkerState>(env);
    if (flow_slot == env.earlier.size())
      return Status(Errc::kInvalidArgument,
                    "needs a flow module before it (e.g. flow -> stream)");
    stream::StreamConfig c;
    WARPATH_ASSIGN_OR_RETURN(c.policy, stream::parse_policy(args.get("policy", "bsd")));
    const std::string hosts = args.get("hosts");
    for (size_t at = 0; !hosts.empty() && at <= hosts.size();) {
      const size_t bar = std::min(hosts.find('|', at), hosts.size());
      WARPATH_ASSIGN_OR_RETURN(const stream::HostPolicy h,
                               stream::parse_host_policy(std::string_view(hosts).substr(at, bar - at)));
      c.hosts.push_back(h);
      at = bar + 1;
    }
    const std::string mode = args.get("mode", "ids");
    if (mode != "ids" && mode != "inline")
      return Status(Errc::kInvalidArgument, "mode=" + mode + ": expected ids or inline");
    c.mode = mode == "inline" ? stream::Mode::kInline : stream::Mode::kIds;
    WARPATH_ASSIGN_OR_RETURN(c.depth, args.get_u64("depth", c.depth, uint64_t(1) << 40));
    const std::string mid = args.get("midstream", "off");
    if (mid != "on" && mid != "off")
      return Status(Errc::kInvalidArgument, "midstream=" + mid + ": expected on or off");
    c.midstream = mid == "on";
    WARPATH_ASSIGN_OR_RETURN(const uint64_t cap, args.get_u64("stream_cap", c.stream_cap, 1u << 30));
    c.stream_cap = uint32_t(cap);
    WARPATH_ASSIGN_OR_RETURN(c.memcap, args.get_u64("memcap", c.memcap, uint64_t(1) << 40));
    const uint32_t table = flow_module_capacity(*env.earlier[flow_slot]);
    WARPATH_ASSIGN_OR_RETURN(const uint64_t pre,
                             args.get_u64("prealloc", c.prealloc_for(table), c.max_flows));
    c.prealloc_flows = uint32_t(pre);
    // The config and the engine's name checked on a copy without the storage (each worker
    // makes its own).
    const std::string engine = args.get("engine", "cpu.stream");
    stream::StreamConfig probe = c;
    probe.prealloc_flows       = 0;
    WARPATH_TRY(stream::make_reassembler(engine, probe).status());
    return std::unique_ptr<Module>(std::make_unique<StreamModule>(engine, c, flow_slot));
  };
  return i;
}

WARPATH_REGISTER_MODULE(stream_module_info);

}  // namespace warpath::runtime
