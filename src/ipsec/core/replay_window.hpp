// src/ipsec/core/replay_window.hpp: the anti-replay window of RFC 4303 section 3.4.3 and
// appendix A, with extended sequence numbers (ESN): the receiver infers the high 32 bits from
// its window (appendix A2.2, cases A and B), checks before the ICV and updates only after the
// ICV verified. The caller holds the SA's lock (SaState::lock) around both.
//
//   window  the number of packets tracked behind the highest authenticated one (`top`); 0 is
//           no anti-replay (only the ESN inference, which needs window >= 1 and is refused
//           without at load, as the kernel does)
//   bitmap  bit k of word k/64: sequence number top - k was seen (bit 0 is top itself)
#pragma once
#include <cstdint>
#include <vector>

namespace warpath::ipsec::core {

/// The full 64-bit sequence number of a received low half (RFC 4303 A2.2). Without ESN the
/// high half is 0.
inline uint64_t infer_seq(uint64_t top, uint32_t window, bool esn, uint32_t seq_lo) {
  if (!esn) return seq_lo;
  const uint32_t tl = uint32_t(top), th = uint32_t(top >> 32);
  const uint32_t w  = window ? window : 1;
  uint32_t seq_hi;
  if (tl >= w - 1)  // case A: the window lies within one 2^32 subspace
    seq_hi = seq_lo >= tl - w + 1 ? th : th + 1;
  else  // case B: the window spans two subspaces
    seq_hi = seq_lo >= tl - w + 1 ? th - 1 : th;  // (tl - w + 1 wraps modulo 2^32)
  return uint64_t(seq_hi) << 32 | seq_lo;
}

enum class ReplayCheck : uint8_t { kOk, kReplay, kTooOld, kZero };

/// Before the ICV: may `seq` be accepted?
inline ReplayCheck replay_check(uint64_t top, const std::vector<uint64_t>& bitmap,
                                uint32_t window, uint64_t seq) {
  if (seq == 0) return ReplayCheck::kZero;  // the first packet carries 1 (RFC 4303 2.2)
  if (window == 0 || seq > top) return ReplayCheck::kOk;
  const uint64_t behind = top - seq;
  if (behind >= window) return ReplayCheck::kTooOld;
  return (bitmap[behind / 64] >> (behind % 64) & 1) ? ReplayCheck::kReplay : ReplayCheck::kOk;
}

/// After the ICV verified: records `seq` (which replay_check accepted under the same lock).
inline void replay_update(uint64_t& top, std::vector<uint64_t>& bitmap, uint32_t window,
                          uint64_t seq) {
  if (window == 0) {
    if (seq > top) top = seq;
    return;
  }
  const size_t words = bitmap.size();
  if (seq > top) {
    const uint64_t shift = seq - top;
    if (shift >= uint64_t(words) * 64) {
      for (auto& w : bitmap) w = 0;
    } else {
      const size_t ws = size_t(shift / 64), bs = size_t(shift % 64);
      for (size_t k = words; k-- > 0;) {
        uint64_t v = 0;
        if (k >= ws) {
          v = bitmap[k - ws] << bs;
          if (bs && k >= ws + 1) v |= bitmap[k - ws - 1] >> (64 - bs);
        }
        bitmap[k] = v;
      }
    }
    bitmap[0] |= 1;
    top = seq;
    return;
  }
  const uint64_t behind = top - seq;
  bitmap[behind / 64] |= uint64_t(1) << (behind % 64);
}

}  // namespace warpath::ipsec::core
