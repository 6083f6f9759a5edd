// include/warpath/packet/summary.hpp: per-protocol counts over parsed packets, for the CLI's
// readable summaries (`warpath parse --summary`, `warpath demo`) and their JSON.
#pragma once
#include <array>
#include <cstdint>

#include "warpath/core/span.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet {

struct ParseSummary {
  uint64_t packets = 0, bytes = 0;  ///< bytes on the wire
  uint64_t ipv4 = 0, ipv6 = 0, arp = 0, other_l3 = 0;
  uint64_t tcp = 0, udp = 0, sctp = 0, icmp = 0, icmpv6 = 0, other_l4 = 0;
  uint64_t vlan_tagged = 0, qinq = 0, fragments = 0, ip_options = 0, ipv6_ext = 0, tunnels = 0;
  std::array<uint64_t, size_t(ParseStatus::kCount)> by_status{};

  void add(const PacketInfo& info, uint32_t wire_len) noexcept;
};

ParseSummary summarize(const BatchView& batch, Span<const PacketInfo> infos) noexcept;

}  // namespace warpath::packet
