// include/warpath/openflow/session.hpp
//
// The OpenFlow 1.0 agent's protocol side: SwitchControl (what the switch module lets the agent
// do to it) and Session (one connection: bytes in, replies out), without sockets, so tests can
// drive it directly; the socket side is runtime/system/openflow_agent.
//
// What a session answers (../shared/notes/openflow-ipsec.md 2 lists what each ovs-ofctl
// command sends)
//   HELLO (version 1; a peer below 1 gets HELLO_FAILED and the connection closes), ECHO,
//   FEATURES, GET_CONFIG / SET_CONFIG (miss_send_len), BARRIER (pending flow_mods published
//   first), FLOW_MOD (five commands; errors as the specification says), STATS: DESC, FLOW and
//   AGGREGATE (filtered by match and out_port), TABLE, PORT, QUEUE (none); QUEUE_GET_CONFIG
//   (no queues), PACKET_OUT (unbuffered: the data rides in the message; output:TABLE runs the
//   packet through the flow table). VENDOR messages and vendor statistics get
//   ERROR(BAD_REQUEST, BAD_VENDOR), which ovs-ofctl needs to fall back to plain OpenFlow 1.0.
//   PORT_MOD sets a port's config (down, no_recv, no_flood, no_fwd, no_packet_in; other bits
//   get BAD_REQUEST/EPERM; a wrong MAC, PORT_MOD_FAILED/BAD_HW_ADDR) and sends PORT_STATUS
//   (MODIFY) to the async connections. A message type a switch never receives gets
//   BAD_TYPE, another version BAD_VERSION, a short body BAD_LEN. A header whose length is below
//   8 closes the connection (the stream cannot be resynchronised).
// Asynchronous messages (PACKET_IN, FLOW_REMOVED, PORT_STATUS) go to a connection the switch
// opened to a controller, and to a passive one once it sent SET_CONFIG (as `ovs-ofctl monitor`
// does); PACKET_INs only while its miss_send_len is above 0.
// Flow_mods are applied at once and published (a new image for the data path) before the
// session answers anything that reads the table (barrier, statistics) and after each batch of
// received bytes.
#pragma once
#include <array>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

namespace wire {
class Writer;
}

/// ofp_port_config bits the switch honours.
enum PortConfig : uint32_t {
  kPortDown     = 1,   ///< neither receives nor sends
  kNoRecv       = 4,   ///< drops what it receives
  kNoFlood      = 16,  ///< left out of FLOOD (not of ALL)
  kNoFwd        = 32,  ///< nothing is sent out of it
  kNoPacketIn   = 64,  ///< what it receives is never sent to the controller
  kPortConfigAll = kPortDown | kNoRecv | kNoFlood | kNoFwd | kNoPacketIn,
};

struct TableStats {
  uint32_t active = 0, max_entries = 0;
  uint64_t lookups = 0, matched = 0;
};

struct PacketIn {
  uint16_t in_port   = 0;  ///< OpenFlow port number
  uint8_t reason     = 0;  ///< 0 no match, 1 the controller action
  uint16_t total_len = 0;  ///< the packet's length
  uint16_t max_len   = 0xffff;  ///< the action's max_len (no match: the session's miss_send_len)
  std::vector<uint8_t> data;    ///< at most max_len bytes
};

/// The switch as the agent drives it. Every method is thread-safe (the data path keeps running).
class SwitchControl {
 public:
  virtual ~SwitchControl() = default;
  /// Applies a flow_mod to the table (not yet to the data path: publish()). kUnsupported when
  /// the data path could not run the actions (headers changed between outputs).
  virtual FlowModResult flow_mod(FlowModCommand cmd, const FlowSpec& spec) const = 0;
  /// Compiles and publishes the table if it changed.
  virtual Status publish() const = 0;
  /// Entries covered by `filter` (and outputting to out_port unless kPortNone), with their live
  /// counters, in precedence order.
  virtual std::vector<FlowEntry> flows(const Match& filter, uint16_t out_port) const = 0;
  virtual TableStats table_stats() const = 0;
  /// Removes the flows whose timeouts ran out (counters as of now) and publishes.
  virtual std::vector<RemovedFlow> expire() const = 0;
  /// Whether packets for the controller are queued (someone listens).
  virtual void listen_packet_in(bool on) const = 0;
  /// Moves the queued packet_ins to `out`.
  virtual void take_packet_ins(std::vector<PacketIn>& out) const = 0;
  /// The clock flows are timed with (FlowEntry::created_ns).
  virtual uint64_t now_ns() const = 0;
  /// Sends `data` as if it came in on `in_port` (an OpenFlow port, kPortController or
  /// kPortNone) through `actions` (output to kPortTable: through the flow table). Queued for
  /// the data path; kCapacity when the queue is full, kInvalidArgument for actions the data
  /// path cannot run.
  virtual Status packet_out(uint16_t in_port, const std::vector<Action>& actions,
                            const std::vector<uint8_t>& data) const = 0;
  /// OFPT_PORT_MOD: the bits of `mask` in the port's config take those of `config`
  /// (PortConfig); kNotFound for a port the switch does not have.
  virtual Status port_mod(uint16_t port_no, uint32_t config, uint32_t mask) const = 0;
  virtual uint32_t port_config(uint16_t port_no) const = 0;
};

struct PortInfo {
  uint16_t port_no = 0;  ///< OpenFlow number (1..)
  std::string name;
  std::array<uint8_t, 6> mac{};
};
struct PortCounters {
  uint16_t port_no = 0;
  uint64_t rx_packets = 0, tx_packets = 0, rx_bytes = 0, tx_bytes = 0, rx_dropped = 0,
           tx_errors = 0;
};

/// What the switch tells about itself.
struct SwitchInfo {
  uint64_t datapath_id = 1;
  std::vector<PortInfo> ports;
  std::function<std::vector<PortCounters>()> port_counters;
  std::string software = "warpath";
};

class Session {
 public:
  /// `controller`: the switch opened this connection to a controller (async messages always).
  Session(const SwitchControl& sw, const SwitchInfo& info, bool controller);
  /// The HELLO to send first.
  std::vector<uint8_t> hello() const;
  /// Consumes received bytes, appending replies to `out`. False when the connection must
  /// close (why() says why); replies already appended should still be sent.
  bool receive(const uint8_t* p, size_t n, std::vector<uint8_t>& out);
  const std::string& why() const noexcept { return why_; }
  /// Whether the peer's HELLO arrived (the agent closes a connection silent through the
  /// handshake).
  bool hello_received() const noexcept { return hello_received_; }
  /// An ECHO_REQUEST (the agent's inactivity probe of a silent peer).
  static std::vector<uint8_t> echo_request(uint32_t xid);
  /// Whether FLOW_REMOVED and PORT_STATUS go to this connection: one the switch opened to a
  /// controller, or one that sent SET_CONFIG (as `ovs-ofctl monitor` does).
  bool async() const noexcept { return controller_ || configured_; }
  /// Whether PACKET_INs go to it: an async connection whose miss_send_len is above 0.
  bool packet_ins() const noexcept { return async() && miss_send_len_ > 0; }
  uint16_t miss_send_len() const noexcept { return miss_send_len_; }
  /// Flows a DELETE of this session removed that asked for flow_removed: the agent sends them
  /// to every async connection.
  std::vector<RemovedFlow> take_removed() { return std::move(removed_); }
  /// PORT_STATUS messages (a port's config changed by this session's PORT_MOD) for the agent
  /// to send to every async connection.
  std::vector<std::vector<uint8_t>> take_port_status() { return std::move(port_status_); }

  /// Encoders for the asynchronous messages.
  static std::vector<uint8_t> packet_in(const PacketIn& p, uint16_t miss_send_len);

 private:
  bool message(const uint8_t* m, size_t len, std::vector<uint8_t>& out);
  void stats(const uint8_t* m, size_t len, std::vector<uint8_t>& out);
  void on_packet_out(const uint8_t* m, size_t len, std::vector<uint8_t>& out);
  void on_port_mod(const uint8_t* m, size_t len, std::vector<uint8_t>& out);

  const SwitchControl& sw_;
  const SwitchInfo& info_;
  bool controller_;
  uint16_t miss_send_len_ = 0;
  uint16_t config_flags_  = 0;
  bool configured_        = false;  ///< SET_CONFIG received
  bool hello_received_    = false;
  std::vector<uint8_t> buf_;
  std::vector<RemovedFlow> removed_;
  std::vector<std::vector<uint8_t>> port_status_;
  void write_port(wire::Writer& w, const PortInfo& p) const;
  std::string why_;
};

}  // namespace warpath::openflow
