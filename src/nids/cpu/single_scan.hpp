// src/nids/cpu/single_scan.hpp: cpu.nids's one prefilter scan per TCP payload (issue 66).
//
// A TCP packet whose payload goes to its stream is a unit twice: as a packet (the packet rules'
// group, kind 1) when it arrives, and as new stream bytes (the stream group, kind 2) when the
// reassembler delivers them. Scanned for each, its payload costs two Vectorscan calls (a call's
// fixed cost is most of a short payload's scan). Here the two groups' fast patterns are one
// streaming database (`SingleScanDb`: the packet group's patterns first, then the stream
// group's), and a direction's payloads are written to it once, in the order they arrive:
//   - a packet rule is a candidate of the packet when one of its fast pattern's occurrences lies
//     within the payload (it ends in this write and starts at or after the payload's first
//     byte): exactly what a block scan of the payload finds;
//   - a stream rule's occurrences are kept with their ends (direction offsets) until the bytes
//     they end in are delivered, and are armed then, as a streaming scan of the delivered bytes
//     would arm them.
// That holds only while the bytes delivered to the direction are the bytes that arrived, in
// the same order. So the payloads are kept (`pending`) until delivered, and each stream unit's
// new bytes are compared with them; on the first difference (a retransmission or a reordered
// segment in the arrivals, an overlap the receiver's policy resolved differently, bytes the
// inspector skipped: depth, memcap, a gap's bytes) the direction leaves the single scan for
// good and is scanned twice from then on (its stream database restarts at the buffer's first
// byte). So does a direction whose databases change (its application protocol is found, which
// brings rules in or out): a stream started there would miss an occurrence spanning the
// change. A direction starts only at its first byte, and not where the stream will not inspect
// the bytes (past its depth: Unit::stream_inspects). Bounded: kMaxPendingDir bytes a direction
// and kMaxPendingAll a detector kept; past them the direction leaves too.
#pragma once
#include <cstdint>
#include <cstring>
#include <memory>
#include <vector>

#include "nids/cpu/rule_groups.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::nids::detail {

/// One direction's packet and stream fast patterns in one streaming database.
struct SingleScanDb {
  std::unique_ptr<pattern::Matcher> matcher;  ///< this detector's clone
  std::vector<uint32_t> rule;                 ///< pattern id -> rule (packet group's ids first)
  std::vector<uint32_t> len;                  ///< pattern id -> its literal's length
  uint32_t packet_ids   = 0;                  ///< ids below are the packet group's
  const void* packet_db = nullptr;  ///< what the two sides' databases were (identity only)
  const void* stream_db = nullptr;
};

/// A direction's single-scan state.
struct SingleScan {
  static constexpr size_t kMaxPendingDir = size_t(1) << 20;
  static constexpr size_t kMaxPendingAll = size_t(32) << 20;
  enum class State : uint8_t { kUnused, kOn, kOff };
  State state            = State::kUnused;
  const SingleScanDb* db = nullptr;
  std::unique_ptr<pattern::Stream> stream;
  std::vector<uint8_t> pending;  ///< arrived bytes not yet delivered, from `head`
  size_t head      = 0;
  uint64_t arrived = 0;      ///< direction offset past the last arrived byte
  std::vector<Found> found;  ///< stream rules found, ends in direction offsets, not yet armed

  size_t held() const { return pending.size() - head; }
  /// Leaves the single scan: what it kept is freed (`*kept` is the detector's total).
  void leave(size_t* kept) {
    *kept -= held();
    state = State::kOff;
    stream.reset();
    std::vector<uint8_t>().swap(pending);
    std::vector<Found>().swap(found);
    head = 0;
  }
  /// Keeps an arrived payload; false when the bounds do not allow it.
  bool keep(const uint8_t* data, uint32_t len, size_t* kept) {
    if (held() + len > kMaxPendingDir || *kept + len > kMaxPendingAll) return false;
    if (head && head >= pending.size() / 2) {  // the delivered front goes, now and then
      pending.erase(pending.begin(), pending.begin() + ptrdiff_t(head));
      head = 0;
    }
    pending.insert(pending.end(), data, data + len);
    arrived += len;
    *kept += len;
    return true;
  }
  /// Are `len` delivered bytes at direction offset `at` the next ones that arrived? If so they
  /// are consumed.
  bool deliver(const uint8_t* data, uint32_t len, uint64_t at, size_t* kept) {
    if (at != arrived - held() || len > held() || std::memcmp(pending.data() + head, data, len))
      return false;
    head += len;
    *kept -= len;
    return true;
  }
};

}  // namespace warpath::nids::detail
