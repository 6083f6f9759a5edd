// src/defrag/core/defrag_core.hpp
//
// What a fragment says about itself, and the per-byte overlap rule: one body for every
// defragmentation engine (host and device). include/warpath/defrag/defrag.hpp has the rules.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::defrag::core {

/// Does a new fragment [ns, ne) overwrite a byte stored by the fragment [os, oe)? Novak and
/// Sturges' target policies for IP fragments (not the TCP ones).
WARPATH_HD bool new_wins(FragPolicy p, uint64_t ns, uint64_t ne, uint64_t os, uint64_t oe) {
  switch (p) {
    case FragPolicy::kLast: return true;
    case FragPolicy::kBsd: return ns < os;
    case FragPolicy::kLinux: return ns <= os;
    case FragPolicy::kWindows: return ns < os && ne > oe;
    case FragPolicy::kSolaris: return ns < os && ne >= oe;
    default: return false;  // first
  }
}

WARPATH_HD uint32_t be16(const uint8_t* p) { return uint32_t(p[0]) << 8 | p[1]; }
WARPATH_HD uint32_t be32(const uint8_t* p) { return be16(p) << 16 | be16(p + 2); }

/// One fragment's facts, read from its bytes.
struct Fragment {
  uint8_t version = 0;      ///< 4 or 6
  uint8_t proto   = 0;      ///< transport protocol (IPv6: the fragment header's next header)
  bool more       = false;  ///< MF
  uint32_t id     = 0;
  uint32_t offset = 0;      ///< payload offset in bytes
  uint32_t payload_at = 0;  ///< where this fragment's payload starts in the frame
  uint32_t payload    = 0;  ///< its length
  uint32_t head       = 0;  ///< bytes of the frame kept from a first fragment (link + IP
                            ///< headers; IPv6: up to the fragment header)
  uint32_t next_at    = 0;  ///< IPv6: the byte of `head` naming the fragment header
  uint32_t limit      = 0;  ///< the largest payload end the reassembled datagram allows
};

/// Reads a fragment. False when its headers are not all captured or make no sense.
WARPATH_HD bool read_fragment(const packet::PacketInfo& info, const uint8_t* f, uint32_t caplen,
                              Fragment& out) {
  const uint32_t l3 = info.l3_offset;
  if (!l3) return false;
  if (info.l3 == packet::L3::kIpv4) {
    if (l3 + 20 > caplen) return false;
    const uint32_t ihl = uint32_t(f[l3] & 0xf) * 4, total = be16(f + l3 + 2);
    if (ihl < 20 || total < ihl || l3 + total > caplen) return false;
    const uint32_t frag = be16(f + l3 + 6);
    out.version    = 4;
    out.proto      = f[l3 + 9];
    out.more       = frag & 0x2000;
    out.offset     = (frag & 0x1fff) * 8;
    out.id         = be16(f + l3 + 4);
    out.payload_at = l3 + ihl;
    out.payload    = total - ihl;
    out.head       = l3 + ihl;
    out.limit      = 65535 - ihl;
    return true;
  }
  if (info.l3 != packet::L3::kIpv6 || l3 + 40 > caplen) return false;
  const uint32_t end = l3 + 40 + be16(f + l3 + 4);
  if (end > caplen) return false;
  uint32_t next_at = l3 + 6, cur = l3 + 40;
  for (int hops = 0; hops < 8; ++hops) {  // the parser's bound on extension headers
    const uint8_t nh = f[next_at];
    if (nh == 44) {
      if (cur + 8 > end) return false;
      const uint32_t word = be16(f + cur + 2);
      out.version    = 6;
      out.proto      = f[cur];
      out.more       = word & 1;
      out.offset     = word & 0xfff8;
      out.id         = be32(f + cur + 4);
      out.payload_at = cur + 8;
      out.payload    = end - (cur + 8);
      out.head       = cur;
      out.next_at    = next_at;
      out.limit      = 65535 - (cur - (l3 + 40));
      return true;
    }
    if (nh != 0 && nh != 43 && nh != 60) return false;  // no fragment header before the payload
    if (cur + 8 > end) return false;
    next_at = cur;
    cur += (uint32_t(f[cur + 1]) + 1) * 8;
  }
  return false;
}

}  // namespace warpath::defrag::core
