// src/forward/neighbors.cpp: MACs, the neighbour file, default neighbours and RouterTables.

#include <algorithm>
#include <charconv>
#include <cstring>
#include <set>
#include <string>
#include <unordered_map>

#include "forward/core/forward_core.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/io/text_file.hpp"
#include "warpath/lookup/route.hpp"
#include "warpath/net/addr_text.hpp"

namespace warpath::forward {

namespace {
bool link_local6(const std::array<uint8_t, 16>& a) { return core::is_link_local6(core::ip6_half(a.data())); }
}  // namespace

namespace {

bool is_space(char c) { return c == ' ' || c == '\t'; }

std::vector<std::string_view> split(std::string_view line) {
  std::vector<std::string_view> fields;
  size_t i = 0;
  while (i < line.size()) {
    while (i < line.size() && is_space(line[i])) ++i;
    const size_t start = i;
    while (i < line.size() && !is_space(line[i])) ++i;
    if (i > start) fields.push_back(line.substr(start, i - start));
  }
  return fields;
}

template <class T>
bool parse_uint(std::string_view text, T max, T& out) {
  uint64_t v        = 0;
  const char* end   = text.data() + text.size();
  const auto [p, e] = std::from_chars(text.data(), end, v);
  if (e != std::errc() || p != end || text.empty() || v > uint64_t(max)) return false;
  out = T(v);
  return true;
}

bool is_unicast_mac(const Mac& m) { return (m[0] & 1) == 0; }

// The route files' address syntax (net::parse_ipv4/parse_ipv6: the dotted quad and the
// RFC 4291 text forms).
bool parse_address(std::string_view text, RouterAddress& out) {
  if (net::parse_ipv4(text, out.v4)) {
    out.is_v6 = false;
    return true;
  }
  net::Ip6 a;
  if (!net::parse_ipv6(text, a)) return false;
  out.is_v6 = true;
  net::ip6_to_bytes(a, out.v6.data());
  return true;
}

// A router address must name this one node: not unspecified, loopback, multicast or broadcast.
bool is_unicast(const RouterAddress& a) {
  if (!a.is_v6) {
    const uint32_t top = a.v4 >> 24;
    return top != 0 && top != 127 && top < 224;
  }
  static constexpr uint8_t kZero[16] = {};
  static constexpr uint8_t kLoop[16] = {0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  return a.v6[0] != 0xff && std::memcmp(a.v6.data(), kZero, 16) != 0 &&
         std::memcmp(a.v6.data(), kLoop, 16) != 0;
}

// The id of a next hop written as in the FIB file.
bool resolve_nexthop(std::string_view text, const lookup::RouteTable& fib, lookup::NextHop& nh,
                     std::string& why) {
  if (fib.source == lookup::NextHopSource::kNamed) {
    const auto it = fib.nexthop_ids.find(std::string(text));
    if (it == fib.nexthop_ids.end()) {
      why = "next hop '" + std::string(text) + "' is not in the FIB";
      return false;
    }
    nh = it->second;
    return true;
  }
  if (!parse_uint<lookup::NextHop>(text, lookup::kMaxNextHop, nh)) {
    why = "next hop '" + std::string(text) + "' is not a number 0.." +
          std::to_string(lookup::kMaxNextHop) + " (the FIB's next hops are numeric)";
    return false;
  }
  return true;
}

}  // namespace

Mac default_port_mac(uint16_t port) noexcept {
  return {0x02, 0x00, 0x00, 0x00, uint8_t(port >> 8), uint8_t(port)};
}

Mac default_neighbor_mac(lookup::NextHop nh) noexcept {
  return {0x02, 0x01, uint8_t(nh >> 24), uint8_t(nh >> 16), uint8_t(nh >> 8), uint8_t(nh)};
}

bool parse_mac(std::string_view text, Mac& out) noexcept {
  Mac m{};
  size_t pos = 0;
  for (int i = 0; i < 6; ++i) {
    if (i > 0) {
      if (pos >= text.size() || text[pos] != ':') return false;
      ++pos;
    }
    unsigned v = 0, digits = 0;
    while (pos < text.size() && digits < 2) {
      const char c = text[pos];
      const int d  = c >= '0' && c <= '9'   ? c - '0'
                     : c >= 'a' && c <= 'f' ? c - 'a' + 10
                     : c >= 'A' && c <= 'F' ? c - 'A' + 10
                                            : -1;
      if (d < 0) break;
      v = v * 16 + unsigned(d);
      ++digits;
      ++pos;
    }
    if (digits == 0) return false;
    m[i] = uint8_t(v);
  }
  if (pos != text.size()) return false;
  out = m;
  return true;
}

std::string format_mac(const Mac& mac) {
  static constexpr char kHex[] = "0123456789abcdef";
  std::string s;
  for (int i = 0; i < 6; ++i) {
    if (i) s += ':';
    s += kHex[mac[i] >> 4];
    s += kHex[mac[i] & 15];
  }
  return s;
}

Result<RouterConfig> parse_neighbors(std::string_view name, std::string_view text,
                                     const lookup::RouteTable& fib) {
  RouterConfig config;
  std::unordered_map<lookup::NextHop, uint64_t> nexthop_line;
  std::unordered_map<uint16_t, uint64_t> port_line;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    const uint64_t no = cursor.line_number();
    auto error        = [&](const std::string& why) { return io::parse_error(name, no, why); };
    if (const size_t hash = line.find('#'); hash != std::string_view::npos)
      line = line.substr(0, hash);  // comments run to the end of the line
    const auto f = split(line);
    if (f.empty()) continue;

    auto addresses = [&](size_t from, int32_t port) -> Status {
      for (size_t i = from; i < f.size(); ++i) {
        RouterAddress a;
        a.port = port;
        if (!parse_address(f[i], a))
          return error("'" + std::string(f[i]) + "' is not an IPv4 or IPv6 address");
        if (!is_unicast(a)) return error("'" + std::string(f[i]) + "' is not a unicast address");
        config.addresses.push_back(a);
      }
      return Status::ok();
    };

    if (f[0] == "router") {
      if (f.size() < 2) return error("'router' needs at least one address");
      WARPATH_TRY(addresses(1, -1));
      continue;
    }
    if (f[0] == "port") {
      if (f.size() < 3) return error("expected 'port <port> <mac>|- [<address>...]'");
      uint16_t port = 0;
      if (!parse_uint<uint16_t>(f[1], 65535, port))
        return error("port '" + std::string(f[1]) + "' is not a number 0..65535");
      if (auto [it, fresh] = port_line.emplace(port, no); !fresh)
        return error("port " + std::to_string(port) + " is configured twice (first at line " +
                     std::to_string(it->second) + ")");
      if (f[2] != "-") {
        Mac mac;
        if (!parse_mac(f[2], mac)) return error("'" + std::string(f[2]) + "' is not a MAC address");
        if (!is_unicast_mac(mac))
          return error("port MAC " + std::string(f[2]) + " is a multicast address");
        config.port_macs[port] = mac;
      }
      WARPATH_TRY(addresses(3, port));
      continue;
    }
    if (f.size() != 3)
      return error("expected '<nexthop> <port> <mac>', got " + std::to_string(f.size()) +
                   " fields");
    RouterConfig::Neighbor n;
    std::string why;
    if (!resolve_nexthop(f[0], fib, n.nexthop, why)) return error(why);
    if (!parse_uint<uint16_t>(f[1], 65535, n.port))
      return error("port '" + std::string(f[1]) + "' is not a number 0..65535");
    if (!parse_mac(f[2], n.mac)) return error("'" + std::string(f[2]) + "' is not a MAC address");
    if (!is_unicast_mac(n.mac))
      return error("neighbour MAC " + std::string(f[2]) + " is a multicast address");
    if (auto [it, fresh] = nexthop_line.emplace(n.nexthop, no); !fresh)
      return error("next hop '" + std::string(f[0]) + "' is listed twice (first at line " +
                   std::to_string(it->second) + ")");
    config.neighbors.push_back(n);
  }
  return config;
}

RouterConfig default_neighbors(const lookup::RouteTable& fib, uint16_t ports) {
  if (ports == 0) ports = 1;
  std::set<lookup::NextHop> seen;
  for (const auto& r : fib.v4) seen.insert(r.nh);
  for (const auto& r : fib.v6) seen.insert(r.nh);
  RouterConfig config;
  for (lookup::NextHop nh : seen) {
    if (nh == lookup::kNoRoute) continue;
    config.neighbors.push_back({nh, uint16_t(nh % ports), default_neighbor_mac(nh)});
  }
  return config;
}

Result<RouterTables> RouterTables::build(const RouterConfig& config) {
  RouterTables t;
  for (const auto& n : config.neighbors) {
    NeighborEntry e{};
    e.nexthop = n.nexthop;
    e.port    = n.port;
    std::memcpy(e.mac, n.mac.data(), 6);
    t.neighbors_.push_back(e);
  }
  std::sort(t.neighbors_.begin(), t.neighbors_.end(),
            [](const NeighborEntry& a, const NeighborEntry& b) { return a.nexthop < b.nexthop; });
  for (size_t i = 1; i < t.neighbors_.size(); ++i)
    if (t.neighbors_[i].nexthop == t.neighbors_[i - 1].nexthop)
      return Status(Errc::kInvalidArgument,
                    "next hop " + std::to_string(t.neighbors_[i].nexthop) + " has two neighbours");
  // The direct index (RouterView::neighbor_slots) where the largest next hop allows one.
  if (!t.neighbors_.empty() && t.neighbors_.back().nexthop < kMaxNeighborSlots) {
    t.neighbor_slots_.assign(size_t(t.neighbors_.back().nexthop) + 1, kNoNeighborSlot);
    for (size_t i = 0; i < t.neighbors_.size(); ++i) t.neighbor_slots_[t.neighbors_[i].nexthop] = uint32_t(i);
  }

  // Port MACs for every port a neighbour or an override names.
  std::set<uint16_t> ports;
  for (const auto& e : t.neighbors_) ports.insert(e.port);
  t.ports_.assign(ports.begin(), ports.end());
  uint32_t port_count = ports.empty() ? 0 : uint32_t(*ports.rbegin()) + 1;
  if (!config.port_macs.empty())
    port_count = std::max(port_count, uint32_t(config.port_macs.rbegin()->first) + 1);
  t.port_macs_.resize(size_t(port_count) * 6);
  for (uint32_t p = 0; p < port_count; ++p) {
    const auto it = config.port_macs.find(uint16_t(p));
    const Mac mac = it != config.port_macs.end() ? it->second : default_port_mac(uint16_t(p));
    std::memcpy(t.port_macs_.data() + 6 * size_t(p), mac.data(), 6);
  }

  for (uint16_t p : config.mac_check_ports) {
    if (p >= t.mac_check_.size()) t.mac_check_.resize(size_t(p) + 1, 0);
    t.mac_check_[p] = 1;
  }
  t.hw_macs_.assign(t.mac_check_.size() * 6, 0);
  for (const auto& [p, mac] : config.port_hw_macs)
    if (p < t.mac_check_.size()) std::memcpy(t.hw_macs_.data() + 6 * size_t(p), mac.data(), 6);

  t.addresses_ = config.addresses;
  // A link-local IPv6 address (every live interface has one) cannot source ICMPv6 errors to
  // off-link hosts: without a global one, the default is kept for that.
  bool has4 = false, has6 = false;
  for (const auto& a : t.addresses_) (a.is_v6 ? has6 : has4) |= !a.is_v6 || !link_local6(a.v6);
  if (!has4) t.addresses_.push_back(RouterAddress{-1, false, kDefaultRouterAddr4, {}});
  if (!has6) t.addresses_.push_back(RouterAddress{-1, true, 0, kDefaultRouterAddr6});
  for (const auto& a : t.addresses_) {
    if (a.is_v6)
      t.addrs6_.insert(t.addrs6_.end(), a.v6.begin(), a.v6.end());
    else
      t.addrs4_.push_back(a.v4);
  }
  return t;
}

RouterView RouterTables::view() const noexcept {
  RouterView v;
  v.neighbors      = neighbors_.data();
  v.neighbor_count = uint32_t(neighbors_.size());
  v.neighbor_slots      = neighbor_slots_.empty() ? nullptr : neighbor_slots_.data();
  v.neighbor_slot_count = uint32_t(neighbor_slots_.size());
  v.port_macs      = port_macs_.data();
  v.port_count     = uint32_t(port_macs_.size() / 6);
  v.addrs4         = addrs4_.data();
  v.addr4_count    = uint32_t(addrs4_.size());
  v.addrs6          = addrs6_.data();
  v.addr6_count     = uint32_t(addrs6_.size() / 16);
  v.mac_check       = mac_check_.data();
  v.mac_check_count = uint32_t(mac_check_.size());
  v.hw_macs         = hw_macs_.data();
  return v;
}

const NeighborEntry* RouterTables::find(lookup::NextHop nh) const noexcept {
  return core::find_neighbor(view(), nh);  // the data path's own lookup
}

Mac RouterTables::port_mac(uint16_t port) const noexcept {
  if (size_t(port) * 6 + 6 > port_macs_.size()) return default_port_mac(port);
  Mac m;
  std::memcpy(m.data(), port_macs_.data() + 6 * size_t(port), 6);
  return m;
}

uint32_t RouterTables::icmp_source4(uint16_t in_port) const noexcept {
  for (const auto& a : addresses_)
    if (!a.is_v6 && a.port == in_port) return a.v4;
  return addrs4_.empty() ? kDefaultRouterAddr4 : addrs4_.front();
}

std::array<uint8_t, 16> RouterTables::icmp_source6(uint16_t in_port) const noexcept {
  for (const auto& a : addresses_)
    if (a.is_v6 && a.port == in_port && !link_local6(a.v6)) return a.v6;
  for (const auto& a : addresses_)  // router-wide, or another port's: never link-local
    if (a.is_v6 && !link_local6(a.v6)) return a.v6;
  return kDefaultRouterAddr6;
}

}  // namespace warpath::forward
