#include "warpath/packet/format.hpp"

#include <cstdio>

namespace warpath::packet {

std::string ipv4_to_string(const uint8_t* b) {
  char text[16];
  std::snprintf(text, sizeof text, "%u.%u.%u.%u", b[0], b[1], b[2], b[3]);
  return text;
}

std::string ipv6_to_string(const uint8_t* b) {
  uint16_t g[8];
  for (int i = 0; i < 8; ++i) g[i] = uint16_t(b[2 * i] << 8 | b[2 * i + 1]);
  // IPv4-mapped (::ffff:0:0/96): RFC 5952 section 5 recommends the dotted form.
  if (!g[0] && !g[1] && !g[2] && !g[3] && !g[4] && g[5] == 0xffff)
    return "::ffff:" + ipv4_to_string(b + 12);
  int best = -1, best_len = 0;
  for (int i = 0; i < 8;) {
    if (g[i] != 0) {
      ++i;
      continue;
    }
    int j = i;
    while (j < 8 && g[j] == 0) ++j;
    if (j - i > best_len) {
      best     = i;
      best_len = j - i;
    }
    i = j;
  }
  if (best_len < 2) best = -1;
  std::string out;
  char group[8];
  for (int i = 0; i < 8; ++i) {
    if (i == best) {
      out += "::";
      i += best_len - 1;
      continue;
    }
    if (!out.empty() && out.back() != ':') out += ':';
    std::snprintf(group, sizeof group, "%x", g[i]);
    out += group;
  }
  return out;
}

std::string ip_to_string(uint8_t ip_version, const uint8_t* bytes) {
  return ip_version == 4 ? ipv4_to_string(bytes) : ipv6_to_string(bytes);
}

std::array<std::string, kParseColumns> parse_columns(uint64_t frame, const PacketInfo& info) {
  auto addr = [&](const uint8_t* a) { return ip_to_string(info.ip_version, a); };
  const bool ports = (info.flags & kHasPorts) != 0;
  std::array<std::string, kParseColumns> c;
  c[0] = std::to_string(frame);
  c[1] = parse_status_name(info.status);
  if (info.vlan_count) c[2] = std::to_string(info.vlan_tci[0] & 0x0fff);
  if (info.ip_version) c[3] = std::to_string(info.ip_version);
  if (info.fields & kFieldSrc) c[4] = addr(info.src);
  if (info.fields & kFieldDst) c[5] = addr(info.dst);
  if (info.fields & kFieldProto) c[6] = std::to_string(info.proto);
  if (ports) c[7] = std::to_string(info.sport);
  if (ports) c[8] = std::to_string(info.dport);
  if (info.ip_version && (info.fields & kFieldFrag)) c[9] = (info.flags & kFragment) ? "1" : "0";
  return c;
}

std::string parse_csv_row(uint64_t frame, const PacketInfo& info) {
  const auto columns = parse_columns(frame, info);
  std::string row    = columns[0];
  for (int i = 1; i < kParseColumns; ++i) row += "," + columns[i];
  return row;
}

}  // namespace warpath::packet
