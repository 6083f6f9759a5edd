// warpath route: forward every packet of a capture through the router data path.
//
//   warpath route --fib FILE [--neighbors FILE | --ports N] --in IN.pcap --out-dir DIR
//                 [--engine ID] [--parser ID] [--batch N] [--json FILE]
//
// Writes DIR/port<N>.pcap for every port that has a neighbour (the forwarded packets, rewritten),
// DIR/slowpath.pcap (packets queued for the host, as received), DIR/drop.pcap (dropped packets,
// as received) and DIR/icmp.pcap (the ICMP / ICMPv6 Time Exceeded errors the slow path sent about
// expired packets: router-originated, not counted in rx). Prints the counters; rx = tx + dropped
// + slow_path always holds (the command fails if it does not). Verdicts, reasons and defaults:
// include/warpath/forward/router.hpp.
#include <fmt/core.h>

#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <system_error>

#include "commands.hpp"
#include "forward_print.hpp"
#include "output_file.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/io/same_file.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::cli {
namespace {

struct RouteOptions {
  std::string fib, neighbors, in, out_dir, engine = "auto", parser = "auto", json;
  uint16_t ports = forward::kDefaultPorts;
  uint32_t batch = 8192;
  bool strict    = false;
};

struct Outputs {
  std::map<uint16_t, io::PcapWriter> ports;
  std::map<std::string, std::string> files;  // name -> path, for --json
  std::unique_ptr<io::PcapWriter> slow, drop, icmp;
};

Result<std::unique_ptr<io::PcapWriter>> open_writer(Outputs& out, const std::string& dir,
                                                    const std::string& name,
                                                    const io::CaptureInfo& info,
                                                    const std::vector<std::string>& inputs) {
  const std::string path = (std::filesystem::path(dir) / (name + ".pcap")).string();
  for (const std::string& in : inputs)  // creating it truncates it: never one of the inputs
    if (io::same_file(path, in))
      return Status(Errc::kInvalidArgument,
                    path + ": is the input '" + in + "'; refusing to write over it");
  auto w = io::PcapWriter::create(path, info);
  if (!w.is_ok()) return w.status();
  out.files[name] = path;
  return std::make_unique<io::PcapWriter>(std::move(w).value());
}

Status open_outputs(const RouteOptions& o, const forward::RouterTables& tables,
                    const io::CaptureInfo& in, Outputs& out) {
  std::error_code ec;
  std::filesystem::create_directories(o.out_dir, ec);
  if (ec || !std::filesystem::is_directory(o.out_dir))
    return Status(Errc::kIoError, o.out_dir + ": cannot create directory" +
                                      (ec ? ": " + ec.message() : std::string()));
  const std::vector<std::string> inputs = {o.in, o.fib, o.neighbors};
  io::CaptureInfo info = in;
  info.format          = io::CaptureFormat::kPcap;
  if (info.snaplen == 0) info.snaplen = 262144;
  for (uint16_t port : tables.ports()) {
    WARPATH_ASSIGN_OR_RETURN(auto w,
                             open_writer(out, o.out_dir, fmt::format("port{}", port), info, inputs));
    out.ports.emplace(port, std::move(*w));
  }
  WARPATH_ASSIGN_OR_RETURN(out.slow, open_writer(out, o.out_dir, "slowpath", info, inputs));
  WARPATH_ASSIGN_OR_RETURN(out.drop, open_writer(out, o.out_dir, "drop", info, inputs));
  io::CaptureInfo icmp_info = info;
  icmp_info.snaplen         = std::max<uint32_t>(info.snaplen, forward::kMaxIcmpFrameBytes);
  WARPATH_ASSIGN_OR_RETURN(out.icmp, open_writer(out, o.out_dir, "icmp", icmp_info, inputs));
  return Status::ok();
}

Status close_outputs(Outputs& out) {
  for (auto& [port, w] : out.ports) WARPATH_TRY(w.close());
  WARPATH_TRY(out.slow->close());
  WARPATH_TRY(out.drop->close());
  return out.icmp->close();
}

int run_route(const RouteOptions& o) {
  // Every input is checked before anything is written.
  auto table = lookup::load_routes(o.fib);
  if (!table.is_ok()) return fail(table.status());
  forward::RouterConfig config;
  if (!o.neighbors.empty()) {
    auto text = io::read_text_file(o.neighbors);
    if (!text.is_ok()) return fail(text.status());
    auto parsed = forward::parse_neighbors(o.neighbors, *text, *table);
    if (!parsed.is_ok()) return fail(parsed.status());
    config = std::move(parsed).value();
  } else {
    config = forward::default_neighbors(*table, o.ports);
  }
  auto tables = forward::RouterTables::build(config);
  if (!tables.is_ok()) return fail(tables.status());
  auto fib = lookup::make_fib(o.engine, *table);
  if (!fib.is_ok()) return fail(fib.status());
  auto parser = packet::make_parser(o.parser);
  if (!parser.is_ok()) return fail(parser.status());
  auto reader = io::PcapReader::open(o.in);
  if (!reader.is_ok()) return fail(reader.status());
  if (reader->info().linktype != 1)  // DLT_EN10MB
    return fail(fmt::format("{}: link type {} is not supported (Ethernet captures only)", o.in,
                            reader->info().linktype));
  auto batch = packet::PacketBatch::create(o.batch, 2048, size_t(o.batch) * 2048 + (1u << 17));
  if (!batch.is_ok()) return fail(batch.status());

  Outputs out;
  if (Status s = open_outputs(o, *tables, reader->info(), out); !s.is_ok()) return fail(s);

  std::vector<packet::PacketInfo> infos(o.batch);
  std::vector<lookup::NextHop> nexthops(o.batch);
  std::vector<forward::ForwardResult> results(o.batch);
  std::vector<uint8_t> icmp(forward::kMaxIcmpFrameBytes);
  forward::RouteKeys keys(o.batch);
  forward::ForwardCounters counters;
  ExecContext ctx;
  std::vector<std::string> warnings;
  for (;;) {
    batch->clear();
    auto got = reader->read(*batch);
    if (!got.is_ok() && got.status().code() == Errc::kParseError) {
      // A damaged record ends the input: what came before it is routed and reported.
      warnings.push_back(got.status().message() +
                         "; the input ends there (the packets before it were routed)");
      break;
    }
    if (!got.is_ok()) return fail(got.status());
    const uint32_t n = batch->size();
    if (n == 0 && reader->at_end()) break;
    Status s = (*parser)->parse(batch->view(), {infos.data(), n}, ctx);
    if (s.is_ok())
      s = forward::route_batch(*batch, {infos.data(), n}, **fib, *tables, keys,
                               {nexthops.data(), n}, {results.data(), n}, ctx);
    if (!s.is_ok()) return fail(s);
    for (uint32_t i = 0; i < n; ++i) {
      const forward::ForwardResult& r = results[i];
      const packet::PacketMeta& m     = batch->meta(i);
      counters.add(r);
      switch (r.verdict) {
        case forward::Verdict::kForward:
          s = out.ports.at(r.port).write_packet(batch->data(i), m.caplen, m.len, m.timestamp_ns);
          break;
        case forward::Verdict::kDrop:
          s = out.drop->write_packet(batch->data(i), m.caplen, m.len, m.timestamp_ns);
          break;
        case forward::Verdict::kSlowPath:
          s = out.slow->write_packet(batch->data(i), m.caplen, m.len, m.timestamp_ns);
          if (s.is_ok() && (r.reason == forward::Reason::kTtlExpired ||
                            r.reason == forward::Reason::kHopLimitExpired)) {
            const uint32_t bytes = forward::build_time_exceeded(
                batch->data(i), m.caplen, infos[i], tables->port_mac(m.port),
                tables->icmp_source4(m.port), tables->icmp_source6(m.port), icmp.data());
            if (bytes == 0) {
              ++counters.icmp_suppressed;
            } else {
              ++counters.icmp_sent;
              s = out.icmp->write_packet(icmp.data(), bytes, bytes, m.timestamp_ns);
            }
          }
          break;
      }
      if (!s.is_ok()) return fail(s);
    }
    if (reader->at_end()) break;
  }
  if (Status s = close_outputs(out); !s.is_ok()) return fail(s);
  if (Status s = counters.check(); !s.is_ok()) return fail("internal error: " + s.message());
  const uint64_t expired = counters.reason(forward::Reason::kTtlExpired) +
                           counters.reason(forward::Reason::kHopLimitExpired);
  if (counters.icmp_sent + counters.icmp_suppressed != expired)
    return fail("internal error: ICMP errors do not account for every expired packet");

  fmt::print("{}: {} packets, FIB {} ({} IPv4 + {} IPv6 routes), {} neighbours on {} ports\n", o.in,
             counters.rx, (*fib)->id(), table->v4.size(), table->v6.size(),
             tables->neighbor_count(), tables->ports().size());
  print_counters(counters);
  if (!o.json.empty()) {
    nlohmann::ordered_json j;
    j["input"]      = o.in;
    j["fib"]        = o.fib;
    j["fib_engine"] = std::string((*fib)->id());
    j["neighbors"] =
        o.neighbors.empty() ? nlohmann::ordered_json() : nlohmann::ordered_json(o.neighbors);
    j["routes4"]  = table->v4.size();
    j["routes6"]  = table->v6.size();
    j["counters"] = counters_json(counters);
    j["files"]    = out.files;
    j["warnings"] = warnings;
    OutputFile json(o.json);
    if (Status s = json.open({o.in, o.fib, o.neighbors}); !s.is_ok()) return fail(s);
    std::fputs((j.dump(2) + "\n").c_str(), json.get());
    if (Status s = json.commit(); !s.is_ok()) return fail(s);
  }
  print_warnings(warnings);
  return strict_exit(o.strict, warnings);
}

}  // namespace

void add_route(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<RouteOptions>();
  auto* cmd = app.add_subcommand(
      "route", "Forward a capture through the IPv4/IPv6 router data path: one pcap per port");
  cmd->footer(
      "Outputs in --out-dir: port<N>.pcap for every port with a neighbour (forwarded packets, "
      "TTL or hop limit decremented, MACs rewritten), slowpath.pcap (queued for the host, as "
      "received), drop.pcap (as received), icmp.pcap (Time Exceeded errors generated for "
      "expired packets; router-originated, not part of rx).\n"
      "Counters: rx = tx + dropped + slow_path, by reason and by port.\n"
      "Neighbour file lines: '<nexthop> <port> <mac>' (next hop as written in the FIB), "
      "'port <port> <mac>|- [<addr>...]', 'router <addr>...'. Without --neighbors, next hop N "
      "goes to port N % --ports with MAC 02:01:NN:NN:NN:NN; port P's own MAC is "
      "02:00:00:00:PP:PP; the router's addresses default to 192.0.2.1 and 2001:db8::1.");
  cmd->add_option("--fib", o->fib, "Route file: <prefix>/<len> [<nexthop>] per line")->required();
  auto* neighbors = cmd->add_option("--neighbors", o->neighbors, "Neighbour file (see below)");
  cmd->add_option("--ports", o->ports,
                  "Without --neighbors: next hop N leaves on port N % PORTS (default 4)")
      ->check(CLI::Range(1, 65535))
      ->excludes(neighbors);
  cmd->add_option("--in", o->in, "Capture to forward (pcap or pcapng, Ethernet)")->required();
  cmd->add_option("--out-dir", o->out_dir, "Directory for the output captures")->required();
  cmd->add_option(
      "--engine", o->engine,
      "FIB engine: auto, cpu (cpu.lpm.compressed), gpu, ref, or an id (cpu.lpm, cuda.lpm, "
      "validate:<id>)");
  cmd->add_option("--parser", o->parser, "Parser engine: auto, ref.parse, cpu.parse, cuda.parse");
  cmd->add_option("--batch", o->batch, "Packets per batch")->check(CLI::Range(1u, 1u << 20));
  cmd->add_option("--json", o->json, "Also write the counters as JSON to this file");
  cmd->add_flag("--strict", o->strict,
                "Exit 1 when the capture is damaged (by default the packets before the damage "
                "are routed, a warning names the record and the exit status is 0)");
  cmd->callback([o, &run] { run = [o] { return run_route(*o); }; });
}

}  // namespace warpath::cli
