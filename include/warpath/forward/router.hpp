// include/warpath/forward/router.hpp
//
// The IPv4/IPv6 router data path: header checks, TTL / hop limit, next hop to port and MAC,
// and the slow path.
//
// What
//   PacketShader's forwarding applications (section 6.2) in three stages: the parser (pre-shade)
//   turns each frame into a PacketInfo; the destination addresses are gathered into fixed
//   arrays (RouteKeys) and looked up in a lookup::Fib (shade); forward_batch() (post-shade)
//   decides each packet's verdict, rewrites the forwarded ones in place and names their output
//   port. Every packet gets exactly one Verdict and one Reason, and ForwardCounters add up:
//   rx = tx + dropped + slow_path, always.
//
// Verdicts, in the order the checks run (the first that applies wins)
//   reason               verdict    when
//   truncated            drop       frame < 14 bytes, or the capture ends inside the VLAN tags
//                                   or the IP header (a snap-length artefact: the router cannot
//                                   rewrite what it does not have)
//   not_for_us           drop       on a port that checks MACs (live ports in promiscuous
//                                   mode: RouterConfig::mac_check_ports), unicast to a MAC
//                                   other than the port's
//   arp                  slow path  ARP: the host's stack answers it
//   not_ip               drop       any other ethertype (LLDP, STP, ...): no stack here for it
//   bad_ipv4_header      slow path  version != 4 or IHL < 5                 } RFC 1812 5.2.2:
//   bad_ipv4_checksum    slow path  header checksum does not verify          } malformed IP
//   bad_ipv4_length      slow path  total length < IHL*4 or > the frame      } headers go to
//   bad_ipv6_header      slow path  version != 6                             } the host, which
//   bad_ipv6_length      slow path  payload length runs past the frame       } counts them
//   to_router            slow path  destination is one of the router's addresses
//   multicast            slow path  IPv4 224.0.0.0/4 or 255.255.255.255, IPv6 ff00::/8 (this
//                                   data path forwards unicast only; ND, IGMP and routing
//                                   protocols live in the host)
//   link_local           slow path  IPv6 destination fe80::/10: never forwarded (RFC 4291
//                                   2.5.6); the host takes what is its own (unicast ND)
//   l2_broadcast_unicast_ip  drop   a unicast IP destination in a link-layer broadcast or
//                                   multicast frame (RFC 1812 5.3.4)
//   martian_source       drop       IPv4 source in 0/8, 127/8, 224/4 or 240/4 (RFC 1812
//                                   5.3.7); IPv6 source ::, ::1, ff00::/8, fe80::/10 (RFC
//                                   4291: link-local never leaves its link) or ::ffff:0:0/96
//                                   (IPv4-mapped: never on the wire, RFC 4291 2.5.5.2)
//   martian_destination  drop       IPv4 destination in 0/8, 127/8 or 240/4; IPv6 ::, ::1 or
//                                   ::ffff:0:0/96
//   ttl_expired          slow path  IPv4 TTL <= 1: the host answers with ICMP Time Exceeded
//   hop_limit_expired    slow path  IPv6 hop limit <= 1: ICMPv6 Time Exceeded
//   ipv4_options         slow path  IHL > 5 (options are processed by the host, as in every
//                                   fast path since PacketShader)
//   ipv6_hop_by_hop      slow path  a hop-by-hop options header (router alert, jumbograms)
//   no_route             drop       the FIB has no route (no ICMP Destination Unreachable is
//                                   generated)
//   no_neighbor          drop       the route's next hop has no neighbour entry
//   forwarded            forward    TTL (with an RFC 1624 incremental checksum update) or hop
//                                   limit decremented, Ethernet destination = the neighbour's
//                                   MAC, source = the output port's MAC; VLAN tags are kept
//
//   Malformed IP headers go to the slow path, as in PacketShader ("destined to local,
//   malformed, TTL expired"): counted and queued for the host, never silently lost.
//   The router validates only what a router must (RFC 1812 5.2.2, RFC 8200 section 4): a bad
//   TCP or UDP header, or a malformed IPv6 extension header other than hop-by-hop, is the
//   destination's business, and such packets are forwarded like any other. Drops are counted
//   per reason and kept unchanged for the drop capture.
//
// Tables (RouterTables, built from a RouterConfig)
//   neighbours   next hop id -> (output port, destination MAC). From a neighbour file
//                (parse_neighbors) or, without one, default_neighbors(): every next hop N of
//                the FIB -> port N % ports (4 by default), MAC 02:01:NN:NN:NN:NN (N big-endian).
//   port MACs    the source MAC of frames sent out of a port: 02:00:00:00:PP:PP (P big-endian,
//                locally administered) unless the neighbour file's `port` line gives one.
//   addresses    the router's own addresses: packets to them are `to_router`, and ICMP errors
//                are sent from them. Given per port or router-wide in the neighbour file; a
//                family without any gets 192.0.2.1 (RFC 5737) or 2001:db8::1 (RFC 3849).
//
// Neighbour file (one item per line; '#' starts a comment that runs to the end of the line;
// blank lines are skipped; fields are separated by TABs or spaces)
//   <nexthop> <port> <mac>           a neighbour; <nexthop> as written in the FIB file: the
//                                    integer id, or the name / address text of a FIB with
//                                    named next hops (RouteTable::nexthop_ids)
//   port <port> <mac>|- [<addr>...]  port's source MAC ('-' keeps the default) and addresses
//   router <addr> [<addr>...]        router addresses not tied to a port (loopbacks)
//   Ports are 0..65535; MACs are six hex bytes separated by ':' and must be unicast; addresses
//   are unicast IPv4 dotted quads or IPv6 text. `port` and `router` are keywords: a FIB next
//   hop with one of those names cannot be given a neighbour. A next hop or a port listed twice,
//   an unknown named next hop, and every malformed field are errors "file:line: reason".
//
// Slow path and ICMP
//   Slow-path packets are queued for the host unchanged. For ttl_expired and hop_limit_expired
//   the host answers with build_time_exceeded(): ICMP type 11 code 0 (RFC 792; quoting as much
//   of the datagram as fits in 576 bytes, RFC 1812 4.3.2.3) or ICMPv6 type 3 code 0 (RFC 4443;
//   as much as fits in 1280 bytes), from the router's address on the ingress port, back to the
//   packet's source through the previous hop (Ethernet destination = the frame's source MAC,
//   same VLAN tags). No error is sent about an ICMP error, a non-first fragment, or a packet
//   whose source or link-layer destination is not a single host (RFC 1812 4.3.2.7,
//   RFC 4443 2.4(e)); those are counted as icmp_suppressed. ICMP errors are router-originated
//   traffic: they are not part of rx = tx + dropped + slow_path.
//
// Thread safety
//   RouterTables is immutable after build(); any number of threads may forward with one.
//   forward_batch() writes only the packets of its own batch.
//
// Example
//   auto fib    = lookup::make_fib("auto", routes).value();
//   auto tables = RouterTables::build(default_neighbors(routes)).value();
//   RouteKeys keys(batch.max_packets());
//   std::vector<lookup::NextHop> nexthops(batch.size());
//   std::vector<ForwardResult> results(batch.size());
//   WARPATH_TRY(route_batch(batch, infos, *fib, tables, keys, {nexthops.data(), batch.size()},
//                           {results.data(), batch.size()}, ctx));
//   (tests/forward/header_example_test.cpp compiles and runs this.)
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/forward/verdict.hpp"
#include "warpath/lookup/fib.hpp"
#include "warpath/lookup/route.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::forward {

static_assert(kNoNextHop == lookup::kNoRoute, "one 'no route' value across modules");

using Mac = std::array<uint8_t, 6>;

inline constexpr uint16_t kDefaultPorts       = 4;
inline constexpr uint32_t kDefaultRouterAddr4 = 0xC000'0201u;  ///< 192.0.2.1
/// 2001:db8::1
inline constexpr std::array<uint8_t, 16> kDefaultRouterAddr6 = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0,
                                                                0,    0,    0,    0,    0, 0, 0, 1};

/// 02:00:00:00:PP:PP, the default source MAC of `port`.
Mac default_port_mac(uint16_t port) noexcept;
/// 02:01:NN:NN:NN:NN, the default MAC of the neighbour of next hop `nh`.
Mac default_neighbor_mac(lookup::NextHop nh) noexcept;
/// "aa:bb:cc:dd:ee:ff" (hex digits, one or two per byte) -> MAC; false when malformed.
bool parse_mac(std::string_view text, Mac& out) noexcept;
std::string format_mac(const Mac& mac);

/// One of the router's own addresses. `port` -1 means router-wide.
struct RouterAddress {
  int32_t port               = -1;
  bool is_v6                 = false;
  uint32_t v4                = 0;   ///< host order
  std::array<uint8_t, 16> v6 = {};  ///< network order
};

/// The router's configuration (control plane): what a neighbour file says.
struct RouterConfig {
  struct Neighbor {
    lookup::NextHop nexthop = 0;
    uint16_t port           = 0;
    Mac mac                 = {};
  };
  std::vector<Neighbor> neighbors;
  std::map<uint16_t, Mac> port_macs;  ///< overrides of default_port_mac()
  std::vector<RouterAddress> addresses;
  /// Ports whose frames must be addressed to the port's MAC (or be link broadcast/multicast):
  /// live ports in promiscuous mode. Others (captures, the generator) are not checked.
  std::vector<uint16_t> mac_check_ports;
  /// The interfaces' own MACs of live ports: a checked port accepts frames addressed to it as
  /// well as to the port's MAC (peers resolve the host's address to the interface's MAC). An
  /// all-zero MAC is unknown and matches nothing.
  std::map<uint16_t, Mac> port_hw_macs;
};

/// Parses a neighbour file's text (format above); `name` is used in errors, and `fib` resolves
/// next hops as written in the FIB file. kParseError "name:line: reason".
Result<RouterConfig> parse_neighbors(std::string_view name, std::string_view text,
                                     const lookup::RouteTable& fib);

/// The configuration used without a neighbour file: each next hop N of `fib` -> port N % ports,
/// MAC default_neighbor_mac(N); default port MACs and addresses. `ports` must be >= 1.
RouterConfig default_neighbors(const lookup::RouteTable& fib, uint16_t ports = kDefaultPorts);

/// The compiled, immutable tables the data path reads.
class RouterTables {
 public:
  /// kInvalidArgument for a next hop listed twice (parse_neighbors reports it with a line).
  static Result<RouterTables> build(const RouterConfig& config);

  RouterView view() const noexcept;
  /// The neighbour of `nh`, or nullptr.
  const NeighborEntry* find(lookup::NextHop nh) const noexcept;
  Mac port_mac(uint16_t port) const noexcept;
  /// Ports that have at least one neighbour, ascending.
  const std::vector<uint16_t>& ports() const noexcept { return ports_; }
  size_t neighbor_count() const noexcept { return neighbors_.size(); }
  /// Source address of an ICMP error about a packet that came in on `in_port`: the port's
  /// first address of the family, else the first configured one, else the default.
  uint32_t icmp_source4(uint16_t in_port) const noexcept;
  std::array<uint8_t, 16> icmp_source6(uint16_t in_port) const noexcept;

 private:
  std::vector<NeighborEntry> neighbors_;
  std::vector<uint32_t> neighbor_slots_;  ///< RouterView::neighbor_slots
  std::vector<uint8_t> port_macs_;
  std::vector<uint32_t> addrs4_;
  std::vector<uint8_t> addrs6_;
  std::vector<RouterAddress> addresses_;
  std::vector<uint16_t> ports_;
  std::vector<uint8_t> mac_check_;  ///< per port, RouterView::mac_check
  std::vector<uint8_t> hw_macs_;    ///< 6 per port of mac_check_, RouterView::hw_macs
};

/// Destination addresses of a batch gathered into fixed arrays for the FIB (STYLE.md 8.1.4),
/// with the packet each came from. Allocated once for `max_packets`; extract() reuses it.
class RouteKeys {
 public:
  explicit RouteKeys(uint32_t max_packets);

  /// Gathers the destination of every IPv4 and IPv6 packet whose destination was captured.
  /// kInvalidArgument when infos.size > max_packets.
  Status extract(Span<const packet::PacketInfo> infos);
  /// Looks the gathered keys up (lookup4, then lookup6).
  Status lookup(const lookup::Fib& fib, ExecContext& ctx);
  /// nexthops[i] = the next hop of packet i, kNoRoute for packets without a key.
  /// kInvalidArgument when nexthops is shorter than the extracted batch.
  Status scatter(Span<lookup::NextHop> nexthops) const;

  Span<const uint32_t> dst4() const { return {dst4_.data(), count4_}; }
  Span<const lookup::Ip6> dst6() const { return {dst6_.data(), count6_}; }
  /// Where lookup() puts the answers for dst4() / dst6(). A thread that looks up the keys of
  /// many batches in one call (the pipeline's offload master) writes them here instead, then
  /// the batch's owner calls scatter().
  Span<lookup::NextHop> nexthops4() { return {nh4_.data(), count4_}; }
  Span<lookup::NextHop> nexthops6() { return {nh6_.data(), count6_}; }
  uint32_t max_packets() const noexcept { return max_; }

 private:
  uint32_t max_ = 0, packets_ = 0, count4_ = 0, count6_ = 0;
  std::vector<uint32_t> dst4_, index4_;
  std::vector<lookup::Ip6> dst6_;
  std::vector<uint32_t> index6_;
  std::vector<lookup::NextHop> nh4_, nh6_;
};

/// Post-shade: for each packet i of `batch`, given its parse result infos[i] and its next hop
/// nexthops[i], writes results[i] and rewrites a forwarded packet in place (see above).
/// kInvalidArgument when a span is shorter than the batch. CPU; completes before returning.
Status forward_batch(packet::PacketBatch& batch, Span<const packet::PacketInfo> infos,
                     Span<const lookup::NextHop> nexthops, const RouterTables& tables,
                     Span<ForwardResult> results);

/// Shade and post-shade together: keys.extract, keys.lookup, keys.scatter, forward_batch.
/// `nexthops` is scratch of at least batch.size() entries.
Status route_batch(packet::PacketBatch& batch, Span<const packet::PacketInfo> infos,
                   const lookup::Fib& fib, const RouterTables& tables, RouteKeys& keys,
                   Span<lookup::NextHop> nexthops, Span<ForwardResult> results, ExecContext& ctx);

/// Counters of received packets by verdict, reason and output port, plus the ICMP errors the
/// slow path generated (router-originated, outside rx).
struct ForwardCounters {
  uint64_t rx = 0, tx = 0, dropped = 0, slow_path = 0;
  std::array<uint64_t, kReasonCount> by_reason = {};
  std::map<uint16_t, uint64_t> tx_by_port;
  uint64_t icmp_sent = 0, icmp_suppressed = 0;

  void add(const ForwardResult& r);
  void add(Span<const ForwardResult> results);
  uint64_t reason(Reason r) const { return by_reason[unsigned(r)]; }
  /// Checks that everything adds up: rx = tx + dropped + slow_path; the reasons of each verdict
  /// sum to its counter; tx_by_port sums to tx; icmp_sent + icmp_suppressed <= ttl_expired +
  /// hop_limit_expired (equal once the slow path has answered every expired packet, as
  /// `warpath route` does). kInvalidArgument naming the first identity that fails.
  Status check() const;
};

// ---- slow path ----------------------------------------------------------------------------

/// Largest frame build_time_exceeded() writes: 2 VLAN tags + IPv6 + 1232 quoted bytes.
inline constexpr uint32_t kMaxIcmpFrameBytes = 14 + 8 + 1280;

/// Builds the ICMP (IPv4, type 11 code 0) or ICMPv6 (type 3 code 0) Time Exceeded frame about
/// the expired packet `frame` (see "Slow path and ICMP"), with Ethernet source `src_mac` and IP
/// source `src4` / `src6` (one of the router's addresses, in the packet's family). Writes at most
/// kMaxIcmpFrameBytes to `out` and returns the frame's length, or 0 when no error may be sent
/// about this packet (or it is not a parsed IPv4/IPv6 packet).
uint32_t build_time_exceeded(const uint8_t* frame, uint32_t caplen, const packet::PacketInfo& info,
                             const Mac& src_mac, uint32_t src4, const std::array<uint8_t, 16>& src6,
                             uint8_t* out);

/// An ICMP error's type and code (IPv4 and IPv6) and its 4-byte field after the checksum
/// (ICMP Fragmentation Needed: the next-hop MTU in its low 16 bits, RFC 1191; ICMPv6 Packet
/// Too Big: the MTU, RFC 4443 3.2).
struct IcmpError {
  uint8_t type4, code4, type6, code6;
  uint32_t rest, rest6;
};
/// build_time_exceeded with another error: the same rules (never about an error, a multicast
/// or a later fragment; quoting as RFC 1812 / RFC 4443 allow).
uint32_t build_icmp_error(const uint8_t* frame, uint32_t caplen, const packet::PacketInfo& info,
                          const Mac& src_mac, uint32_t src4, const std::array<uint8_t, 16>& src6,
                          const IcmpError& e, uint8_t* out);

}  // namespace warpath::forward
