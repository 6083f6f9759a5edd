// include/warpath/runtime/openflow_agent.hpp
//
// The OpenFlow 1.0 agent of `warpath run --app switch`: one thread that listens for OpenFlow
// connections (ovs-ofctl, a controller in passive mode) and/or keeps one open to a controller,
// and runs an openflow::Session on each (openflow/session.hpp has what it answers). Every
// 100 ms it also expires flows (FLOW_REMOVED to asynchronous connections for those that asked)
// and forwards the packets the switch queued for the controller (PACKET_IN).
//
// Targets (as Open vSwitch writes them)
//   ptcp:[IP:]PORT   listen (IP defaults to 127.0.0.1; port 0 picks a free one)
//   tcp:HOST:PORT    connect to a controller, again every second while it is down
//   pssl:[IP:]PORT, ssl:HOST:PORT   the same over TLS (OpenSSL), as ovs-vswitchd takes them:
//                    a private key, its certificate, and the CA certificate every peer's
//                    certificate must chain to (a peer without one is refused)
//
// A misbehaving peer cannot stall the data path: the agent never blocks on a socket, a peer
// whose unsent replies pass 4 MiB is disconnected, and a malformed stream closes its
// connection only. Nor can idle peers lock others out (Open vSwitch's inactivity probe): a
// peer that sends no HELLO within the probe interval is closed; one silent for the interval
// is sent an ECHO_REQUEST and closed if nothing comes back within another; and at most 64
// connections are served, the accepted one silent longest closed to make room for a new one.
// Listening beyond loopback without TLS is allowed with a warning (warnings()).
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/openflow/session.hpp"

namespace warpath::runtime {

struct OpenflowAgentOptions {
  uint32_t inactivity_probe_ms = 5000;  ///< 0: off
  /// PEM files for pssl: and ssl: targets (all three needed when one of those is given).
  struct Tls {
    std::string private_key, certificate, ca_cert;
    bool any() const { return !private_key.empty() || !certificate.empty() || !ca_cert.empty(); }
  } tls;
};

class OpenflowAgent {
 public:
  /// Starts the thread. kInvalidArgument names a malformed target, kIoError one that cannot
  /// listen. `notice` gets one line per connection opened or closed (from the agent's thread).
  static Result<std::unique_ptr<OpenflowAgent>> start(
      const openflow::SwitchControl& sw, openflow::SwitchInfo info,
      const std::vector<std::string>& targets, std::function<void(const std::string&)> notice,
      const OpenflowAgentOptions& options = {});
  virtual ~OpenflowAgent() = default;
  /// "127.0.0.1:6653" per listening target, in order.
  virtual std::vector<std::string> listening() const = 0;
  /// What the user should know (a listener beyond loopback without TLS).
  virtual std::vector<std::string> warnings() const = 0;
};

}  // namespace warpath::runtime
