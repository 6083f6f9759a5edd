// src/openflow/session.cpp: one OpenFlow 1.0 connection's protocol (session.hpp).
#include "warpath/openflow/session.hpp"

#include <algorithm>
#include <cstring>

#include "warpath/openflow/wire.hpp"

namespace warpath::openflow {

using namespace wire;

namespace {

constexpr uint16_t kDefaultMissSendLen = 128;  // OFP_DEFAULT_MISS_SEND_LEN
constexpr size_t kMaxReply             = 0xff00;  // split statistics replies below 64 KiB
constexpr uint16_t kReplyMore          = 1;       // OFPSF_REPLY_MORE

void append(std::vector<uint8_t>& out, const std::vector<uint8_t>& m) {
  out.insert(out.end(), m.begin(), m.end());
}

}  // namespace

Session::Session(const SwitchControl& sw, const SwitchInfo& info, bool controller)
    : sw_(sw), info_(info), controller_(controller),
      miss_send_len_(controller ? kDefaultMissSendLen : 0) {}

std::vector<uint8_t> Session::hello() const { return Writer(Type::kHello, 0).finish(); }

std::vector<uint8_t> Session::echo_request(uint32_t xid) {
  return Writer(Type::kEchoRequest, xid).finish();
}

std::vector<uint8_t> Session::packet_in(const PacketIn& p, uint16_t miss_send_len) {
  Writer w(Type::kPacketIn, 0);
  const size_t keep =
      std::min<size_t>(p.data.size(), p.reason == 0 ? miss_send_len : p.max_len);
  w.u32(0xffffffffu);  // not buffered
  w.u16(p.total_len);
  w.u16(p.in_port);
  w.u8(p.reason);
  w.u8(0);
  w.bytes(p.data.data(), keep);
  return w.finish();
}

// ofp_phy_port (48 bytes), with the port's current config.
void Session::write_port(Writer& w, const PortInfo& p) const {
  w.u16(p.port_no);
  w.bytes(p.mac.data(), 6);
  w.text(p.name, 16);
  w.u32(sw_.port_config(p.port_no));
  w.zeros(5 * 4);  // state, curr, advertised, supported, peer
}

bool Session::receive(const uint8_t* p, size_t n, std::vector<uint8_t>& out) {
  buf_.insert(buf_.end(), p, p + n);
  size_t at = 0;
  bool ok   = true;
  while (ok && buf_.size() - at >= kHeaderBytes) {
    const Header h = read_header(buf_.data() + at);
    if (h.length < kHeaderBytes) {
      why_ = "a message of length " + std::to_string(h.length) + " (below 8)";
      ok   = false;
      break;
    }
    if (buf_.size() - at < h.length) break;
    ok = message(buf_.data() + at, h.length, out);
    at += h.length;
  }
  buf_.erase(buf_.begin(), buf_.begin() + long(at));
  // Whatever changed is in the data path before the peer can observe it.
  if (Status s = sw_.publish(); !s.is_ok() && ok) {
    why_ = s.message();
    ok   = false;
  }
  return ok;
}

bool Session::message(const uint8_t* m, size_t len, std::vector<uint8_t>& out) {
  const Header h = read_header(m);
  auto err = [&](ErrorType t, uint16_t code) { append(out, error(h.xid, t, code, m, len)); };
  if (h.type == Type::kHello) {
    hello_received_ = true;
    if (h.version < kVersion) {
      append(out, error(h.xid, ErrorType::kHelloFailed, 0, m, len));
      why_ = "the peer speaks OpenFlow below 1.0 (version " + std::to_string(h.version) + ")";
      return false;
    }
    return true;  // version 1 is the highest both speak whatever the peer offered
  }
  if (h.version != kVersion) {
    err(ErrorType::kBadRequest, kBadVersion);
    return true;
  }
  auto reply = [&](Type t) { return Writer(t, h.xid); };
  switch (h.type) {
    case Type::kEchoRequest: {
      Writer w = reply(Type::kEchoReply);
      w.bytes(m + kHeaderBytes, len - kHeaderBytes);
      append(out, w.finish());
      break;
    }
    case Type::kEchoReply: break;
    case Type::kVendor: err(ErrorType::kBadRequest, kBadVendor); break;
    case Type::kFeaturesRequest: {
      Writer w = reply(Type::kFeaturesReply);
      w.u64(info_.datapath_id);
      w.u32(0);      // no buffers
      w.u8(1);       // one table
      w.zeros(3);
      w.u32(0x7);    // flow, table and port statistics
      w.u32(0xfff);  // every OpenFlow 1.0 action but vendor ones
      for (const PortInfo& p : info_.ports) write_port(w, p);
      append(out, w.finish());
      break;
    }
    case Type::kGetConfigRequest: {
      Writer w = reply(Type::kGetConfigReply);
      w.u16(config_flags_);
      w.u16(miss_send_len_);
      append(out, w.finish());
      break;
    }
    case Type::kSetConfig:
      if (len < 12) {
        err(ErrorType::kBadRequest, kBadLen);
        break;
      }
      config_flags_  = uint16_t(m[8] << 8 | m[9]);
      miss_send_len_ = uint16_t(m[10] << 8 | m[11]);
      configured_    = true;
      break;  // the agent tells the switch whether anyone listens (async())
    case Type::kBarrierRequest:
      if (Status s = sw_.publish(); !s.is_ok()) {
        why_ = s.message();
        return false;
      }
      append(out, reply(Type::kBarrierReply).finish());
      break;
    case Type::kFlowMod: {
      FlowMod fm;
      WireError we;
      if (!read_flow_mod(m, len, fm, we)) {
        err(we.type, we.code);
        break;
      }
      if (fm.buffer_id != 0xffffffffu) err(ErrorType::kBadRequest, kBufferUnknown);
      FlowModResult r = sw_.flow_mod(fm.command, fm.spec);
      if (!r.ok()) {
        err(ErrorType::kFlowModFailed, uint16_t(r.error));
        break;
      }
      for (RemovedFlow& f : r.removed)
        if (f.entry.spec.flags & kSendFlowRem) removed_.push_back(std::move(f));
      break;
    }
    case Type::kStatsRequest: stats(m, len, out); break;
    case Type::kQueueGetConfigRequest: {
      if (len < 12) {
        err(ErrorType::kBadRequest, kBadLen);
        break;
      }
      const uint16_t port = uint16_t(m[8] << 8 | m[9]);
      if (port == 0 || port > info_.ports.size()) {
        err(ErrorType::kQueueOpFailed, 0);  // BAD_PORT
        break;
      }
      Writer w = reply(Type::kQueueGetConfigReply);
      w.u16(port);
      w.zeros(6);
      append(out, w.finish());
      break;
    }
    case Type::kPacketOut: on_packet_out(m, len, out); break;
    case Type::kPortMod: on_port_mod(m, len, out); break;
    default: err(ErrorType::kBadRequest, kBadType); break;
  }
  return true;
}

// PACKET_OUT: the actions on the packet it carries (the switch buffers nothing).
void Session::on_packet_out(const uint8_t* m, size_t len, std::vector<uint8_t>& out) {
  const Header h = read_header(m);
  auto err = [&](ErrorType t, uint16_t code) { append(out, error(h.xid, t, code, m, len)); };
  if (len < 16) {
    err(ErrorType::kBadRequest, kBadLen);
    return;
  }
  Reader r(m + kHeaderBytes, len - kHeaderBytes);
  const uint32_t buffer    = r.u32();
  const uint16_t in_port   = r.u16();
  const uint16_t acts_len  = r.u16();
  std::vector<Action> acts;
  WireError we;
  if (!read_actions(r, acts_len, acts, we, true)) {
    err(we.type, we.code);
    return;
  }
  if (buffer != 0xffffffffu) {
    err(ErrorType::kBadRequest, kBufferUnknown);  // the switch buffers nothing
    return;
  }
  const std::vector<uint8_t> data(m + kHeaderBytes + 8 + acts_len, m + len);
  if (data.size() < 14 || (in_port > info_.ports.size() && in_port != kPortController &&
                           in_port != kPortNone && in_port != kPortLocal)) {
    err(ErrorType::kBadRequest, kBadEperm);
    return;
  }
  if (Status s = sw_.packet_out(in_port, acts, data); !s.is_ok())
    err(ErrorType::kBadRequest, s.code() == Errc::kCapacity ? uint16_t(kBufferEmpty) : uint16_t(kBadEperm));
}

// PORT_MOD: a port's config bits (no spanning tree), then a PORT_STATUS for the listeners.
void Session::on_port_mod(const uint8_t* m, size_t len, std::vector<uint8_t>& out) {
  const Header h = read_header(m);
  auto err = [&](ErrorType t, uint16_t code) { append(out, error(h.xid, t, code, m, len)); };
  if (len < 32) {
    err(ErrorType::kBadRequest, kBadLen);
    return;
  }
  Reader r(m + kHeaderBytes, len - kHeaderBytes);
  const uint16_t port  = r.u16();
  const uint8_t* mac   = r.take(6);
  const uint32_t config = r.u32(), mask = r.u32();
  if (port == 0 || port > info_.ports.size()) {
    err(ErrorType::kPortModFailed, 0);  // BAD_PORT
    return;
  }
  if (std::memcmp(mac, info_.ports[port - 1].mac.data(), 6) != 0) {
    err(ErrorType::kPortModFailed, 1);  // BAD_HW_ADDR
    return;
  }
  if (mask & ~kPortConfigAll) {  // STP bits: the switch has no spanning tree
    err(ErrorType::kBadRequest, kBadEperm);
    return;
  }
  if (!sw_.port_mod(port, config, mask).is_ok()) {
    err(ErrorType::kPortModFailed, 0);
    return;
  }
  Writer st(Type::kPortStatus, 0);
  st.u8(2);  // OFPPR_MODIFY
  st.zeros(7);
  write_port(st, info_.ports[port - 1]);
  port_status_.push_back(st.finish());
}

void Session::stats(const uint8_t* m, size_t len, std::vector<uint8_t>& out) {
  const Header h = read_header(m);
  auto err = [&](ErrorType t, uint16_t code) { append(out, error(h.xid, t, code, m, len)); };
  if (len < 12) return err(ErrorType::kBadRequest, kBadLen);
  const auto type = StatsType(uint16_t(m[8] << 8 | m[9]));
  Reader body(m + 12, len - 12);
  auto start = [&]() {
    Writer w(Type::kStatsReply, h.xid);
    w.u16(uint16_t(type));
    w.u16(0);
    return w;
  };
  switch (type) {
    case StatsType::kDesc: {
      Writer w = start();
      w.text("warpath", 256);
      w.text("software switch (PacketShader-style OpenFlow 1.0)", 256);
      w.text(info_.software, 256);
      w.text("none", 32);
      w.text("warpath switch", 256);
      return append(out, w.finish());
    }
    case StatsType::kFlow:
    case StatsType::kAggregate: {
      if (!body.has(44)) return err(ErrorType::kBadRequest, kBadLen);
      const Match filter     = read_match(body);
      const uint8_t table    = body.u8();
      body.skip(1);
      const uint16_t out_port = body.u16();
      if (Status s = sw_.publish(); !s.is_ok()) return err(ErrorType::kBadRequest, kBadEperm);
      std::vector<FlowEntry> flows;
      if (table == 0 || table == 0xff) flows = sw_.flows(filter, out_port);
      const uint64_t now = sw_.now_ns();
      if (type == StatsType::kAggregate) {
        uint64_t packets = 0, bytes = 0;
        for (const FlowEntry& e : flows) packets += e.packets, bytes += e.bytes;
        Writer w = start();
        w.u64(packets);
        w.u64(bytes);
        w.u32(uint32_t(flows.size()));
        w.zeros(4);
        return append(out, w.finish());
      }
      Writer w = start();
      for (const FlowEntry& e : flows) {
        if (w.size() + 88 + 16 * e.spec.actions.size() > kMaxReply) {
          std::vector<uint8_t> part = w.finish();
          part[10] = 0;
          part[11] = kReplyMore;
          append(out, part);
          w = start();
        }
        write_flow_stats(w, e, e.packets, e.bytes, now);
      }
      return append(out, w.finish());
    }
    case StatsType::kTable: {
      const TableStats t = sw_.table_stats();
      Writer w           = start();
      w.u8(0);
      w.zeros(3);
      w.text("classifier", 32);
      w.u32(kWcAll);
      w.u32(t.max_entries);
      w.u32(t.active);
      w.u64(t.lookups);
      w.u64(t.matched);
      return append(out, w.finish());
    }
    case StatsType::kPort: {
      if (!body.has(8)) return err(ErrorType::kBadRequest, kBadLen);
      const uint16_t want = body.u16();
      Writer w            = start();
      for (const PortCounters& c : info_.port_counters ? info_.port_counters() : std::vector<PortCounters>{}) {
        if (want != kPortNone && want != c.port_no) continue;
        w.u16(c.port_no);
        w.zeros(6);
        for (uint64_t v : {c.rx_packets, c.tx_packets, c.rx_bytes, c.tx_bytes, c.rx_dropped,
                           uint64_t(0), uint64_t(0), c.tx_errors})
          w.u64(v);
        for (int k = 0; k < 4; ++k) w.u64(0);  // frame, over, crc errors, collisions
      }
      return append(out, w.finish());
    }
    case StatsType::kQueue: return append(out, start().finish());  // no queues
    case StatsType::kVendor: return err(ErrorType::kBadRequest, kBadVendor);
    default: return err(ErrorType::kBadRequest, kBadStat);
  }
}

}  // namespace warpath::openflow
