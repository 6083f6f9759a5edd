// include/warpath/runtime/pipeline.hpp
//
// The packet pipeline: PacketShader's software router (packetshader-sigcomm10.md sections 4-5)
// with GSwitch's delay-bounded batching (gswitch-conext14.md section 7.4).
//
// What runs is a chain of modules (chain.hpp, module.hpp): the presets acl, router and
// router+acl, or any chain of the registry's modules.
//
// Stages (per chunk of up to `batch` packets)
//   RX          a worker polls its RX queues into a chunk; the chunk is closed when it is full
//               or when its oldest packet has waited `delay_us`.
//   pre-shade   parse (cpu.parse), then every module gathers its keys into its slot (5-tuple /
//               OpenFlow keys for the ACL, destinations for the FIB).
//   shade       every module's jobs on an engine: in the worker (CPU engines) or in the
//               master thread of a GPU, which gathers the same job of chunks from several
//               workers into one launch and scatters the answers back, without knowing what
//               the keys are.
//   post-shade  the modules in chain order, each on the packets still undecided whose context
//               it accepts: ACL actions, the router data path (TTL, checksum, MACs, output
//               port), drops and slow path.
//   TX          per output port, in chunk order.
//
// Threads
//   Workers (pinned to cores 1.., one per `workers`) own their RX queues and chunks. The master
//   thread (one per GPU) takes chunks from a shared input queue and hands each back on its
//   worker's own completion queue. A worker keeps receiving and pre-shading while its chunks are
//   on the GPU (up to kMaxInFlight per worker) and finishes chunks strictly in order, so packets
//   of a flow (which always reach the same worker: one RX queue per flow) leave in order.
//
// Offload policy
//   cpu   every chunk is shaded in its worker.
//   gpu   every chunk goes to the master (an error when no GPU is present).
//   auto  opportunistic offloading: chunks are shaded on the CPU while the worker keeps up;
//         when its measured CPU cost per packet times the arrival rate exceeds the time it has
//         (load > 0.9), a growing share of chunks goes to the master; below load 0.6 the share
//         shrinks again (hysteresis). Each path's cost to the worker is measured, and a GPU
//         path that saves the worker under 5% a packet is declined (offload_policy.hpp). The
//         share and the costs are in the report.
//
// Counters
//   rx (arrived at the ports, including RX-queue drops) = tx + dropped + slow_path, checked at
//   the end with nothing left in flight. Drops are counted by reason: the router's reasons,
//   acl_deny, rx_queue_full, tx_error, no_port (an output port that is not configured).
//
// Stopping
//   run() returns when every RX queue has ended, when `duration_s` has passed, or when
//   *hooks.stop becomes true (the CLI sets it on SIGINT/SIGTERM). In every case RX stops first,
//   then every chunk already received is finished and sent: nothing is lost.
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/runtime/port.hpp"
#include "warpath/runtime/run_config.hpp"
#include "warpath/runtime/tables_fwd.hpp"

namespace warpath::runtime {

class Chain;

struct LatencySummary {
  uint64_t count = 0;
  double mean_us = 0, p50_us = 0, p99_us = 0, p999_us = 0, max_us = 0;
};

/// One module's counters (chain.hpp: ModuleCounters), summed over the workers.
struct ModuleReport {
  uint32_t position = 0;           ///< 1-based
  std::string kind, describe;      ///< "acl", what it was built from
  uint64_t in = 0, out = 0;        ///< packets it decided for; of those, passed on undecided
  uint64_t forwarded      = 0;     ///< of those, forwarded
  std::map<std::string, uint64_t> drops, slow_path;  ///< by its own reasons
  double ns_per_packet = 0;  ///< CPU time in its pre, shade and post per packet received
  /// What a stateful module's per-worker states count (flows, active, ...), summed over the
  /// workers; empty for stateless modules.
  std::map<std::string, uint64_t> stats;
};

struct PortReport {
  std::string name, description;
  PortStats stats;
};

/// The run's counters; also the snapshot the progress callback sees (then `final` is false).
struct RunReport {
  bool final     = false;
  double seconds = 0;
  std::string app, engine, offload_engine;  ///< e.g. "router+acl", "cpu.lpm + cpu.rfc", ...
  std::string chain;                        ///< the modules, "acl -> router"
  std::string schedule;                     ///< packet scheduling the chain ran with: none, sort
  /// Whether frames were parsed: not when no module of the chain reads headers (`wire`) and no
  /// port has an MTU to check (Chain::parses); the parse stage is then 0.
  bool parsed = true;
  std::vector<ModuleReport> modules;        ///< in chain order
  uint32_t workers = 0;
  uint64_t rx = 0, tx = 0, dropped = 0, slow_path = 0;
  uint64_t rx_bytes = 0, tx_bytes = 0;
  std::map<std::string, uint64_t> drops_by_reason;      ///< reason name -> packets
  std::map<std::string, uint64_t> slow_path_by_reason;  ///< reason name -> packets
  std::vector<PortReport> ports;
  uint64_t chunks = 0, cpu_chunks = 0, gpu_chunks = 0;
  uint64_t cpu_packets = 0, gpu_packets = 0;
  uint64_t gpu_launches = 0;  ///< master launches (each gathers one or more chunks)
  /// Of those: on device memory (one upload, every module, one download), and with packet
  /// jobs' bytes left in their frames (a span a frame on a device, in place otherwise).
  uint64_t gpu_resident_launches = 0, gpu_direct_launches = 0;
  /// The most launches queued on the device at once (the asynchronous master, master.hpp).
  uint64_t gpu_max_in_flight = 0;
  /// Each worker's frames (src/runtime/frame_window.hpp): the most it may have (`cap`: what
  /// the memory was sized for), the most any worker has, the most any needs to cover its rate
  /// times the offload's round trip (0 until an offloaded frame came back; above the cap, the
  /// cap bounds that worker's rate), the longest round trip and the shortest interval between
  /// closed frames the workers estimate, and how often a worker found no frame free (summed).
  /// Frames grow only where a master is.
  struct Frames {
    uint32_t cap = 0, most = 0, needed = 0;
    double round_trip_us = 0, interval_us = 0;
    uint64_t waits = 0;
  } frames;
  double batch_fill     = 0;  ///< mean chunk size / batch
  double cpu_ns_per_pkt = 0;  ///< measured shade cost on the CPU
  /// Where a worker's time goes, in ns per packet finished (summed over the workers, so on
  /// one worker their sum is the framework's cost a packet): receiving, parsing, the modules
  /// (every module's pre, CPU shade and post), sending, and the rest of the loop's working
  /// iterations (`other`: frame bookkeeping, the offload policy, waiting for the master's
  /// answers in order). Idle polling is not counted.
  struct Stages {
    double rx = 0, parse = 0, modules = 0, tx = 0, other = 0;
    /// (name, ns) in report order: what the JSON, the stats lines and the metrics write.
    std::array<std::pair<const char*, double>, 5> named() const {
      return {{{"rx", rx}, {"parse", parse}, {"modules", modules}, {"tx", tx}, {"other", other}}};
    }
  } stages;
  double gpu_share      = 0;  ///< current (snapshot) or mean (final) share sent to the GPU
  /// The auto policy (offload_policy.hpp): the worker's own cost a packet of a chunk shaded on
  /// the CPU and of one offloaded (pre stage to last send, without waiting for the master),
  /// means over the workers that measured them (0: none did), and the workers that declined the
  /// GPU path because it saved them less than 5%.
  double auto_cost_cpu_ns = 0, auto_cost_offload_ns = 0;
  uint32_t auto_declined  = 0;
  uint64_t in_flight    = 0;  ///< packets received but not yet finished (0 at the end)
  /// ICMP / ICMPv6 Time Exceeded errors the slow path sent back out of the ingress port about
  /// ttl_expired / hop_limit_expired packets, and those it may not send (RFC 1812 4.3.2.7).
  /// Router-originated: not part of rx = tx + dropped + slow_path (the ports' own tx counters
  /// do include them: a port counts every frame it sends).
  uint64_t icmp_sent = 0, icmp_suppressed = 0;
  /// Copies of packets the modules originated (OpenFlow PACKET_OUT) that ports sent: not part
  /// of rx = tx + dropped + slow_path either (the ports' tx counters include them).
  uint64_t originated = 0;
  /// Frames the ports sent beyond one per forwarded packet (a packet sent out of several ports,
  /// frame.hpp's kOutMany).
  uint64_t copies = 0;
  /// Forwarded packets sent as IP fragments (larger than their link's MTU or the one a module
  /// gave them, frame.hpp's frag_mtu), and the fragments the ports took (those of packets a port
  /// took only part of, counted as tx_error, included). The ports' tx counters add up to
  /// tx + copies + originated + icmp_sent + fragments - fragmented.
  uint64_t fragmented = 0, fragments = 0;
  LatencySummary latency;  ///< RX to TX, per packet, forwarded packets
  /// Final reports: what went wrong after the run started (a worker's error, a port that could
  /// not write its output), each one line naming the port or module; the counters are still
  /// true, up to the failure. The run failed when this is not empty.
  std::vector<std::string> errors;
  /// Final reports: what the ports worked around (Port::warnings), e.g. a truncated capture.
  std::vector<std::string> warnings;
  /// rx = tx + dropped + slow_path and in_flight == 0 (final reports). kInvalidArgument naming
  /// the identity that fails.
  Status check() const;
};

struct RunHooks {
  std::atomic<bool>* stop    = nullptr;  ///< set to true to stop (drains first)
  /// Set to true to reload the modules' files (Chain::reload; `warpath run` on SIGHUP): the
  /// run loop clears it and reports each module's line through `notice`.
  std::atomic<bool>* reload = nullptr;
  std::function<void(const std::string&)> notice;
  double progress_interval_s = 0.5;
  std::function<void(const RunReport&)> progress;  ///< called from the run() thread
  /// Called once the chain is built and the workers are ready, before packets flow: what runs
  /// beside the pipeline and drives its modules (the OpenFlow agent) attaches here. An error
  /// aborts the run. The handle it returns is released once the workers have stopped, while
  /// the chain and the workers' module states still exist.
  std::function<Result<std::shared_ptr<void>>(const Chain&, const std::vector<Port*>&)> attach;
};

/// Everything run() needs besides its configuration: the ports (index = position) and, as a
/// TableSource, the tables of a preset app, already loaded (or none: the preset's modules then
/// load the files its settings name, or use the built-in tables), and how modules load the files their
/// arguments name (the CLI passes warpath_io's loaders: set_file_loaders; without them a module
/// given a file says it cannot load it).
struct RunInputs : TableSource {
  std::vector<std::unique_ptr<Port>> ports;
  /// Where slow-path packets go (the host's stack; a `pcap::FILE` port for --slow-path), or
  /// nullptr to count them only. Not one of the numbered ports.
  std::unique_ptr<Port> slow_path;
};

/// Opens `config`'s ports, in order, into `in.ports` (and its slow path, `tap:IFACE` or a
/// capture file, into `in.slow_path`), with the options `warpath run` gives them: rx queues for
/// the workers, the seed and generator profile, the rx wait, zero copy and the packets the
/// frames may hold. In warpath_runtime_sys (it knows every kind of port); errors as open_port's.
Status open_run_ports(const RunConfig& config, RunInputs& in);
/// Sets `in`'s file loaders to warpath_io's (routes, rules, text, SA files), as `warpath run`
/// gives them to the modules. In warpath_runtime_sys.
void set_file_loaders(RunInputs& in);

/// Packets the run's frames may hold at once (workers x frames a worker x batch): what a
/// zero-copy port must have buffers for beside its rings (PortOptions::held_packets).
uint32_t packets_held(const RunConfig& config);

/// Runs the pipeline until the sources end, the duration passes or hooks.stop is set.
Result<RunReport> run(const RunConfig& config, RunInputs& inputs, const RunHooks& hooks = {});

}  // namespace warpath::runtime
