// src/modules/flow_module.cpp: the `flow` module: flow tracking in a chain
// (include/warpath/flow/flow.hpp has the semantics).
//
// What: every packet it is shown gets its flow (frame.flow: the flow's handle in this worker's
// table, 0 when not tracked) and continues. With on_full=drop, a packet that would open a flow
// in a full table is dropped ("flow_table_full"); with pass it continues untracked. Ended flows
// go to `log` as JSON lines (the records of `warpath flows`), when given.
//
// State: one flow table per worker (a stateful module: Module::make_state; flow_state.hpp).
// post() tracks the worker's packets in arrival order, whatever the chain's scheduling order,
// and leaves each packet's answer and the flows that ended in the state, where later modules
// (stream) read them.
//
// Contract: reads parse; sets flow and verdict.
#include <algorithm>
#include <cstdio>
#include <mutex>

#include "modules/flow_state.hpp"
#include "modules/module_helpers.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {
namespace {

// Reads the parse, sets each packet's flow (and drops what the table refuses); its state is the
// "flows" side queue.
ModuleContract flow_contract() {
  return {field_bit(Field::kParse), field_bit(Field::kFlow) | field_bit(Field::kVerdict), {},
          {std::string(FlowWorkerState::kQueue)}, {}, {}};
}

// The stats, in stat_names() order.
enum Stat : size_t {
  kFlows,
  kActive,
  kEndedTimeout,
  kEndedEvicted,
  kEndedReused,
  kEndedShutdown,
  kMidstream,
  kNotIp,
  kFragment,
  kMalformed,
  kRefused,
  kEmergency,
  kIgnoredRst,
  kIgnoredFin,
  kReoriented,
  kStatCount
};

class FlowModule final : public Module {
 public:
  FlowModule(std::string engine, flow::FlowConfig config, uint16_t full_reason, std::FILE* log,
             std::string log_path)
      : engine_(std::move(engine)),
        config_(config),
        full_reason_(full_reason),
        log_(log),
        log_path_(std::move(log_path)) {}
  ~FlowModule() override {
    if (log_) std::fclose(log_);
  }
  std::string_view kind() const noexcept override { return "flow"; }
  const flow::FlowConfig& config() const { return config_; }
  ModuleContract contract() const override {
    return flow_contract();
  }
  std::string describe() const override {
    return engine_ + ", " + std::to_string(config_.capacity) + " flows per worker, on full " +
           flow::on_full_name(config_.on_full) + (log_ ? ", log " + log_path_ : "");
  }
  std::string engines(Place) const override { return engine_; }
  std::vector<std::string> stat_names() const override {
    return {"flows",          "active",    "ended_timeout", "ended_evicted",
            "ended_reused",   "ended_end", "midstream",     "untracked_not_ip",
            "untracked_fragment", "untracked_malformed", "refused_full", "emergency_entered",
            "ignored_rst",    "ignored_fin", "reoriented"};
  }

  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<FlowWorkerState>(kStatCount);
    WARPATH_ASSIGN_OR_RETURN(st->tracker, flow::make_flow_tracker(engine_, config_));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<FlowWorkerState&>(*slot->state);
    // Arrival order (the selection may be in scheduling order).
    st.index.clear();
    for (uint32_t i = 0, n = f.size(); i < n; ++i)
      if (sel.contains(i)) st.index.push_back(i);
    const auto n = uint32_t(st.index.size());
    st.infos.resize(n);
    st.metas.resize(n);
    st.answers.resize(n);
    for (uint32_t k = 0; k < n; ++k) {
      st.infos[k] = f.infos[st.index[k]];
      st.metas[k] = f.batch.meta(st.index[k]);
    }
    // Flows that ended while the worker was idle come first (already logged), then this frame's.
    st.ended.swap(st.idle_ended);
    st.idle_ended.clear();
    const size_t logged = st.ended.size();
    // Spans of equal sizes: track cannot fail here.
    (void)st.tracker->track({st.infos.data(), n}, {st.metas.data(), n}, {st.answers.data(), n},
                            st.ended);
    for (uint32_t k = 0; k < n; ++k) st.clock = std::max(st.clock, st.metas[k].timestamp_ns);
    if (f.size()) st.mono = f.rx_ns[f.size() - 1];
    st.by_packet.assign(f.size(), flow::PacketFlow{});
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t i = st.index[k];
      f.flow[i]        = st.answers[k].handle;
      st.by_packet[i]  = st.answers[k];
      if (st.answers[k].track == flow::Track::kFullDropped) f.reason[i] = full_reason_;
    }
    log(st.ended, logged);
    publish(st);
  }

  // No packet for a while: a live link's quiet flows time out.
  void idle(ModuleState& state, uint64_t mono_ns) const override {
    auto& st = static_cast<FlowWorkerState&>(state);
    if (!advance_idle_clock(st.clock, st.mono, mono_ns)) return;
    const size_t from = st.idle_ended.size();
    (void)st.tracker->advance(st.clock, st.idle_ended);
    log(st.idle_ended, from);
    publish(st);
  }

  Status finish(ModuleState& state) const override {
    auto& st = static_cast<FlowWorkerState&>(state);
    st.ended.swap(st.idle_ended);  // for the modules after it (stream closes them)
    st.idle_ended.clear();
    const size_t logged = st.ended.size();
    WARPATH_TRY(st.tracker->flush(st.ended));
    log(st.ended, logged);
    publish(st);
    if (log_) {
      std::lock_guard<std::mutex> lock(log_mutex_);
      if (std::fflush(log_) != 0 || std::ferror(log_))
        return Status(Errc::kIoError, log_path_ + ": write failed");
    }
    return Status::ok();
  }

 private:
  void log(const std::vector<flow::FlowRecord>& ended, size_t from = 0) const {
    if (!log_ || ended.size() <= from) return;
    std::string text;
    for (size_t k = from; k < ended.size(); ++k) text += flow::flow_record_json(ended[k]) + "\n";
    std::lock_guard<std::mutex> lock(log_mutex_);
    std::fwrite(text.data(), 1, text.size(), log_);
  }
  static void publish(FlowWorkerState& st) {
    const flow::FlowCounters c = st.tracker->counters();
    auto set = [&](Stat s, uint64_t v) { st.stats[s].store(v, std::memory_order_relaxed); };
    set(kFlows, c.created);
    set(kActive, c.active);
    set(kEndedTimeout, c.ended[size_t(flow::FlowEnd::kTimeout)]);
    set(kEndedEvicted, c.ended[size_t(flow::FlowEnd::kEvicted)]);
    set(kEndedReused, c.ended[size_t(flow::FlowEnd::kReused)]);
    set(kEndedShutdown, c.ended[size_t(flow::FlowEnd::kShutdown)]);
    set(kMidstream, c.midstream);
    set(kNotIp, c.track[size_t(flow::Track::kNotIp)]);
    set(kFragment, c.track[size_t(flow::Track::kFragment)]);
    set(kMalformed, c.track[size_t(flow::Track::kMalformed)]);
    set(kRefused, c.track[size_t(flow::Track::kFullDropped)] +
                      c.track[size_t(flow::Track::kFullPassed)]);
    set(kEmergency, c.emergency_entered);
    set(kIgnoredRst, c.ignored_rst);
    set(kIgnoredFin, c.ignored_fin);
    set(kReoriented, c.reoriented);
  }

  std::string engine_;
  flow::FlowConfig config_;
  uint16_t full_reason_;
  std::FILE* log_;
  std::string log_path_;
  mutable std::mutex log_mutex_;
};

}  // namespace

uint32_t flow_module_capacity(const Module& m) {
  const auto* f = dynamic_cast<const FlowModule*>(&m);
  return f ? f->config().capacity : 0;
}

ModuleInfo flow_module_info() {
  ModuleInfo i;
  i.kind    = "flow";
  i.summary = "track flows (bidirectional 5-tuple + VLAN): per-worker table, timeouts, log";
  i.args    = {
         {"capacity", "262144", "flows per worker's table, 1..67108864"},
         {"on_full", "evict",
          "a new flow in a full table: evict (the least recently seen), drop, "
             "pass (untracked)"},
         {"engine", "cpu.flow", "flow engine: cpu.flow, ref.flow, validate:cpu.flow"},
         {"log", "", "write ended flows here as JSON lines", ArgFile::kOutput},
  };
  i.contract = flow_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    flow::FlowConfig config;
    WARPATH_ASSIGN_OR_RETURN(const uint64_t capacity,
                             args.get_u64("capacity", config.capacity, 1u << 26));
    if (capacity == 0) return Status(Errc::kInvalidArgument, "capacity=0: expected 1..67108864");
    config.capacity = uint32_t(capacity);
    WARPATH_ASSIGN_OR_RETURN(config.on_full, flow::parse_on_full(args.get("on_full", "evict")));
    const std::string engine = args.get("engine", "cpu.flow");
    // Built once here so a bad engine or configuration fails the chain, not a worker.
    WARPATH_TRY(flow::make_flow_tracker(engine, config).status());
    const std::string path = args.get("log");
    std::FILE* log         = nullptr;
    if (!path.empty()) {
      log = std::fopen(path.c_str(), "w");
      if (!log) return Status(Errc::kIoError, "log=" + path + ": cannot open for writing");
    }
    WARPATH_ASSIGN_OR_RETURN(const uint16_t full,
                             env.reasons->add("flow_table_full", Verdict::kDrop, env.position));
    return std::unique_ptr<Module>(
        std::make_unique<FlowModule>(engine, config, full, log, path));
  };
  return i;
}

WARPATH_REGISTER_MODULE(flow_module_info);

}  // namespace warpath::runtime
