// include/warpath/net/addr_text.hpp
//
// Text forms of IP addresses: parsing with inet_pton (every RFC 4291 form, "::" and an embedded
// dotted quad included) and printing (IPv6 in the RFC 5952 canonical form), from numbers
// (addr.hpp) or from bytes in network order (packet headers).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>

#include "warpath/net/addr.hpp"

namespace warpath::net {

/// IPv4 dotted quad / IPv6 text; false on malformed text.
bool parse_ipv4(std::string_view text, uint32_t& out);
bool parse_ipv6(std::string_view text, Ip6& out);
std::string format_ipv4(uint32_t a);
std::string format_ipv6(Ip6 a);

/// "10.0.0.1" from 4 bytes in network order.
std::string ipv4_to_string(const uint8_t* bytes);
/// RFC 5952 text: lower case, leading zeros dropped, the longest run (first if tied) of two or
/// more zero groups compressed to "::"; IPv4-mapped addresses as ::ffff:a.b.c.d.
std::string ipv6_to_string(const uint8_t* bytes);
/// The one or the other by IP version (4: the first 4 bytes).
std::string ip_to_string(uint8_t ip_version, const uint8_t* bytes);

}  // namespace warpath::net
