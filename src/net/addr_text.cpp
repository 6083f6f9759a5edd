// src/net/addr_text.cpp: text forms of addresses (see include/warpath/net/addr_text.hpp).
#include "warpath/net/addr_text.hpp"

#include <arpa/inet.h>

#include <cstdio>

namespace warpath::net {

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

bool parse_ipv4(std::string_view text, uint32_t& out) {
  if (text.empty() || text.size() > 15) return false;
  char buf[16];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  in_addr a{};
  if (inet_pton(AF_INET, buf, &a) != 1) return false;
  out = ntohl(a.s_addr);
  return true;
}

bool parse_ipv6(std::string_view text, Ip6& out) {
  if (text.empty() || text.size() >= INET6_ADDRSTRLEN) return false;
  char buf[INET6_ADDRSTRLEN];
  text.copy(buf, text.size());
  buf[text.size()] = '\0';
  uint8_t bytes[16];
  if (inet_pton(AF_INET6, buf, bytes) != 1) return false;
  out = ip6_from_bytes(bytes);
  return true;
}

std::string format_ipv4(uint32_t a) {
  const uint8_t b[4] = {uint8_t(a >> 24), uint8_t(a >> 16), uint8_t(a >> 8), uint8_t(a)};
  return ipv4_to_string(b);
}

std::string format_ipv6(Ip6 a) {
  uint8_t bytes[16];
  ip6_to_bytes(a, bytes);
  return ipv6_to_string(bytes);
}

}  // namespace warpath::net
