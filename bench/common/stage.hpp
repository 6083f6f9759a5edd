// bench/common/stage.hpp: how an anchor gets its input in the benchmarks that feed frames (or
// payloads) from one large buffer built before timing. warpath's rows copy 256 frames at a
// time into a reused batch and leave that copy out of their time (what a port's RX does), so
// they read frames a copy has just written. An anchor that read each frame from the large
// buffer inside its timed region would pay for cold memory that warpath's rows do not (in the
// stream bench that was about a quarter of libnids' time on 1,448-byte segments). Stage gives
// anchors the same: 256 pieces at a time copied into a reused buffer, the copy timed apart and
// left out (each_fill).
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstring>
#include <vector>

namespace warpath::bench {

struct Stage {
  static constexpr uint32_t kCount = 256;  ///< pieces a fill copies, as warpath's batches

  /// Room for pieces of up to `max_len` bytes (the largest the caller will give: fill never
  /// cuts one), in slots of at least 2,048 bytes as warpath's batch cells.
  explicit Stage(size_t max_len)
      : slot((std::max<size_t>(max_len, 2048) + 63) / 64 * 64), bytes(kCount * slot) {}

  /// The largest piece of `count`, piece i's length being `len(i)`.
  template <class Len>
  static size_t largest(size_t count, Len&& len) {
    size_t m = 0;
    for (size_t i = 0; i < count; ++i) m = std::max<size_t>(m, len(i));
    return m;
  }

  size_t slot;
  std::vector<uint8_t> bytes;
  uint8_t* ptr[kCount];
  uint32_t len[kCount];

  /// Pieces [next, next + 256) of `count`, piece i being `at(i)` = {pointer, length} of at most
  /// the constructor's max_len bytes; returns how many it copied and moves `next` past them.
  template <class At>
  uint32_t fill(size_t count, size_t& next, At&& at) {
    uint32_t n = 0;
    for (; n < kCount && next < count; ++n, ++next) {
      const auto [p, l] = at(next);
      ptr[n]            = bytes.data() + size_t(n) * slot;
      len[n]            = uint32_t(std::min<size_t>(l, slot));  // == l for the promised sizes
      std::memcpy(ptr[n], p, len[n]);
    }
    return n;
  }

  /// Every fill of pieces [0, count) in turn, each followed by work(n, first) over ptr/len
  /// [0, n) (pieces first .. first + n - 1), until work returns false; returns the seconds the
  /// fills took, for the caller to leave out of its time.
  template <class At, class Work>
  double each_fill(size_t count, At&& at, Work&& work) {
    using Clock = std::chrono::steady_clock;
    Clock::duration filling{};
    for (size_t next = 0; next < count;) {
      const size_t first = next;
      const auto t0      = Clock::now();
      const uint32_t n   = fill(count, next, at);
      filling += Clock::now() - t0;
      if (!work(n, first)) break;
    }
    return std::chrono::duration<double>(filling).count();
  }
};

}  // namespace warpath::bench
