// include/warpath/runtime/metrics.hpp
//
// Live metrics for operators: the run's counters in the Prometheus text exposition format
// (version 0.0.4), served over HTTP at GET /metrics while `warpath run --metrics ADDR:PORT`
// runs (how data planes are watched: OVS's and VPP's exporters, node_exporter).
//
//   warpath_info{version, app, chain, engine}                          gauge, always 1
//   warpath_up_seconds                                                 gauge
//   warpath_packets_total{what="rx|tx|dropped|slow_path"}              counter
//   warpath_bytes_total{what="rx|tx"}                                  counter
//   warpath_in_flight_packets                                          gauge
//   warpath_drops_total{reason}, warpath_slow_path_total{reason}       counter
//   warpath_port_packets_total{port, what="rx|rx_dropped|tx|tx_errors"} counter
//   warpath_port_bytes_total{port, what="rx|tx"}                       counter
//   warpath_module_packets_total{position, module, what="in|out|forwarded"} counter
//   warpath_module_drops_total{position, module, reason}               counter
//   warpath_module_slow_path_total{position, module, reason}           counter
//   warpath_module_ns_per_packet{position, module}                     gauge
//   warpath_stage_ns_per_packet{stage="rx|parse|modules|tx|other"}     gauge
//   warpath_module_stat{position, module, stat}                         gauge (stateful modules)
//   warpath_chunks_total{place="cpu|gpu"}, warpath_gpu_launches_total  counter
//   warpath_gpu_resident_launches_total, warpath_gpu_direct_launches_total  counter
//   warpath_gpu_launches_in_flight_max                                  gauge
//   warpath_batch_fill_ratio, warpath_gpu_share_ratio                  gauge
//   warpath_auto_worker_ns_per_packet{path="cpu|offload"}              gauge
//   warpath_latency_microseconds{quantile="0.5|0.99|0.999|1"}          gauge (RX to TX; only in
//                                                   the final report: live snapshots carry no
//                                                   latency, so the family is left out)
//
// Label values are escaped (\\, \", \n) as the format requires.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "warpath/core/status.hpp"
#include "warpath/runtime/pipeline.hpp"

namespace warpath::runtime {

/// The report as Prometheus text. `version` goes into warpath_info.
std::string prometheus_text(const RunReport& report, std::string_view version);

/// "ADDR:PORT" split: ADDR an IPv4 address or a name, or an IPv6 one in brackets (returned
/// without them); PORT 0..65535. kInvalidArgument with the reason (no prefix) otherwise.
struct ListenAddress {
  std::string host;
  uint16_t port = 0;
};
Result<ListenAddress> parse_listen_address(std::string_view text);

/// An HTTP server thread answering GET /metrics with the last published text (404 elsewhere).
class MetricsServer {
 public:
  /// Listens on "ADDR:PORT" (IPv4 or [IPv6]; port 0 picks a free one). kInvalidArgument for a
  /// malformed address, kIoError when it cannot bind.
  static Result<std::unique_ptr<MetricsServer>> start(std::string_view listen);
  virtual ~MetricsServer() = default;
  /// Replaces the text served (thread-safe).
  virtual void publish(std::string text) = 0;
  /// The port it listens on.
  virtual uint16_t port() const noexcept = 0;
};

}  // namespace warpath::runtime
