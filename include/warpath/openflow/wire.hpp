// include/warpath/openflow/wire.hpp
//
// OpenFlow 1.0 on the wire (the OpenFlow Switch Specification 1.0.0, `openflow-1.0.h`): the
// message header, ofp_match, action lists, and the bodies the switch sends. Decoders check every
// length against the bytes they are given and say what is wrong (the agent answers with the
// specification's error); encoders append to a byte vector. Byte order is network order.
// `ovs-ofctl ofp-print HEX` decodes what these encoders write (the tests use it as the oracle).
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/openflow/flow.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow::wire {

inline constexpr uint8_t kVersion = 0x01;

enum class Type : uint8_t {
  kHello = 0, kError, kEchoRequest, kEchoReply, kVendor, kFeaturesRequest, kFeaturesReply,
  kGetConfigRequest, kGetConfigReply, kSetConfig, kPacketIn, kFlowRemoved, kPortStatus,
  kPacketOut, kFlowMod, kPortMod, kStatsRequest, kStatsReply, kBarrierRequest, kBarrierReply,
  kQueueGetConfigRequest, kQueueGetConfigReply,
};

enum class StatsType : uint16_t { kDesc = 0, kFlow, kAggregate, kTable, kPort, kQueue, kVendor = 0xffff };

// ofp_error_type and the codes the switch sends.
enum class ErrorType : uint16_t {
  kHelloFailed = 0, kBadRequest, kBadAction, kFlowModFailed, kPortModFailed, kQueueOpFailed,
};
enum BadRequest : uint16_t {
  kBadVersion = 0, kBadType, kBadStat, kBadVendor, kBadSubtype, kBadEperm, kBadLen,
  kBufferEmpty, kBufferUnknown,
};
enum BadActionCode : uint16_t {
  kBadActionType = 0, kBadActionLen, kBadActionVendor, kBadActionVendorType, kBadOutPort,
  kBadArgument, kBadActionEperm, kTooMany, kBadQueue,
};

inline constexpr size_t kHeaderBytes = 8;
inline constexpr size_t kMatchBytes  = 40;

struct Header {
  uint8_t version = kVersion;
  Type type       = Type::kHello;
  uint16_t length = kHeaderBytes;
  uint32_t xid    = 0;
};

/// The header of `bytes` (at least 8 of them).
Header read_header(const uint8_t* bytes);
/// A message: header (length filled in by finish()) then body appended by the caller.
class Writer {
 public:
  Writer(Type type, uint32_t xid);
  void u8(uint8_t v) { b_.push_back(v); }
  void u16(uint16_t v);
  void u32(uint32_t v);
  void u64(uint64_t v);
  void bytes(const uint8_t* p, size_t n) { b_.insert(b_.end(), p, p + n); }
  void zeros(size_t n) { b_.insert(b_.end(), n, 0); }
  /// A fixed-size, NUL-padded text field.
  void text(const std::string& s, size_t n);
  void match(const Match& m);
  void actions(const std::vector<Action>& a);
  size_t size() const noexcept { return b_.size(); }
  /// Sets the length; the finished message.
  std::vector<uint8_t> finish();
  std::vector<uint8_t>& raw() noexcept { return b_; }

 private:
  std::vector<uint8_t> b_;
};

/// A decoding failure: the error the specification says to answer with.
struct WireError {
  ErrorType type;
  uint16_t code;
  std::string why;
};

/// Reads big-endian fields out of a body with bounds checks.
class Reader {
 public:
  Reader(const uint8_t* p, size_t n) : p_(p), n_(n) {}
  bool has(size_t k) const noexcept { return n_ - at_ >= k; }
  size_t left() const noexcept { return n_ - at_; }
  uint8_t u8() { return p_[at_++]; }
  uint16_t u16();
  uint32_t u32();
  uint64_t u64();
  const uint8_t* take(size_t k) {
    const uint8_t* q = p_ + at_;
    at_ += k;
    return q;
  }
  void skip(size_t k) { at_ += k; }

 private:
  const uint8_t* p_;
  size_t n_, at_ = 0;
};

/// ofp_match (40 bytes) -> Match, normalised (wildcard counts above 32 read as 32).
Match read_match(Reader& r);
/// An action list of `bytes` bytes; kBadAction errors for unknown types, bad lengths, output to
/// port 0 or OFPP_TABLE outside packet_out, VLAN ids above 4095, TOS with ECN bits.
bool read_actions(Reader& r, size_t bytes, std::vector<Action>& out, WireError& err,
                  bool packet_out = false);

/// A decoded flow_mod.
struct FlowMod {
  FlowModCommand command = FlowModCommand::kAdd;
  FlowSpec spec;
  uint32_t buffer_id = 0xffffffffu;
};
bool read_flow_mod(const uint8_t* msg, size_t len, FlowMod& out, WireError& err);

/// One ofp_flow_stats entry (88 bytes + actions) for `e`, aged `now_ns - created`.
void write_flow_stats(Writer& w, const FlowEntry& e, uint64_t packets, uint64_t bytes, uint64_t now_ns);
/// OFPT_FLOW_REMOVED for `f`.
std::vector<uint8_t> flow_removed(const RemovedFlow& f, uint64_t now_ns);
/// OFPT_ERROR quoting the first 64 bytes of the offending message.
std::vector<uint8_t> error(uint32_t xid, ErrorType type, uint16_t code, const uint8_t* msg,
                           size_t len);

}  // namespace warpath::openflow::wire
