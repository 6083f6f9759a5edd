// Tunnels' inner packets for the inspector (src/nids/tunnel.hpp).
#include "nids/tunnel.hpp"

#include "warpath/core/exec.hpp"
#include "warpath/nids/inspector.hpp"

namespace warpath::nids::detail {

Decapsulator::Decapsulator() {
  if (auto p = packet::make_parser("cpu.parse"); p.is_ok()) parser_ = std::move(*p);
  if (auto b = packet::PacketBatch::create(1, kMaxInner + 64); b.is_ok())
    scratch_ = std::make_unique<packet::PacketBatch>(std::move(*b));
}

bool Decapsulator::inner(const packet::PacketInfo& outer, const uint8_t* f, uint32_t caplen,
                         uint64_t ts, std::vector<uint8_t>& out, packet::PacketInfo& inner) {
  const uint32_t l4 = outer.l4_offset;
  if (!l4 || l4 >= caplen || outer.status != packet::ParseStatus::kOk) return false;
  auto be16 = [&](uint32_t at) { return uint16_t(f[at] << 8 | f[at + 1]); };
  uint32_t at = l4;
  uint16_t ethertype = 0;  // 0: the inner bytes are an Ethernet frame
  switch (outer.tunnel) {
    case packet::Tunnel::kIpInIp: ethertype = 0x0800; break;
    case packet::Tunnel::kIpv6InIp: ethertype = 0x86dd; break;
    case packet::Tunnel::kGre: {
      if (l4 + 4 > caplen) return false;
      const uint16_t flags = be16(l4), proto = be16(l4 + 2);
      if (flags & 0x0007) return false;  // version 1 (PPTP) and others
      at = l4 + 4 + ((flags & 0xc000) ? 4 : 0) + ((flags & 0x2000) ? 4 : 0) + ((flags & 0x1000) ? 4 : 0);
      if (proto == 0x0800 || proto == 0x86dd) ethertype = proto;
      else if (proto != 0x6558) return false;
      break;
    }
    case packet::Tunnel::kVxlan: at = l4 + 16; break;
    case packet::Tunnel::kGeneve: {
      if (l4 + 12 > caplen || be16(l4 + 10) != 0x6558) return false;
      at = l4 + 16 + uint32_t(f[l4 + 8] & 0x3f) * 4;
      break;
    }
    default: return false;
  }
  if (at >= caplen) return false;
  out.clear();
  if (ethertype) {
    out.assign(12, 0);
    out.push_back(uint8_t(ethertype >> 8));
    out.push_back(uint8_t(ethertype));
  }
  out.insert(out.end(), f + at, f + caplen);
  if (!scratch_ || !parser_ || out.size() > kMaxInner) return false;
  scratch_->clear();
  if (!scratch_->append(out.data(), uint32_t(out.size()), uint32_t(out.size()), ts)) return false;
  ExecContext ctx;
  packet::PacketInfo parsed{};
  if (!parser_->parse(scratch_->view(), {&parsed, 1}, ctx).is_ok()) return false;
  // A UDP datagram to the VXLAN or Geneve port that does not carry a well-formed IP packet is
  // inspected as the datagram it is (no evasion by a fake tunnel header).
  const bool udp_tunnel = outer.tunnel == packet::Tunnel::kVxlan || outer.tunnel == packet::Tunnel::kGeneve;
  if (udp_tunnel && (parsed.status != packet::ParseStatus::kOk || !parsed.ip_version)) return false;
  inner = parsed;
  return true;
}

int Decapsulator::innermost(packet::PacketInfo& info, const uint8_t*& frame, uint32_t& caplen,
                            uint64_t ts, std::array<std::vector<uint8_t>, 2>& bufs) {
  int level = 0;
  packet::PacketInfo next;
  for (; level < kMaxLevels && info.tunnel != packet::Tunnel::kNone; ++level) {
    std::vector<uint8_t>& out = bufs[level & 1];
    if (!inner(info, frame, caplen, ts, out, next)) break;
    info   = next;
    frame  = out.data();
    caplen = uint32_t(out.size());
  }
  return level;
}

}  // namespace warpath::nids::detail

namespace warpath::nids {

flow::PartOf inspected_part_of(uint32_t shards) {
  auto decap = std::make_shared<detail::Decapsulator>();
  auto bufs  = std::make_shared<std::array<std::vector<uint8_t>, 2>>();
  return [decap, bufs, shards](const packet::PacketInfo& outer, const uint8_t* frame,
                               uint32_t caplen, uint64_t ts) {
    packet::PacketInfo info = outer;  // as the inspector sees it
    decap->innermost(info, frame, caplen, ts, *bufs);
    return flow::flow_shard(info, shards);
  };
}

}  // namespace warpath::nids
