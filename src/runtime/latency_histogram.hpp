// src/runtime/latency_histogram.hpp
//
// Per-packet latency histogram: log-linear buckets (HdrHistogram's idea, two significant
// digits): values below 64 ns are exact, above that each power of two is split into 32 linear
// sub-buckets, so any percentile is within 1/32 (3%) of the true value. Fixed size (no
// allocation while recording), one per worker, merged at the end.
#pragma once
#include <array>
#include <bit>
#include <cstdint>

namespace warpath::runtime {

class LatencyHistogram {
 public:
  static constexpr unsigned kSubBits = 5;  // 32 sub-buckets per power of two
  static constexpr unsigned kSub     = 1u << kSubBits;
  static constexpr unsigned kBuckets = (64 - kSubBits) * kSub + 2 * kSub;

  void record(uint64_t ns, uint64_t n = 1) noexcept {
    counts_[index(ns)] += n;
    count_ += n;
    sum_ += ns * n;
    if (ns > max_) max_ = ns;
  }
  void merge(const LatencyHistogram& o) noexcept {
    for (unsigned i = 0; i < kBuckets; ++i) counts_[i] += o.counts_[i];
    count_ += o.count_;
    sum_ += o.sum_;
    if (o.max_ > max_) max_ = o.max_;
  }
  uint64_t count() const noexcept { return count_; }
  uint64_t max() const noexcept { return max_; }
  double mean() const noexcept { return count_ ? double(sum_) / double(count_) : 0.0; }
  /// The value at quantile q (0..1): the upper edge of the bucket holding it, capped at max.
  uint64_t quantile(double q) const noexcept {
    if (!count_) return 0;
    const auto want = uint64_t(q * double(count_ - 1)) + 1;
    uint64_t seen   = 0;
    for (unsigned i = 0; i < kBuckets; ++i) {
      seen += counts_[i];
      if (seen >= want) {
        const uint64_t edge = upper(i);
        return edge < max_ ? edge : max_;
      }
    }
    return max_;
  }

 private:
  static unsigned index(uint64_t v) noexcept {
    if (v < 2 * kSub) return unsigned(v);
    const unsigned msb = 63u - unsigned(std::countl_zero(v));  // >= kSubBits + 1
    const unsigned sh  = msb - kSubBits;
    return (sh + 1) * kSub + unsigned((v >> sh) & (kSub - 1));
  }
  static uint64_t upper(unsigned i) noexcept {
    if (i < 2 * kSub) return i;
    const unsigned sh = i / kSub - 1;
    const uint64_t lo = (uint64_t(kSub) | (i & (kSub - 1))) << sh;
    return lo + ((uint64_t(1) << sh) - 1);
  }
  std::array<uint64_t, kBuckets> counts_{};
  uint64_t count_ = 0, sum_ = 0, max_ = 0;
};

}  // namespace warpath::runtime
