// src/nids/tunnel.hpp: the packet a tunnel carries, for the inspector (internal).
#pragma once
#include <array>
#include <cstdint>
#include <memory>
#include <vector>

#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::nids::detail {

class Decapsulator {
 public:
  static constexpr size_t kMaxInner = 65536;
  Decapsulator();
  /// The packet `outer` carries, as a frame in `out` (a made-up Ethernet header, then the inner
  /// bytes) and its parse in `inner`: IP-in-IP, IPv6-in-IP, GRE (version 0, carrying IPv4, IPv6
  /// or Ethernet), VXLAN and Geneve (Ethernet, and only when it holds a well-formed IP packet,
  /// so a fake tunnel header evades nothing). False for anything else (PPP in GRE, ...): the
  /// packet is inspected as it is.
  bool inner(const packet::PacketInfo& outer, const uint8_t* f, uint32_t caplen, uint64_t ts,
             std::vector<uint8_t>& out, packet::PacketInfo& inner);
  /// Tunnels taken off one after another, up to kMaxLevels: `info`, `frame` and `caplen`
  /// become the innermost packet's (each level's frame in bufs[level & 1]). Returns the levels
  /// taken off (0: not a tunnel, or not one inner() takes).
  static constexpr int kMaxLevels = 3;
  int innermost(packet::PacketInfo& info, const uint8_t*& frame, uint32_t& caplen, uint64_t ts,
                std::array<std::vector<uint8_t>, 2>& bufs);

 private:
  std::unique_ptr<packet::Parser> parser_;
  std::unique_ptr<packet::PacketBatch> scratch_;  // one inner packet at a time
};

}  // namespace warpath::nids::detail
