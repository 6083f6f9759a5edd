// src/modules/nids_module.cpp: the `nids` module: Suricata-style rules over live traffic
// (include/warpath/nids/inspector.hpp has the semantics; `warpath nids` runs the same inspector
// over a capture).
//
// What: each worker runs an inspector (its own flow table, reassembler and detector; flows stay
// on one worker through RSS / fanout hashing) over the packets of its frames, in order. Alerts
// and ended flows are written as EVE JSON lines to `eve=` (all workers into one file). In IDS
// mode every packet continues; in IPS mode (mode=ips: inline reassembly) a packet a drop rule
// matched is dropped (reason "nids_drop"), and so is every later packet of its flow when the
// rule's action covers the flow.
//
// Contract: reads parse; sets verdict (IPS mode only drops). Idle workers move the inspector's
// clock (flows time out on a quiet link); the end of the run ends every flow.
#if defined(WARPATH_HAVE_NIDS)
#include <chrono>
#include <mutex>

#include "warpath/runtime/module.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract nids_contract() { return {field_bit(Field::kParse), field_bit(Field::kVerdict)}; }

enum Stat : size_t { kPackets, kAlerts, kDropped, kFlows, kStatCount };

struct NidsWorkerState final : ModuleState {
  NidsWorkerState() : ModuleState(kStatCount) {}
  std::unique_ptr<nids::Inspector> inspector;
  std::vector<packet::PacketMeta> metas;
  std::vector<packet::PacketInfo> infos;
  std::vector<uint32_t> index;
  std::vector<uint8_t> drop;
  std::vector<nids::Alert> alerts;
  std::vector<nids::FlowEvent> ended;
  std::vector<nids::AppEvent> app_events;
  std::string lines;
};

class NidsModule final : public Module {
 public:
  NidsModule(std::shared_ptr<const nids::DetectImage> image, nids::InspectorConfig cfg,
             uint16_t reason, std::FILE* eve, std::string eve_path, size_t skipped)
      : image_(std::move(image)), cfg_(std::move(cfg)), reason_(reason), eve_(eve),
        eve_path_(std::move(eve_path)), skipped_(skipped) {}
  ~NidsModule() override {
    if (eve_) std::fclose(eve_);
  }
  std::string_view kind() const noexcept override { return "nids"; }
  ModuleContract contract() const override { return nids_contract(); }
  std::string describe() const override {
    return std::to_string(image_->rules().size()) + " rules (" + std::to_string(skipped_) +
           " skipped), " + (cfg_.ips ? "ips" : "ids") + (eve_ ? ", eve " + eve_path_ : "");
  }
  std::string engines(Place) const override { return cfg_.engine; }
  std::vector<std::string> stat_names() const override {
    return {"packets", "alerts", "dropped", "flows"};
  }
  Result<std::unique_ptr<ModuleState>> make_state() const override {
    auto st = std::make_unique<NidsWorkerState>();
    WARPATH_ASSIGN_OR_RETURN(st->inspector, nids::Inspector::make(image_, cfg_));
    return std::unique_ptr<ModuleState>(std::move(st));
  }

  void post(Frame& f, ModuleSlot* slot, const Selection& sel) const override {
    auto& st = static_cast<NidsWorkerState&>(*slot->state);
    // The selected packets, in order, as one batch view over the frame's buffer.
    const packet::BatchView view = f.batch.view();
    st.metas.clear();
    st.infos.clear();
    st.index.clear();
    for (uint32_t i : sel.list) {
      st.metas.push_back(view.metas[i]);
      st.infos.push_back(f.infos[i]);
      st.index.push_back(i);
    }
    const uint32_t n = uint32_t(st.index.size());
    st.drop.assign(n, 0);
    packet::BatchView sub{view.buffer, st.metas.data(), n};
    if (!st.inspector->process(sub, st.infos.data(), n, st.alerts, st.ended, st.drop.data()).is_ok())
      return;  // only validate: engines fail, and the CLI does not offer them here
    uint64_t dropped = 0;
    for (uint32_t k = 0; k < n; ++k)
      if (st.drop[k]) {
        f.reason[st.index[k]] = reason_;
        ++dropped;
      }
    add(st, kPackets, n);
    add(st, kDropped, dropped);
    emit(st);
  }

  void idle(ModuleState& s, uint64_t) const override {
    auto& st = static_cast<NidsWorkerState&>(s);
    const auto now = std::chrono::system_clock::now().time_since_epoch();
    if (st.inspector->advance(uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(now).count()),
                              st.alerts, st.ended).is_ok())
      emit(st);
  }

  Status finish(ModuleState& s) const override {
    auto& st = static_cast<NidsWorkerState&>(s);
    WARPATH_TRY(st.inspector->finish(st.alerts, st.ended));
    emit(st);
    if (eve_) {
      std::lock_guard<std::mutex> lock(eve_mutex_);
      if (std::fflush(eve_) != 0 || std::ferror(eve_)) return Status(Errc::kIoError, eve_path_ + ": write failed");
    }
    return Status::ok();
  }

 private:
  static void add(NidsWorkerState& st, Stat s, uint64_t v) {
    st.stats[s].fetch_add(v, std::memory_order_relaxed);
  }
  void emit(NidsWorkerState& st) const {
    add(st, kAlerts, st.alerts.size());
    add(st, kFlows, st.ended.size());
    st.app_events.clear();
    st.inspector->take_app_events(st.app_events);
    if (eve_ && (!st.alerts.empty() || !st.ended.empty() || !st.app_events.empty())) {
      st.lines.clear();
      for (const nids::Alert& a : st.alerts) st.lines += nids::alert_eve(a, *image_, cfg_.ips) + "\n";
      for (const nids::AppEvent& e : st.app_events) st.lines += nids::app_eve(e) + "\n";
      for (const nids::FlowEvent& e : st.ended) st.lines += nids::flow_eve(e) + "\n";
      std::lock_guard<std::mutex> lock(eve_mutex_);
      std::fwrite(st.lines.data(), 1, st.lines.size(), eve_);
    }
    st.alerts.clear();
    st.ended.clear();
  }

  std::shared_ptr<const nids::DetectImage> image_;
  nids::InspectorConfig cfg_;
  uint16_t reason_;
  std::FILE* eve_;
  std::string eve_path_;
  size_t skipped_;
  mutable std::mutex eve_mutex_;
};

}  // namespace

ModuleInfo nids_module_info() {
  ModuleInfo i;
  i.kind    = "nids";
  i.summary = "Suricata-style rules over packets, reassembled TCP streams and HTTP/TLS/DNS transactions; EVE alerts; IDS or IPS";
  i.args    = {
         {"rules", "", "rule file, or a directory of *.rules", ArgFile::kInput},
         {"eve", "", "write alerts, transactions and ended flows here as EVE JSON lines",
          ArgFile::kOutput},
         {"mode", "ids",
          "ids (alert) or ips (drop rules drop the packet, and the flow when they cover it)"},
         {"engine", "auto",
          "detection engine: auto, cpu.nids, cuda.nids (batches of buffers), ref.nids"},
         {"midstream", "0", "1: inspect TCP connections whose handshake was missed"},
         {"policy", "bsd", "overlap policy of the receivers: bsd, linux, windows, first, last, ..."},
         {"capacity", "262144", "flows each worker's table holds"},
         {"stream_chunk", "0",
          "ids: inspect a stream direction once this many new bytes wait (Suricata: 2560); 0: every "
             "segment"},
         {"stream_chunk_jitter", "10",
          "each chunk's size drawn at random within this many per cent of stream_chunk either way "
             "(0-50)"},
         {"l7", "", "l7-filter patterns: label flows (EVE app_proto; app-layer-protocol in rules)"},
         {"app_memcap", "268435456",
          "bytes the HTTP, TLS and DNS parsers of a worker's flows may hold together"},
         {"tls_encryption_handling", "default",
          "TLS after its handshake: default (its encrypted stream is not inspected) or full"},
  };
  i.contract = nids_contract();
  i.make  = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    const std::string path = args.get("rules");
    if (path.empty()) return Status(Errc::kInvalidArgument, "needs rules=FILE|DIR");
    if (!env.tables || !env.tables->read_text)
      return Status(Errc::kNotSupported, "rules=" + path + ": this program cannot load files");
    WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules({path}, nids::Vars{}, env.tables->read_text));
    for (const nids::FileReport& f : set.files)
      for (const nids::RuleProblem& p : f.problems)
        if (p.syntax) return Status(Errc::kParseError, p.where + ": " + p.reason);
    if (set.rules.empty()) return Status(Errc::kInvalidArgument, "rules=" + path + ": no rule loads");
    if (env.warnings && set.skipped())
      env.warnings->push_back(std::to_string(set.skipped()) + " rule(s) outside the supported subset "
                              "skipped (warpath nids --check-rules lists them)");
    WARPATH_ASSIGN_OR_RETURN(auto image, nids::compile_rules(set));
    nids::InspectorConfig cfg;
    cfg.engine = args.get("engine", "auto");
    const std::string mode = args.get("mode", "ids");
    if (mode != "ids" && mode != "ips") return Status(Errc::kInvalidArgument, "mode must be ids or ips");
    cfg.ips = mode == "ips";
    const std::string encrypted = args.get("tls_encryption_handling", "default");
    if (encrypted != "default" && encrypted != "full")
      return Status(Errc::kInvalidArgument, "tls_encryption_handling must be default or full");
    cfg.inspect_encrypted = encrypted == "full";
    WARPATH_ASSIGN_OR_RETURN(cfg.app.memcap, args.get_u64("app_memcap", 256ull << 20, uint64_t(1) << 40));
    WARPATH_ASSIGN_OR_RETURN(const uint64_t midstream, args.get_u64("midstream", 0, 1));
    cfg.stream.midstream = midstream != 0;
    WARPATH_ASSIGN_OR_RETURN(cfg.stream.policy, stream::parse_policy(args.get("policy", "bsd")));
    WARPATH_ASSIGN_OR_RETURN(const uint64_t capacity, args.get_u64("capacity", 1u << 18, 1u << 26));
    cfg.flow.capacity = uint32_t(capacity);
    WARPATH_ASSIGN_OR_RETURN(const uint64_t chunk,
                             args.get_u64("stream_chunk", 0, nids::kMaxStreamChunk));
    cfg.stream_chunk = uint32_t(chunk);
    WARPATH_ASSIGN_OR_RETURN(const uint64_t jitter,
                             args.get_u64("stream_chunk_jitter", 10, nids::kMaxStreamChunkJitter));
    cfg.stream_chunk_jitter = uint32_t(jitter);
    if (const std::string l7 = args.get("l7"); !l7.empty()) {
      WARPATH_ASSIGN_OR_RETURN(const std::string text, env.tables->read_text(l7));
      WARPATH_ASSIGN_OR_RETURN(nids::L7Set set7, nids::parse_l7(text, l7));
      if (env.warnings && !set7.skipped.empty())
        env.warnings->push_back("l7=" + l7 + ": " + std::to_string(set7.skipped.size()) + " pattern(s) skipped");
      cfg.l7 = std::make_shared<const nids::L7Set>(std::move(set7));
    }
    {  // the configuration is checked now, not per worker
      auto probe = nids::Inspector::make(image, cfg);
      if (!probe.is_ok()) return probe.status();
    }
    WARPATH_ASSIGN_OR_RETURN(const uint16_t reason,
                             env.reasons->add("nids_drop", Verdict::kDrop, env.position));
    const std::string eve_path = args.get("eve");
    cfg.app_events             = !eve_path.empty();  // EVE's http events
    std::FILE* eve             = nullptr;
    if (!eve_path.empty()) {
      eve = std::fopen(eve_path.c_str(), "w");
      if (!eve) return Status(Errc::kIoError, "eve=" + eve_path + ": cannot open for writing");
    }
    return std::unique_ptr<Module>(std::make_unique<NidsModule>(std::move(image), cfg, reason, eve,
                                                                eve_path, set.skipped()));
  };
  return i;
}

WARPATH_REGISTER_MODULE(nids_module_info);

}  // namespace warpath::runtime
#endif  // WARPATH_HAVE_NIDS
