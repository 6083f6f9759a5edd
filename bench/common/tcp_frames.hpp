// bench/common/tcp_frames.hpp: frames built in memory before timing, for the benchmarks that
// feed whole TCP connections (warpath-stream-bench, warpath-nids-bench): one buffer, an
// offset, length and timestamp per frame, and the payload bytes in all.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <utility>
#include <vector>

#include "gen/packet_builder.hpp"

namespace warpath::bench {

struct Frames {
  std::vector<uint8_t> bytes;
  std::vector<uint32_t> off, len;
  std::vector<uint64_t> ts;  ///< nanoseconds
  uint64_t wire = 0;         ///< frame bytes in all
  uint64_t payload = 0;      ///< TCP payload bytes in all
  void add(const uint8_t* p, uint32_t n, uint64_t t) {
    off.push_back(uint32_t(bytes.size()));
    len.push_back(n);
    ts.push_back(t);
    bytes.insert(bytes.end(), p, p + n);
    wire += n;
  }
  size_t size() const { return off.size(); }
  /// Frame i as {pointer, length} (what Stage::fill takes).
  std::pair<const uint8_t*, uint32_t> frame(size_t i) const {
    return {bytes.data() + off[i], len[i]};
  }
  /// The longest frame's length (what a Stage must hold).
  size_t largest() const {
    size_t m = 0;
    for (uint32_t l : len) m = std::max<size_t>(m, l);
    return m;
  }
};

/// One Ethernet + IPv4 + TCP frame (the traffic generator's builder) carrying `payload` bytes:
/// `data` when given, else zeros; timestamped `t`.
inline void add_tcp_frame(Frames& out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport,
                          uint32_t seq, uint32_t ack, uint8_t flags, uint32_t payload,
                          const uint8_t* data = nullptr, uint64_t t = 0) {
  gen::detail::FrameSpec spec;
  spec.src4  = src;
  spec.dst4  = dst;
  spec.sport = sport;
  spec.dport = dport;
  gen::detail::PacketFields fields;
  fields.seq       = seq;
  fields.ack       = ack;
  fields.tcp_flags = flags;
  uint8_t f[14 + 20 + 20 + 1500];
  const uint32_t head   = gen::detail::frame_header_bytes(spec);
  const uint32_t caplen = head + payload;
  gen::detail::build_frame(spec, fields, caplen, nullptr, f);
  if (data) std::memcpy(f + head, data, payload);
  out.add(f, caplen, t);
  out.payload += payload;
}

}  // namespace warpath::bench
