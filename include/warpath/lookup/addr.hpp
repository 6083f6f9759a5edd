// include/warpath/lookup/addr.hpp
//
// Next-hop types shared by host and device code (no STL): NextHop and kNoRoute; Ip6 and prefix
// masking come from net/addr.hpp. route.hpp explains the conventions (host-order addresses,
// next-hop ids).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/net/addr.hpp"

namespace warpath::lookup {

using NextHop                          = uint32_t;
inline constexpr NextHop kNoRoute      = 0xFFFF'FFFFu;
inline constexpr NextHop kMaxNextHop   = 0x7FFF'FFFEu;
inline constexpr unsigned kAssignedNhs = 256;  ///< next hops assigned to tables without them

// The address types and masks are net's (net/addr.hpp).
using net::Ip6;
using net::ip6_from_bytes;
using net::ip6_to_bytes;
using net::mask4;
using net::mask6;

}  // namespace warpath::lookup
