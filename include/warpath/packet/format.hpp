// include/warpath/packet/format.hpp: text forms of addresses and parse results, shared by the
// CLI (`warpath parse`), the tests and the demo, so there is one definition of each column.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "warpath/packet/info.hpp"

namespace warpath::packet {

/// "10.0.0.1" from 4 bytes in network order.
std::string ipv4_to_string(const uint8_t* bytes);
/// RFC 5952 text: lower case, leading zeros dropped, the longest run (first if tied) of two or
/// more zero groups compressed to "::"; IPv4-mapped addresses as ::ffff:a.b.c.d.
std::string ipv6_to_string(const uint8_t* bytes);
/// The one or the other by IP version (4: the first 4 bytes).
std::string ip_to_string(uint8_t ip_version, const uint8_t* bytes);

/// The CSV header of `warpath parse`.
inline constexpr const char* kParseCsvHeader =
    "frame,status,vlan,ip_version,src,dst,proto,sport,dport,frag";

/// The columns of `warpath parse` for frame number `frame` (1-based), in kParseCsvHeader
/// order; a field that does not apply is empty: vlan without a tag; ip_version without an IP
/// header; src, dst, proto and frag unless those bytes were captured; sport/dport unless TCP,
/// UDP or SCTP ports were read (unfragmented or first fragment). The CSV and JSON forms are
/// both made from this, so the rules live in one place.
inline constexpr int kParseColumns = 10;
std::array<std::string, kParseColumns> parse_columns(uint64_t frame, const PacketInfo& info);

/// The columns joined with commas.
std::string parse_csv_row(uint64_t frame, const PacketInfo& info);

}  // namespace warpath::packet
