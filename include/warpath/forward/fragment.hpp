// include/warpath/forward/fragment.hpp: IP fragmentation on output (RFC 791 section 3.2 and
// RFC 8200 section 4.5): a packet larger than its link's IP MTU leaves as fragments, as the
// kernel's ip_fragment / ip6_fragment send them.
//
// Where: the worker's transmit stage, for packets a module marked (Frame::frag_mtu: esp-out
// after encapsulating an IPv4 packet without DF, RFC 4301 section 8.1). The fragments are
// written into a batch the caller owns; the original packet is untouched.
//
// IPv4: every fragment carries the header; options are copied into the first fragment and,
// in later ones, only those with the copied flag (RFC 791 3.1), padded to 4 bytes; offsets in
// units of 8 bytes, MF on all but the last, checksums computed afresh. A packet with DF set is
// not fragmented (kRefused).
// IPv6: the fragmentable part follows the 40-byte header, behind a Fragment header (next
// header 44) with the caller's identification. Packets whose header chain starts with an
// extension header of the unfragmentable part (hop-by-hop, routing, destination options) or
// is already a fragment are refused.
#pragma once
#include <cstdint>

#include "warpath/packet/batch.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::forward {

enum class FragmentOutcome : uint8_t {
  kFragmented,  ///< the fragments were appended to `out`
  kFits,        ///< the IP packet is not larger than the MTU: nothing to do
  kNoRoom,      ///< `out` has too few packets or bytes left: nothing was appended
  kRefused,     ///< cannot be fragmented (DF, extension headers, an MTU below 68 / 1280, not IP)
};

struct FragmentResult {
  FragmentOutcome outcome = FragmentOutcome::kRefused;
  uint32_t fragments      = 0;  ///< appended to `out`
};

/// Fragments packet `frame` (`caplen` bytes: link layer, then the IP packet `info` describes,
/// whose IP length must fit the capture) so that each fragment's IP packet is at most `mtu`
/// bytes; each fragment gets the packet's link-layer header, `timestamp_ns` and `port`.
/// `ident` is the Fragment header's identification for IPv6 (IPv4 keeps the packet's own).
FragmentResult fragment_packet(const uint8_t* frame, uint32_t caplen,
                               const packet::PacketInfo& info, uint32_t mtu, uint32_t ident,
                               uint64_t timestamp_ns, uint16_t port, packet::PacketBatch& out);

}  // namespace warpath::forward
