// The NIDS's view of a TCP handshake (src/nids/flow_ctx.hpp).
#include "nids/flow_ctx.hpp"

namespace warpath::nids::detail {

bool handshake_step(FlowCtx& ctx, const stream::Segment& seg, uint8_t dir, bool inline_stream) {
  uint8_t& h     = ctx.handshake;
  const bool was = ctx.established(6);
  if (was) return was;  // a SYN on an established connection changes nothing (RFC 5961 4)
  const bool syn = seg.flags & packet::kTcpSyn, ack = seg.flags & packet::kTcpAck;
  const bool rst = seg.flags & packet::kTcpRst;
  const uint64_t syn_data = uint64_t(seg.len) + seg.missing;
  if (dir == 0 && syn && !ack) {
    if (!(h & 1) || seg.seq != ctx.syn_seq) {  // another attempt starts the handshake over
      h            = uint8_t(1 | (seg.tfo && !rst ? 16 : 0));
      ctx.syn_seq  = seg.seq;
      ctx.syn_data = seg.tfo && !rst ? uint32_t(syn_data) : 0;
      return inline_stream && ctx.syn_data;
    }
    // The same SYN again leaves it where it is; before any answer, its Fast Open bytes are a
    // copy of the first's (the reassembler's rule: with the option, or after a SYN with data).
    if (!(h & 14) && !rst && syn_data && (seg.tfo || ctx.syn_data)) {
      h |= 16;
      if (syn_data > ctx.syn_data) ctx.syn_data = uint32_t(syn_data);
      return inline_stream;
    }
    return was;
  }
  if (!(h & 1)) return was;
  const uint32_t taken = seg.ack - (ctx.syn_seq + 1);
  if (dir == 1 && syn && !ack && (h & 10) == 0) {  // a split handshake's SYN from the responder
    h |= 8;
    ctx.resp_seq = seg.seq;
  } else if (dir == 0 && syn && ack && (h & 10) == 8 && seg.seq == ctx.syn_seq &&
             seg.ack == ctx.resp_seq + 1) {  // the initiator's SYN+ACK
    h |= 2;
  } else if (dir == 1 && syn && ack && (h & 10) == 10) {
    // A split handshake's last packet, the responder's SYN+ACK (a simultaneous open).
    if (seg.seq == ctx.resp_seq && taken == 0) h |= 4;
  } else if (dir == 1 && syn && ack) {  // the ordinary answer (after a split SYN, too)
    const bool fast_open = (h & 16) || seg.tfo;
    if (fast_open ? !rst && taken <= ctx.syn_data : taken == 0) {
      h            = uint8_t((h & ~8) | 2 | (fast_open ? 16 : 0));
      ctx.resp_seq = seg.seq;
      if (fast_open) {  // Fast Open: open at the SYN+ACK
        h |= 4;
        return true;
      }
    }
  } else if (ack && !syn && (h & 3) == 3) {
    // The last ACK: the initiator's of the SYN+ACK, or a split handshake's from the responder.
    // Inline, the reassembler delivers its data at once: inspected as established (Suricata
    // inspects the inline stream again at the next packets; warpath inspects a chunk once).
    const bool split = h & 8;
    if (dir == (split ? 1 : 0) && seg.ack == (split ? ctx.syn_seq : ctx.resp_seq) + 1) {
      h |= 4;
      return inline_stream && seg.len;
    }
  }
  return was;
}

}  // namespace warpath::nids::detail
