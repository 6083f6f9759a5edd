#include "warpath/packet/summary.hpp"

namespace warpath::packet {

void ParseSummary::add(const PacketInfo& info, uint32_t wire_len) noexcept {
  ++packets;
  bytes += wire_len;
  ++by_status[size_t(info.status) < by_status.size() ? size_t(info.status) : 0];
  switch (info.l3) {
    case L3::kIpv4:
      ++ipv4;
      break;
    case L3::kIpv6:
      ++ipv6;
      break;
    case L3::kArp:
      ++arp;
      break;
    default:
      ++other_l3;
      break;
  }
  if (info.fields & kFieldProto) {
    switch (info.proto) {
      case 6:
        ++tcp;
        break;
      case 17:
        ++udp;
        break;
      case 132:
        ++sctp;
        break;
      case 1:
        ++icmp;
        break;
      case 58:
        ++icmpv6;
        break;
      default:
        ++other_l4;
        break;
    }
  }
  if (info.vlan_count) ++vlan_tagged;
  if (info.vlan_count == 2) ++qinq;
  if (info.flags & kFragment) ++fragments;
  if (info.flags & kIpOptions) ++ip_options;
  if (info.flags & kIpv6ExtHeaders) ++ipv6_ext;
  if (info.tunnel != Tunnel::kNone) ++tunnels;
}

ParseSummary summarize(const BatchView& batch, Span<const PacketInfo> infos) noexcept {
  ParseSummary s;
  for (uint32_t i = 0; i < infos.size && i < batch.count; ++i) s.add(infos[i], batch.metas[i].len);
  return s;
}

}  // namespace warpath::packet
