// include/warpath/packet/format.hpp: text forms of addresses and parse results, shared by the
// CLI (`warpath parse`), the tests and the demo, so there is one definition of each column.
#pragma once
#include <array>
#include <cstdint>
#include <string>

#include "warpath/net/addr_text.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet {

// The address text forms are net's (net/addr_text.hpp); named here too, as the packet module
// has always offered them.
using net::ip_to_string;
using net::ipv4_to_string;
using net::ipv6_to_string;

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
