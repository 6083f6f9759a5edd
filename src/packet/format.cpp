#include "warpath/packet/format.hpp"

#include <cstdio>

namespace warpath::packet {

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
