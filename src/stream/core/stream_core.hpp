// src/stream/core/stream_core.hpp
//
// The per-byte overlap rule and sequence arithmetic of TCP reassembly, shared by every engine
// (host and device): include/warpath/stream/stream.hpp has the semantics.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::stream::core {

/// Does a new segment [ns, ne) overwrite a byte stored by the segment [os, oe) (ends
/// exclusive, stream offsets)? Novak and Sturges' target policies.
WARPATH_HD bool new_wins(Policy p, uint64_t ns, uint64_t ne, uint64_t os, uint64_t oe) {
  switch (p) {
    case Policy::kLast: return true;
    case Policy::kBsd: return ns < os;
    case Policy::kLinux: return ns < os || (ns == os && ne > oe);
    case Policy::kOldLinux: return ns < os || (ns == os && ne >= oe);
    case Policy::kSolaris: return ne > oe || (ne == oe && ns <= os);
    default: return false;  // first, vista, windows
  }
}

/// a < b in sequence space (RFC 793 / 1982 arithmetic).
WARPATH_HD bool seq_lt(uint32_t a, uint32_t b) { return int32_t(a - b) < 0; }

/// The stream offset of sequence number `seq` in a direction whose first data byte has
/// sequence number `first` (ISN + 1), given a known offset `near` whose sequence number is
/// first + near (mod 2^32): the offset within 2^31 of `near`. Negative when before the stream.
WARPATH_HD int64_t offset_of(uint32_t seq, uint32_t first, uint64_t near) {
  const uint32_t near_seq = uint32_t(first + uint32_t(near));
  return int64_t(near) + int64_t(int32_t(seq - near_seq));
}

}  // namespace warpath::stream::core
