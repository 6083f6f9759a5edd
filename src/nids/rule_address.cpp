// Address and port expressions of rule headers, and the variables they name.
#include <arpa/inet.h>

#include <cstring>

#include "warpath/io/text_file.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::nids {
namespace {

constexpr int kMaxDepth = 16;  // nested lists and variables (a cycle of variables ends here)

// Splits "[a,[b,c],!d]" (without the outer brackets) at top-level commas.
Result<std::vector<std::string_view>> split_list(std::string_view s) {
  std::vector<std::string_view> parts;
  int depth = 0;
  size_t start = 0;
  for (size_t i = 0; i <= s.size(); ++i) {
    if (i == s.size() || (s[i] == ',' && depth == 0)) {
      parts.push_back(io::trim(s.substr(start, i - start)));
      start = i + 1;
    } else if (s[i] == '[') {
      ++depth;
    } else if (s[i] == ']') {
      if (--depth < 0) return Status(Errc::kParseError, "unbalanced ']'");
    }
  }
  if (depth != 0) return Status(Errc::kParseError, "unbalanced '['");
  return parts;
}

Result<Prefix> parse_prefix(std::string_view t) {
  Prefix p;
  std::string_view addr = t, len;
  if (size_t slash = t.find('/'); slash != std::string_view::npos) {
    addr = t.substr(0, slash);
    len  = t.substr(slash + 1);
  }
  const std::string a(addr);
  if (inet_pton(AF_INET, a.c_str(), p.addr) == 1) {
    p.version = 4;
    p.length  = 32;
  } else if (inet_pton(AF_INET6, a.c_str(), p.addr) == 1) {
    p.version = 6;
    p.length  = 128;
  } else {
    return Status(Errc::kParseError, "not an address: '" + std::string(t) + "'");
  }
  if (!len.empty()) {
    uint64_t n = 0;
    if (len.find('.') != std::string_view::npos) {  // a dotted netmask
      uint8_t m[4];
      const std::string ms(len);
      if (p.version != 4 || inet_pton(AF_INET, ms.c_str(), m) != 1)
        return Status(Errc::kParseError, "bad netmask in '" + std::string(t) + "'");
      const uint32_t mask = uint32_t(m[0]) << 24 | uint32_t(m[1]) << 16 | uint32_t(m[2]) << 8 | m[3];
      n = uint64_t(__builtin_popcount(mask));
      if (mask != (n ? ~uint32_t(0) << (32 - n) : 0))
        return Status(Errc::kParseError, "netmask not contiguous in '" + std::string(t) + "'");
    } else if (!io::parse_number(len, p.length, n)) {
      return Status(Errc::kParseError, "bad prefix length in '" + std::string(t) + "'");
    }
    p.length = uint8_t(n);
  }
  for (unsigned bit = p.length; bit < 128u; ++bit)  // host bits cleared
    p.addr[bit / 8] &= uint8_t(~(0x80u >> (bit % 8)));
  return p;
}

bool prefix_contains(const Prefix& p, uint8_t version, const uint8_t* a) {
  if (p.version != version) return false;
  const unsigned full = p.length / 8, rest = p.length % 8;
  if (std::memcmp(p.addr, a, full) != 0) return false;
  if (!rest) return true;
  const uint8_t m = uint8_t(0xff00u >> rest);
  return (a[full] & m) == p.addr[full];
}

// An address or port expression as a set: an item, `any`, a variable, a list [..] (its
// positive elements united, its negated ones taken away; only negated ones: everything but
// them), or !expr (everything but expr).
template <class Set, class ParseOne>
Result<Set> parse_expr(std::string_view t, const Vars& vars, int depth, ParseOne parse_one) {
  if (depth > kMaxDepth) return Status(Errc::kParseError, "variables or lists nested too deep");
  t = io::trim(t);
  if (t.empty()) return Status(Errc::kParseError, "empty address or port");
  // A plain set (only items, no exclusions, not any) merges into a list's items.
  auto plain = [](const Set& x) { return !x.any && x.exclude.empty() && x.include_sets.empty() && x.exclude_sets.empty(); };
  if (t[0] == '!') {
    auto inner = parse_expr<Set>(t.substr(1), vars, depth + 1, parse_one);
    if (!inner.is_ok()) return inner.status();
    if (inner->unrestricted()) return Status(Errc::kParseError, "'!any' matches nothing");
    Set out;
    out.any = true;
    if (plain(*inner)) out.exclude = std::move(inner->include);
    else out.exclude_sets.push_back(std::move(*inner));
    return out;
  }
  if (t[0] == '$') {
    const std::string* v = vars.find(t.substr(1));
    if (!v) return Status(Errc::kParseError, "undefined variable " + std::string(t));
    return parse_expr<Set>(*v, vars, depth + 1, parse_one);
  }
  if (t == "any") return Set{};
  if (t[0] != '[') {
    auto one = parse_one(t);
    if (!one.is_ok()) return one.status();
    Set out;
    out.any = false;
    out.include.push_back(*one);
    return out;
  }
  if (t.back() != ']') return Status(Errc::kParseError, "list without ']': '" + std::string(t) + "'");
  auto parts = split_list(t.substr(1, t.size() - 2));
  if (!parts.is_ok()) return Status(Errc::kParseError, parts.status().message() + " in '" + std::string(t) + "'");
  Set out;
  out.any = false;
  bool positive = false;
  for (std::string_view p : *parts) {
    const bool negated = !p.empty() && p[0] == '!';
    auto x = parse_expr<Set>(negated ? p.substr(1) : p, vars, depth + 1, parse_one);
    if (!x.is_ok()) return x.status();
    if (negated) {
      if (x->unrestricted()) return Status(Errc::kParseError, "'!any' matches nothing");
      if (plain(*x)) out.exclude.insert(out.exclude.end(), x->include.begin(), x->include.end());
      else out.exclude_sets.push_back(std::move(*x));
      continue;
    }
    positive = true;
    if (x->unrestricted()) out.any = true;
    else if (plain(*x)) out.include.insert(out.include.end(), x->include.begin(), x->include.end());
    else out.include_sets.push_back(std::move(*x));
  }
  if (!positive) out.any = true;  // only exclusions: everything else
  if (out.any) out.include.clear(), out.include_sets.clear();
  return out;
}

}  // namespace

bool AddrSet::contains(uint8_t version, const uint8_t* addr) const noexcept {
  bool in = any;
  for (size_t i = 0; !in && i < include.size(); ++i) in = prefix_contains(include[i], version, addr);
  for (size_t i = 0; !in && i < include_sets.size(); ++i) in = include_sets[i].contains(version, addr);
  if (!in) return false;
  for (const Prefix& p : exclude)
    if (prefix_contains(p, version, addr)) return false;
  for (const AddrSet& s : exclude_sets)
    if (s.contains(version, addr)) return false;
  return true;
}

bool PortSet::contains(uint16_t port) const noexcept {
  bool in = any;
  for (size_t i = 0; !in && i < include.size(); ++i) in = port >= include[i].lo && port <= include[i].hi;
  for (size_t i = 0; !in && i < include_sets.size(); ++i) in = include_sets[i].contains(port);
  if (!in) return false;
  for (const PortRange& r : exclude)
    if (port >= r.lo && port <= r.hi) return false;
  for (const PortSet& s : exclude_sets)
    if (s.contains(port)) return false;
  return true;
}

Result<AddrSet> parse_addresses(std::string_view text, const Vars& vars) {
  return parse_expr<AddrSet>(text, vars, 0, parse_prefix);
}

Result<PortSet> parse_ports(std::string_view text, const Vars& vars) {
  auto parse_range = [](std::string_view t) -> Result<PortRange> {
    PortRange r;
    uint64_t lo = 0, hi = 65535;
    const size_t colon = t.find(':');
    std::string_view a = colon == std::string_view::npos ? t : t.substr(0, colon);
    std::string_view b = colon == std::string_view::npos ? t : t.substr(colon + 1);
    if ((!a.empty() && !io::parse_number(io::trim(a), 65535, lo)) ||
        (!b.empty() && !io::parse_number(io::trim(b), 65535, hi)) || (a.empty() && b.empty()))
      return Status(Errc::kParseError, "not a port or range: '" + std::string(t) + "'");
    if (lo > hi) return Status(Errc::kParseError, "empty port range '" + std::string(t) + "'");
    r.lo = uint16_t(lo);
    r.hi = uint16_t(hi);
    return r;
  };
  return parse_expr<PortSet>(text, vars, 0, parse_range);
}

Vars::Vars() {
  vars_ = {
      {"HOME_NET", "[192.168.0.0/16,10.0.0.0/8,172.16.0.0/12]"},
      {"EXTERNAL_NET", "!$HOME_NET"},
      {"HTTP_SERVERS", "$HOME_NET"},
      {"SMTP_SERVERS", "$HOME_NET"},
      {"SQL_SERVERS", "$HOME_NET"},
      {"DNS_SERVERS", "$HOME_NET"},
      {"TELNET_SERVERS", "$HOME_NET"},
      {"AIM_SERVERS", "$EXTERNAL_NET"},
      {"DC_SERVERS", "$HOME_NET"},
      {"DNP3_SERVER", "$HOME_NET"},
      {"DNP3_CLIENT", "$HOME_NET"},
      {"MODBUS_CLIENT", "$HOME_NET"},
      {"MODBUS_SERVER", "$HOME_NET"},
      {"ENIP_CLIENT", "$HOME_NET"},
      {"ENIP_SERVER", "$HOME_NET"},
      {"HTTP_PORTS", "80"},
      {"SHELLCODE_PORTS", "!80"},
      {"ORACLE_PORTS", "1521"},
      {"SSH_PORTS", "22"},
      {"DNP3_PORTS", "20000"},
      {"MODBUS_PORTS", "502"},
      {"FILE_DATA_PORTS", "[$HTTP_PORTS,110,143]"},
      {"FTP_PORTS", "21"},
      {"GENEVE_PORTS", "6081"},
      {"VXLAN_PORTS", "4789"},
      {"TEREDO_PORTS", "3544"},
  };
}

void Vars::set(const std::string& name, const std::string& value) { vars_[name] = value; }

const std::string* Vars::find(std::string_view name) const {
  auto it = vars_.find(name);
  return it == vars_.end() ? nullptr : &it->second;
}

Status Vars::set_from(std::string_view assignment) {
  const size_t eq = assignment.find('=');
  if (eq == std::string_view::npos || eq == 0)
    return Status(Errc::kInvalidArgument, "variable '" + std::string(assignment) + "': expected NAME=VALUE");
  std::string_view name = io::trim(assignment.substr(0, eq));
  if (!name.empty() && name[0] == '$') name.remove_prefix(1);
  set(std::string(name), std::string(io::trim(assignment.substr(eq + 1))));
  return Status::ok();
}

}  // namespace warpath::nids
