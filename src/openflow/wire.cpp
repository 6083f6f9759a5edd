// src/openflow/wire.cpp: OpenFlow 1.0 encoding and decoding (wire.hpp).
#include "warpath/openflow/wire.hpp"

#include <algorithm>
#include <cstring>

namespace warpath::openflow::wire {

Header read_header(const uint8_t* b) {
  Header h;
  h.version = b[0];
  h.type    = Type(b[1]);
  h.length  = uint16_t(b[2] << 8 | b[3]);
  h.xid     = uint32_t(b[4]) << 24 | uint32_t(b[5]) << 16 | uint32_t(b[6]) << 8 | b[7];
  return h;
}

Writer::Writer(Type type, uint32_t xid) {
  b_.reserve(64);
  u8(kVersion);
  u8(uint8_t(type));
  u16(0);
  u32(xid);
}
void Writer::u16(uint16_t v) {
  u8(uint8_t(v >> 8));
  u8(uint8_t(v));
}
void Writer::u32(uint32_t v) {
  u16(uint16_t(v >> 16));
  u16(uint16_t(v));
}
void Writer::u64(uint64_t v) {
  u32(uint32_t(v >> 32));
  u32(uint32_t(v));
}
void Writer::text(const std::string& s, size_t n) {
  const size_t k = std::min(s.size(), n - 1);
  bytes(reinterpret_cast<const uint8_t*>(s.data()), k);
  zeros(n - k);
}

void Writer::match(const Match& m) {
  const packet::OfFields& f = m.f;
  u32(m.wildcards);
  u16(f.in_port);
  bytes(f.dl_src, 6);
  bytes(f.dl_dst, 6);
  u16(f.dl_vlan);
  u8(f.dl_vlan_pcp);
  u8(0);
  u16(f.dl_type);
  u8(f.nw_tos);
  u8(f.nw_proto);
  u16(0);
  u32(f.nw_src);
  u32(f.nw_dst);
  u16(f.tp_src);
  u16(f.tp_dst);
}

void Writer::actions(const std::vector<Action>& list) {
  for (const Action& a : list) {
    const bool wide = a.type == ActionType::kSetDlSrc || a.type == ActionType::kSetDlDst ||
                      a.type == ActionType::kEnqueue;
    u16(uint16_t(a.type));
    u16(wide ? 16 : 8);
    switch (a.type) {
      case ActionType::kOutput:
        u16(a.port);
        u16(a.max_len);
        break;
      case ActionType::kSetVlanVid:
      case ActionType::kSetTpSrc:
      case ActionType::kSetTpDst:
        u16(uint16_t(a.value));
        u16(0);
        break;
      case ActionType::kSetVlanPcp:
      case ActionType::kSetNwTos:
        u8(uint8_t(a.value));
        zeros(3);
        break;
      case ActionType::kStripVlan: zeros(4); break;
      case ActionType::kSetDlSrc:
      case ActionType::kSetDlDst:
        bytes(a.mac, 6);
        zeros(6);
        break;
      case ActionType::kSetNwSrc:
      case ActionType::kSetNwDst: u32(a.value); break;
      case ActionType::kEnqueue:
        u16(a.port);
        zeros(6);
        u32(a.value);
        break;
    }
  }
}

std::vector<uint8_t> Writer::finish() {
  const size_t n = b_.size();
  b_[2]          = uint8_t(n >> 8);
  b_[3]          = uint8_t(n);
  return std::move(b_);
}

uint16_t Reader::u16() {
  const uint16_t v = uint16_t(p_[at_] << 8 | p_[at_ + 1]);
  at_ += 2;
  return v;
}
uint32_t Reader::u32() {
  const uint32_t hi = u16();
  return hi << 16 | u16();
}
uint64_t Reader::u64() {
  const uint64_t hi = u32();
  return hi << 32 | u32();
}

Match read_match(Reader& r) {
  packet::OfFields f;
  const uint32_t wc = r.u32();
  f.in_port         = r.u16();
  std::memcpy(f.dl_src, r.take(6), 6);
  std::memcpy(f.dl_dst, r.take(6), 6);
  f.dl_vlan     = r.u16();
  f.dl_vlan_pcp = r.u8();
  r.skip(1);
  f.dl_type  = r.u16();
  f.nw_tos   = r.u8();
  f.nw_proto = r.u8();
  r.skip(2);
  f.nw_src = r.u32();
  f.nw_dst = r.u32();
  f.tp_src = r.u16();
  f.tp_dst = r.u16();
  return make_match(f, wc);
}

bool read_actions(Reader& r, size_t bytes, std::vector<Action>& out, WireError& err,
                  bool packet_out) {
  auto fail = [&](uint16_t code, std::string why) {
    err = {ErrorType::kBadAction, code, std::move(why)};
    return false;
  };
  if (!r.has(bytes)) return fail(kBadActionLen, "the action list runs past the message");
  Reader a(r.take(bytes), bytes);
  while (a.left()) {
    if (!a.has(4)) return fail(kBadActionLen, "an action shorter than its header");
    const uint16_t type = a.u16(), len = a.u16();
    if (len < 8 || len % 8 || !a.has(len - 4u))
      return fail(kBadActionLen, "action of type " + std::to_string(type) + " with length " +
                                     std::to_string(len));
    Reader b(a.take(len - 4u), len - 4u);
    Action x;
    x.type          = ActionType(type);
    auto want = [&](uint16_t n) { return len == n; };
    switch (type) {
      case 0:
        if (!want(8)) return fail(kBadActionLen, "output is 8 bytes");
        x.port    = b.u16();
        x.max_len = b.u16();
        if (x.port == 0 || x.port == kPortNone || (x.port == kPortTable && !packet_out) ||
            (x.port >= kPortMax && x.port < kPortInPort))
          return fail(kBadOutPort, "output to port " + std::to_string(x.port));
        break;
      case 1:
        if (!want(8)) return fail(kBadActionLen, "set_vlan_vid is 8 bytes");
        x.value = b.u16();
        if (x.value > 4095) return fail(kBadArgument, "VLAN id " + std::to_string(x.value));
        break;
      case 2:
        if (!want(8)) return fail(kBadActionLen, "set_vlan_pcp is 8 bytes");
        x.value = b.u8();
        if (x.value > 7) return fail(kBadArgument, "VLAN PCP " + std::to_string(x.value));
        break;
      case 3:
        if (!want(8)) return fail(kBadActionLen, "strip_vlan is 8 bytes");
        break;
      case 4:
      case 5:
        if (!want(16)) return fail(kBadActionLen, "set_dl_src/dst is 16 bytes");
        std::memcpy(x.mac, b.take(6), 6);
        break;
      case 6:
      case 7:
        if (!want(8)) return fail(kBadActionLen, "set_nw_src/dst is 8 bytes");
        x.value = b.u32();
        break;
      case 8:
        if (!want(8)) return fail(kBadActionLen, "set_nw_tos is 8 bytes");
        x.value = b.u8();
        if (x.value & 3) return fail(kBadArgument, "TOS with ECN bits");
        break;
      case 9:
      case 10:
        if (!want(8)) return fail(kBadActionLen, "set_tp_src/dst is 8 bytes");
        x.value = b.u16();
        break;
      case 11:
        if (!want(16)) return fail(kBadActionLen, "enqueue is 16 bytes");
        x.port = b.u16();
        b.skip(6);
        x.value = b.u32();
        if (x.port == 0 || (x.port >= kPortMax && x.port != kPortInPort))
          return fail(kBadOutPort, "enqueue to port " + std::to_string(x.port));
        break;
      case 0xffff: return fail(kBadActionVendor, "vendor actions are not supported");
      default: return fail(kBadActionType, "unknown action type " + std::to_string(type));
    }
    out.push_back(x);
  }
  return true;
}

bool read_flow_mod(const uint8_t* msg, size_t len, FlowMod& out, WireError& err) {
  if (len < 72) {
    err = {ErrorType::kBadRequest, kBadLen, "a flow_mod is at least 72 bytes"};
    return false;
  }
  Reader r(msg + kHeaderBytes, len - kHeaderBytes);
  out.spec.match = read_match(r);
  out.spec.cookie = r.u64();
  const uint16_t cmd = r.u16();
  out.spec.idle_timeout = r.u16();
  out.spec.hard_timeout = r.u16();
  out.spec.priority     = r.u16();
  out.buffer_id         = r.u32();
  out.spec.out_port     = r.u16();
  out.spec.flags        = r.u16();
  if (cmd > 4) {
    err = {ErrorType::kFlowModFailed, uint16_t(FlowModError::kBadCommand),
           "flow_mod command " + std::to_string(cmd)};
    return false;
  }
  out.command = FlowModCommand(cmd);
  // A flow's statistics entry (88 bytes + its actions) must fit one reply (65,535 - 12).
  if (r.left() > 65535 - 12 - 88) {
    err = {ErrorType::kBadRequest, kBadLen, "an action list too long for a flow's statistics"};
    return false;
  }
  return read_actions(r, r.left(), out.spec.actions, err);
}

void write_flow_stats(Writer& w, const FlowEntry& e, uint64_t packets, uint64_t bytes,
                      uint64_t now_ns) {
  const size_t start  = w.size();
  const uint64_t age  = now_ns > e.created_ns ? now_ns - e.created_ns : 0;
  w.u16(0);  // the entry's length, once its actions are written
  w.u8(0);  // table 0
  w.u8(0);
  w.match(e.spec.match);
  w.u32(uint32_t(age / 1'000'000'000ull));
  w.u32(uint32_t(age % 1'000'000'000ull));
  w.u16(e.spec.priority);
  w.u16(e.spec.idle_timeout);
  w.u16(e.spec.hard_timeout);
  w.zeros(6);
  w.u64(e.spec.cookie);
  w.u64(packets);
  w.u64(bytes);
  w.actions(e.spec.actions);
  const size_t length        = w.size() - start;
  w.raw()[start]     = uint8_t(length >> 8);
  w.raw()[start + 1] = uint8_t(length);
}

std::vector<uint8_t> flow_removed(const RemovedFlow& f, uint64_t now_ns) {
  Writer w(Type::kFlowRemoved, 0);
  const FlowEntry& e = f.entry;
  const uint64_t age = now_ns > e.created_ns ? now_ns - e.created_ns : 0;
  w.match(e.spec.match);
  w.u64(e.spec.cookie);
  w.u16(e.spec.priority);
  w.u8(uint8_t(f.reason));
  w.u8(0);
  w.u32(uint32_t(age / 1'000'000'000ull));
  w.u32(uint32_t(age % 1'000'000'000ull));
  w.u16(e.spec.idle_timeout);
  w.zeros(2);
  w.u64(e.packets);
  w.u64(e.bytes);
  return w.finish();
}

std::vector<uint8_t> error(uint32_t xid, ErrorType type, uint16_t code, const uint8_t* msg,
                           size_t len) {
  Writer w(Type::kError, xid);
  w.u16(uint16_t(type));
  w.u16(code);
  if (msg) w.bytes(msg, std::min<size_t>(len, 64));
  return w.finish();
}

}  // namespace warpath::openflow::wire
