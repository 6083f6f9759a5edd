// tools/warpath/capture_progress.hpp: the one-line progress display of the commands that read a
// capture (reassemble, flows, nids): packets and bytes read so far, the time and the rate, and
// the command's own counts, rewritten on stderr at most twice a second, on a terminal or when
// asked (--progress), and cleared before the summary. The first batch shows it at once.
#pragma once
#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "warpath/packet/batch.hpp"

namespace warpath::cli {

class CaptureProgress {
 public:
  /// `force`: show it even when stderr is not a terminal (--progress).
  explicit CaptureProgress(bool force)
      : on_(force || isatty(STDERR_FILENO)), start_(Clock::now()), last_(start_ - kEvery) {}
  CaptureProgress(const CaptureProgress&)            = delete;
  CaptureProgress& operator=(const CaptureProgress&) = delete;
  ~CaptureProgress() { clear(); }

  /// Counts a batch read; shows the line if half a second has passed since the last, with
  /// `counts()` (a string: ", 12 streams") after the packets, bytes, time and rate.
  template <class Counts>
  void batch(const packet::PacketBatch& b, Counts counts) {
    if (!on_) return;  // nothing counted that nobody sees
    packets_ += b.size();
    for (uint32_t i = 0; i < b.size(); ++i) bytes_ += b.meta(i).len;
    const Clock::time_point now = Clock::now();
    if (now - last_ < kEvery) return;
    last_            = now;
    const double s   = std::chrono::duration<double>(now - start_).count();
    const std::string tail = counts();
    const int width  = std::fprintf(stderr, "\r%llu packets, %.1f MB in %.1f s (%.0f MB/s)%s",
                                    (unsigned long long)packets_, double(bytes_) / 1e6, s,
                                    s > 0 ? double(bytes_) / 1e6 / s : 0.0, tail.c_str());
    if (width > 1 && width - 1 < shown_)  // a shorter line than the last: blank the rest
      std::fprintf(stderr, "%*s", shown_ - (width - 1), "");
    if (width > shown_ + 1) shown_ = width - 1;
    std::fflush(stderr);
  }
  /// Blanks the line (before a summary or an error); a no-op when none was shown.
  void clear() {
    if (shown_ == 0) return;
    std::fprintf(stderr, "\r%*s\r", shown_, "");
    std::fflush(stderr);
    shown_ = 0;
  }
 private:
  using Clock                                    = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kEvery{500};
  bool on_;
  Clock::time_point start_, last_;
  uint64_t packets_ = 0, bytes_ = 0;
  int shown_        = 0;  ///< columns of the longest line shown since the last clear
};

}  // namespace warpath::cli
