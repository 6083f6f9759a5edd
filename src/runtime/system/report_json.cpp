// src/runtime/system/report_json.cpp: a run's report as JSON (report_json.hpp).
#include "runtime/system/report_json.hpp"

namespace warpath::runtime {
namespace {

double per_second(double n, double seconds) { return seconds > 0 ? n / seconds : 0.0; }
double mpps(uint64_t packets, double seconds) { return per_second(double(packets), seconds) / 1e6; }
double gbps(uint64_t bytes, double seconds) { return per_second(double(bytes) * 8, seconds) / 1e9; }

}  // namespace

nlohmann::ordered_json report_totals_json(const RunReport& r) {
  return {{"rx", r.rx},
          {"tx", r.tx},
          {"dropped", r.dropped},
          {"slow_path", r.slow_path},
          {"rx_bytes", r.rx_bytes},
          {"tx_bytes", r.tx_bytes},
          {"in_flight", r.in_flight}};
}

nlohmann::ordered_json report_frames_json(const RunReport::Frames& f) {
  return {{"cap", f.cap},
          {"most", f.most},
          {"needed", f.needed},
          {"round_trip_us", f.round_trip_us},
          {"interval_us", f.interval_us},
          {"waits", f.waits}};
}

nlohmann::ordered_json report_stages_json(const RunReport::Stages& s) {
  nlohmann::ordered_json j = nlohmann::ordered_json::object();
  for (const auto& [name, v] : s.named()) j[name] = v;
  return j;
}

nlohmann::ordered_json run_report_body(const RunConfig& c, const RunReport& r,
                                       const ReportNames& names) {
  using J = nlohmann::ordered_json;
  J j     = J::object();
  j["app"]            = r.app.empty() ? c.app : r.app;
  j["chain"]          = r.chain;
  j["schedule"]       = r.schedule;
  j["parsed"]         = r.parsed;
  j["errors"]         = r.errors;
  j["warnings"]       = r.warnings;
  j["engine"]         = offload_name(c.engine);
  j["engines"]        = {{"cpu", r.engine}, {"offload", r.offload_engine}};
  j["offload_device"] = c.offload_device;
  j["workers"]        = c.workers;
  j["batch"]          = c.batch;
  j["delay_us"]       = c.delay_us;
  j["offload_depth"]  = c.offload_depth;
  j["offload_delay_us"] = c.offload_delay_us;
  j["duration_s"]     = c.duration_s;
  j["seed"]           = c.seed;
  j["fib"]            = names.fib;
  j["rules"]          = names.rules;
  j["stopped_by"]     = names.stopped_by.empty() ? J() : J(names.stopped_by);
  j["seconds"]        = r.seconds;
  j["mpps"]           = mpps(r.rx, r.seconds);
  j["mpps_out"]       = mpps(r.tx, r.seconds);
  j["gbps"]           = gbps(r.rx_bytes, r.seconds);
  j["gbps_out"]       = gbps(r.tx_bytes, r.seconds);
  j["totals"]         = report_totals_json(r);
  const Status check  = r.check();
  j["check"]          = {{"ok", check.is_ok()}, {"message", check.message()}};
  J ports             = J::array();
  for (size_t i = 0; i < r.ports.size(); ++i) {
    const PortReport& p = r.ports[i];
    const std::string spec       = i < c.ports.size() ? c.ports[i].second : "";
    ports.push_back({{"index", i},
                     {"name", p.name},
                     {"spec", spec},
                     {"description", p.description},
                     {"rx", p.stats.rx},
                     {"rx_bytes", p.stats.rx_bytes},
                     {"rx_dropped", p.stats.rx_dropped},
                     {"tx", p.stats.tx},
                     {"tx_bytes", p.stats.tx_bytes},
                     {"tx_errors", p.stats.tx_errors}});
  }
  j["ports"] = ports;
  J drops    = J::object();
  J slow     = J::object();
  for (const auto& [reason, n] : r.drops_by_reason) drops[reason] = n;
  for (const auto& [reason, n] : r.slow_path_by_reason) slow[reason] = n;
  J modules = J::array();
  for (const ModuleReport& m : r.modules) {
    J md = J::object(), ms = J::object();
    for (const auto& [k, n] : m.drops) md[k] = n;
    for (const auto& [k, n] : m.slow_path) ms[k] = n;
    J st = J::object();
    for (const auto& [k, n] : m.stats) st[k] = n;
    modules.push_back({{"position", m.position},
                       {"kind", m.kind},
                       {"describe", m.describe},
                       {"in", m.in},
                       {"out", m.out},
                       {"forwarded", m.forwarded},
                       {"drops_by_reason", md},
                       {"slow_path_by_reason", ms},
                       {"ns_per_packet", m.ns_per_packet},
                       {"stats", st}});
  }
  j["modules"]                     = modules;
  j["drops_by_reason"]             = drops;
  j["slow_path_by_reason"]         = slow;
  j["icmp"]                        = {{"sent", r.icmp_sent}, {"suppressed", r.icmp_suppressed}};
  j["originated"]                  = r.originated;
  j["copies"]                      = r.copies;
  j["fragmented"]                  = {{"packets", r.fragmented}, {"fragments", r.fragments}};
  j["batches"]                     = {{"chunks", r.chunks},
                                      {"fill", r.batch_fill},
                                      {"cpu", r.cpu_chunks},
                                      {"gpu", r.gpu_chunks},
                                      {"launches", r.gpu_launches},
                                      {"resident_launches", r.gpu_resident_launches},
                                      {"direct_launches", r.gpu_direct_launches},
                                      {"max_launches_in_flight", r.gpu_max_in_flight},
                                      {"cpu_packets", r.cpu_packets},
                                      {"gpu_packets", r.gpu_packets},
                                      {"gpu_share", r.gpu_share},
                                      {"cpu_ns_per_packet", r.cpu_ns_per_pkt},
                                      {"auto",
                                       {{"cpu_path_ns_per_packet", r.auto_cost_cpu_ns},
                                        {"offload_path_ns_per_packet", r.auto_cost_offload_ns},
                                        {"declined_workers", r.auto_declined}}}};
  j["frames"]                      = report_frames_json(r.frames);
  j["stages_ns_per_packet"]        = report_stages_json(r.stages);
  const LatencySummary& l = r.latency;
  j["latency_us"]                  = {{"count", l.count},  {"p50", l.p50_us}, {"p99", l.p99_us},
                                      {"p999", l.p999_us}, {"max", l.max_us}, {"mean", l.mean_us}};
  return j;
}

}  // namespace warpath::runtime
