// include/warpath/lookup/route.hpp
//
// Routes, addresses and the route, update and address text formats.
//
// Addresses
//   IPv4 addresses are uint32_t in host order (10.0.0.1 is 0x0a000001). IPv6 addresses are Ip6:
//   two uint64_t in host order, `hi` holding the first 8 bytes of the address as a big-endian
//   number, so prefixes are masked and compared with integer operations on host and device.
//
// Next hops
//   A NextHop is a 32-bit id; kNoRoute (all ones) means "no route". Engines accept next hops
//   0..kMaxNextHop (2^31 - 2). How text next hops become ids is decided per file:
//     - integer column (`10.0.0.0/8 7`): the integer itself;
//     - any other token (`veth3`, `195.66.226.74`, `2001:7f8:4::1a0b:1`): interned, ids 0, 1,
//       ... in order of first appearance, and the text kept in RouteTable::nexthop_names so a
//       tool can print the next hop as written;
//     - no column at all (the full tables in ../shared/data/routing carry none): assigned
//       deterministically, nh = fnv1a(prefix bytes in network order, len) % 256, as the
//       PacketShader and Poptrie evaluations did (the README of the data folder).
//   A file either has the column on every line or on none; integers and names do not mix.
//
// Text formats (one item per line; blank lines and lines starting with '#' are skipped;
// fields are separated by TABs or spaces; .gz and .xz files are read directly)
//   routes    <prefix>/<len> [<nexthop>]            1.0.4.0/22  veth27   |  2001:db8::/32 5
//             IPv4 and IPv6 may be mixed in one file. Host bits beyond the length are cleared
//             and counted (RouteTable::host_bits_cleared). A prefix given twice is an error.
//   updates   <unixtime> a|w <prefix>/<len> <nexthop>
//             (the LINX update format; a withdrawal's next hop is ignored). Next hops of
//             announcements are interned into the same RouteTable as the base table's; on a
//             table with assigned next hops (0..255) they get ids from 256 on, so the LINX
//             updates apply on top of the next-hop-less full table.
//   addresses <address>                           one IPv4 or IPv6 address per line
//
// Errors
//   kParseError "file:line: reason"; nothing half-parsed is returned.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <unordered_map>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/lookup/addr.hpp"
#include "warpath/net/addr_text.hpp"

namespace warpath::lookup {

struct Route4 {
  uint32_t prefix = 0;  ///< host order, host bits zero
  uint8_t len     = 0;  ///< 0..32
  NextHop nh      = 0;
};

struct Route6 {
  Ip6 prefix{};     ///< host bits zero
  uint8_t len = 0;  ///< 0..128
  NextHop nh  = 0;
};

/// How a table's next hops were obtained (see the header comment).
enum class NextHopSource : uint8_t { kNone, kNumeric, kNamed, kAssigned };

/// A parsed route file: both families, in file order.
struct RouteTable {
  std::vector<Route4> v4;
  std::vector<Route6> v6;
  NextHopSource source = NextHopSource::kNone;
  std::vector<std::string> nexthop_names;                ///< kNamed: id -> text as written
  std::unordered_map<std::string, NextHop> nexthop_ids;  ///< interned text -> id
  uint64_t host_bits_cleared = 0;

  /// The next hop as a user wrote it: the name of an interned next hop, else the decimal id;
  /// "-1" for kNoRoute.
  std::string nexthop_text(NextHop nh) const;
  size_t size() const { return v4.size() + v6.size(); }
};

struct RouteUpdate {
  uint64_t time = 0;
  bool announce = true;  ///< false: withdrawal
  bool is_v6    = false;
  Route4 r4{};        ///< when !is_v6
  Route6 r6{};        ///< when is_v6
  uint32_t line = 0;  ///< 1-based line in the file
};

/// One address of an address file.
struct Address {
  bool is_v6  = false;
  uint32_t v4 = 0;
  Ip6 v6{};
};

// ---- text parsing (warpath_lookup: no files) -----------------------------------------------

/// Address text (net/addr_text.hpp), named here for the route code.
using net::format_ipv4;
using net::format_ipv6;
using net::parse_ipv4;
using net::parse_ipv6;

/// Parses a route file's text; `name` is used in error messages.
Result<RouteTable> parse_routes(std::string_view name, std::string_view text);
/// Parses an update stream; announcements' next hops are interned into `table` (see the header
/// comment), or must be integers for a kNumeric table.
Result<std::vector<RouteUpdate>> parse_route_updates(std::string_view name, std::string_view text,
                                                     RouteTable& table);
Result<std::vector<Address>> parse_addresses(std::string_view name, std::string_view text);

/// The deterministic next hop of a table without next hops (see the header comment).
NextHop assigned_nexthop4(uint32_t prefix, unsigned len);
NextHop assigned_nexthop6(Ip6 prefix, unsigned len);

// ---- files (warpath_io: reads .gz/.xz) -----------------------------------------------------

Result<RouteTable> load_routes(const std::string& path);
Result<std::vector<RouteUpdate>> load_route_updates(const std::string& path, RouteTable& table);
Result<std::vector<Address>> load_addresses(const std::string& path);

}  // namespace warpath::lookup
