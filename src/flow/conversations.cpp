// Generated conversations (include/warpath/flow/conversations.hpp).
#include "warpath/flow/conversations.hpp"

#include <cstring>

#include "gen/packet_builder.hpp"

namespace warpath::flow {
namespace {

using gen::detail::Rng;

struct Conv {
  uint8_t proto = 6;
  bool v6 = false, vlan = false;
  uint8_t client[16] = {}, server[16] = {};
  uint16_t cport = 0, sport = 0, vid = 0;
  uint32_t step = 0, length = 0;  ///< packets sent, packets planned
  uint8_t ending = 0;             ///< TCP: 0 FINs, 1 RST, 2 nothing
  bool midstream = false;
  uint32_t seq[2] = {};           ///< TCP: each side's next sequence number (client, server)
  /// TCP, spice: a forged packet first (a SYN+ACK from the client, or a packet from the
  /// client's port turned well-known), before the real handshake (flow.hpp).
  bool forged_first = false;
};

void address(Rng& rng, bool v6, bool server, uint32_t hosts, uint8_t out[16]) {
  std::memset(out, 0, 16);
  const uint32_t host = rng.below(hosts);
  if (!v6) {
    out[0] = server ? 192 : 10;
    out[1] = server ? 0 : 1;
    out[2] = uint8_t(host >> 8);
    out[3] = uint8_t(host);
  } else {
    out[0] = 0x20;
    out[1] = 0x01;
    out[2] = 0x0d;
    out[3] = 0xb8;
    out[4] = server ? 2 : 1;
    out[14] = uint8_t(host >> 8);
    out[15] = uint8_t(host);
  }
}

Conv new_conv(Rng& rng, const ConversationParams& p) {
  Conv c;
  const uint32_t kind = rng.below(100);
  c.proto = kind < 70 ? 6 : kind < 88 ? 17 : kind < 95 ? 1 : 47;
  c.v6    = rng.below(5) == 0;
  if (c.v6 && c.proto == 1) c.proto = 58;
  c.vlan = p.spice && rng.below(10) == 0;
  c.vid  = uint16_t(1 + rng.below(4));
  address(rng, c.v6, false, p.hosts, c.client);
  address(rng, c.v6, true, p.hosts, c.server);
  c.cport     = uint16_t(1024 + rng.below(p.ports));
  static constexpr uint16_t kServices[] = {80, 443, 53, 22, 25, 8080};
  c.sport     = kServices[rng.below(6)];
  c.length    = 1 + rng.below(c.proto == 6 ? 24 : 8);
  c.ending    = uint8_t(rng.below(3));
  c.midstream = c.proto == 6 && rng.below(8) == 0;
  c.seq[0]    = uint32_t(rng.next());
  c.seq[1]    = uint32_t(rng.next());
  c.forged_first = p.spice && c.proto == 6 && !c.midstream && rng.below(16) == 0;
  return c;
}

}  // namespace

Conversations generate_conversations(const ConversationParams& p) {
  Rng rng(p.seed, 0xf10);
  Conversations out;
  out.infos.reserve(p.packets);
  out.metas.reserve(p.packets);
  std::vector<Conv> live(p.concurrent ? p.concurrent : 1);
  for (Conv& c : live) c = new_conv(rng, p);
  uint64_t clock = p.start_ns;
  for (uint32_t n = 0; n < p.packets; ++n) {
    packet::PacketMeta m{};
    if (p.jump_percent && rng.below(100) < p.jump_percent)
      clock += (10 + uint64_t(rng.below(690))) * 1000000000ull;
    clock += rng.below(uint32_t(2 * p.mean_gap_ns + 1));
    m.timestamp_ns = clock;
    if (p.spice && rng.below(50) == 0) m.timestamp_ns -= rng.below(uint32_t(p.mean_gap_ns * 4 + 1));
    packet::PacketInfo info{};
    info.status = packet::ParseStatus::kOk;
    m.len       = 60 + rng.below(1400);
    m.caplen    = m.len;

    const uint32_t spice = p.spice ? rng.below(100) : 100;
    if (spice == 0) {  // ARP
      info.l3        = packet::L3::kArp;
      info.ethertype = 0x0806;
      out.infos.push_back(info);
      out.metas.push_back(m);
      continue;
    }
    Conv& c = live[rng.below(uint32_t(live.size()))];
    // Which side speaks: TCP follows its script; others alternate at random.
    bool from_server = rng.below(2) == 1;
    uint8_t flags    = 0;
    // Spice: packets forged by someone who does not know the sequence numbers (a RST or FIN
    // far from them, a SYN), and a forged first packet; none of them counts as a step.
    const uint32_t forge = p.spice && c.proto == 6 ? rng.below(64) : 64;
    bool forged          = false;
    uint32_t seq         = 0;
    if (c.proto == 6 && c.forged_first && c.step == 0) {
      flags = 0x12, from_server = false, forged = true;
      c.forged_first = false;
      seq = uint32_t(rng.next());
    } else if (forge <= 2 && c.step >= 3) {  // a RST, a SYN or a FIN
      flags = forge == 0 ? 0x04 : forge == 1 ? 0x02 : 0x11, from_server = rng.below(2) == 1;
      forged = true;
      seq = c.seq[from_server] + 0x40000000u + uint32_t(rng.below(0x7fffffff));
    } else if (c.proto == 6) {
      const uint32_t s = c.midstream ? c.step + 3 : c.step;
      if (s == 0) {
        flags = 0x02, from_server = false;
      } else if (s == 1) {
        flags = 0x12, from_server = true;
      } else if (s == 2) {
        flags = 0x10, from_server = false;
      } else if (c.step + 2 >= c.length && c.ending == 0) {
        flags = 0x11, from_server = c.step + 2 != c.length;
      } else if (c.step + 1 >= c.length && c.ending == 1) {
        flags = 0x14;
      } else {
        flags = rng.below(4) == 0 ? 0x18 : 0x10;
      }
      seq = c.seq[from_server];
      // Payload: what the frame holds past 54 bytes of headers; SYN and FIN take one number.
      c.seq[from_server] += (flags & 0x08 ? m.len - 54 : 0) + (flags & 0x03 ? 1 : 0);
    }
    info.l3         = c.v6 ? packet::L3::kIpv6 : packet::L3::kIpv4;
    info.ip_version = c.v6 ? 6 : 4;
    info.ethertype  = c.v6 ? 0x86dd : 0x0800;
    info.proto      = c.proto;
    info.fields     = packet::kFieldsAll;
    info.ttl        = 64;
    if (c.vlan) {
      info.vlan_count  = 1;
      info.vlan_tci[0] = c.vid;
    }
    const uint8_t* src = from_server ? c.server : c.client;
    const uint8_t* dst = from_server ? c.client : c.server;
    std::memcpy(info.src, src, c.v6 ? 16 : 4);
    std::memcpy(info.dst, dst, c.v6 ? 16 : 4);
    if (c.proto == 6 || c.proto == 17) {
      info.flags |= packet::kHasPorts;
      info.sport = from_server ? c.sport : c.cport;
      info.dport = from_server ? c.cport : c.sport;
    }
    if (c.proto == 6) {
      info.tcp_flags = flags;
      info.tcp_seq   = seq;
    }
    if (c.proto == 1 || c.proto == 58) {
      info.flags |= packet::kHasIcmp;
      info.icmp_type = from_server ? 0 : 8;
    }
    if (spice == 1) {  // a later fragment: no transport header
      info.flags = packet::kFragment | packet::kLaterFragment;
      info.sport = info.dport = 0;
      info.tcp_flags = 0;
      info.tcp_seq   = 0;
    } else if (spice == 2) {  // cut inside the transport header
      info.status = packet::ParseStatus::kTruncated;
      info.flags &= uint8_t(~packet::kHasPorts);
    }
    out.infos.push_back(info);
    out.metas.push_back(m);
    if (spice > 2 && !forged && ++c.step >= c.length) c = new_conv(rng, p);
  }
  return out;
}

}  // namespace warpath::flow
