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
//
// A misbehaving peer cannot stall the data path: the agent never blocks on a socket, a peer
// whose unsent replies pass 4 MiB is disconnected, at most 64 connections are served, and a
// malformed stream closes its connection only.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/openflow/session.hpp"

namespace warpath::runtime {

class OpenflowAgent {
 public:
  /// Starts the thread. kInvalidArgument names a malformed target, kIoError one that cannot
  /// listen. `notice` gets one line per connection opened or closed (from the agent's thread).
  static Result<std::unique_ptr<OpenflowAgent>> start(
      const openflow::SwitchControl& sw, openflow::SwitchInfo info,
      const std::vector<std::string>& targets, std::function<void(const std::string&)> notice);
  virtual ~OpenflowAgent() = default;
  /// "127.0.0.1:6653" per listening target, in order.
  virtual std::vector<std::string> listening() const = 0;
};

}  // namespace warpath::runtime
