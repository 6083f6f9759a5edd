// cpu.linear: GSwitch linear search (section 4.1) as a vectorised scan over the SoA rule blocks
// of core/linear_core.hpp, rules in (priority desc, index asc) order so that a key stops at its
// first match.
//
// Paths (picked once per engine from cpu_features(); the build itself targets baseline x86-64)
//   avx512    one block = one zmm per field, loaded once for a group of 8 keys whose words
//             are {1to16} broadcast operands. Per key and block: (key & mask) ^ value per word
//             (one vpternlogd each), port overshoot = uint16(p - lo) saturating-minus span on
//             the packed lo/span fields, all or-ed, one vptestnmd: lanes that are zero match.
//   avx2      the same over two ymm halves per field, groups of 4 keys.
//   portable  core::linear_first() per key (the reference body, also what CUDA runs).
//   The SIMD paths transcribe core::linear_lane_matches() lane-parallel; tests/classify/
//   linear_test.cpp checks all three paths against a naive oracle and each other.
// Group of keys: a group scans blocks until each of its keys has matched (or the image ends);
// the tail group repeats its last key. Large batches are split over ExecContext::threads.
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <thread>
#include <vector>

#include "classify/core/linear_core.hpp"
#include "classify/engines.hpp"
#include "classify/linear_image.hpp"
#include "core/parallel.hpp"
#include "warpath/core/cpu_features.hpp"

#if defined(__x86_64__)
#include <immintrin.h>
#endif

namespace warpath::classify::detail {

core::LinearView build_linear_image(const RuleSet& rules, std::vector<uint32_t>& order,
                                    std::vector<uint32_t>& storage) {
  const unsigned words = key_words(rules.layout);
  order.clear();
  for (uint32_t i = 0; i < rules.rules.size(); ++i)
    if (core::linear_rule_live(rules.rules[i], words)) order.push_back(i);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    return rules.rules[a].priority > rules.rules[b].priority;
  });
  const uint32_t n = uint32_t(order.size());
  const core::LinearLayout l =
      core::linear_layout(rules.rules.data(), order.data(), n, words, ports_word(rules.layout));
  const size_t image = size_t((n + core::kLinearLanes - 1) / core::kLinearLanes) * l.block_words();
  storage.assign(image + core::kLinearLanes, 0);  // + one vector of slack to align to 64 bytes
  uint32_t* blocks = storage.data();
  while (reinterpret_cast<uintptr_t>(blocks) % 64) ++blocks;
  core::linear_fill(l, rules.rules.data(), order.data(), n, blocks);
  return {l, blocks, order.data(), n};
}

namespace {

using core::kLinearLanes;
using core::kLinearNone;
using core::LinearView;

enum Isa : int { kAuto = 0, kPortable = 1, kAvx2 = 2, kAvx512 = 3 };

// Below this many keys per thread, starting threads costs more than it saves (a key costs
// hundreds of nanoseconds on 10K-rule sets).
constexpr uint32_t kMinPerThread = 2048;

void scan_portable(const LinearView& v, const KeyBatch& keys, uint32_t* out) {
  const uint32_t blocks = v.block_count();
  for (uint32_t i = 0; i < keys.count; ++i) {
    const core::LinearKey k = core::linear_key(v.layout, keys.words, keys.stride, i);
    out[i]                  = core::linear_answer(v, core::linear_first(v, k, 0, blocks));
  }
}

#if defined(__x86_64__)

// A group of G keys of the batch from `base` (the last key repeated past its end): their NW
// active words and their ports, kept as scalars (the compares broadcast them), and each key's
// first matching position so far.
template <unsigned NW, unsigned G>
struct KeyGroup {
  uint32_t kw[G][NW ? NW : 1], kp[G], pos[G];
  uint32_t n = 0;

  __attribute__((always_inline)) void load(const LinearView& v, const KeyBatch& keys,
                                           uint32_t base) {
    n = keys.count;
#pragma GCC unroll 16
    for (unsigned g = 0; g < G; ++g) {
      const uint32_t i = std::min(base + g, n - 1);
#pragma GCC unroll 9
      for (unsigned j = 0; j < NW; ++j) kw[g][j] = keys.word(v.layout.word_ids[j], i);
      kp[g]  = keys.word(v.layout.ports_word, i);
      pos[g] = kLinearNone;
    }
  }
  /// The answers of the group's keys that are in the batch.
  void answer(const LinearView& v, uint32_t base, uint32_t* out) const {
    for (unsigned g = 0; g < G && base + g < n; ++g) out[base + g] = core::linear_answer(v, pos[g]);
  }
};

// ---- AVX-512: NW active words, R port ranges, G keys per group ----
template <unsigned NW, bool R, unsigned G>
__attribute__((target("avx512f,avx512bw"))) void scan_avx512(const LinearView& v,
                                                             const KeyBatch& keys, uint32_t* out) {
  const uint32_t n = keys.count, blocks = v.block_count(), bw = v.layout.block_words();
  const uint32_t last_valid = v.rules ? core::linear_valid_lanes(v.rules, blocks - 1) : 0;
  const __m512i zero        = _mm512_setzero_si512();
  for (uint32_t base = 0; base < n; base += G) {
    // Key words stay scalars in memory: the compares take them as {1to16} broadcast operands,
    // leaving the registers to the block's fields.
    KeyGroup<NW, G> grp;
    grp.load(v, keys, base);
    auto& kw = grp.kw;
    auto& kp = grp.kp;
    auto& pos = grp.pos;
    unsigned alive        = (1u << G) - 1;
    const uint32_t* block = v.blocks;
    for (uint32_t b = 0; b < blocks && alive; ++b, block += bw) {
      const __mmask16 valid = __mmask16(b + 1 == blocks ? last_valid : 0xFFFFu);
      // The block's fields, loaded once for the G keys.
      __m512i val[NW ? NW : 1], msk[NW ? NW : 1], lo = zero, span = zero;
#pragma GCC unroll 9
      for (unsigned j = 0; j < NW; ++j) {
        val[j] = _mm512_load_si512(block + 2 * j * kLinearLanes);
        msk[j] = _mm512_load_si512(block + (2 * j + 1) * kLinearLanes);
      }
      if constexpr (R) {
        lo   = _mm512_load_si512(block + 2 * NW * kLinearLanes);
        span = _mm512_load_si512(block + (2 * NW + 1) * kLinearLanes);
      }
#pragma GCC unroll 16
      for (unsigned g = 0; g < G; ++g) {
        if (!(alive >> g & 1u)) continue;  // matched already: no more work for this key
        // Non-zero lanes of `diff` are mismatches: (key & mask) ^ value per word (vpternlogd
        // 0x6A), port overshoot uint16(p - lo) -sat span, all or-ed, tested once.
        __m512i diff = zero;
#pragma GCC unroll 9
        for (unsigned j = 0; j < NW; ++j)
          diff = _mm512_or_si512(diff, _mm512_ternarylogic_epi32(_mm512_set1_epi32(int(kw[g][j])),
                                                                 msk[j], val[j], 0x6A));
        if constexpr (R)
          diff = _mm512_or_si512(
              diff, _mm512_subs_epu16(_mm512_sub_epi16(_mm512_set1_epi32(int(kp[g])), lo), span));
        const __mmask16 k = _mm512_mask_testn_epi32_mask(valid, diff, diff);
        if (k) {
          pos[g] = b * kLinearLanes + core::linear_ctz(k);
          alive &= ~(1u << g);
        }
      }
    }
    grp.answer(v, base, out);
  }
}

// ---- AVX2: the same over two 8-lane halves, one half's fields in registers at a time ----
__attribute__((target("avx2"), always_inline)) inline __m256i field(const uint32_t* block,
                                                                    unsigned f, unsigned h) {
  return _mm256_load_si256(reinterpret_cast<const __m256i*>(block + f * kLinearLanes + 8 * h));
}

template <unsigned NW, bool R, unsigned G>
__attribute__((target("avx2"))) void scan_avx2(const LinearView& v, const KeyBatch& keys,
                                               uint32_t* out) {
  const uint32_t n = keys.count, blocks = v.block_count(), bw = v.layout.block_words();
  const uint32_t last_valid = v.rules ? core::linear_valid_lanes(v.rules, blocks - 1) : 0;
  const __m256i zero        = _mm256_setzero_si256();

  for (uint32_t base = 0; base < n; base += G) {
    KeyGroup<NW, G> grp;
    grp.load(v, keys, base);
    auto& kw = grp.kw;
    auto& kp = grp.kp;
    auto& pos = grp.pos;
    unsigned alive        = (1u << G) - 1;
    const uint32_t* block = v.blocks;
    for (uint32_t b = 0; b < blocks && alive; ++b, block += bw) {
      uint32_t hits[G] = {};
#pragma GCC unroll 2
      for (unsigned h = 0; h < 2; ++h) {
        __m256i val[NW ? NW : 1], msk[NW ? NW : 1], lo = zero, span = zero;
#pragma GCC unroll 9
        for (unsigned j = 0; j < NW; ++j)
          val[j] = field(block, 2 * j, h), msk[j] = field(block, 2 * j + 1, h);
        if constexpr (R) lo = field(block, 2 * NW, h), span = field(block, 2 * NW + 1, h);
#pragma GCC unroll 16
        for (unsigned g = 0; g < G; ++g) {
          if (!(alive >> g & 1u)) continue;
          __m256i diff = zero;
#pragma GCC unroll 9
          for (unsigned j = 0; j < NW; ++j)
            diff = _mm256_or_si256(
                diff, _mm256_xor_si256(_mm256_and_si256(_mm256_set1_epi32(int(kw[g][j])), msk[j]),
                                       val[j]));
          if constexpr (R)
            diff = _mm256_or_si256(
                diff, _mm256_subs_epu16(_mm256_sub_epi16(_mm256_set1_epi32(int(kp[g])), lo), span));
          hits[g] |=
              uint32_t(_mm256_movemask_ps(_mm256_castsi256_ps(_mm256_cmpeq_epi32(diff, zero))))
              << (8 * h);
        }
      }
      const uint32_t valid = b + 1 == blocks ? last_valid : 0xFFFFu;
#pragma GCC unroll 16
      for (unsigned g = 0; g < G; ++g) {
        const uint32_t k = hits[g] & valid;
        if (k && (alive >> g & 1u)) {
          pos[g] = b * kLinearLanes + core::linear_ctz(k);
          alive &= ~(1u << g);
        }
      }
    }
    grp.answer(v, base, out);
  }
}

using ScanFn = void (*)(const LinearView&, const KeyBatch&, uint32_t*);

// Keys per group, measured on acl1/fw1/ipc1_10K (Zen 4): AVX-512 8 (4: -15%, 16: -2%),
// AVX2 4 (8: -7%; its block fields take half the ymm registers).
constexpr unsigned kGroupAvx512 = 8, kGroupAvx2 = 4;

template <unsigned NW, bool R>
ScanFn pick_simd(int isa) {
  return isa == kAvx512 ? &scan_avx512<NW, R, kGroupAvx512> : &scan_avx2<NW, R, kGroupAvx2>;
}

template <bool R>
ScanFn pick_words(unsigned nw, int isa) {
  switch (nw) {
    case 0:
      return pick_simd<0, R>(isa);
    case 1:
      return pick_simd<1, R>(isa);
    case 2:
      return pick_simd<2, R>(isa);
    case 3:
      return pick_simd<3, R>(isa);
    case 4:
      return pick_simd<4, R>(isa);
    case 5:
      return pick_simd<5, R>(isa);
    case 6:
      return pick_simd<6, R>(isa);
    case 7:
      return pick_simd<7, R>(isa);
    case 8:
      return pick_simd<8, R>(isa);
    default:
      return pick_simd<9, R>(isa);
  }
}

ScanFn pick_scan(const core::LinearLayout& l, int isa) {
  if (isa == kPortable) return &scan_portable;
  return l.ranges ? pick_words<true>(l.words, isa) : pick_words<false>(l.words, isa);
}

#else

using ScanFn = void (*)(const LinearView&, const KeyBatch&, uint32_t*);
ScanFn pick_scan(const core::LinearLayout&, int) { return &scan_portable; }

#endif

const char* isa_name(int isa) {
  return isa == kAvx512 ? "avx512" : isa == kAvx2 ? "avx2" : "portable";
}

class LinearCpu final : public Classifier {
 public:
  LinearCpu(const RuleSet& rules, int isa) : layout_(rules.layout), isa_(isa) {
    const auto t0               = std::chrono::steady_clock::now();
    view_                       = build_linear_image(rules, order_, storage_);
    const core::LinearLayout& l = view_.layout;
    const uint32_t n            = view_.rules;
    const size_t image          = size_t(view_.block_count()) * l.block_words();
    scan_                       = pick_scan(l, isa_);
    stats_.rules                = rules.rules.size();
    stats_.entries              = rules.rules.size();
    stats_.memory_bytes         = (image + order_.size()) * sizeof(uint32_t);
    stats_.build_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    stats_.detail = std::to_string(n) + " live rules in " + std::to_string(view_.block_count()) +
                    " blocks of " + std::to_string(kLinearLanes) + ", " + std::to_string(l.words) +
                    " value/mask words" + (l.ranges ? " + port ranges" : "") + ", " +
                    isa_name(isa_);
  }

  std::string_view id() const noexcept override { return "cpu.linear"; }

  Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const override {
    if (keys.layout != layout_)
      return Status(Errc::kInvalidArgument, "cpu.linear: key layout differs from the rules'");
    if (keys.count == 0) return Status::ok();
    if (view_.rules == 0) {
      std::fill(out.data, out.data + keys.count, kNoMatch);
      return Status::ok();
    }
    parallel_ranges(keys.count, ctx.threads, kMinPerThread, [&](uint32_t begin, uint32_t end) {
      scan_(view_, keys.slice(begin, end - begin), out.data + begin);
    });
    return Status::ok();
  }

  ClassifierStats stats() const override { return stats_; }

 private:
  KeyLayout layout_;
  int isa_;
  std::vector<uint32_t> order_, storage_;
  LinearView view_;
  ScanFn scan_ = nullptr;
  ClassifierStats stats_;
};

}  // namespace

Made make_cpu_linear_isa(const RuleSet& rules, const ClassifyParams& params, int isa) {
  (void)params;
  const CpuFeatures& f = cpu_features();
#if defined(__x86_64__)
  const int best = f.avx512f && f.avx512bw ? kAvx512 : f.avx2 ? kAvx2 : kPortable;
#else
  (void)f;
  const int best = kPortable;
#endif
  if (isa == kAuto) isa = best;
  if (isa < kPortable || isa > best)
    return Status(Errc::kNotSupported,
                  std::string("cpu.linear: ") + isa_name(isa) + " is not available on this CPU");
  return std::unique_ptr<Classifier>(std::make_unique<LinearCpu>(rules, isa));
}

Made make_cpu_linear(const RuleSet& rules, const ClassifyParams& params) {
  return make_cpu_linear_isa(rules, params, kAuto);
}

}  // namespace warpath::classify::detail
