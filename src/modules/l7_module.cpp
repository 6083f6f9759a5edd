// src/modules/l7_module.cpp: the `l7` module: L7 classification of flows
// (include/warpath/nids/l7.hpp: l7-filter's method, GASPP's L7 traffic classifier) as context
// keys, so later modules, the ACL first, take a protocol's traffic: `flow -> l7(patterns=FILE)
// -> acl(rules=web.rules, when=http)`.
//
// What: every packet of the selection that a flow module before it tracked adds its payload
// to its flow's first bytes (both directions in arrival order, NULs removed) until the flow
// is labelled or the limits are reached (kL7MaxBytes, kL7MaxPackets); from then on each packet
// of a labelled flow is tagged with the context named by its label (the pattern's protocol
// name). The packets before the label (the handshake, a request's first segment when the
// pattern needs the second) keep their context, as l7-filter marks a connection only once it
// matched. Packets continue undecided.
//
// State: per worker, a matcher (the first worker takes the one compiled at build) and the
// flows being classified or labelled, freed when the flow module ends them.
//
// Contract: reads parse and flow; sets context (one context per protocol of the file).
#if defined(WARPATH_HAVE_NIDS)
#include <unordered_map>

#include "warpath/runtime/module.hpp"
#include "modules/flow_state.hpp"
#include "modules/module_helpers.hpp"
#include "warpath/nids/l7.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::runtime {
namespace {

// Reads the flow module's answers ("flows"); tags packets with their flow's protocol label.
ModuleContract l7_contract() {
  return {field_bit(Field::kParse) | field_bit(Field::kFlow), field_bit(Field::kContext), {}, {},
          {std::string(FlowWorkerState::kQueue)}, {}};
}

enum Stat : size_t { kLabelled, kUnknown, kTagged, kStatCount };

struct L7WorkerState final : ModuleState {
  explicit L7WorkerState(size_t count) : ModuleState(count) {}
  std::unique_ptr<pattern::Matcher> matcher;
  std::unordered_map<uint64_t, nids::L7Flow> flows;  ///< by flow serial
  std::vector<pattern::Match> matches;
  uint64_t labelled = 0, unknown = 0, tagged = 0;
};

class L7Module final : public Module {
 public:
  L7Module(std::shared_ptr<const nids::L7Set> set, std::unique_ptr<pattern::Matcher> first,
           std::vector<uint16_t> context_of, size_t flow_slot)
      : set_(std::move(set)),
        engine_(first->id()),
        context_of_(std::move(context_of)),
        flow_slot_(flow_slot),
        spare_(std::move(first)) {}
  std::string_view kind() const noexcept override { return "l7"; }
  ModuleContract contract() const override {
    ModuleContract c = l7_contract();
    c.contexts       = set_->names;
    return c;
  }
  std::string describe() const override {
    return std::to_string(set_->names.size()) + " protocols on " + engine_;
  }
  std::string engines(Place) const override { return engine_; }
  std::vector<std::string> stat_names() const override {
    return {"flows_labelled", "flows_unknown", "packets_tagged"};
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<L7WorkerState>(kStatCount);
    WARPATH_ASSIGN_OR_RETURN(st->matcher, spare_.take(engine_, set_->patterns));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st        = static_cast<L7WorkerState&>(*slot->state);
    const auto& fs  = side_queue<FlowWorkerState>(f, flow_slot_);
    const auto view = f.batch.view();
    const auto n    = uint32_t(std::min<size_t>(f.size(), fs.by_packet.size()));
    for (uint32_t i : sel.list) {
      if (i >= n || !fs.by_packet[i].serial) continue;
      nids::L7Flow& flow = st.flows[fs.by_packet[i].serial];
      if (!flow.done) {
        const uint8_t* data = nullptr;
        uint32_t len        = 0;
        if (stream::payload_of(f.infos[i], view.data(i), view.metas[i].caplen, data, len) &&
            nids::l7_classify(flow, data, len, *st.matcher, st.matches))
          ++(flow.label >= 0 ? st.labelled : st.unknown);
      }
      if (flow.label >= 0) {
        f.context[i] = context_of_[size_t(flow.label)];
        ++st.tagged;
      }
    }
    for (const flow::FlowRecord& r : fs.ended) st.flows.erase(r.serial);
    st.stats[kLabelled].store(st.labelled, std::memory_order_relaxed);
    st.stats[kUnknown].store(st.unknown, std::memory_order_relaxed);
    st.stats[kTagged].store(st.tagged, std::memory_order_relaxed);
  }

 private:
  std::shared_ptr<const nids::L7Set> set_;
  std::string engine_;
  std::vector<uint16_t> context_of_;  ///< by label: the context id of its name
  size_t flow_slot_;
  SpareMatcher spare_;
};

}  // namespace

ModuleInfo l7_module_info() {
  ModuleInfo i;
  i.kind = "l7";
  i.summary =
      "label flows by l7-filter's protocol patterns and tag their packets with the label as "
      "context";
  i.args = {
      {"patterns", "", "l7-filter patterns: the shared table (l7-patterns.tsv) or .pat files",
       ArgFile::kInput},
      {"engine", "auto", "pattern engine (regexes: cpu.hs where built, else cpu.dfa)"},
  };
  i.contract = l7_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    const size_t flow_slot = producer<FlowWorkerState>(env);
    if (flow_slot == env.earlier.size())
      return Status(Errc::kInvalidArgument, "needs a flow module before it (e.g. flow -> l7)");
    const std::string path = args.get("patterns");
    if (path.empty()) return Status(Errc::kInvalidArgument, "needs patterns=FILE");
    if (!env.tables || !env.tables->read_text)
      return Status(Errc::kNotSupported, "patterns=" + path + ": this program cannot load files");
    WARPATH_ASSIGN_OR_RETURN(const std::string text, env.tables->read_text(path));
    WARPATH_ASSIGN_OR_RETURN(nids::L7Set set, nids::parse_l7(text, path));
    if (set.patterns.empty())
      return Status(Errc::kInvalidArgument, "patterns=" + path + ": no pattern loads");
    if (env.warnings && !set.skipped.empty())
      env.warnings->push_back("patterns=" + path + ": " + std::to_string(set.skipped.size()) +
                               " pattern(s) skipped");
    std::vector<uint16_t> context_of;
    for (const std::string& name : set.names) {
      const uint32_t id = env.contexts->intern(name);
      if (id >= 256)
        return Status(Errc::kCapacity,
                       "patterns=" + path + ": more than 256 contexts in the chain");
      context_of.push_back(uint16_t(id));
    }
    WARPATH_ASSIGN_OR_RETURN(auto matcher,
                              pattern::make_matcher(args.get("engine", "auto"), set.patterns));
    return std::unique_ptr<Module>(
        std::make_unique<L7Module>(std::make_shared<const nids::L7Set>(std::move(set)),
                                   std::move(matcher), std::move(context_of), flow_slot));
  };
  return i;
}

WARPATH_REGISTER_MODULE(l7_module_info);

}  // namespace warpath::runtime
#endif  // WARPATH_HAVE_NIDS
