// Parsed TCP packets as reassembly segments (include/warpath/stream/stream.hpp): one packet
// (segment_of), a packet's payload of any transport (payload_of), and a tracked batch into a
// reassembler (reassemble_batch).
#include <algorithm>
#include <vector>

#include "stream/segment_from.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::stream {

using detail::segment_from;

bool segment_of(const packet::PacketInfo& p, const uint8_t* frame, uint32_t caplen, Segment& s,
                bool any_checksum) {
  return segment_from(p, frame, caplen, s, any_checksum);
}

namespace {
// Where the IP datagram ends in the captured bytes (Ethernet pads short frames past it).
uint32_t ip_end(const packet::PacketInfo& p, const uint8_t* frame, uint32_t caplen) {
  const uint32_t l3 = p.l3_offset;
  if (p.ip_version == 4 && l3 + 4 <= caplen)
    return std::min<uint32_t>(caplen, l3 + (uint32_t(frame[l3 + 2]) << 8 | frame[l3 + 3]));
  if (p.ip_version == 6 && l3 + 6 <= caplen) {
    const uint32_t plen = uint32_t(frame[l3 + 4]) << 8 | frame[l3 + 5];
    return plen ? std::min<uint32_t>(caplen, l3 + 40 + plen) : caplen;  // 0: a jumbogram
  }
  return caplen;
}
}  // namespace

bool payload_of(const packet::PacketInfo& p, const uint8_t* frame, uint32_t caplen,
                const uint8_t*& data, uint32_t& len) {
  if (p.proto == 6) {
    Segment s;
    if (!segment_of(p, frame, caplen, s, true)) return false;
    data = s.data;
    len  = s.len;
  } else if (p.proto == 17 && p.l4_offset && p.l4_offset + 8u <= caplen) {
    const uint32_t l4      = p.l4_offset;
    const uint32_t udp_len = uint32_t(frame[l4 + 4]) << 8 | frame[l4 + 5];
    const uint32_t end     = std::min(caplen, l4 + std::max(udp_len, 8u));
    data = frame + l4 + 8;
    len  = end - l4 - 8;
  } else if ((p.proto == 1 || p.proto == 58) && p.l4_offset) {  // after type, code, checksum, rest
    const uint32_t end = ip_end(p, frame, caplen);
    if (p.l4_offset + 8u >= end) return false;
    data = frame + p.l4_offset + 8;
    len  = end - p.l4_offset - 8;
  } else if (p.l4_offset && p.l4_offset < caplen) {
    const uint32_t end = ip_end(p, frame, caplen);
    if (p.l4_offset >= end) return false;
    data = frame + p.l4_offset;
    len  = end - p.l4_offset;
  } else {
    return false;
  }
  return len > 0;
}

Status reassemble_batch(Reassembler& r, const packet::BatchView& batch,
                        const packet::PacketInfo* infos, const flow::PacketFlow* flows,
                        uint32_t n, const ChunkSink& sink, bool any_checksum,
                        const uint8_t* mask) {
  const bool gather = r.batches();
  thread_local std::vector<Segment> gathered;
  gathered.clear();
  if (gather) gathered.reserve(n);
  for (uint32_t i = 0; i < n; ++i) {
    if (!flows[i].serial || (mask && !mask[i])) continue;
    // Gathered segments are written where they stay: built on the stack and copied, each
    // copy's wide loads waited for the narrow stores that had just filled the fields.
    Segment local;
    Segment& s = gather ? gathered.emplace_back() : local;
    if (!segment_from(infos[i], batch.data(i), batch.metas[i].caplen, s, any_checksum)) {
      if (gather) gathered.pop_back();
      continue;
    }
    s.flow = flows[i].serial;
    s.dir  = flows[i].dir;
    if (!gather) WARPATH_TRY(r.segment(s, sink));
  }
  if (gather) return r.segments(gathered.data(), uint32_t(gathered.size()), sink);
  return Status::ok();
}

}  // namespace warpath::stream
