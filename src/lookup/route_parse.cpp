// src/lookup/route_parse.cpp: route, update and address text (see
// include/warpath/lookup/route.hpp).
//
// Addresses are read and printed by net/addr_text.hpp (inet_pton's RFC 4291 forms, RFC 5952).
// Numbers are read with std::from_chars; nothing here throws except std::bad_alloc, which the
// public functions turn into kOutOfMemory.
#include <charconv>
#include <new>
#include <set>
#include <tuple>
#include <unordered_set>
#include <utility>

#include "warpath/io/text_file.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::lookup {
namespace {

constexpr bool is_space(char c) { return io::FieldScanner::is_space(c); }

bool skip_line(std::string_view line) {
  size_t i = 0;
  while (i < line.size() && is_space(line[i])) ++i;
  return i == line.size() || line[i] == '#';
}

bool parse_uint(std::string_view text, uint64_t max, uint64_t& out) {
  if (text.empty()) return false;
  const auto [ptr, ec] = std::from_chars(text.data(), text.data() + text.size(), out, 10);
  return ec == std::errc() && ptr == text.data() + text.size() && out <= max;
}

std::string quoted(std::string_view t) { return "'" + std::string(t) + "'"; }

uint32_t fnv1a(const uint8_t* bytes, size_t n, unsigned len) {
  uint32_t h = 2166136261u;
  for (size_t i = 0; i < n; ++i) h = (h ^ bytes[i]) * 16777619u;
  return (h ^ len) * 16777619u;
}

/// A parsed "<prefix>/<len>" of either family.
struct ParsedPrefix {
  bool is_v6 = false;
  Route4 r4{};
  Route6 r6{};
  bool host_bits = false;  ///< bits beyond the length were set (and are now cleared)
};

bool parse_prefix(std::string_view token, ParsedPrefix& out, std::string& error) {
  const size_t slash = token.find('/');
  if (slash == std::string_view::npos) {
    error = "prefix " + quoted(token) + " has no /length";
    return false;
  }
  const std::string_view addr = token.substr(0, slash);
  uint64_t len                = 0;
  out.is_v6                   = addr.find(':') != std::string_view::npos;
  const unsigned max_len      = out.is_v6 ? 128 : 32;
  if (!parse_uint(token.substr(slash + 1), max_len, len)) {
    error = "prefix length in " + quoted(token) + " is not a number 0.." + std::to_string(max_len);
    return false;
  }
  if (out.is_v6) {
    Ip6 a;
    if (!parse_ipv6(addr, a)) {
      error = "bad IPv6 address " + quoted(addr);
      return false;
    }
    out.r6.len    = uint8_t(len);
    out.r6.prefix = mask6(a, unsigned(len));
    out.host_bits = out.r6.prefix != a;
  } else {
    uint32_t a = 0;
    if (!parse_ipv4(addr, a)) {
      error = "bad IPv4 address " + quoted(addr);
      return false;
    }
    out.r4.len    = uint8_t(len);
    out.r4.prefix = mask4(a, unsigned(len));
    out.host_bits = out.r4.prefix != a;
  }
  return true;
}

/// First id of next hops interned into a table whose own next hops were assigned (0..255).
constexpr NextHop kInternBase(const RouteTable& t) {
  return t.source == NextHopSource::kAssigned ? kAssignedNhs : 0;
}

/// Turns a next-hop token into an id under the table's mode; sets the mode on first use. In a
/// table with assigned next hops (updates on top of a full table) names are interned after the
/// assigned ids.
bool nexthop_id(std::string_view token, RouteTable& table, NextHop& nh, std::string& error) {
  uint64_t value     = 0;
  const bool numeric = parse_uint(token, kMaxNextHop, value);
  if (!numeric && token.find_first_not_of("0123456789") == std::string_view::npos) {
    error = "next hop " + quoted(token) + " is above the maximum " + std::to_string(kMaxNextHop);
    return false;
  }
  if (token == "-1") {  // what `warpath lookup` prints for "no route"
    error = "next hop '-1' would read as 'no route' in lookup output; name it otherwise";
    return false;
  }
  if (table.source == NextHopSource::kNone)
    table.source = numeric ? NextHopSource::kNumeric : NextHopSource::kNamed;
  if (table.source == NextHopSource::kNumeric) {
    if (!numeric) {
      error = "next hop " + quoted(token) + " is not an integer 0.." + std::to_string(kMaxNextHop) +
              " (earlier lines use integer next hops)";
      return false;
    }
    nh = NextHop(value);
    return true;
  }
  const std::string key(token);
  auto it = table.nexthop_ids.find(key);
  if (it == table.nexthop_ids.end()) {
    const uint64_t id = kInternBase(table) + table.nexthop_names.size();
    if (id > kMaxNextHop) {
      error = "too many distinct next hops";
      return false;
    }
    it = table.nexthop_ids.emplace(key, NextHop(id)).first;
    table.nexthop_names.push_back(key);
  }
  nh = it->second;
  return true;
}

Result<RouteTable> parse_routes_impl(std::string_view name, std::string_view text) {
  RouteTable table;
  io::LineCursor cursor(text);
  std::string_view line;
  std::string error;
  // (prefix, len) pairs already seen, to reject duplicates.
  std::unordered_set<uint64_t> seen4;
  seen4.reserve(text.size() / 16);
  std::set<std::tuple<uint64_t, uint64_t, uint8_t>> seen6;
  while (cursor.next(line)) {
    if (skip_line(line)) continue;
    const uint64_t n = cursor.line_number();
    io::FieldScanner tok(line);
    ParsedPrefix p;
    if (!parse_prefix(tok.next(), p, error)) return io::parse_error(name, n, error);
    const std::string_view nh_token = tok.next();
    if (!tok.next().empty()) return io::parse_error(name, n, "extra fields after the next hop");
    NextHop nh = 0;
    if (nh_token.empty()) {
      if (table.source == NextHopSource::kNumeric || table.source == NextHopSource::kNamed)
        return io::parse_error(name, n, "missing next hop (earlier lines have one)");
      table.source = NextHopSource::kAssigned;
      nh           = p.is_v6 ? assigned_nexthop6(p.r6.prefix, p.r6.len)
                             : assigned_nexthop4(p.r4.prefix, p.r4.len);
    } else {
      if (table.source == NextHopSource::kAssigned)
        return io::parse_error(name, n, "next hop given, but earlier lines have none");
      if (!nexthop_id(nh_token, table, nh, error)) return io::parse_error(name, n, error);
    }
    table.host_bits_cleared += p.host_bits ? 1 : 0;
    if (p.is_v6) {
      p.r6.nh = nh;
      if (!seen6.emplace(p.r6.prefix.hi, p.r6.prefix.lo, p.r6.len).second)
        return io::parse_error(
            name, n,
            "duplicate prefix " + format_ipv6(p.r6.prefix) + "/" + std::to_string(p.r6.len));
      table.v6.push_back(p.r6);
    } else {
      p.r4.nh = nh;
      if (!seen4.insert(uint64_t(p.r4.prefix) << 8 | p.r4.len).second)
        return io::parse_error(
            name, n,
            "duplicate prefix " + format_ipv4(p.r4.prefix) + "/" + std::to_string(p.r4.len));
      table.v4.push_back(p.r4);
    }
  }
  return table;
}

Result<std::vector<RouteUpdate>> parse_updates_impl(std::string_view name, std::string_view text,
                                                    RouteTable& table) {
  std::vector<RouteUpdate> out;
  io::LineCursor cursor(text);
  std::string_view line;
  std::string error;
  while (cursor.next(line)) {
    if (skip_line(line)) continue;
    const uint64_t n = cursor.line_number();
    io::FieldScanner tok(line);
    RouteUpdate u;
    u.line = uint32_t(n);
    if (!parse_uint(tok.next(), UINT64_MAX, u.time))
      return io::parse_error(name, n, "first field is not a unix time");
    const std::string_view kind = tok.next();
    if (kind != "a" && kind != "w")
      return io::parse_error(name, n, "second field " + quoted(kind) + " is not 'a' or 'w'");
    u.announce = kind == "a";
    ParsedPrefix p;
    if (!parse_prefix(tok.next(), p, error)) return io::parse_error(name, n, error);
    const std::string_view nh_token = tok.next();
    if (nh_token.empty()) return io::parse_error(name, n, "missing next hop");
    if (!tok.next().empty()) return io::parse_error(name, n, "extra fields after the next hop");
    NextHop nh = 0;
    if (u.announce && !nexthop_id(nh_token, table, nh, error))
      return io::parse_error(name, n, error);
    u.is_v6 = p.is_v6;
    u.r4    = p.r4;
    u.r6    = p.r6;
    u.r4.nh = u.r6.nh = nh;
    out.push_back(u);
  }
  return out;
}

Result<std::vector<Address>> parse_addresses_impl(std::string_view name, std::string_view text) {
  std::vector<Address> out;
  io::LineCursor cursor(text);
  std::string_view line;
  while (cursor.next(line)) {
    if (skip_line(line)) continue;
    io::FieldScanner tok(line);
    const std::string_view token = tok.next();
    if (!tok.next().empty())
      return io::parse_error(name, cursor.line_number(), "more than one field");
    Address a;
    a.is_v6       = token.find(':') != std::string_view::npos;
    const bool ok = a.is_v6 ? parse_ipv6(token, a.v6) : parse_ipv4(token, a.v4);
    if (!ok)
      return io::parse_error(
          name, cursor.line_number(),
          std::string("bad ") + (a.is_v6 ? "IPv6" : "IPv4") + " address " + quoted(token));
    out.push_back(a);
  }
  return out;
}

}  // namespace

NextHop assigned_nexthop4(uint32_t prefix, unsigned len) {
  const uint8_t b[4] = {uint8_t(prefix >> 24), uint8_t(prefix >> 16), uint8_t(prefix >> 8),
                        uint8_t(prefix)};
  return fnv1a(b, 4, len) % kAssignedNhs;
}

NextHop assigned_nexthop6(Ip6 prefix, unsigned len) {
  uint8_t b[16];
  ip6_to_bytes(prefix, b);
  return fnv1a(b, 16, len) % kAssignedNhs;
}

std::string RouteTable::nexthop_text(NextHop nh) const {
  if (nh == kNoRoute) return "-1";
  const NextHop base = kInternBase(*this);
  if (source != NextHopSource::kNumeric && nh >= base && nh - base < nexthop_names.size())
    return nexthop_names[nh - base];
  return std::to_string(nh);
}

Result<RouteTable> parse_routes(std::string_view name, std::string_view text) {
  try {
    return parse_routes_impl(name, text);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory");
  }
}

Result<std::vector<RouteUpdate>> parse_route_updates(std::string_view name, std::string_view text,
                                                     RouteTable& table) {
  try {
    return parse_updates_impl(name, text, table);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory");
  }
}

Result<std::vector<Address>> parse_addresses(std::string_view name, std::string_view text) {
  try {
    return parse_addresses_impl(name, text);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, std::string(name) + ": out of memory");
  }
}

}  // namespace warpath::lookup
