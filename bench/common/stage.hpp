// bench/common/stage.hpp: how an anchor gets its input in the benchmarks that feed frames (or
// payloads) from one large buffer built before timing. warpath's rows copy 256 frames at a
// time into a reused batch and leave that copy out of their time (what a port's RX does), so
// they read frames a copy has just written. An anchor that read each frame from the large
// buffer inside its timed region would pay for cold memory that warpath's rows do not (in the
// stream bench that was about a fifth of libnids' time on 1,448-byte segments). Stage gives
// anchors the same: 256 pieces at a time copied into a reused buffer, the copy timed apart by
// the caller and left out.
#pragma once
#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

namespace warpath::bench {

struct Stage {
  static constexpr uint32_t kCount = 256;   ///< pieces a fill copies, as warpath's batches
  static constexpr uint32_t kSlot  = 2048;  ///< bytes kept of each (frames are at most 1,518)
  std::vector<uint8_t> bytes       = std::vector<uint8_t>(size_t(kCount) * kSlot);
  uint8_t* ptr[kCount];
  uint32_t len[kCount];

  /// Pieces [next, next + 256) of `count`, piece i being `at(i)` = {pointer, length}; returns
  /// how many it copied and moves `next` past them.
  template <class At>
  uint32_t fill(size_t count, size_t& next, At&& at) {
    uint32_t n = 0;
    for (; n < kCount && next < count; ++n, ++next) {
      const auto [p, l] = at(next);
      ptr[n]            = bytes.data() + size_t(n) * kSlot;
      len[n]            = std::min<uint32_t>(uint32_t(l), kSlot);
      std::memcpy(ptr[n], p, len[n]);
    }
    return n;
  }
};

}  // namespace warpath::bench
