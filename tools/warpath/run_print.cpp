#include "run_print.hpp"

#include <fmt/core.h>

#include <algorithm>
#include <thread>

#include "result_file.hpp"
#include "runtime/system/report_json.hpp"

namespace warpath::cli {

namespace {

double per_second(double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }
double mpps(uint64_t packets, double seconds) { return per_second(double(packets), seconds) / 1e6; }
double gbps(uint64_t bytes, double seconds) { return per_second(double(bytes) * 8, seconds) / 1e9; }
double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * double(part) / double(whole) : 0.0;
}

/// "auto: cpu.lpm + cpu.rfc; offload cuda.lpm + cuda.tuple" (the report's names when it has
/// them, else the policy).
std::string engines(const runtime::RunConfig& c, const runtime::RunReport& r) {
  std::string s = r.engine.empty() ? runtime::offload_name(c.engine) : r.engine;
  if (!r.offload_engine.empty()) s += "; offload " + r.offload_engine;
  return s;
}

}  // namespace

void ProgressLine::update(const runtime::RunReport& r) {
  const double dt = r.seconds - last_s_;
  if (dt <= 0) return;
  const uint64_t drx = r.rx - std::min(r.rx, last_rx_), dtx = r.tx - std::min(r.tx, last_tx_);
  const uint64_t dbytes = r.rx_bytes - std::min(r.rx_bytes, last_bytes_);
  const uint64_t dcpu   = r.cpu_packets - std::min(r.cpu_packets, last_cpu_);
  const uint64_t dgpu   = r.gpu_packets - std::min(r.gpu_packets, last_gpu_);
  const double gpu_pct  = dcpu + dgpu ? pct(dgpu, dcpu + dgpu) : 100.0 * r.gpu_share;
  fmt::print(out_,
             "\r{:7.1f} s  in {:6.2f} Mpps  out {:6.2f} Mpps  {:6.2f} Gbps  fill {:3.0f}%  "
             "cpu {:3.0f}% gpu {:3.0f}%  drops {}  in flight {}",
             r.seconds, mpps(drx, dt), mpps(dtx, dt), gbps(dbytes, dt), 100.0 * r.batch_fill,
             100.0 - gpu_pct, gpu_pct, group_thousands(r.dropped), group_thousands(r.in_flight));
  // Per module: its CPU ns per packet and the share of what it saw that it dropped or sent to
  // the slow path, over the last interval ("acl 36ns -7.0%").
  if (last_modules_.size() != r.modules.size()) last_modules_.assign(r.modules.size(), {});
  std::string mods;
  for (size_t m = 0; m < r.modules.size(); ++m) {
    const runtime::ModuleReport& mr = r.modules[m];
    auto& [in0, out0, fwd0]         = last_modules_[m];
    const uint64_t din = mr.in - std::min(mr.in, in0), dout = mr.out - std::min(mr.out, out0),
                   dfwd   = mr.forwarded - std::min(mr.forwarded, fwd0);
    const uint64_t gone   = din >= dout + dfwd ? din - dout - dfwd : 0;
    mods += fmt::format("  {} {:.0f}ns -{:.1f}%", mr.kind, mr.ns_per_packet,
                        din ? pct(gone, din) : 0.0);
    in0 = mr.in, out0 = mr.out, fwd0 = mr.forwarded;
  }
  fmt::print(out_, "{}{}\x1b[K", mods.empty() ? "" : " |", mods);
  std::fflush(out_);
  shown_      = true;
  last_s_     = r.seconds;
  last_rx_    = r.rx;
  last_tx_    = r.tx;
  last_bytes_ = r.rx_bytes;
  last_cpu_   = r.cpu_packets;
  last_gpu_   = r.gpu_packets;
}

void ProgressLine::finish() {
  if (!shown_) return;
  fmt::print(out_, "\r\x1b[K");
  std::fflush(out_);
  shown_ = false;
}

void print_run_summary(const runtime::RunConfig& c, const runtime::RunReport& r,
                       const RunContext& ctx, std::FILE* out) {
  fmt::print(out, "warpath run: {}, {} ports, engine {}\n", r.app.empty() ? c.app : r.app,
             r.ports.size(), engines(c, r));
  fmt::print(out, "{} worker{}, batch {}, delay {} us, ", c.workers, c.workers == 1 ? "" : "s",
             c.batch, c.delay_us);
  if (c.duration_s > 0)
    fmt::print(out, "duration {} s", c.duration_s);
  else
    fmt::print(out, "until the sources end");
  fmt::print(out, "; ran {:.3f} s{}\n", r.seconds,
             ctx.stopped_by.empty() ? "" : ", stopped by " + ctx.stopped_by);
  fmt::print(out, "chain: {}{}\n", r.chain,
             r.schedule == "sort" ? " (packets scheduled by sort)" : "");
  if (!ctx.fib.empty()) fmt::print(out, "FIB: {}\n", ctx.fib);
  if (!ctx.rules.empty()) fmt::print(out, "ACL: {}\n", ctx.rules);
  fmt::print(out, "\n");

  auto line = [&](const std::string& name, uint64_t n) {
    fmt::print(out, "{:<24}{:>14}\n", name, n);
  };
  line("rx", r.rx);
  line("tx", r.tx);
  line("dropped", r.dropped);
  for (const auto& [reason, n] : r.drops_by_reason)
    if (n) line("  " + reason, n);
  line("slow_path", r.slow_path);
  for (const auto& [reason, n] : r.slow_path_by_reason)
    if (n) line("  " + reason, n);
  line("in_flight", r.in_flight);
  if (r.icmp_sent || r.icmp_suppressed) {
    line("icmp_sent", r.icmp_sent);
    line("icmp_suppressed", r.icmp_suppressed);
  }
  if (r.copies) line("copies", r.copies);
  if (r.fragmented) {
    line("fragmented", r.fragmented);
    line("  into fragments", r.fragments);
  }
  if (r.originated) line("originated", r.originated);
  const Status check = r.check();
  fmt::print(out, "check: rx = tx + dropped + slow_path: {} = {} + {} + {} ({})\n", r.rx, r.tx,
             r.dropped, r.slow_path, check.is_ok() ? "ok" : "FAILS: " + check.message());

  fmt::print(out, "\n{:<5} {:<12} {:>12} {:>10} {:>12} {:>9} {:>14} {:>14}  {}\n", "port", "name",
             "rx", "rx_dropped", "tx", "tx_errors", "rx_bytes", "tx_bytes", "description");
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const runtime::PortReport& p = r.ports[i];
    fmt::print(out, "{:<5} {:<12} {:>12} {:>10} {:>12} {:>9} {:>14} {:>14}  {}\n", i, p.name,
               p.stats.rx, p.stats.rx_dropped, p.stats.tx, p.stats.tx_errors, p.stats.rx_bytes,
               p.stats.tx_bytes, p.description);
  }

  fmt::print(out, "\n{:<3} {:<12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>8}  {}\n", "#", "module", "in",
             "out", "forwarded", "dropped", "slow_path", "ns/pkt", "built from");
  for (const runtime::ModuleReport& m : r.modules) {
    uint64_t drops = 0, slow = 0;
    for (const auto& [k, n] : m.drops) drops += n;
    for (const auto& [k, n] : m.slow_path) slow += n;
    fmt::print(out, "{:<3} {:<12} {:>12} {:>12} {:>12} {:>10} {:>10} {:>8.1f}  {}\n", m.position,
               m.kind, m.in, m.out, m.forwarded, drops, slow, m.ns_per_packet, m.describe);
  }
  for (const runtime::ModuleReport& m : r.modules) {
    if (m.stats.empty()) continue;
    std::string stats;
    for (const auto& [k, n] : m.stats)
      if (n) stats += fmt::format("{}{} {}", stats.empty() ? "" : ", ", k, n);
    fmt::print(out, "{:<3} {:<12} {}\n", m.position, m.kind, stats.empty() ? "-" : stats);
  }

  fmt::print(out, "\n{:<16}{} (batch fill {:.1f}%), cpu {}, gpu {}, launches {}", "chunks",
             r.chunks, 100.0 * r.batch_fill, r.cpu_chunks, r.gpu_chunks, r.gpu_launches);
  if (r.gpu_launches)
    fmt::print(out, " ({} resident{}, {} with packet bytes in place)", r.gpu_resident_launches,
               r.gpu_resident_launches
                   ? fmt::format(", at most {} queued on the device at once", r.gpu_max_in_flight)
                   : std::string(),
               r.gpu_direct_launches);
  fmt::print(out, "\n");
  if (r.gpu_chunks || r.frames.waits) {
    const runtime::RunReport::Frames& f = r.frames;
    fmt::print(out, "{:<16}up to {} a worker of {} ({}), {} waits for a free frame\n", "frames",
               f.most, f.cap,
               f.needed ? fmt::format("needs {}{}: round trip {:.1f} us, a frame every {:.1f} us",
                                      f.needed, f.needed > f.cap ? ", more than the cap" : "",
                                      f.round_trip_us, f.interval_us)
                        : std::string("no round trip measured"),
               f.waits);
  }
  fmt::print(out, "{:<16}cpu {} / gpu {} packets ({:.1f}% on the GPU), cpu {:.1f} ns/packet\n",
             "shading", r.cpu_packets, r.gpu_packets,
             pct(r.gpu_packets, r.cpu_packets + r.gpu_packets), r.cpu_ns_per_pkt);
  if (r.auto_cost_cpu_ns > 0 || r.auto_cost_offload_ns > 0)
    fmt::print(out, "{:<16}worker ns a packet: cpu path {:.1f}, offload path {:.1f}{}\n", "auto",
               r.auto_cost_cpu_ns, r.auto_cost_offload_ns,
               r.auto_declined ? fmt::format(" (the GPU path declined on {} worker{}: it saves "
                                             "them under 5%)",
                                             r.auto_declined, r.auto_declined == 1 ? "" : "s")
                               : std::string());
  const runtime::RunReport::Stages& s = r.stages;
  fmt::print(out, "{:<16}rx {:.1f}, parse {:.1f}, modules {:.1f}, tx {:.1f}, other {:.1f}: {:.1f} ns a "
             "packet (worker time, summed over the workers{})\n",
             "stages", s.rx, s.parse, s.modules, s.tx, s.other, s.rx + s.parse + s.modules + s.tx + s.other,
             r.parsed ? "" : "; not parsed: no module reads headers");
  const runtime::LatencySummary& l = r.latency;
  fmt::print(
      out, "{:<16}p50 {:.1f}  p99 {:.1f}  p99.9 {:.1f}  max {:.1f}  mean {:.1f} us ({} packets)\n",
      "latency", l.p50_us, l.p99_us, l.p999_us, l.max_us, l.mean_us, l.count);
  fmt::print(out, "{:<16}{:.3f} Mpps in, {:.3f} Mpps out, {:.3f} Gbps in, {:.3f} Gbps out\n",
             "rate", mpps(r.rx, r.seconds), mpps(r.tx, r.seconds), gbps(r.rx_bytes, r.seconds),
             gbps(r.tx_bytes, r.seconds));
}

nlohmann::ordered_json run_stats_line(const runtime::RunReport& r, const runtime::RunReport* prev) {
  using J = nlohmann::ordered_json;
  J j;
  j["seconds"] = r.seconds;
  j["totals"]  = runtime::report_totals_json(r);
  const double dt = prev ? r.seconds - prev->seconds : r.seconds;
  auto rate       = [&](uint64_t now, uint64_t before) {
    return dt > 0 ? double(now - std::min(now, before)) / dt : 0.0;
  };
  j["rates"] = {{"rx_pps", rate(r.rx, prev ? prev->rx : 0)},
                {"tx_pps", rate(r.tx, prev ? prev->tx : 0)},
                {"rx_bps", 8 * rate(r.rx_bytes, prev ? prev->rx_bytes : 0)},
                {"tx_bps", 8 * rate(r.tx_bytes, prev ? prev->tx_bytes : 0)}};
  j["drops_by_reason"]     = r.drops_by_reason;
  j["slow_path_by_reason"] = r.slow_path_by_reason;
  J ports                  = J::array();
  for (const auto& p : r.ports)
    ports.push_back({{"name", p.name},
                     {"rx", p.stats.rx},
                     {"rx_dropped", p.stats.rx_dropped},
                     {"tx", p.stats.tx},
                     {"tx_errors", p.stats.tx_errors}});
  j["ports"] = ports;
  J modules  = J::array();
  for (const auto& m : r.modules) {
    J st = J::object();
    for (const auto& [k, n] : m.stats) st[k] = n;
    modules.push_back({{"position", m.position},
                       {"kind", m.kind},
                       {"in", m.in},
                       {"out", m.out},
                       {"forwarded", m.forwarded},
                       {"ns_per_packet", m.ns_per_packet},
                       {"stats", st}});
  }
  j["modules"]              = modules;
  j["stages_ns_per_packet"] = runtime::report_stages_json(r.stages);
  j["frames"]               = runtime::report_frames_json(r.frames);
  return j;
}

nlohmann::ordered_json run_report_json(const runtime::RunConfig& c, const runtime::RunReport& r,
                                       const RunContext& ctx) {
  using J                     = nlohmann::ordered_json;
  J j = result_header("warpath run", ctx.command, RunStart{{}, ctx.load_start, -1});  // not pinned
  j["machine"]["loadavg_end"] = read_first_line("/proc/loadavg");
  {  // where the threads ran (pipeline.cpp's placement)
    J pins = J::array();
    for (uint32_t w = 0; w < c.workers; ++w)
      pins.push_back(!c.pin_threads ? -1
                     : c.cpus.empty()
                         ? int((w + 1) % std::max(1u, std::thread::hardware_concurrency()))
                         : c.cpus[w % c.cpus.size()]);
    j["machine"]["worker_cpus"] = pins;
  }
  // The body (runtime/system/report_json.cpp: the Python package's Chain.run returns the same).
  J body = runtime::run_report_body(c, r, {ctx.fib, ctx.rules, ctx.stopped_by});
  for (auto& [key, value] : body.items()) j[key] = std::move(value);
  return j;
}

}  // namespace warpath::cli
