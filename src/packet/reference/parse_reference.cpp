// src/packet/reference/parse_reference.cpp
//
// ref.parse: the oracle for every parser engine. It is written independently of
// core::parse_packet, as plainly as possible: a cursor that refuses to read past the captured
// bytes, one step per layer, no cleverness. It must implement exactly the contract in
// include/warpath/packet/info.hpp; tests/packet/ (engines_test.cpp, parser_paths_test.cpp, truncation_test.cpp) holds both to it.
#include "packet/reference/parse_reference.hpp"

#include <optional>

namespace warpath::packet::reference {
namespace {

// Reads big-endian values at absolute offsets, refusing anything beyond `cap`.
class Cursor {
 public:
  Cursor(const uint8_t* data, uint32_t cap) : data_(data), cap_(cap) {}
  bool has(uint64_t offset, uint64_t bytes) const { return offset + bytes <= cap_; }
  std::optional<uint8_t> u8(uint64_t at) const {
    if (!has(at, 1)) return std::nullopt;
    return data_[at];
  }
  std::optional<uint16_t> u16(uint64_t at) const {
    if (!has(at, 2)) return std::nullopt;
    return static_cast<uint16_t>(data_[at] * 256 + data_[at + 1]);
  }
  std::optional<uint32_t> u32(uint64_t at) const {
    if (!has(at, 4)) return std::nullopt;
    return uint32_t(*u16(at)) << 16 | *u16(at + 2);
  }
  const uint8_t* ptr(uint64_t at) const { return data_ + at; }

 private:
  const uint8_t* data_;
  uint32_t cap_;
};

bool ipv4_checksum_ok(const uint8_t* header, uint32_t bytes) {
  uint64_t sum = 0;
  for (uint32_t i = 0; i < bytes; i += 2) sum += header[i] * 256u + header[i + 1];
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  return sum == 0xffff;
}

struct Parse {
  Cursor c;
  uint64_t len;
  PacketInfo info{};

  PacketInfo stop(ParseStatus s) {
    info.status = s;
    return info;
  }

  PacketInfo transport(uint64_t at, uint64_t end) {
    info.l4_offset      = static_cast<uint16_t>(at < 0xffff ? at : 0);
    const uint8_t proto = info.proto;
    const bool ported   = proto == 6 || proto == 17 || proto == 132;
    if (ported) {
      const ParseStatus bad = proto == 6    ? ParseStatus::kBadTcpHeader
                              : proto == 17 ? ParseStatus::kBadUdpHeader
                                            : ParseStatus::kTruncated;
      if (at + 4 > end) return stop(bad);
      auto sport = c.u16(at), dport = c.u16(at + 2);
      if (!sport || !dport) return stop(ParseStatus::kTruncated);
      info.sport = *sport;
      info.dport = *dport;
      info.flags |= kHasPorts;
      if (proto == 17 && *dport == 4789) info.tunnel = Tunnel::kVxlan;
      if (proto == 17 && *dport == 6081) info.tunnel = Tunnel::kGeneve;
      const uint64_t fixed = proto == 6 ? 20 : proto == 17 ? 8 : 12;
      if (at + fixed > end) return stop(bad);
      if (!c.has(at, fixed)) return stop(ParseStatus::kTruncated);
      if (proto == 6) {
        const uint64_t header = (*c.u8(at + 12) >> 4) * 4ull;
        info.tcp_flags        = *c.u8(at + 13);
        info.tcp_seq          = *c.u32(at + 4);
        if (header < 20 || at + header > end) return stop(ParseStatus::kBadTcpHeader);
        if (!c.has(at, header)) return stop(ParseStatus::kTruncated);
      }
      if (proto == 17) {
        const uint64_t udp_len    = *c.u16(at + 4);
        const bool ipv6_jumbogram = udp_len == 0 && info.ip_version == 6;
        if (!ipv6_jumbogram && (udp_len < 8 || at + udp_len > end))
          return stop(ParseStatus::kBadUdpHeader);
      }
      return info;
    }
    if (proto == 1 || proto == 58) {
      auto type = c.u8(at), code = c.u8(at + 1);
      if (!type || !code) {
        if (at + 2 > end) return info;  // no ICMP header inside the datagram at all
        return stop(ParseStatus::kTruncated);
      }
      info.icmp_type = *type;
      info.icmp_code = *code;
      info.flags |= kHasIcmp;
      return info;
    }
    if (proto == 47) info.tunnel = Tunnel::kGre;
    if (proto == 4) info.tunnel = Tunnel::kIpInIp;
    if (proto == 41) info.tunnel = Tunnel::kIpv6InIp;
    return info;
  }

  PacketInfo ipv4(uint64_t at) {
    info.l3        = L3::kIpv4;
    info.l3_offset = static_cast<uint16_t>(at);
    auto first     = c.u8(at);
    if (!first) return stop(ParseStatus::kTruncated);
    const uint64_t ihl = (*first & 0x0f) * 4ull;
    if ((*first >> 4) != 4 || ihl < 20) return stop(ParseStatus::kBadIpv4Header);
    info.ip_version = 4;
    // Each field is reported if its bytes were captured.
    if (auto tos = c.u8(at + 1)) info.tos = *tos;
    if (auto frag = c.u16(at + 6)) {
      const bool more_fragments = (*frag & 0x2000) != 0;
      const uint64_t offset     = (*frag & 0x1fff) * 8ull;
      if (more_fragments || offset != 0) info.flags |= kFragment;
      if (offset != 0) info.flags |= kLaterFragment;
      info.fields |= kFieldFrag;
    }
    if (c.has(at + 8, 2)) {
      info.ttl   = *c.u8(at + 8);
      info.proto = *c.u8(at + 9);
      info.fields |= kFieldProto;
    }
    if (c.has(at + 12, 4)) {
      for (int i = 0; i < 4; ++i) info.src[i] = *c.u8(at + 12 + i);
      info.fields |= kFieldSrc;
    }
    if (!c.has(at + 16, 4)) return stop(ParseStatus::kTruncated);
    for (int i = 0; i < 4; ++i) info.dst[i] = *c.u8(at + 16 + i);
    info.fields |= kFieldDst;
    if (ihl > 20) info.flags |= kIpOptions;
    if (!c.has(at, ihl)) return stop(ParseStatus::kTruncated);
    const uint64_t total = *c.u16(at + 2);
    if (total < ihl) return stop(ParseStatus::kBadIpv4Length);
    const bool longer_than_frame = at + total > len;
    const bool checksum_ok       = ipv4_checksum_ok(c.ptr(at), static_cast<uint32_t>(ihl));
    if (!(info.flags & kLaterFragment)) transport(at + ihl, longer_than_frame ? len : at + total);
    if (longer_than_frame) info.status = ParseStatus::kBadIpv4Length;
    if (!checksum_ok && info.status == ParseStatus::kOk)
      info.status = ParseStatus::kBadIpv4Checksum;
    return info;
  }

  static bool extension(uint8_t next) {
    return next == 0 || next == 43 || next == 44 || next == 60;
  }

  PacketInfo ipv6(uint64_t at) {
    info.l3        = L3::kIpv6;
    info.l3_offset = static_cast<uint16_t>(at);
    auto first     = c.u8(at);
    if (!first) return stop(ParseStatus::kTruncated);
    if ((*first >> 4) != 6) return stop(ParseStatus::kBadIpv6Header);
    info.ip_version = 6;
    info.fields |= kFieldFrag;
    if (auto second = c.u8(at + 1))
      info.tos = static_cast<uint8_t>(((*first & 0x0f) << 4) | (*second >> 4));
    uint8_t next = 0;
    if (c.has(at + 6, 2)) {
      next       = *c.u8(at + 6);
      info.ttl   = *c.u8(at + 7);
      info.proto = next;
      if (next == 44) info.flags |= kFragment;
    }
    if (c.has(at + 8, 16)) {
      for (int i = 0; i < 16; ++i) info.src[i] = *c.u8(at + 8 + i);
      info.fields |= kFieldSrc;
    }
    if (!c.has(at + 24, 16)) {
      // The protocol is known only if no extension header has to be walked.
      if (c.has(at + 6, 2) && !extension(next)) info.fields |= kFieldProto;
      return stop(ParseStatus::kTruncated);
    }
    for (int i = 0; i < 16; ++i) info.dst[i] = *c.u8(at + 24 + i);
    info.fields |= kFieldDst;
    const uint64_t payload       = *c.u16(at + 4);
    const bool jumbo             = payload == 0 && next == 0;
    uint64_t end                 = jumbo ? len : at + 40 + payload;
    const bool longer_than_frame = end > len;
    if (longer_than_frame) end = len;
    walk_chain(at + 40, end, next);
    if (longer_than_frame) info.status = ParseStatus::kBadIpv6Length;
    return info;
  }

  void walk_chain(uint64_t pos, uint64_t end, uint8_t next) {
    int seen = 0;
    while (extension(next)) {
      info.flags |= kIpv6ExtHeaders;
      if (next == 44) info.flags |= kFragment;
      if (seen++ == 8 || pos + 8 > end) {
        stop(ParseStatus::kBadIpv6ExtHeader);
        return;
      }
      if (!c.has(pos, 8)) {
        stop(ParseStatus::kTruncated);
        return;
      }
      const uint8_t following = *c.u8(pos);
      uint64_t size           = (*c.u8(pos + 1) + 1ull) * 8;
      if (next == 44) {
        size = 8;
        if ((*c.u16(pos + 2) >> 3) != 0) info.flags |= kLaterFragment;
      }
      if (pos + size > end) {
        stop(ParseStatus::kBadIpv6ExtHeader);
        return;
      }
      next       = following;
      info.proto = next;
      pos += size;
    }
    info.fields |= kFieldProto;
    if (!(info.flags & kLaterFragment)) transport(pos, end);
  }

  PacketInfo ethernet() {
    auto type = c.u16(12);
    if (!c.has(0, 14)) return stop(ParseStatus::kTruncated);
    uint64_t at = 12;
    while (*type == 0x8100 || *type == 0x88a8 || *type == 0x9100) {
      if (info.vlan_count == 2) break;
      auto tci   = c.u16(at + 2);
      auto inner = c.u16(at + 4);
      if (!tci || !inner) return stop(ParseStatus::kTruncated);
      info.vlan_tci[info.vlan_count++] = *tci;
      at += 4;
      type = inner;
    }
    info.ethertype = *type;
    at += 2;
    if (*type == 0x0800) return ipv4(at);
    if (*type == 0x86dd) return ipv6(at);
    info.l3 = *type == 0x0806 ? L3::kArp : L3::kOther;
    return info;
  }
};

}  // namespace

PacketInfo parse_packet(const uint8_t* data, uint32_t caplen, uint32_t len) {
  Parse parse{Cursor(data, caplen), len < caplen ? caplen : len};
  return parse.ethernet();
}

}  // namespace warpath::packet::reference
