#if defined(WARPATH_HAVE_NIDS)  // built where PCRE2 is (the pcre keyword)
// warpath nids: Suricata-style rules over a capture's packets and reassembled TCP streams,
// alerts as EVE JSON and fast.log lines, a summary; --check-rules says what of a rule set
// loads and why the rest does not.
#include <fmt/core.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

#include "capture_progress.hpp"
#include "commands.hpp"
#include "output_file.hpp"
#include "warpath/io/capture_input.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/nids/detect.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::cli {

using io::CaptureInput;
namespace {

struct NidsOptions {
  std::vector<std::string> rules, vars, hosts;
  std::string action_order, midstream_policy = "ignore", l7, unit_batches = "auto";
  std::string in, eve, fast, json, classification, engine = "auto", filter, policy = "bsd";
  bool check_rules = false, verbose = false, ips = false, midstream = false, no_checksum = false;
  bool no_defrag = false, no_flows = false, skip_bad_rules = false, progress = false;
  bool strict = false;
  std::string shard = "0/1";
  uint32_t capacity = 1u << 18;
  uint32_t batch    = CaptureInput::kBatch;
  uint32_t inspect_depth = 1u << 20;
  uint64_t app_memcap    = 256ull << 20;  // AppConfig::memcap
  std::string encryption_handling = "default";
  uint32_t stream_chunk  = 0;
  uint32_t stream_chunk_jitter = 10;
};

// An optional output (--eve, --fast, --json): nothing when `path` is empty, stdout for "-".
class Out {
 public:
  Status open(const std::string& path, const std::vector<std::string>& inputs) {
    if (path.empty()) return Status::ok();
    file_ = std::make_unique<OutputFile>(path == "-" ? std::string() : path);
    return file_->open(inputs);
  }
  bool is_open() const { return file_ != nullptr; }
  Status line(const std::string& text) {
    return file_->guarded([&](std::FILE* f) {
      if (std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fputc('\n', f) == EOF)
        throw std::system_error(errno, std::generic_category());
    });
  }
  Status commit() { return file_ ? file_->commit() : Status::ok(); }

 private:
  std::unique_ptr<OutputFile> file_;
};

Status write_json(const std::string& path, const std::vector<std::string>& inputs,
                  const nlohmann::ordered_json& doc) {
  Out out;
  WARPATH_TRY(out.open(path, inputs));
  WARPATH_TRY(out.line(doc.dump(2)));
  return out.commit();
}

// A count table's entries, largest count first (stable for equal counts: key order).
template <class Map>
std::vector<std::pair<typename Map::key_type, typename Map::mapped_type>> by_count(const Map& m) {
  std::vector<std::pair<typename Map::key_type, typename Map::mapped_type>> v(m.begin(), m.end());
  std::stable_sort(v.begin(), v.end(), [](const auto& a, const auto& b) { return a.second > b.second; });
  return v;
}

Result<nids::RuleSet> load(const NidsOptions& o) {
  nids::Vars vars;
  for (const std::string& v : o.vars) WARPATH_TRY(vars.set_from(v));
  WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules(o.rules, vars));
  if (!o.action_order.empty()) {
    WARPATH_ASSIGN_OR_RETURN(set.action_order, nids::parse_action_order(o.action_order));
  }
  if (!o.classification.empty()) {
    WARPATH_ASSIGN_OR_RETURN(std::string text, io::read_text_file(o.classification));
    WARPATH_ASSIGN_OR_RETURN(set.classification, nids::parse_classification(text, o.classification));
  }
  return set;
}

int check_rules(const NidsOptions& o, const nids::RuleSet& set) {
  uint32_t rules = 0, loaded = 0, disabled = 0;
  std::map<std::string, uint32_t> reasons;
  nlohmann::ordered_json files = nlohmann::ordered_json::array();
  for (const nids::FileReport& f : set.files) {
    std::map<std::string, uint32_t> mine;
    for (const nids::RuleProblem& p : f.problems) ++mine[nids::reason_key(p)], ++reasons[nids::reason_key(p)];
    rules += f.rules, loaded += f.loaded, disabled += f.disabled;
    if (o.json.empty()) {
      fmt::print("{}: {} of {} rules load ({:.1f}%){}\n", f.path, f.loaded, f.rules,
                 f.rules ? 100.0 * f.loaded / f.rules : 100.0,
                 f.disabled ? fmt::format(", {} commented out", f.disabled) : "");
      for (const auto& [k, n] : by_count(mine)) fmt::print("    {:6}  {}\n", n, k);
      if (o.verbose)
        for (const nids::RuleProblem& p : f.problems)
          fmt::print("  {}: sid {}: {}{}\n", p.where, p.sid, p.syntax ? "syntax error: " : "skipped: ", printable(p.reason));
    }
    nlohmann::ordered_json j = {{"file", f.path}, {"rules", f.rules}, {"loaded", f.loaded},
                                {"disabled", f.disabled}, {"skipped_by", mine}};
    if (o.verbose) {
      j["problems"] = nlohmann::ordered_json::array();
      for (const nids::RuleProblem& p : f.problems)
        j["problems"].push_back({{"where", p.where}, {"sid", p.sid}, {"syntax", p.syntax}, {"reason", p.reason}});
    }
    files.push_back(std::move(j));
  }
  if (!o.json.empty()) {
    nlohmann::ordered_json doc = {{"rules", rules}, {"loaded", loaded}, {"disabled", disabled},
                                  {"syntax_errors", set.syntax_errors()}, {"skipped_by", reasons},
                                  {"files", files}};
    if (Status s = write_json(o.json, o.rules, doc); !s.is_ok()) return fail(s);
    return 0;
  }
  fmt::print("total: {} of {} rules load ({:.1f}%), {} skipped, {} syntax errors\n", loaded, rules,
             rules ? 100.0 * loaded / rules : 100.0, set.skipped(), set.syntax_errors());
  const auto sorted = by_count(reasons);
  if (!sorted.empty()) fmt::print("not loaded, by keyword:\n");
  for (const auto& [k, n] : sorted) fmt::print("  {:6}  {}\n", n, k);
  return 0;
}

// The inspector's settings from the options (engine, mode, stream policies, l7 patterns).
Result<nids::InspectorConfig> inspector_config(const NidsOptions& o) {
  nids::InspectorConfig cfg;
  cfg.engine        = o.engine;
  cfg.ips           = o.ips;
  cfg.inspect_depth = o.inspect_depth;
  cfg.stream_chunk     = o.stream_chunk;
  cfg.stream_chunk_jitter = o.stream_chunk_jitter;
  cfg.any_checksum  = o.no_checksum;
  cfg.app_events    = !o.eve.empty();  // EVE's http events
  cfg.app.memcap    = o.app_memcap;
  if (o.encryption_handling != "default" && o.encryption_handling != "full")
    return Status(Errc::kInvalidArgument, "--tls-encryption-handling: expected default or full, not '" +
                                              o.encryption_handling + "'");
  cfg.inspect_encrypted = o.encryption_handling == "full";
  cfg.flow.capacity = o.capacity;
  cfg.stream.midstream = o.midstream;
  auto policy = stream::parse_policy(o.policy);
  if (!policy.is_ok()) return policy.status();
  cfg.stream.policy = *policy;
  if (!o.l7.empty()) {
    auto text = io::read_text_file(o.l7);
    if (!text.is_ok()) return text.status();
    auto l7 = nids::parse_l7(*text, o.l7);
    if (!l7.is_ok()) return l7.status();
    for (const std::string& why : l7->skipped)
      std::fprintf(stderr, "warpath: warning: %s: pattern skipped: %s\n", o.l7.c_str(), printable(why).c_str());
    cfg.l7 = std::make_shared<const nids::L7Set>(std::move(*l7));
  }
  auto ub = nids::parse_unit_batches(o.unit_batches);
  if (!ub.is_ok()) return ub.status();
  cfg.unit_batches = *ub;
  auto mp = nids::parse_midstream_policy(o.midstream_policy, o.ips);
  if (!mp.is_ok()) return mp.status();
  cfg.midstream_policy = *mp;
  for (const std::string& h : o.hosts) {
    auto hp = stream::parse_host_policy(h);
    if (!hp.is_ok()) return hp.status();
    cfg.stream.hosts.push_back(*hp);
  }
  return cfg;
}

/// The rule set's syntax errors (the first 20) on stderr; an error unless --skip-bad-rules.
Status check_syntax(const NidsOptions& o, const nids::RuleSet& set) {
  uint32_t shown = 0;
  for (const nids::FileReport& f : set.files)
    for (const nids::RuleProblem& p : f.problems)
      if (p.syntax && shown++ < 20)
        std::fprintf(stderr, "warpath: %s: %s\n", p.where.c_str(), printable(p.reason).c_str());
  if (set.syntax_errors() && !o.skip_bad_rules)
    return Status(Errc::kParseError,
                  std::to_string(set.syntax_errors()) +
                      " rule(s) with syntax errors (--skip-bad-rules to run without them)");
  return Status::ok();
}

/// What a run counted for its summary.
struct Tally {
  std::map<uint32_t, uint64_t> by_rule;
  std::map<std::string, uint64_t> by_app;
  uint64_t flows = 0;
  double seconds = 0;
};

/// A batch's alerts, application events and ended flows: to the EVE and fast outputs, and
/// counted.
struct Emitter {
  const NidsOptions& o;
  nids::Inspector& ins;
  Out &eve, &fast;
  Tally& tally;
  std::vector<nids::Alert> alerts;
  std::vector<nids::FlowEvent> ended;
  std::vector<nids::AppEvent> app_events;

  Status emit() {
    Status out_error;
    for (const nids::Alert& a : alerts) {
      ++tally.by_rule[a.rule];
      if (eve.is_open()) out_error = eve.line(nids::alert_eve(a, ins.image(), o.ips));
      if (fast.is_open() && out_error.is_ok())
        out_error = fast.line(nids::alert_fast(a, ins.image(), o.ips));
      if (!out_error.is_ok()) return out_error;
    }
    tally.flows += ended.size();
    for (const nids::FlowEvent& f : ended)
      if (!f.app_proto.empty()) ++tally.by_app[f.app_proto];
    app_events.clear();
    ins.take_app_events(app_events);
    if (eve.is_open())
      for (const nids::AppEvent& e : app_events)
        if (out_error.is_ok()) out_error = eve.line(nids::app_eve(e));
    if (eve.is_open() && !o.no_flows)
      for (const nids::FlowEvent& f : ended)
        if (out_error.is_ok()) out_error = eve.line(nids::flow_eve(f));
    alerts.clear();
    ended.clear();
    return out_error;
  }
};

/// Every batch of the capture through the inspector, then its end.
Status inspect_capture(const NidsOptions& o, CaptureInput& input, Emitter& out) {
  nids::Inspector& ins = out.ins;
  std::vector<packet::PacketInfo> infos;
  CaptureProgress progress(o.progress || isatty(STDERR_FILENO));
  for (;;) {
    WARPATH_ASSIGN_OR_RETURN(const packet::PacketBatch* batch, input.next(infos));
    if (batch->size() == 0) break;
    WARPATH_TRY(ins.process(batch->view(), infos.data(), batch->size(), out.alerts, out.ended));
    WARPATH_TRY(out.emit());
    progress.batch(*batch, [&] { return fmt::format(", {} alerts", ins.counters().alerts); });
  }
  progress.clear();
  // A part's clock goes on to the whole capture's last packet first (a no-op for the whole).
  WARPATH_TRY(ins.advance(input.clock_ns(), out.alerts, out.ended));
  WARPATH_TRY(out.emit());
  WARPATH_TRY(ins.finish(out.alerts, out.ended));
  WARPATH_TRY(out.emit());
  return Status::ok();
}

nlohmann::ordered_json summary_json(const NidsOptions& o, const nids::Inspector& ins,
                                    const Tally& t, const std::vector<std::string>& warnings) {
  const nids::InspectorCounters c = ins.counters();
  const nids::DetectCounters d    = ins.detect_counters();
  const stream::StreamCounters sc = ins.stream_counters();
  const auto& rules               = ins.image().rules();
  const double secs               = t.seconds;
  nlohmann::ordered_json sigs     = nlohmann::ordered_json::array();
  for (const auto& [r, n] : by_count(t.by_rule))
    sigs.push_back({{"sid", rules[r].sid}, {"msg", rules[r].msg}, {"alerts", n}});
  // clang-format off
  return {
      {"capture", o.in}, {"engines", ins.engines()}, {"rules", rules.size()},
      {"mode", o.ips ? "ips" : "ids"}, {"packets", c.packets}, {"bytes", c.bytes},
      {"flows", t.flows}, {"alerts", c.alerts}, {"dropped", c.dropped},
      {"flows_dropped", c.flows_dropped}, {"seconds", secs},
      {"mpps", secs > 0 ? double(c.packets) / secs / 1e6 : 0.0},
      {"gbps", secs > 0 ? double(c.bytes) * 8 / secs / 1e9 : 0.0},
      {"signatures", sigs},
      {"app_protos", t.by_app},
      {"app_layer", {{"bytes", c.app.app_bytes}, {"parse_errors", c.app.parse_errors},
                     {"memcap", c.app.memcap}, {"held_bytes", c.app.held_bytes}}},
      {"http", {{"flows", c.app.http_flows}, {"transactions", c.app.http_txs},
                {"responses", c.app.http_responses}, {"body_truncated", c.app.body_truncated},
                {"tx_limit", c.app.tx_limit}}},
      {"dns", {{"flows", c.app.dns_flows}, {"messages", c.app.dns_messages}}},
      {"tls", {{"flows", c.app.tls_flows}, {"handshake_messages", c.app.tls_handshakes}}},
      {"detect", {{"units", d.units}, {"packet_units", d.packet_units}, {"stream_units", d.stream_units},
                  {"app_units", d.app_units},
                  {"bytes", d.bytes}, {"candidates", d.candidates}, {"matches", d.matches},
                  {"backtrack_limit", d.backtrack_limit}, {"pcre_limit", d.pcre_limit},
                  {"scans_offloaded", d.scans_offloaded}, {"scans_on_cpu", d.scans_on_cpu},
                  {"port_group_dbs", d.port_group_dbs},
                  {"single_scans", d.single_scans}, {"single_scan_left", d.single_scan_left},
                  {"flows_with_bits", d.flows_with_bits}, {"flows_with_ints", d.flows_with_ints},
                  {"xbits", d.xbits}, {"xbits_full", d.xbits_full},
                  {"port_group_compile_ms", double(d.port_group_compile_ns) / 1e6}}},
      {"stream", {{"delivered_bytes", sc.delivered_bytes}, {"gaps", sc.gaps}, {"overlaps", sc.overlaps},
                  {"overlap_diff", sc.overlap_diff}, {"memcap", sc.memcap},
                  {"inspect_depth", c.inspect_depth}, {"inspect_memcap", c.inspect_memcap},
                  {"encrypted_bytes", c.encrypted_bytes}}},
      {"warnings", warnings}};
  // clang-format on
}

void print_summary(const NidsOptions& o, const nids::Inspector& ins, const Tally& t) {
  const nids::InspectorCounters c = ins.counters();
  const nids::DetectCounters d    = ins.detect_counters();
  const auto& rules               = ins.image().rules();
  const double secs               = t.seconds;
  const auto top                  = by_count(t.by_rule);
  fmt::print("{}: {} packets, {:.1f} MB, {} flows; {} rules ({}); {} alerts{}\n", o.in, c.packets,
             double(c.bytes) / 1e6, t.flows, rules.size(), ins.engines(), c.alerts,
             o.ips ? fmt::format(", {} packets dropped ({} flows)", c.dropped, c.flows_dropped) : "");
  fmt::print("  {:.3f} s: {:.2f} Mpps, {:.2f} Gbit/s\n", secs, secs > 0 ? double(c.packets) / secs / 1e6 : 0.0,
             secs > 0 ? double(c.bytes) * 8 / secs / 1e9 : 0.0);
  for (size_t i = 0; i < top.size() && i < 10; ++i)
    fmt::print("  {:8}  [{}:{}] {}\n", top[i].second, rules[top[i].first].gid, rules[top[i].first].sid,
               printable(rules[top[i].first].msg));
  if (top.size() > 10) fmt::print("  ... {} more signatures\n", top.size() - 10);
  if (!t.by_app.empty()) {
    std::string line = "  flows by application:";
    for (const auto& [name, n] : by_count(t.by_app)) line += fmt::format(" {} {},", name, n);
    line.pop_back();
    fmt::print("{}\n", line);
  }
  if (c.app.http_flows)
    fmt::print("  http: {} flows, {} transactions, {} responses{}\n", c.app.http_flows, c.app.http_txs,
               c.app.http_responses,
               c.app.body_truncated || c.app.tx_limit
                   ? fmt::format("; bounds: {} bodies cut at their limit, {} flows past the "
                                 "unanswered-request limit", c.app.body_truncated, c.app.tx_limit)
                   : std::string());
  if (c.app.dns_flows) fmt::print("  dns: {} flows, {} messages\n", c.app.dns_flows, c.app.dns_messages);
  if (c.app.tls_flows)
    fmt::print("  tls: {} flows, {} handshake messages\n", c.app.tls_flows, c.app.tls_handshakes);
  if (c.app.parse_errors || c.app.memcap)
    fmt::print("  app layer: {} parsers stopped on malformed data, {} flows' parsing stopped at the "
               "memcap ({} bytes)\n", c.app.parse_errors, c.app.memcap, o.app_memcap);
  if (d.backtrack_limit || d.pcre_limit || c.inspect_memcap)
    fmt::print("  bounds reached: {} evaluations by the backtracking bound, {} by the pcre limit, "
               "{} directions by the inspection memcap\n", d.backtrack_limit, d.pcre_limit, c.inspect_memcap);
  if (d.xbits_full)
    fmt::print("  bounds reached: {} xbits not set, their table full ({} held at the end)\n", d.xbits_full, d.xbits);
}

int run_nids(const NidsOptions& o) {
  auto set = load(o);
  if (!set.is_ok()) return fail(set.status());
  if (o.check_rules) return check_rules(o, *set);
  if (o.in.empty()) return fail("--in is required (or --check-rules)");
  if (Status s = check_syntax(o, *set); !s.is_ok()) return fail(s);
  auto image = nids::compile_rules(*set);
  if (!image.is_ok()) return fail(image.status());
  auto cfg = inspector_config(o);
  if (!cfg.is_ok()) return fail(cfg.status());
  auto inspector = nids::Inspector::make(*image, *cfg);
  if (!inspector.is_ok()) return fail(inspector.status());
  nids::Inspector& ins = **inspector;
  auto shard = io::parse_shard(o.shard);
  if (!shard.is_ok()) return fail(shard.status());
  if (!shard->whole()) shard->part_of = nids::inspected_part_of(shard->count);
  auto input = CaptureInput::open(o.in, o.filter, o.no_defrag ? "" : "auto", {}, o.batch, *shard);
  if (!input.is_ok()) return fail(input.status());

  std::vector<std::string> inputs = o.rules;
  inputs.push_back(o.in);
  Out eve, fast;
  if (Status s = eve.open(o.eve, inputs); !s.is_ok()) return fail(s);
  if (Status s = fast.open(o.fast, inputs); !s.is_ok()) return fail(s);
  Tally tally;
  Emitter out{o, ins, eve, fast, tally, {}, {}, {}};
  // The time of the run: the capture inspected and its outputs committed.
  const auto start = std::chrono::steady_clock::now();
  if (Status s = inspect_capture(o, *input, out); !s.is_ok()) return fail(s);
  if (Status s = eve.commit(); !s.is_ok()) return fail(s);
  if (Status s = fast.commit(); !s.is_ok()) return fail(s);
  if (Status s = input->defrag_status(); !s.is_ok()) return fail(s);
  tally.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  if (!o.json.empty())
    if (Status s = write_json(o.json, inputs, summary_json(o, ins, tally, input->warnings()));
        !s.is_ok())
      return fail(s);
  print_summary(o, ins, tally);
  print_warnings(input->warnings());  // a damaged record ended the input; its alerts stand
  return strict_exit(o.strict, input->warnings());
}

}  // namespace

void add_nids(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<NidsOptions>();
  auto* cmd = app.add_subcommand("nids", "Run Suricata-style rules over a capture (alerts as EVE JSON)");
  cmd->add_option("--rules", o->rules, "Rule file or directory of *.rules (repeat for more)")->required();
  cmd->add_option("--in", o->in, "Capture file (pcap or pcapng; - for standard input)");
  cmd->add_option("--eve", o->eve, "EVE JSON output (alerts, http/dns/tls transactions and flows, one object per line; - for stdout)");
  cmd->add_option("--fast", o->fast, "fast.log output (one line per alert)");
  cmd->add_option("--json", o->json, "Summary (or, with --check-rules, the report) as JSON");
  cmd->add_option("--engine", o->engine,
                  "Detection engine: auto, ref.nids, cpu.nids, cuda.nids, validate:<engine>");
  cmd->add_option("--set-var", o->vars, "NAME=VALUE: an address or port variable (HOME_NET=[10.0.0.0/8])");
  cmd->add_option("--l7", o->l7,
                  "l7-filter patterns (the shared data's l7-patterns.tsv, or a .pat file): label each "
                  "flow (EVE app_proto; rules test it with app-layer-protocol)");
  cmd->add_option("--classification", o->classification, "classification.config (default: Suricata's)");
  cmd->add_flag("--check-rules", o->check_rules, "Report how many rules of each file load and why the rest do not");
  cmd->add_flag("--verbose", o->verbose, "With --check-rules: every rule that does not load, and why");
  cmd->add_flag("--skip-bad-rules", o->skip_bad_rules,
                "Run without the rules that have syntax errors (a pcre PCRE2 does not compile "
                "among them), each named on standard error");
  add_shard_option(cmd, o->shard);
  add_strict_flag(cmd, o->strict, "the alerts and flows", "are written");
  cmd->add_option("--app-memcap", o->app_memcap,
                  "Bytes the HTTP, TLS and DNS parsers of all flows may hold together; a flow past "
                  "it is no longer parsed (counted), its packets and streams still inspected")
      ->check(CLI::Range(uint64_t(1) << 16, uint64_t(1) << 40));
  cmd->add_option("--tls-encryption-handling", o->encryption_handling,
                  "TLS after its handshake (Suricata's encryption-handling): default (its encrypted "
                  "stream is not inspected; tls.* rules and packet keywords still are) or full");
  cmd->add_flag("--ips", o->ips, "IPS mode: inline reassembly, drop rules drop the packet and its flow");
  cmd->add_flag("--midstream", o->midstream, "Inspect TCP connections whose handshake the capture missed");
  cmd->add_option("--midstream-policy", o->midstream_policy,
                  "TCP flows seen without their handshake: ignore, pass-flow, bypass, drop-flow, "
                  "reject, drop-packet, auto (drop-flow in IPS mode, else ignore)");
  cmd->add_option("--policy", o->policy, "Overlap policy of the receivers (bsd, linux, windows, first, last, ...)");
  cmd->add_option("--host-policy", o->hosts,
                  "PREFIX=POLICY: the overlap policy of the receiving hosts in PREFIX (repeat for more)");
  cmd->add_option("--action-order", o->action_order,
                  "Evaluation order of the actions (default pass,drop,alert; reject counts as drop)");
  cmd->add_option("--capacity", o->capacity, "Flows the flow table holds")->check(CLI::Range(1u, 1u << 26));
  cmd->add_option("--inspect-depth", o->inspect_depth, "Stream bytes per direction inspected")
      ->check(CLI::Range(1u, 1u << 30));
  cmd->add_option("--stream-chunk", o->stream_chunk,
                  "IDS: inspect a direction's stream once this many new bytes wait (or at its FIN, "
                  "an RST, a gap, the flow's end), as Suricata's raw stream inspection does (its "
                  "default: 2560); 0 (default): at every segment. Alerts then name the packet that "
                  "completed the chunk")
      ->check(CLI::Range(0u, nids::kMaxStreamChunk));
  cmd->add_option(
         "--stream-chunk-jitter", o->stream_chunk_jitter,
         "Each chunk's size is drawn at random within this many per cent of --stream-chunk "
         "either way (at most 1 MiB), anew for every chunk, so that an attacker cannot "
         "predict where inspections happen (as Suricata's randomize-chunk-range is "
         "documented); 0: exactly --stream-chunk bytes")
      ->check(CLI::Range(0u, nids::kMaxStreamChunkJitter));
  cmd->add_flag("--no-checksum", o->no_checksum, "Take IPv4 packets with bad header checksums (Suricata's -k none)");
  cmd->add_flag("--no-defrag", o->no_defrag, "Do not put IP fragments back together first");
  cmd->add_flag("--no-flows", o->no_flows, "Leave flow events out of the EVE output");
  add_progress_flag(cmd, o->progress);
  cmd->add_option(
         "--unit-batches", o->unit_batches,
         "Inspect a batch's buffers in one detector call: auto (when the engine prefers it, "
         "cuda.nids), on, off; IDS mode without pass rules only (the alerts do not depend on it)")
      ->check(CLI::IsMember({"auto", "on", "off"}));
  cmd->add_option("--batch", o->batch, "Packets per batch (the alerts do not depend on it)")
      ->check(CLI::Range(1u, 65536u));
  cmd->add_option("--filter", o->filter, "BPF filter expression, as tcpdump takes it");
  cmd->footer("Supported rule language: see docs/nids.md. Rules "
              "outside it are skipped with a reason (--check-rules lists them).");
  cmd->callback([o, &run] { run = [o] { return run_nids(*o); }; });
}

}  // namespace warpath::cli
#endif  // WARPATH_HAVE_NIDS
