// Flow records as text: the TCP history letters and one JSON object per record
// (include/warpath/flow/flow.hpp).
#include <cstdio>
#include <string>

#include "warpath/flow/flow.hpp"
#include "warpath/packet/format.hpp"

namespace warpath::flow {

std::string tcp_history(const FlowRecord& r) {
  if (r.proto != 6) return "-";
  static constexpr struct {
    uint8_t bit;
    char upper;
  } kLetters[] = {{0x02, 'S'}, {0x10, 'A'}, {0x08, 'D'}, {0x01, 'F'}, {0x04, 'R'}};
  std::string h;
  for (int side = 0; side < 2; ++side)
    for (const auto& l : kLetters)
      if (r.tcp_flags[side] & l.bit) h += side ? char(l.upper - 'A' + 'a') : l.upper;
  return h.empty() ? "-" : h;
}

std::string flow_record_json(const FlowRecord& r) {
  auto addr = [&](const uint8_t* a) { return packet::ip_to_string(r.ip_version, a); };
  auto secs = [](uint64_t ns) {
    char t[40];
    std::snprintf(t, sizeof t, "%llu.%09llu", static_cast<unsigned long long>(ns / 1000000000u),
                  static_cast<unsigned long long>(ns % 1000000000u));
    return std::string(t);
  };
  auto u = [](uint64_t v) { return std::to_string(v); };
  auto flags = [&](uint8_t f) {  // two hex digits, as Suricata's tcp_flags_ts/tc; null off TCP
    char t[8];
    std::snprintf(t, sizeof t, "\"%02x\"", f);
    return r.proto == 6 ? std::string(t) : std::string("null");
  };
  std::string j = "{\"flow\":" + u(r.serial) + ",\"ts\":" + secs(r.first_ns) +
                  ",\"duration\":" + secs(r.last_ns - r.first_ns) + ",\"proto\":" + u(r.proto) +
                  ",\"ip_version\":" + u(r.ip_version) + ",\"vlan\":" + u(r.vlan) +
                  ",\"src\":\"" + addr(r.src) + "\",\"sport\":" + u(r.sport) + ",\"dst\":\"" +
                  addr(r.dst) + "\",\"dport\":" + u(r.dport) +
                  ",\"orig_packets\":" + u(r.packets[0]) + ",\"orig_bytes\":" + u(r.bytes[0]) +
                  ",\"resp_packets\":" + u(r.packets[1]) + ",\"resp_bytes\":" + u(r.bytes[1]) +
                  ",\"state\":\"" + flow_state_name(r.state) + "\",\"tcp_state\":" +
                  (r.proto == 6 ? "\"" + std::string(tcp_state_name(r.tcp)) + "\"" : "null") +
                  ",\"history\":\"" + tcp_history(r) + "\",\"orig_flags\":" + flags(r.tcp_flags[0]) +
                  ",\"resp_flags\":" + flags(r.tcp_flags[1]) + ",\"end\":\"" +
                  flow_end_name(r.end) + "\"}";
  return j;
}

}  // namespace warpath::flow
