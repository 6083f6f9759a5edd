// include/warpath/stream/generate.hpp
//
// Generated TCP conversations as reassembly input, for the tests, the self-test and the
// benchmarks: each flow opens with a handshake at a chosen or random ISN, each direction's
// payload (random bytes, kept as the truth) is cut into random segments, and the arrival order
// is spoiled on request: local reordering, duplicates, re-sends that overlap with the same
// bytes at other boundaries, overlaps with different bytes, and segments the capture lost
// (the receiver got them: later ACKs pass the hole). ACK numbers are what a receiver would
// send: everything it has received contiguously when the segment leaves.
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/stream/stream.hpp"

namespace warpath::stream {

struct StreamGenParams {
  uint64_t seed     = 1;
  uint32_t flows    = 8;
  uint32_t bytes    = 4000;  ///< payload per direction (each flow draws up to this)
  uint32_t max_segment = 300;
  uint32_t reorder_percent   = 0;  ///< segments swapped with a near neighbour
  uint32_t duplicate_percent = 0;  ///< segments sent twice
  uint32_t overlap_percent   = 0;  ///< re-sends of the same bytes over other boundaries
  uint32_t conflict_percent  = 0;  ///< re-sends with different bytes (the truth is then unknown)
  uint32_t loss_percent      = 0;  ///< data segments the capture lost
  bool random_isn = true;          ///< else every ISN is `isn`
  uint32_t isn    = 0;
  bool fin        = true;          ///< close both directions with FIN
};

struct GeneratedStreams {
  std::vector<Segment> segments;  ///< arrival order; data points into `payload`
  /// The truth: payload[2 * flow + dir] is direction dir of flow `flow` (flows from 1).
  std::vector<std::vector<uint8_t>> payload;
  /// Per flow and direction: [offset, end) ranges the capture lost.
  std::vector<std::vector<std::pair<uint64_t, uint64_t>>> lost;
  std::vector<std::vector<uint8_t>> extra;  ///< bytes of conflicting re-sends
};

GeneratedStreams generate_streams(const StreamGenParams& params);

/// Generated conversations as frames (Ethernet + IPv4 + TCP), for engines that take packets
/// (flowstream.hpp) and their tests: flow f runs between 10.0.0.0 + f, port 1024 + f, and
/// 192.168.0.1, port 80 (direction 0 from the client), frames `gap_ns` apart. Hostile extras
/// on request, each drawn from the seed.
struct FrameGenParams {
  StreamGenParams streams;
  uint64_t start_ns = 1'700'000'000'000'000'000ull;
  uint64_t gap_ns   = 1000;
  uint32_t syn_flood   = 0;  ///< unanswered SYNs from other client ports, spread over the frames
  uint32_t rst_percent = 0;  ///< of data segments, followed by a RST near their sequence number
  uint32_t udp_percent = 0;  ///< of frames, followed by a UDP datagram between the same hosts
  uint32_t idle_permille = 0;  ///< of frames, followed by `idle_ns` of silence (timeouts)
  uint64_t idle_ns       = 0;
  bool shared_ports = false;  ///< flows 2k - 1 and 2k use one 4-tuple (reuse, mixed connections)
  /// Then the same number of connections again on the same 4-tuples (another seed), after the
  /// first ones (closed with FIN, when `streams.fin`): port reuse.
  bool again = false;
  uint32_t bad_checksum_percent = 0;  ///< of frames, sent with a wrong IPv4 header checksum
};

struct GeneratedFrames {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> offset, length;
  std::vector<uint64_t> ts_ns;
  size_t size() const { return offset.size(); }
};

GeneratedFrames generate_frames(const FrameGenParams& params);

}  // namespace warpath::stream
