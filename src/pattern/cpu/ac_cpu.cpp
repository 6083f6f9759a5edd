// cpu.ac: Aho-Corasick literal matching on the CPU (core/ac_core.hpp is the body). A large block
// is cut into kLanes slices stepped in lockstep, so the table loads of independent slices
// overlap (G-Opt's latency hiding, without prefetch: the next state is the address).
#include <algorithm>

#include "pattern/ac_image.hpp"
#include "pattern/engines.hpp"
#include "pattern/matches.hpp"

namespace warpath::pattern::detail {
namespace {

constexpr unsigned kLanes         = 4;
constexpr uint64_t kMinLaneBytes  = 4096;

class AcCpuMatcher;

class AcCpuStream final : public Stream {
 public:
  explicit AcCpuStream(const AcImage& img) : img_(img), view_(img.view()) {}
  Status write(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    const uint64_t base = offset_;
    const std::string& h = history_;
    auto at = [&](uint64_t pos) -> uint8_t {
      return pos >= base ? data[pos - base] : uint8_t(h[h.size() - (base - pos)]);
    };
    state_ = core::ac_scan(view_, state_, data, 0, len, base, 0, at,
                           [&](uint32_t id, uint64_t end) { out.push_back({id, end}); });
    sort_unique(out, from);
    keep_first_of(img_.single_match, out, from, reported_);
    offset_ += len;
    // Keep the last max_len - 1 bytes to confirm case-sensitive literals that straddle writes.
    const size_t keep = img_.max_len - 1;
    if (len >= keep) {
      history_.assign(reinterpret_cast<const char*>(data) + (len - keep), keep);
    } else {
      history_.append(reinterpret_cast<const char*>(data), len);
      if (history_.size() > keep) history_.erase(0, history_.size() - keep);
    }
    return Status::ok();
  }
  Status close(std::vector<Match>&) override { return Status::ok(); }
  size_t state_bytes() const override { return sizeof *this + history_.capacity(); }

 private:
  const AcImage& img_;
  core::AcView view_;
  uint32_t state_ = 0;
  uint64_t offset_ = 0;
  std::string history_;
  std::vector<uint32_t> reported_;
};

class AcCpuMatcher final : public Matcher {
 public:
  AcCpuMatcher(AcImage img, size_t n, bool full) : img_(std::move(img)), patterns_(n), full_(full) {}
  std::string_view id() const noexcept override { return full_ ? "cpu.ac.full" : "cpu.ac"; }
  size_t patterns() const override { return patterns_; }
  size_t database_bytes() const override { return img_.bytes(); }

  Status scan(const uint8_t* data, size_t len, std::vector<Match>& out) override {
    const size_t from = out.size();
    const core::AcView v = img_.view();
    auto at   = [data](uint64_t pos) { return data[pos]; };
    auto emit = [&out](uint32_t id, uint64_t end) { out.push_back({id, end}); };
    if (len < kLanes * kMinLaneBytes) {
      core::ac_scan(v, 0, data, 0, len, 0, 0, at, emit);
    } else {
      // Lane l reports ends in (start[l], stop[l]] and warms up over the max_len - 1 bytes
      // before start[l].
      uint64_t pos[kLanes], stop[kLanes], start[kLanes];
      uint32_t state[kLanes] = {};
      const uint64_t slice = len / kLanes;
      for (unsigned l = 0; l < kLanes; ++l) {
        start[l] = l * slice;
        stop[l]  = l + 1 == kLanes ? len : (l + 1) * slice;
        pos[l]   = start[l] >= v.max_len - 1 ? start[l] - (v.max_len - 1) : 0;
      }
      // Lockstep while every lane has bytes left (the last lane is the longest).
      uint64_t common = stop[0] - pos[0];
      for (unsigned l = 1; l < kLanes; ++l) common = std::min(common, stop[l] - pos[l]);
      for (uint64_t k = 0; k < common; ++k) {
        for (unsigned l = 0; l < kLanes; ++l) {
          const uint64_t i = pos[l] + k;
          state[l] = core::ac_step(v, state[l], data[i]);
          if ((state[l] & core::kMatchBit) && i + 1 > start[l]) core::ac_report(v, state[l], i + 1, at, emit);
        }
      }
      for (unsigned l = 0; l < kLanes; ++l)
        core::ac_scan(v, state[l], data, pos[l] + common, stop[l], 0, start[l], at, emit);
    }
    sort_unique(out, from);
    std::vector<uint32_t> reported;
    keep_first_of(img_.single_match, out, from, reported);
    return Status::ok();
  }

  Result<std::unique_ptr<Stream>> open_stream() override {
    return std::unique_ptr<Stream>(std::make_unique<AcCpuStream>(img_));
  }
  const AcImage& image() const { return img_; }

 private:
  AcImage img_;
  size_t patterns_;
  bool full_;
};

}  // namespace

const AcImage& ac_image_of(const Matcher& cpu_ac) {
  return dynamic_cast<const AcCpuMatcher&>(cpu_ac).image();
}

Result<std::unique_ptr<Matcher>> make_ac_cpu_matcher(const std::vector<Pattern>& patterns, bool full) {
  auto img = build_ac_image(patterns, full ? kAcAllDense : kAcDenseDepth);
  if (!img.is_ok()) return img.status();
  return std::unique_ptr<Matcher>(std::make_unique<AcCpuMatcher>(std::move(*img), patterns.size(), full));
}

}  // namespace warpath::pattern::detail
