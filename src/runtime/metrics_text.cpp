// src/runtime/metrics_text.cpp: the run report as Prometheus text (metrics.hpp).
#include <charconv>
#include <cstdio>
#include <string>

#include "warpath/runtime/metrics.hpp"

namespace warpath::runtime {
namespace {

std::string escape(std::string_view v) {
  std::string s;
  s.reserve(v.size());
  for (char c : v) {
    if (c == '\\' || c == '"') s += '\\', s += c;
    else if (c == '\n') s += "\\n";
    else s += c;
  }
  return s;
}

class Text {
 public:
  /// Starts a metric family: its HELP and TYPE lines, once.
  void family(const char* name, const char* type, const char* help) {
    out_ += "# HELP ";
    out_ += name;
    out_ += ' ';
    out_ += help;
    out_ += "\n# TYPE ";
    out_ += name;
    out_ += ' ';
    out_ += type;
    out_ += '\n';
  }
  /// One sample; labels as "k1", "v1", "k2", "v2", ...
  template <typename... L>
  void sample(const char* name, double value, L... labels) {
    out_ += name;
    const std::string_view kv[] = {std::string_view(labels)..., ""};
    if (sizeof...(labels)) {
      out_ += '{';
      for (size_t i = 0; i + 1 < sizeof...(labels); i += 2) {
        if (i) out_ += ',';
        out_ += kv[i];
        out_ += "=\"";
        out_ += escape(kv[i + 1]);
        out_ += '"';
      }
      out_ += '}';
    }
    char buf[40];
    // Counters are integers: print them exactly (%.17g keeps 2^53 exact; beyond, close enough).
    std::snprintf(buf, sizeof buf, " %.17g\n", value);
    out_ += buf;
  }
  std::string take() { return std::move(out_); }

 private:
  std::string out_;
};

}  // namespace

std::string prometheus_text(const RunReport& r, std::string_view version) {
  Text t;
  t.family("warpath_info", "gauge", "What runs: version, application or chain, engines.");
  t.sample("warpath_info", 1, "version", std::string(version), "app", r.app, "chain", r.chain,
           "engine", r.engine);
  t.family("warpath_up_seconds", "gauge", "Seconds since the run started.");
  t.sample("warpath_up_seconds", r.seconds);
  t.family("warpath_packets_total", "counter",
           "Packets received, sent, dropped and sent to the slow path (rx = tx + dropped + "
           "slow_path + in flight).");
  t.sample("warpath_packets_total", double(r.rx), "what", "rx");
  t.sample("warpath_packets_total", double(r.tx), "what", "tx");
  t.sample("warpath_packets_total", double(r.dropped), "what", "dropped");
  t.sample("warpath_packets_total", double(r.slow_path), "what", "slow_path");
  t.family("warpath_bytes_total", "counter", "Bytes received and sent.");
  t.sample("warpath_bytes_total", double(r.rx_bytes), "what", "rx");
  t.sample("warpath_bytes_total", double(r.tx_bytes), "what", "tx");
  t.family("warpath_in_flight_packets", "gauge", "Packets received and not yet finished.");
  t.sample("warpath_in_flight_packets", double(r.in_flight));
  t.family("warpath_extra_frames_total", "counter",
           "Frames the ports sent besides one per forwarded packet: ICMP errors, copies of packets "
           "sent out of several ports, packets modules originated, IP fragments past one per "
           "fragmented packet.");
  t.sample("warpath_extra_frames_total", double(r.icmp_sent), "what", "icmp");
  t.sample("warpath_extra_frames_total", double(r.copies), "what", "copies");
  t.sample("warpath_extra_frames_total", double(r.originated), "what", "originated");
  t.sample("warpath_extra_frames_total",
           double(r.fragments > r.fragmented ? r.fragments - r.fragmented : 0), "what", "fragments");
  t.family("warpath_fragmented_packets_total", "counter",
           "Forwarded packets sent as IP fragments (larger than their link's or tunnel's MTU).");
  t.sample("warpath_fragmented_packets_total", double(r.fragmented));
  t.family("warpath_drops_total", "counter", "Dropped packets by reason.");
  for (const auto& [reason, n] : r.drops_by_reason)
    t.sample("warpath_drops_total", double(n), "reason", reason);
  t.family("warpath_slow_path_total", "counter", "Slow-path packets by reason.");
  for (const auto& [reason, n] : r.slow_path_by_reason)
    t.sample("warpath_slow_path_total", double(n), "reason", reason);

  t.family("warpath_port_packets_total", "counter", "Packets per port.");
  for (const PortReport& p : r.ports) {
    t.sample("warpath_port_packets_total", double(p.stats.rx), "port", p.name, "what", "rx");
    t.sample("warpath_port_packets_total", double(p.stats.rx_dropped), "port", p.name, "what",
             "rx_dropped");
    t.sample("warpath_port_packets_total", double(p.stats.tx), "port", p.name, "what", "tx");
    t.sample("warpath_port_packets_total", double(p.stats.tx_errors), "port", p.name, "what",
             "tx_errors");
  }
  t.family("warpath_port_bytes_total", "counter", "Bytes per port.");
  for (const PortReport& p : r.ports) {
    t.sample("warpath_port_bytes_total", double(p.stats.rx_bytes), "port", p.name, "what", "rx");
    t.sample("warpath_port_bytes_total", double(p.stats.tx_bytes), "port", p.name, "what", "tx");
  }

  t.family("warpath_module_packets_total", "counter",
           "Per module: packets it was shown (in), passed on undecided (out), forwarded.");
  for (const ModuleReport& m : r.modules) {
    const std::string pos = std::to_string(m.position);
    t.sample("warpath_module_packets_total", double(m.in), "position", pos, "module", m.kind,
             "what", "in");
    t.sample("warpath_module_packets_total", double(m.out), "position", pos, "module", m.kind,
             "what", "out");
    t.sample("warpath_module_packets_total", double(m.forwarded), "position", pos, "module",
             m.kind, "what", "forwarded");
  }
  t.family("warpath_module_drops_total", "counter", "Per module: drops by its reasons.");
  for (const ModuleReport& m : r.modules)
    for (const auto& [reason, n] : m.drops)
      t.sample("warpath_module_drops_total", double(n), "position", std::to_string(m.position),
               "module", m.kind, "reason", reason);
  t.family("warpath_module_slow_path_total", "counter",
           "Per module: slow-path packets by its reasons.");
  for (const ModuleReport& m : r.modules)
    for (const auto& [reason, n] : m.slow_path)
      t.sample("warpath_module_slow_path_total", double(n), "position",
               std::to_string(m.position), "module", m.kind, "reason", reason);
  t.family("warpath_module_ns_per_packet", "gauge",
           "Per module: CPU time in its pre, shade and post per packet received.");
  for (const ModuleReport& m : r.modules)
    t.sample("warpath_module_ns_per_packet", m.ns_per_packet, "position",
             std::to_string(m.position), "module", m.kind);

  t.family("warpath_stage_ns_per_packet", "gauge",
           "Worker time per packet finished by stage (rx, parse, modules, tx, other), summed over "
           "the workers.");
  for (const auto& [name, v] : r.stages.named())
    t.sample("warpath_stage_ns_per_packet", v, "stage", name);

  t.family("warpath_module_stat", "gauge",
           "Per stateful module: what its per-worker state counts (flows, active, ...), summed "
           "over the workers.");
  for (const ModuleReport& m : r.modules)
    for (const auto& [name, n] : m.stats)
      t.sample("warpath_module_stat", double(n), "position", std::to_string(m.position),
               "module", m.kind, "stat", name);

  t.family("warpath_chunks_total", "counter", "Chunks shaded on the CPU and offloaded.");
  t.sample("warpath_chunks_total", double(r.cpu_chunks), "place", "cpu");
  t.sample("warpath_chunks_total", double(r.gpu_chunks), "place", "gpu");
  t.family("warpath_gpu_launches_total", "counter", "Offload master launches.");
  t.sample("warpath_gpu_launches_total", double(r.gpu_launches));
  t.family("warpath_gpu_resident_launches_total", "counter",
           "Offload launches on device memory (one upload, every module, one download).");
  t.sample("warpath_gpu_resident_launches_total", double(r.gpu_resident_launches));
  t.family("warpath_gpu_direct_launches_total", "counter",
           "Offload launches whose packet bytes stayed in their frames.");
  t.sample("warpath_gpu_direct_launches_total", double(r.gpu_direct_launches));
  t.family("warpath_gpu_launches_in_flight_max", "gauge",
           "The most offload launches queued on the device at once.");
  t.sample("warpath_gpu_launches_in_flight_max", double(r.gpu_max_in_flight));
  t.family("warpath_worker_frames", "gauge",
           "Workers' frames: the cap, the most any worker has, the most any needs (rate x the "
           "offload's round trip).");
  t.sample("warpath_worker_frames", double(r.frames.cap), "of", "cap");
  t.sample("warpath_worker_frames", double(r.frames.most), "of", "most");
  t.sample("warpath_worker_frames", double(r.frames.needed), "of", "needed");
  t.family("warpath_offload_round_trip_microseconds", "gauge",
           "The longest offload round trip (the master taking a frame to its launch's completion) "
           "the workers estimate.");
  t.sample("warpath_offload_round_trip_microseconds", r.frames.round_trip_us);
  t.family("warpath_frame_waits_total", "counter", "Times a worker found no frame free.");
  t.sample("warpath_frame_waits_total", double(r.frames.waits));
  t.family("warpath_batch_fill_ratio", "gauge", "Mean chunk size / batch.");
  t.sample("warpath_batch_fill_ratio", r.batch_fill);
  t.family("warpath_gpu_share_ratio", "gauge", "Share of chunks sent to the offload master.");
  t.sample("warpath_gpu_share_ratio", r.gpu_share);
  t.family("warpath_auto_worker_ns_per_packet", "gauge",
           "The auto policy's measured worker cost a packet of each path (0: not measured).");
  t.sample("warpath_auto_worker_ns_per_packet", r.auto_cost_cpu_ns, "path", "cpu");
  t.sample("warpath_auto_worker_ns_per_packet", r.auto_cost_offload_ns, "path", "offload");
  // Latency is summarised from the workers' histograms once, at the end of the run; a live
  // snapshot has none, and a 0 would read as a measurement.
  if (!r.final) return t.take();
  t.family("warpath_latency_microseconds", "gauge",
           "RX-to-TX latency of forwarded packets over the whole run (quantile 1 is the maximum).");
  t.sample("warpath_latency_microseconds", r.latency.p50_us, "quantile", "0.5");
  t.sample("warpath_latency_microseconds", r.latency.p99_us, "quantile", "0.99");
  t.sample("warpath_latency_microseconds", r.latency.p999_us, "quantile", "0.999");
  t.sample("warpath_latency_microseconds", r.latency.max_us, "quantile", "1");
  return t.take();
}

Result<ListenAddress> parse_listen_address(std::string_view text) {
  const size_t colon = text.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == text.size())
    return Status(Errc::kInvalidArgument, "expected ADDR:PORT, e.g. 127.0.0.1:9100");
  ListenAddress a;
  a.host = std::string(text.substr(0, colon));
  if (a.host.size() >= 2 && a.host.front() == '[' && a.host.back() == ']')
    a.host = a.host.substr(1, a.host.size() - 2);
  else if (a.host.find(':') != std::string::npos)
    return Status(Errc::kInvalidArgument, "an IPv6 address goes in brackets: [ADDR]:PORT");
  const std::string_view port_text = text.substr(colon + 1);
  int port       = 0;
  auto [end, ec] = std::from_chars(port_text.data(), port_text.data() + port_text.size(), port);
  if (ec != std::errc() || end != port_text.data() + port_text.size() || port < 0 || port > 65535)
    return Status(Errc::kInvalidArgument, "the port must be a number from 0 to 65535");
  a.port = uint16_t(port);
  return a;
}

}  // namespace warpath::runtime
