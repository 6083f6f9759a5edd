#include "summary_print.hpp"

#include <fmt/core.h>

namespace warpath::cli {

namespace {
double pct(uint64_t part, uint64_t whole) {
  return whole ? 100.0 * double(part) / double(whole) : 0.0;
}
}  // namespace

void print_summary(const packet::ParseSummary& s, std::FILE* out) {
  fmt::print(out, "{:<22} {:>14} {:>7}\n", "", "packets", "share");
  auto row = [&](const char* name, uint64_t n) {
    fmt::print(out, "{:<22} {:>14} {:>6.1f}%\n", name, n, pct(n, s.packets));
  };
  row("total", s.packets);
  row("  IPv4", s.ipv4);
  row("  IPv6", s.ipv6);
  row("  ARP", s.arp);
  row("  other L3", s.other_l3);
  row("  TCP", s.tcp);
  row("  UDP", s.udp);
  row("  SCTP", s.sctp);
  row("  ICMP", s.icmp);
  row("  ICMPv6", s.icmpv6);
  row("  other L4", s.other_l4);
  row("  VLAN tagged", s.vlan_tagged);
  row("  QinQ", s.qinq);
  row("  fragments", s.fragments);
  row("  IPv4 options", s.ip_options);
  row("  IPv6 ext headers", s.ipv6_ext);
  row("  tunnels", s.tunnels);
  for (size_t i = 0; i < s.by_status.size(); ++i)
    if (s.by_status[i])
      row(fmt::format("  status {}", packet::parse_status_name(packet::ParseStatus(i))).c_str(),
          s.by_status[i]);
  fmt::print(out, "{:<22} {:>14}\n", "wire bytes", s.bytes);
}

nlohmann::json summary_json(const packet::ParseSummary& s) {
  nlohmann::json status;
  for (size_t i = 0; i < s.by_status.size(); ++i)
    status[packet::parse_status_name(packet::ParseStatus(i))] = s.by_status[i];
  return {{"packets", s.packets},
          {"bytes", s.bytes},
          {"ipv4", s.ipv4},
          {"ipv6", s.ipv6},
          {"arp", s.arp},
          {"other_l3", s.other_l3},
          {"tcp", s.tcp},
          {"udp", s.udp},
          {"sctp", s.sctp},
          {"icmp", s.icmp},
          {"icmpv6", s.icmpv6},
          {"other_l4", s.other_l4},
          {"vlan_tagged", s.vlan_tagged},
          {"qinq", s.qinq},
          {"fragments", s.fragments},
          {"ip_options", s.ip_options},
          {"ipv6_ext", s.ipv6_ext},
          {"tunnels", s.tunnels},
          {"status", status}};
}

}  // namespace warpath::cli
