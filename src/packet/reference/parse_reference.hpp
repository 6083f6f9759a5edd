// src/packet/reference/parse_reference.hpp: the naive oracle parser (ref.parse).
#pragma once
#include <cstdint>

#include "warpath/packet/info.hpp"

namespace warpath::packet::reference {

/// Parses one frame exactly as core::parse_packet should, written independently of it.
PacketInfo parse_packet(const uint8_t* data, uint32_t caplen, uint32_t len);

}  // namespace warpath::packet::reference
