// include/warpath/runtime/run_config.hpp
//
// What `warpath run` runs: the application, its tables, the ports, the engines and the
// batching. Read from a TOML file and/or command-line flags (flags override the file).
//
// TOML (every key optional; an unknown key, a wrong type or a bad value is an error naming the
// file, the line and the key)
//   app       = "router+acl"      # acl | router | router+acl | ipsec | switch (presets:
//                                 # `warpath modules` prints the chain each runs)
//   engine    = "auto"            # cpu | gpu | auto   (offload policy)
//   offload_device = "cuda"       # cuda | cpu (test aid: the offload path on CPU engines)
//   offload_depth = 4             # launches each master lane keeps in flight (1..64)
//   offload_delay_us = 0          # test aid, offload_device = "cpu" only: launches complete no
//                                 # sooner than this (a device's round trip, emulated)
//   workers   = 2                 # worker threads (each pinned to a core when possible)
//   pin_threads = true            # false: leave thread placement to the kernel
//   zero_copy = true              # false: dpdk ports copy packets into frames and out again
//   gen_profile = "ipv4+udp+min"  # traffic of gen: ports (port.hpp: default, imix, uniform,
//                                 # min, max, ipv4, ipv6, novlan, tcp, udp joined by '+')
//   cpus      = [2, 3, 1, 4]      # cores to pin to: worker w -> cpus[w], then the offload
//                                 # master's lanes, one core each (default: workers on
//                                 # 1..W, lanes on 0 and W+1)
//   batch     = 1024              # maximum packets per chunk
//   delay_us  = 200               # maximum time a packet waits for its chunk to fill
//   duration  = 10.0              # seconds; 0 = until every source has ended (or a signal)
//   seed      = 1
//   json      = "run.json"
//   slow_path = "slow.pcap"       # slow-path packets: a pcap, or "tap:IFACE" to the host (default: counted only)
//   metrics   = "127.0.0.1:9100"  # serve Prometheus text at http://ADDR:PORT/metrics (metrics.hpp)
//   stats_interval = 10           # seconds: a JSON line of live counters on stdout (0: none)
//   schedule  = "none"            # or "sort": packet scheduling before the modules (GASPP 5.3)
//   openflow  = ["pssl:127.0.0.1:6653"]  # app switch: the agent's targets (openflow_agent.hpp)
//   openflow_private_key = "sc-privkey.pem"  # pssl:/ssl: (TLS): key, its certificate, and
//   openflow_certificate = "sc-cert.pem"     # the CA every peer's certificate chains to
//   openflow_ca_cert     = "cacert.pem"
//   openflow_probe       = 5      # seconds of silence before a peer is probed (0: off)
//   [ports]                       # name = spec, in port-number order (port.hpp lists specs)
//   in  = "pcap:in.pcap:out.pcap"
//   out = "null"
//   [router]                      # the preset's settings: tables named after its modules,
//   fib       = "routes.txt.xz"   # top-level keys (sa, flows); the chain modules' library
//   [acl]                         # declares them (PresetCatalog; src/modules/presets.cpp
//   rules     = "acl1_10K"        # lists every one and its default, docs/cli.md in brief)
//   [[module]]                    # instead of app and its settings: a chain of modules,
//   kind = "acl"                  # one table each, in order (chain.hpp; `warpath modules`
//   rules = "fw.rules"            # lists the kinds and their arguments). Every other key is
//   default = "permit"            # an argument: a string, an integer or a boolean
//   [[module]]
//   kind = "router"
//   fib = "routes.txt.xz"
//
// Relative paths (the preset settings that are files, the rules, fib and neighbors
// arguments of modules, json, slow_path and the files of pcap port specs) are relative to the
// directory of the config file. Durations may be integers or floats. [ports] keeps file order (the position is the port number).
//
// The file is ASCII (other characters as \uXXXX escapes in strings; the TOML library mishandles
// raw ones). Examples that run as they are: examples/*.toml (tested by tests/cli/test_examples.py).
//
// Actions: "permit", "deny" (alias "drop"), "output:N" or "goto:NAME". A ClassBench rule line may
// end with an action word (any other word is an error); an OpenFlow rule's actions= list is read
// as ovs-ofctl reads it: the first output:N decides, drop denies, an empty list drops, known
// actions that only modify (mod_*, set_field, normal, ...) permit, unknown ones are errors. In the router+acl app the ACL runs first: deny drops (reason
// acl_deny), permit hands the packet to the router, output:N sends it out of port N unchanged
// (a policy route). In the acl app permit sends a packet out of its paired port (port p ->
// p ^ 1, or p itself when that port does not exist), as a bump-in-the-wire firewall.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath::runtime {

/// A module as written in a chain (chain.hpp): its kind and its arguments, in order, plus where
/// it was written ("run.toml:14") for errors.
struct ModuleSpec {
  std::string kind;
  std::vector<std::pair<std::string, std::string>> args;
  std::string where;
};

enum class Offload : uint8_t { kCpu, kGpu, kAuto };

const char* offload_name(Offload o) noexcept;  ///< "cpu", "gpu", "auto"
bool parse_offload(std::string_view text, Offload& out) noexcept;

/// A setting of a preset application, keyed as the config file spells it: a key of one of its
/// tables ("acl.rules", "router.fib") or a top-level key ("sa", "flows").
struct PresetSetting {
  std::string key, value;
};

struct RunConfig;
struct TableSource;  // tables_fwd.hpp

/// A key of a preset's settings: plain text, or a file path (then resolved against the config
/// file's directory, and an input that no output of the run may overwrite).
struct PresetKey {
  std::string key;
  bool path = false;
};

/// The preset applications of `warpath run --app`. The chain modules' library registers them
/// (src/modules/presets.cpp), so that the runtime names no module and no setting: their names,
/// the keys of their settings (the TOML loader takes exactly these, and the CLI's flags set
/// them), a check of the settings' values (messages start with the key, as validate()'s), and
/// the chain of modules each becomes.
struct PresetCatalog {
  std::vector<std::string> apps;  ///< in the order `--help` lists them
  std::vector<PresetKey> keys;
  Status (*check)(const RunConfig&)                             = nullptr;
  std::vector<ModuleSpec> (*chain)(const RunConfig&, const TableSource&) = nullptr;
};
/// Sets the catalog (the last registered wins). Always true.
bool register_presets(const PresetCatalog& catalog) noexcept;
/// The registered catalog; empty without the chain modules' library (then run() refuses a
/// preset).
const PresetCatalog& presets() noexcept;
/// The catalog's app names joined by ", ".
std::string preset_app_list();

struct RunConfig {
  /// The preset application (PresetCatalog::apps) run when `chain` is empty.
  std::string app = "router+acl";
  /// The modules to run (chain.hpp); empty = the preset `app` with `settings`. A chain takes
  /// its tables from its modules' arguments instead.
  std::vector<ModuleSpec> chain;
  /// "FILE:LINE" of the config file's first preset setting (app, a preset's table or key);
  /// empty when it has none. Set by load_run_config() so that `--chain` can refuse a file whose
  /// preset settings it would otherwise ignore.
  std::string preset_where;
  /// (name, spec) in port-number order: the first is port 0.
  std::vector<std::pair<std::string, std::string>> ports;

  /// The preset's settings, in the order given (a key at most once: set_setting replaces).
  std::vector<PresetSetting> settings;
  /// The value of setting `key`, or `fallback` when it is not set.
  std::string setting(std::string_view key, std::string_view fallback = {}) const;
  bool has_setting(std::string_view key) const;
  void set_setting(std::string_view key, std::string value);

  /// OpenFlow agent targets (runtime/openflow_agent.hpp: ptcp:[IP:]PORT, tcp:HOST:PORT, or
  /// "none"); empty = ptcp:127.0.0.1:6653 when the chain has a switch (then a port in use is a
  /// warning, not an error).
  std::vector<std::string> openflow;
  /// The agent's inactivity probe (openflow_agent.hpp), in ms; 0 = off.
  uint32_t openflow_probe_ms = 5000;
  /// PEM files of pssl: and ssl: targets: the private key, its certificate, the peers' CA.
  std::string openflow_private_key, openflow_certificate, openflow_ca_cert;

  Offload engine = Offload::kAuto;
  /// Engines the offload (master) thread uses: "cuda" (the GPU) or "cpu" (the same master,
  /// gather and scatter path on CPU engines: how machines without a GPU test that path).
  std::string offload_device = "cuda";
  /// Launches each offload master lane keeps in flight at once (master.hpp:
  /// set_launch_depth); 1 waits for each launch before the next.
  uint32_t offload_depth = 4;
  /// A test aid with offload_device "cpu" (master.hpp: set_min_round_trip_ns): every launch
  /// completes no sooner than this many us after it starts, as if a device took that long, so
  /// that a machine without a GPU sees frames sized by a round trip (0..1,000,000).
  uint32_t offload_delay_us  = 0;
  uint32_t workers           = 1;
  uint32_t batch             = 1024;
  uint32_t delay_us          = 200;
  double duration_s          = 0;
  /// Seconds between JSON lines of live counters on standard output (`--stats-interval`);
  /// 0 = none.
  double stats_interval_s = 0;
  uint64_t seed              = 1;
  std::string json;       ///< write the report as JSON here
  std::string slow_path;  ///< slow-path packets: a pcap file, or tap:IFACE (to the host)
  std::string metrics;    ///< "ADDR:PORT": serve Prometheus text at /metrics while running
  bool pin_threads = true;
  /// Frames hold received packets where the port put them (PortOptions::zero_copy; the
  /// packet arena), `--copy` turns it off (the floor bench compares both).
  bool zero_copy = true;
  /// Cores to pin to (DPDK's -l): worker w on cpus[w % size], the master's lanes on the
  /// entries after the workers' (one each; a lane without one is not pinned). Empty: workers
  /// on 1..W, the lanes on 0 and W+1 (when the machine has it).
  std::vector<int> cpus;
  std::string gen_profile = "default";  ///< PortOptions::gen_profile of every gen: port
  /// Packet scheduling (GASPP 5.3; Chain::set_schedule_sort): "none" (arrival order) or "sort"
  /// (modules visit packets grouped by class, context and length).
  std::string schedule = "none";
  bool progress           = true;  ///< live one-line display (the CLI turns it off when not a TTY)

  /// Range and consistency checks (batch 1..65536, workers 1..256, offload_depth 1..64,
  /// delay_us <= 1e6, duration >= 0, offload_device, the app and its settings (the
  /// catalog's check, unless the run is a chain), then the ports: at least one,
  /// names unique and [A-Za-z0-9_.-]+, specs that parse_port_spec() accepts, one that
  /// receives). kInvalidArgument "key: reason" with the key as the TOML file spells it
  /// ("batch", "acl.match", "ports.NAME", "ports"); the ports are checked last. The CLI
  /// fills default ports before it validates.
  Status validate() const;
};

/// Reads a TOML config into `config` (keys present override what `config` holds; [ports]
/// replaces the ports). Values are checked with validate(), except that a file without
/// [ports] is accepted. kParseError (syntax, unknown key, wrong type) / kInvalidArgument
/// (bad value) "file:line: key: reason", kIoError for an unreadable file; on error `config`
/// is left unchanged.
Status load_run_config(const std::string& path, RunConfig& config);
/// The same from text (`name` is used in errors, and its directory resolves relative paths).
Status parse_run_config(std::string_view text, std::string_view name, RunConfig& config);

}  // namespace warpath::runtime
