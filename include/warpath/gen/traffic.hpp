// include/warpath/gen/traffic.hpp
//
// Seeded traffic generation.
//
// What
//   Builds valid Ethernet frames (correct IPv4 header, TCP, UDP, ICMP and ICMPv6 checksums) for
//   tests, demos and benchmarks: mixes of TCP/UDP/ICMP over IPv4 and IPv6, optional 802.1Q
//   tags, frame sizes from 64 to 1518 bytes (uniform, IMIX or fixed; up to 9018 for jumbo
//   frames), drawn from a fixed number of flows. The same params and seed always give the
//   same bytes.
//
//   frames_from_trace() builds one IPv4 frame per ClassBench trace line, so a classifier can be
//   run on real packets whose 5-tuples are those of the trace.
//
// Sizes are Ethernet frame sizes including the 4-byte FCS, which captures do not contain (64
// means a 60-byte capture, as captures of minimum-size frames show), i.e. caplen = size - 4.
// A size too small for a packet's headers is grown to the smallest that holds them (an IPv6 +
// 802.1Q + TCP frame needs 78 bytes, i.e. size 82). kImix ignores min_size and max_size.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/io/classbench.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::gen {

enum class SizeMix : uint8_t { kUniform, kImix, kFixed };

struct TrafficParams {
  uint64_t seed     = 1;
  uint32_t count    = 1000;  ///< packets
  uint32_t flows    = 256;   ///< distinct 5-tuples
  double ipv6_share = 0.25;  ///< fraction of IPv6 flows
  double vlan_share = 0.1;   ///< fraction of flows with an 802.1Q tag
  double tcp_share = 0.6, udp_share = 0.3, icmp_share = 0.1;  ///< normalised
  SizeMix sizes     = SizeMix::kImix;
  uint32_t min_size = 64, max_size = 1518;  ///< uniform range; kFixed uses min_size
  uint64_t start_ns = 1'700'000'000'000'000'000ull;
  uint64_t gap_ns   = 1000;  ///< between consecutive packets
  uint16_t port     = 0;     ///< input port recorded in PacketMeta
  Status validate() const;   ///< kInvalidArgument with the field name
};

/// Appends params.count packets to `out` (which must have room: see batch_for()).
Status generate_traffic(const TrafficParams& params, packet::PacketBatch& out);

/// A batch with room for `count` packets of up to `max_frame` bytes (1518 by default; jumbo
/// frames up to 9018 take several cells each).
Result<packet::PacketBatch> batch_for(uint32_t count, uint32_t max_frame = 1518);

struct TraceFrameParams {
  uint32_t size     = 64;  ///< frame size (>= 64)
  uint64_t start_ns = 1'700'000'000'000'000'000ull;
  uint64_t gap_ns   = 1000;
};

/// One frame per trace entry (IPv4; TCP, UDP, ICMP or raw IP by the entry's protocol).
Status frames_from_trace(const std::vector<io::TraceEntry>& trace, const TraceFrameParams& params,
                         packet::PacketBatch& out);

/// Internet checksum helpers, shared by the generator and the router data path.
uint16_t internet_checksum(const uint8_t* data, size_t bytes, uint32_t initial = 0) noexcept;

}  // namespace warpath::gen
