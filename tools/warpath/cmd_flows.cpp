// warpath flows: one record per flow of a capture (Zeek's conn.log): times, the 5-tuple from
// the initiator, packets and bytes per direction, the state, and why the flow ended.
#include <fmt/core.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "capture_progress.hpp"
#include "commands.hpp"
#include "output_file.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/io/capture_input.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::cli {

using io::CaptureInput;

namespace {

using flow::FlowCounters;
using flow::FlowRecord;
using flow::Track;
using flow::FlowEnd;
using namespace flow;

struct FlowsOptions {
  std::string in, out, format = "text", engine = "auto", filter, on_full = "evict", shard = "0/1";
  uint32_t capacity = 1u << 18;
  bool defrag       = false;
  bool no_checksum  = false;
  bool strict       = false;
  bool progress     = false;
};

std::string address(const FlowRecord& r, bool src) {
  const uint8_t* a = src ? r.src : r.dst;
  return packet::ip_to_string(r.ip_version, a);
}

double seconds(uint64_t ns) { return double(ns) / 1e9; }

nlohmann::ordered_json counters_json(const FlowCounters& c) {
  nlohmann::ordered_json j;
  flow::for_each_counter(
      c, [&](const char* name, uint64_t v) { j[name] = v; },
      [&](const char* name, auto names, const uint64_t* v, unsigned n) {
        nlohmann::ordered_json g;
        for (unsigned i = 0; i < n; ++i) g[names(i)] = v[i];
        j[name] = g;
      });
  return j;
}

class Printer {
 public:
  Printer(std::FILE* out, std::string format) : out_(out), format_(std::move(format)) {}
  void begin() {
    if (format_ == "csv")
      fmt::print(out_, "flow,ts,duration,proto,src,sport,dst,dport,orig_packets,orig_bytes,"
                       "resp_packets,resp_bytes,state,tcp_state,history,end\n");
    if (format_ == "text")
      fmt::print(out_, "{:>6} {:>17} {:>10} {:>5} {:>39} {:>39} {:>13} {:>17} {:<11} {:<8}\n",
                 "flow", "ts", "duration", "proto", "initiator", "responder", "packets",
                 "bytes", "state", "end");
    if (format_ == "json") fmt::print(out_, "{{\"flows\": [");
  }
  void record(const FlowRecord& r) {
    if (format_ == "json") {
      fmt::print(out_, "{}\n  {}", n_++ ? "," : "", flow_record_json(r));
      return;
    }
    const std::string src = address(r, true), dst = address(r, false);
    if (format_ == "csv") {
      fmt::print(out_, "{},{:.6f},{:.6f},{},{},{},{},{},{},{},{},{},{},{},{},{}\n", r.serial,
                 seconds(r.first_ns), seconds(r.last_ns - r.first_ns), r.proto, src, r.sport,
                 dst, r.dport, r.packets[0], r.bytes[0], r.packets[1], r.bytes[1],
                 flow_state_name(r.state), r.proto == 6 ? tcp_state_name(r.tcp) : "",
                 tcp_history(r), flow_end_name(r.end));
      return;
    }
    const bool v6 = r.ip_version == 6;
    fmt::print(out_, "{:>6} {:>17.6f} {:>10.6f} {:>5} {:>39} {:>39} {:>13} {:>17} {:<11} {:<8} {}\n",
               r.serial, seconds(r.first_ns), seconds(r.last_ns - r.first_ns), r.proto,
               v6 ? fmt::format("[{}]:{}", src, r.sport) : fmt::format("{}:{}", src, r.sport),
               v6 ? fmt::format("[{}]:{}", dst, r.dport) : fmt::format("{}:{}", dst, r.dport),
               fmt::format("{}/{}", r.packets[0], r.packets[1]),
               fmt::format("{}/{}", r.bytes[0], r.bytes[1]), flow_state_name(r.state),
               flow_end_name(r.end), tcp_history(r));
  }
  void end(const FlowCounters& c, std::string_view engine, const std::vector<std::string>& warnings) {
    if (format_ == "json") {
      auto j      = counters_json(c);
      j["engine"] = engine;
      fmt::print(out_, "{}],\n\"counters\": {},\n\"warnings\": {}}}\n", n_ ? "\n" : "",
                 j.dump(), nlohmann::ordered_json(warnings).dump());
    }
    if (format_ == "text") {
      fmt::print(out_, "# {} packets, {} flows by {} (max {} at once); ended: {} timeout, {} "
                       "evicted, {} reused, {} at the end; {} picked up midstream\n",
                 c.packets, c.created, engine, c.max_active, c.ended[0], c.ended[1], c.ended[2],
                 c.ended[3], c.midstream);
      fmt::print(out_, "# not tracked: {} not IP, {} later fragments, {} malformed, {} refused "
                       "(table full){}\n",
                 c.track[size_t(Track::kNotIp)], c.track[size_t(Track::kFragment)],
                 c.track[size_t(Track::kMalformed)],
                 c.track[size_t(Track::kFullDropped)] + c.track[size_t(Track::kFullPassed)],
                 c.emergency_entered
                     ? fmt::format("; emergency mode entered {} times", c.emergency_entered)
                     : "");
      if (c.ignored_rst || c.ignored_fin || c.reoriented)
        fmt::print(out_, "# {} RSTs and {} FINs ignored (far from their sender's sequence "
                         "numbers), {} flows turned around by a SYN from their guessed responder\n",
                   c.ignored_rst, c.ignored_fin, c.reoriented);
    }
  }

 private:
  std::FILE* out_;
  std::string format_;
  uint64_t n_ = 0;
};

int flows_to(const FlowsOptions& o, std::FILE* out, std::vector<std::string>& warnings) {
  FlowConfig config;
  config.capacity = o.capacity;
  auto on_full    = parse_on_full(o.on_full);
  if (!on_full.is_ok()) return fail(on_full.status());
  config.on_full              = *on_full;
  config.ignore_ipv4_checksum = o.no_checksum;
  config.prefault             = false;  // run once on a capture: pages as flows arrive
  auto tracker   = make_flow_tracker(o.engine, config);
  if (!tracker.is_ok()) return fail(tracker.status());
  auto shard = io::parse_shard(o.shard);
  if (!shard.is_ok()) return fail(shard.status());
  auto input = CaptureInput::open(o.in, o.filter, o.defrag ? "auto" : "", {},
                                  CaptureInput::kBatch, *shard);
  if (!input.is_ok()) return fail(input.status());
  std::vector<packet::PacketInfo> infos;
  std::vector<PacketFlow> answers;
  std::vector<FlowRecord> ended;
  Printer printer(out, o.format);
  printer.begin();
  // On a terminal only when the records go to a file (they would cut through the line).
  CaptureProgress progress(o.progress || (!o.out.empty() && o.out != "-" && isatty(STDERR_FILENO)));
  for (;;) {
    auto batch = input->next(infos);
    if (!batch.is_ok()) return progress.clear(), fail(batch.status());
    const uint32_t n = (*batch)->size();
    if (n == 0) break;
    answers.resize(n);
    const packet::BatchView v = (*batch)->view();
    ended.clear();
    if (Status s = (*tracker)->track({infos.data(), n}, {v.metas, n}, {answers.data(), n}, ended);
        !s.is_ok())
      return progress.clear(), fail(s);
    for (const FlowRecord& r : ended) printer.record(r);
    progress.batch(**batch, [&] {
      const FlowCounters c = (*tracker)->counters();
      return fmt::format(", {} flows, {} active", c.created, c.active);
    });
  }
  progress.clear();
  ended.clear();
  // A part's clock goes on to the whole capture's last packet first (a no-op for the whole).
  if (Status s = (*tracker)->advance(input->clock_ns(), ended); !s.is_ok()) return fail(s);
  if (Status s = (*tracker)->flush(ended); !s.is_ok()) return fail(s);
  for (const FlowRecord& r : ended) printer.record(r);
  warnings = input->warnings();  // a damaged record ended the input: what came before stands
  printer.end((*tracker)->counters(), (*tracker)->id(), warnings);
  return 0;
}

int run_flows(const FlowsOptions& o) {
  OutputFile out(o.out);
  if (Status s = out.open({o.in}); !s.is_ok()) return fail(s);
  int rc = 0;
  std::vector<std::string> warnings;
  if (Status s = out.guarded([&](std::FILE* f) { rc = flows_to(o, f, warnings); }); !s.is_ok())
    return fail(s);
  if (rc != 0) return rc;
  if (Status s = out.commit(); !s.is_ok()) return fail(s);
  print_warnings(warnings);
  return strict_exit(o.strict, warnings);
}

}  // namespace

void add_flows(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<FlowsOptions>();
  auto* cmd = app.add_subcommand(
      "flows", "Track the flows of a capture: one record per flow, as it ends (like conn.log)");
  cmd->add_option("--in", o->in, "Capture file (pcap or pcapng; - for standard input)")
      ->required();
  cmd->add_option("--format", o->format, "text, csv or json")
      ->check(CLI::IsMember({"text", "csv", "json"}));
  cmd->add_option("--out", o->out, "Write the records here instead of standard output");
  cmd->add_option("--engine", o->engine, "Flow engine: auto, ref.flow, cpu.flow, validate:<engine>");
  cmd->add_option("--capacity", o->capacity, "Flows the table holds")
      ->check(CLI::Range(1u, 1u << 26));
  cmd->add_option("--on-full", o->on_full,
                  "A new flow when the table is full: evict (the least recently seen), drop or "
                  "pass (untracked)")
      ->check(CLI::IsMember({"evict", "drop", "pass"}));
  cmd->add_option("--filter", o->filter, "BPF filter expression, as tcpdump takes it");
  cmd->add_flag("--no-checksum", o->no_checksum,
                "Track IPv4 packets whose header checksum does not verify (captures taken "
                "before checksum offload, like Suricata's -k none)");
  cmd->add_flag("--defrag", o->defrag,
                "Put IP fragments back together first (later fragments then count with their "
                "flow instead of as untracked)");
  add_shard_option(cmd, o->shard);
  add_strict_flag(cmd, o->strict, "the flows", "are reported");
  add_progress_flag(cmd, o->progress);
  cmd->footer("Records are in the order flows end: by timeout (Suricata's: TCP 60 s new, 600 s "
              "established, 60 s closed; others 30 / 300 s), on TCP port reuse, on eviction, "
              "and at the end of the capture (in flow order). The clock is the capture's time. "
              "history: TCP flags each side sent (S A D F R; lower case: the responder).");
  cmd->callback([o, &run] { run = [o] { return run_flows(*o); }; });
}

}  // namespace warpath::cli
