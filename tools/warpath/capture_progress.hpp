// tools/warpath/capture_progress.hpp: the one-line progress display of the commands that read a
// capture (reassemble, flows, nids): packets and bytes read so far, the time and the rate, and
// the command's own counts, rewritten on stderr at most twice a second, on a terminal or when
// asked (--progress), and cleared before the summary. The first batch shows it at once.
#pragma once
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <string>

#include "warpath/packet/batch.hpp"

namespace warpath::cli {

class CaptureProgress {
 public:
  /// `on`: show it (commands pass `--progress || isatty(STDERR_FILENO)`, or less where their
  /// own output shares the terminal).
  explicit CaptureProgress(bool on)
      : on_(on), start_(Clock::now()), last_(start_ - kEvery), columns_(terminal_columns()) {}
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
    last_                  = now;
    const double s         = std::chrono::duration<double>(now - start_).count();
    const std::string tail = counts();
    char line[256];
    int width = std::snprintf(line, sizeof line, "%llu packets, %.1f MB in %.1f s (%.0f MB/s)%s",
                              (unsigned long long)packets_, double(bytes_) / 1e6, s,
                              s > 0 ? double(bytes_) / 1e6 / s : 0.0, tail.c_str());
    // Within the terminal's width, less one column: a line that wraps is not rewritten by \r.
    width = std::clamp(width, 0, std::min(int(sizeof line) - 1, columns_ > 1 ? columns_ - 1 : 255));
    std::fprintf(stderr, "\r%.*s", width, line);
    if (width < shown_)  // a shorter line than the last: blank the rest
      std::fprintf(stderr, "%*s", shown_ - width, "");
    shown_ = std::max(shown_, width);
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
  // Columns of the terminal on stderr; 0 when it is not one (or does not say).
  static int terminal_columns() {
    winsize w{};
    return ::ioctl(STDERR_FILENO, TIOCGWINSZ, &w) == 0 ? int(w.ws_col) : 0;
  }
  using Clock = std::chrono::steady_clock;
  static constexpr std::chrono::milliseconds kEvery{500};
  bool on_;
  Clock::time_point start_, last_;
  uint64_t packets_ = 0, bytes_ = 0;
  int columns_;
  int shown_ = 0;  ///< columns of the longest line shown since the last clear
};

}  // namespace warpath::cli
