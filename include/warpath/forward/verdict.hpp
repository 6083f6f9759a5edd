// include/warpath/forward/verdict.hpp
//
// The per-packet outcome of the router data path, and the POD view of the router's tables.
//
// What
//   Everything here is plain data shared by the host and the per-packet body in
//   src/forward/core/forward_core.hpp (which nvcc also compiles), so this header includes no
//   STL. The control plane that fills a RouterView (neighbour file, port MACs, the router's own
//   addresses) and the batch driver are in router.hpp, which also explains every verdict and
//   reason.
//
// Layout
//   ForwardResult is 8 bytes and NeighborEntry 12, so a batch of results or a neighbour table
//   moves to a GPU as one flat copy.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::forward {

/// What happens to a received packet. Every packet gets exactly one verdict.
enum class Verdict : uint8_t {
  kForward  = 0,  ///< rewritten in place (TTL / hop limit, MACs) and sent out of `port`
  kSlowPath = 1,  ///< unchanged, queued for the host's stack (router.hpp says which and why)
  kDrop     = 2,  ///< unchanged, counted and discarded (written to the drop capture)
};

/// Why a packet got its verdict. One enum for all three verdicts, so one counter array covers
/// everything; reason_verdict() maps a reason to its verdict and reason_name() gives the
/// stable short name used by counters, the CLI and JSON. New reasons go before kCount.
enum class Reason : uint8_t {
  kForwarded = 0,  ///< forward: "forwarded"
  // slow path: the host's stack sees the packet as it arrived
  kToRouter,         ///< "to_router": destination is one of the router's addresses
  kMulticast,        ///< "multicast": IPv4 224.0.0.0/4 or 255.255.255.255, IPv6 ff00::/8
  kTtlExpired,       ///< "ttl_expired": IPv4 TTL <= 1 (ICMP Time Exceeded is due)
  kHopLimitExpired,  ///< "hop_limit_expired": IPv6 hop limit <= 1 (ICMPv6 Time Exceeded)
  kIpv4Options,      ///< "ipv4_options": IHL > 5
  kIpv6HopByHop,     ///< "ipv6_hop_by_hop": next header 0 right after the IPv6 header
  kArp,              ///< "arp": ARP is the host's business
  kLinkLocal,        ///< "link_local": IPv6 fe80::/10 destination (RFC 4291: never forwarded;
                     ///< the host's stack takes what is its own, e.g. unicast ND)
  kBadIpv4Header,    ///< "bad_ipv4_header": version != 4 or IHL < 5
  kBadIpv4Checksum,  ///< "bad_ipv4_checksum": header checksum does not verify
  kBadIpv4Length,    ///< "bad_ipv4_length": total length < header, or longer than the frame
  kBadIpv6Header,    ///< "bad_ipv6_header": version != 6
  kBadIpv6Length,    ///< "bad_ipv6_length": payload length runs past the frame
  // drop
  kTruncated,   ///< "truncated": the capture ends inside the Ethernet, VLAN or IP header
  kNotIp,       ///< "not_ip": neither IPv4, IPv6 nor ARP
  kNoRoute,     ///< "no_route": the FIB has no route for the destination
  kNoNeighbor,  ///< "no_neighbor": the route's next hop has no neighbour entry
  kNotForUs,    ///< "not_for_us": unicast to another MAC on a port that checks (promiscuous)
  kL2BroadcastUnicastIp,  ///< "l2_broadcast_unicast_ip": link broadcast/multicast, unicast IP
  kMartianSource,         ///< "martian_source": RFC 1812 5.3.7 / RFC 4291 source
  kMartianDestination,    ///< "martian_destination": RFC 1812 5.3.7 / RFC 4291 destination
  kCount
};

inline constexpr unsigned kReasonCount = unsigned(Reason::kCount);

/// The verdict every packet with reason `r` gets.
WARPATH_HD constexpr Verdict reason_verdict(Reason r) {
  return r == Reason::kForwarded  ? Verdict::kForward
         : r < Reason::kTruncated ? Verdict::kSlowPath
                                  : Verdict::kDrop;
}

/// Stable short names: "forward", "slow_path", "drop" and the reason names listed above.
const char* verdict_name(Verdict v) noexcept;
const char* reason_name(Reason r) noexcept;

/// Next hop value meaning "no route"; equal to lookup::kNoRoute (checked in router.hpp).
inline constexpr uint32_t kNoNextHop = 0xFFFF'FFFFu;

/// Per-packet result of the data path.
struct ForwardResult {
  Verdict verdict;
  Reason reason;
  uint16_t port;     ///< output port; meaningful for kForward only (0 otherwise)
  uint32_t nexthop;  ///< the next hop the packet was given (kNoNextHop when none)
};
static_assert(sizeof(ForwardResult) == 8, "ForwardResult is part of the GPU contract");

/// RouterView::neighbor_slots: no neighbour for this next hop.
inline constexpr uint32_t kNoNeighborSlot = 0xFFFF'FFFFu;
/// The largest direct index RouterTables builds (next hops up to 2^20: 4 MiB).
inline constexpr uint32_t kMaxNeighborSlots = 1u << 20;

/// One neighbour: packets whose route says `nexthop` leave on `port` towards `mac`.
struct NeighborEntry {
  uint32_t nexthop;
  uint16_t port;
  uint8_t mac[6];
};
static_assert(sizeof(NeighborEntry) == 12, "NeighborEntry is part of the GPU contract");

/// The router's tables as flat arrays (host or device pointers). Built by RouterTables.
struct RouterView {
  const NeighborEntry* neighbors = nullptr;  ///< sorted by nexthop, no duplicates
  uint32_t neighbor_count        = 0;
  /// Direct index: per next hop below neighbor_slot_count, its neighbour's position in
  /// `neighbors` (kNoNeighborSlot: none; a next hop at or past the count has none either);
  /// nullptr where the next hops are too sparse for one (find_neighbor then searches).
  const uint32_t* neighbor_slots = nullptr;
  uint32_t neighbor_slot_count   = 0;
  const uint8_t* port_macs       = nullptr;  ///< 6 bytes per port, ports 0..port_count-1
  uint32_t port_count            = 0;
  const uint32_t* addrs4         = nullptr;  ///< the router's IPv4 addresses, host order
  uint32_t addr4_count           = 0;
  const uint8_t* addrs6          = nullptr;  ///< the router's IPv6 addresses, 16 bytes each
  uint32_t addr6_count           = 0;
  /// Per ingress port, 1 when its frames must be addressed to the port's MAC (live ports in
  /// promiscuous mode); ports at or past mac_check_count are not checked.
  const uint8_t* mac_check = nullptr;
  uint32_t mac_check_count = 0;
  /// 6 bytes per port below mac_check_count: the interface's own MAC, also accepted; all zero
  /// when unknown.
  const uint8_t* hw_macs = nullptr;
};

}  // namespace warpath::forward
