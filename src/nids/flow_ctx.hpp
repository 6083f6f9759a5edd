// src/nids/flow_ctx.hpp: what the NIDS keeps per flow (PipelineInspector, inspector.cpp):
// each direction's bytes awaiting inspection, each side's sequence space as stream_size sees
// it, the handshake as the reassembler follows it, the L7 label and the application layer.
#pragma once
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "nids/app/app_flow.hpp"
#include "warpath/nids/l7.hpp"
#include "warpath/packet/info.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::nids::detail {

// One direction's bytes since its last gap, up to the inspection depth.
struct DirBuffer {
  // bytes[head..]: the lookback, then bytes not yet inspected. What falls out of the lookback
  // is skipped by moving `head`, and the buffer is moved down only once the skipped bytes are
  // as many as the lookback: erasing them at each inspection moved 4 KiB per segment once a
  // direction passed 4 KiB.
  std::string bytes;
  size_t head     = 0;
  bool from_start = true; // bytes[0] is the stream's first byte (since the last gap)
  uint64_t total = 0;     // bytes taken for inspection in this direction
  // Bytes before a gap not yet inspected (the gap came in the same delivery): inspected first,
  // on their own, with the offset already inspected in them.
  std::vector<std::pair<std::string, uint32_t>> before_gap;
  bool full  = false;
  bool dirty = false;     // new bytes since the last inspection
  bool closing       = false;     // its FIN was seen (stream_chunk: no more waiting for a chunk)
  uint32_t inspected = 0; // bytes inspected already
  uint32_t chunk     = 0;  // stream_chunk: this chunk's size, drawn with jitter (0: not yet drawn)

  size_t held() const { return bytes.size() - head; }
  const uint8_t* data() const { return reinterpret_cast<const uint8_t*>(bytes.data()) + head; }
  // Keeps the last `keep` bytes.
  void keep_last(size_t keep) {
    head = bytes.size() - keep;
    if (head >= keep) {
      bytes.erase(0, head);
      head = 0;
    }
  }
  // The held bytes, taken out (the buffer is left empty).
  std::string take() {
    bytes.erase(0, head);
    head = 0;
    return std::move(bytes);
  }
  void clear() {
    bytes.clear();
    head = 0;
  }
};

// A TCP side's sequence space as stream_size sees it (Suricata's isn and next_seq): the ISN
// from its SYN (picked up midstream: one before its first segment), and one past the furthest
// byte, SYN or FIN it sent.
struct SeqSpace {
  bool known    = false;
  uint32_t isn  = 0;
  uint32_t next = 0;
  void add(const stream::Segment& s) {
    const bool syn = s.flags & 0x02, fin = s.flags & 0x01, rst = s.flags & 0x04;
    if (!known) {
      known = true;
      isn   = syn ? s.seq : s.seq - 1;
      next  = isn + 1;
    }
    // Suricata 7's next_seq: a segment that ends past it moves it there, past a hole too (its
    // established-state handlers do so before their window check); a RST does not (its own
    // path validates it).
    const uint32_t end = s.seq + uint32_t(syn) + s.len + s.missing + uint32_t(fin);
    if (!rst && int32_t(end - next) > 0) next = end;
  }
  uint32_t size() const { return known ? next - isn : 0; }
};

struct FlowCtx {
  // bit 0: SYN from the initiator, bit 1: SYN+ACK back, bit 2: its ACK (all three: established);
  // bit 3: a split handshake's SYN from the responder (then the initiator's SYN+ACK sets bit 1
  // and the responder's ACK bit 2); bit 4: the initiator's SYN had TCP Fast Open's option.
  uint8_t handshake = 0;
  uint32_t syn_seq  = 0;  // the initiator's last SYN's sequence number
  uint32_t syn_data = 0;  // its Fast Open data's sequence space (the longest copy)
  uint32_t resp_seq = 0;  // the responder's SYN's (or SYN+ACK's) sequence number
  SeqSpace seq[2];        // per direction (0: the client's)
  bool seen[2]      = {};
  bool midstream    = false;
  bool dropped      = false;  // IPS: a drop rule covering the flow matched
  bool passed       = false;  // a pass rule covering the flow matched (or the midstream policy)
  bool drop_packets = false;  // IPS: the midstream policy drops the flow's packets
  uint64_t alerts   = 0;
  DirBuffer dir[2];
  // L7 classification: the first bytes (NULs removed), packets with payload, the label.
  L7Flow l7;
  AppFlow app;  // the application layer: its protocol, parser and finished transactions
  bool established(uint8_t proto) const {
    if (proto == 6) return (handshake & 7) == 7 || midstream;
    return seen[0] && seen[1];
  }
};

// The handshake as the reassembler follows it (stream.hpp): the three-way one, a split one (the
// responder answers the SYN with its own SYN, the initiator with a SYN+ACK, the responder's ACK
// or SYN+ACK completes it) and TCP Fast Open, whose connection Suricata takes as established at
// the SYN+ACK: that packet is then established too, so the SYN's data it delivers meets
// flow:established rules (Suricata inspects them on the next packet; warpath inspects a stream
// chunk and a transaction once); inline, where the reassembler delivers a Fast Open SYN's data
// at once, the SYN is. Returns whether the packet is inspected as established: the packet that
// completes a handshake is not (Suricata), but for those two.
/// `seg`: the packet's segment (its numbers checked as the reassembler checks them).
bool handshake_step(FlowCtx& ctx, const stream::Segment& seg, uint8_t dir, bool inline_stream);

}  // namespace warpath::nids::detail
