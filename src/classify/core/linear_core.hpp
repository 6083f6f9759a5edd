// src/classify/core/linear_core.hpp
//
// Linear search (GSwitch section 4.1, Algorithm 1): the one match body of cpu.linear and
// cuda.linear, and the layout of their rule image. No STL, no CUDA includes.
//
// Image
//   Rules are sorted by (priority desc, index asc), so the first rule a key matches in image
//   order is the answer, and a key can stop there (early exit). Rules that can never match
//   (an empty port range, a value bit outside its mask) are left out. The sorted rules are cut
//   into blocks of kLinearLanes; a block is structure-of-arrays, one field after another,
//   kLinearLanes uint32 per field:
//     for j in [0, words):  value[j], mask[j]          the j-th *active* key word
//     if ranges:            lo   = sport_lo << 16 | dport_lo
//                           span = (sport_hi - sport_lo) << 16 | (dport_hi - dport_lo)
//   Active words are those some rule constrains (mask or value non-zero): ClassBench sets use
//   3 of the 4 words (the port word is ranges only), OpenFlow sets only the fields any rule
//   names. `ranges` is 0 when every rule has full port ranges (OpenFlow sets). A port p is in
//   [lo, lo + span] when uint16(p - lo) <= span: one subtraction and one compare per port.
//   order[pos] is the RuleSet index of image position pos. Lanes past `rules` in the last block
//   are padding and must be ignored by the caller (linear_valid_lanes()).
//
// Users
//   cpu/linear_cpu.cpp  scans blocks with AVX-512 / AVX2 over the same fields (a transcription
//                       of linear_lane_matches() per lane; the portable path calls
//                       linear_block_mask()), several keys per block load.
//   cuda/linear_cuda.cu stages chunks of blocks in shared memory; a thread per key runs
//                       linear_first_serial<NW, R>() over the chunk (word count and ranges
//                       fixed at compile time so the key stays in registers).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::classify::core {

inline constexpr unsigned kLinearLanes    = 16;  ///< rules per block (one AVX-512 vector)
inline constexpr unsigned kLinearMaxWords = 9;   ///< key words of the widest layout (OpenFlow)
inline constexpr uint32_t kLinearNone     = 0xFFFF'FFFFu;  ///< no match (= classify::kNoMatch)

/// Which fields the image stores (the same for every block).
struct LinearLayout {
  uint32_t words                    = 0;   ///< active value/mask words
  uint32_t ranges                   = 0;   ///< 1 when the two port-range fields are stored
  uint32_t ports_word               = 2;   ///< key word with sport << 16 | dport
  uint8_t word_ids[kLinearMaxWords] = {};  ///< key word of active word j

  /// uint32 per block.
  WARPATH_HD uint32_t block_words() const { return (2 * words + 2 * ranges) * kLinearLanes; }
};

/// A compiled image, on the host or on the device.
struct LinearView {
  LinearLayout layout;
  const uint32_t* blocks = nullptr;  ///< blocks() * layout.block_words() uint32
  const uint32_t* order  = nullptr;  ///< image position -> RuleSet index
  uint32_t rules         = 0;        ///< rules in the image (positions)

  WARPATH_HD uint32_t block_count() const { return (rules + kLinearLanes - 1) / kLinearLanes; }
  WARPATH_HD const uint32_t* block(uint32_t b) const {
    return blocks + size_t(b) * layout.block_words();
  }
};

/// Shape parameters of the bodies below: kAny reads the count from the LinearLayout; a fixed
/// value (which must equal the layout's) lets a CUDA kernel keep the key in registers.
inline constexpr int kAny = -1;

#if defined(__CUDA_ARCH__)  // nvcc's device pass
#define WARPATH_LINEAR_UNROLL _Pragma("unroll")
#elif defined(__CUDACC__)  // nvcc's host pass: its front end knows neither pragma for the host
#define WARPATH_LINEAR_UNROLL
#else
#define WARPATH_LINEAR_UNROLL _Pragma("GCC unroll 9")
#endif

/// The words of one key that the image looks at.
struct LinearKey {
  uint32_t w[kLinearMaxWords];  ///< active words, in layout order
  uint32_t ports;               ///< the ports word
};

/// Key i of a structure-of-arrays batch (word w of key i at words[w * stride + i]).
template <int NW = kAny>
WARPATH_HD LinearKey linear_key(const LinearLayout& l, const uint32_t* words, uint32_t stride,
                                uint32_t i) {
  LinearKey k;
  const int nw = NW == kAny ? int(l.words) : NW;  // int: NW == 0 is no pointless compare
  WARPATH_LINEAR_UNROLL
  for (int j = 0; j < nw; ++j) k.w[j] = words[size_t(l.word_ids[j]) * stride + i];
  k.ports = words[size_t(l.ports_word) * stride + i];
  return k;
}

/// Index of the lowest set bit of x (x != 0).
WARPATH_HD unsigned linear_ctz(uint32_t x) {
#if WARPATH_DEVICE_PASS
  return unsigned(__ffs(int(x)) - 1);
#else
  return unsigned(__builtin_ctz(x));
#endif
}

/// Lanes of block b that hold rules (bit l set for lane l).
WARPATH_HD uint32_t linear_valid_lanes(uint32_t rules, uint32_t b) {
  const uint32_t left = rules - b * kLinearLanes;
  return left >= kLinearLanes ? (1u << kLinearLanes) - 1 : (1u << left) - 1;
}

/// Whether key k matches the rule in `lane` of `block` (the match body). NW and R: see kAny.
template <int NW = kAny, int R = kAny>
WARPATH_HD bool linear_lane_matches(const LinearLayout& l, const uint32_t* block, unsigned lane,
                                    const LinearKey& k) {
  const int nw      = NW == kAny ? int(l.words) : NW;
  const bool ranges = R == kAny ? l.ranges != 0 : R != 0;
  WARPATH_LINEAR_UNROLL
  for (int j = 0; j < nw; ++j)
    if ((k.w[j] & block[(2 * j + 1) * kLinearLanes + lane]) != block[2 * j * kLinearLanes + lane])
      return false;
  if (ranges) {
    const uint32_t* r   = block + 2 * nw * kLinearLanes;
    const uint32_t lo   = r[lane];
    const uint32_t span = r[kLinearLanes + lane];
    const uint32_t ds   = ((k.ports >> 16) - (lo >> 16)) & 0xFFFFu;
    const uint32_t dd   = (k.ports - lo) & 0xFFFFu;
    return ds <= (span >> 16) && dd <= (span & 0xFFFFu);
  }
  return true;
}

/// Lane mask of the rules of `block` that key k matches (padding lanes included).
WARPATH_HD uint32_t linear_block_mask(const LinearLayout& l, const uint32_t* block,
                                      const LinearKey& k) {
  uint32_t bits = 0;
  for (unsigned lane = 0; lane < kLinearLanes; ++lane)
    bits |= uint32_t(linear_lane_matches(l, block, lane, k)) << lane;
  return bits;
}

/// Image position of the first rule in [block_begin, block_end) that key k matches, or
/// kLinearNone.
WARPATH_HD uint32_t linear_first(const LinearView& v, const LinearKey& k, uint32_t block_begin,
                                 uint32_t block_end) {
  for (uint32_t b = block_begin; b < block_end; ++b) {
    const uint32_t bits =
        linear_block_mask(v.layout, v.block(b), k) & linear_valid_lanes(v.rules, b);
    if (bits) return b * kLinearLanes + linear_ctz(bits);
  }
  return kLinearNone;
}

/// linear_first() rule by rule, stopping at the first match: what one GPU thread runs over a
/// chunk of blocks staged in shared memory (its warp reads each rule field as a broadcast).
template <int NW = kAny, int R = kAny>
WARPATH_HD uint32_t linear_first_serial(const LinearView& v, const LinearKey& k,
                                        uint32_t block_begin, uint32_t block_end) {
  for (uint32_t b = block_begin; b < block_end; ++b) {
    const uint32_t* blk = v.block(b);
    const uint32_t lanes =
        v.rules - b * kLinearLanes < kLinearLanes ? v.rules - b * kLinearLanes : kLinearLanes;
    for (unsigned lane = 0; lane < lanes; ++lane)
      if (linear_lane_matches<NW, R>(v.layout, blk, lane, k)) return b * kLinearLanes + lane;
  }
  return kLinearNone;
}

/// RuleSet index of image position pos (kLinearNone stays kLinearNone).
WARPATH_HD uint32_t linear_answer(const LinearView& v, uint32_t pos) {
  return pos == kLinearNone ? kLinearNone : v.order[pos];
}

/// The whole classification of one key.
WARPATH_HD uint32_t linear_classify(const LinearView& v, const LinearKey& k) {
  return linear_answer(v, linear_first(v, k, 0, v.block_count()));
}

// ---- Image construction (host only; RuleT is classify::Rule, kept generic so that this
// header does not include rule.hpp) ----

/// Whether rule r can match any key: ports ranges not empty, no value bit outside its mask.
template <class RuleT>
inline bool linear_rule_live(const RuleT& r, unsigned key_words) {
  if (r.sport_lo > r.sport_hi || r.dport_lo > r.dport_hi) return false;
  for (unsigned w = 0; w < key_words; ++w)
    if (r.value[w] & ~r.mask[w]) return false;
  return true;
}

/// The layout for rules[order[0..n)).
template <class RuleT>
inline LinearLayout linear_layout(const RuleT* rules, const uint32_t* order, uint32_t n,
                                  unsigned key_words, unsigned ports_word) {
  LinearLayout l;
  l.ports_word = ports_word;
  for (unsigned w = 0; w < key_words; ++w) {
    bool used = false;
    for (uint32_t p = 0; p < n && !used; ++p) used = rules[order[p]].mask[w] != 0;
    if (used) l.word_ids[l.words++] = uint8_t(w);
  }
  for (uint32_t p = 0; p < n && !l.ranges; ++p) {
    const RuleT& r = rules[order[p]];
    l.ranges = r.sport_lo != 0 || r.sport_hi != 0xFFFF || r.dport_lo != 0 || r.dport_hi != 0xFFFF;
  }
  return l;
}

/// Writes the blocks of rules[order[0..n)) (block_count * block_words() uint32) to `out`.
/// Padding lanes get a rule no key matches when the layout has a field to say so.
template <class RuleT>
inline void linear_fill(const LinearLayout& l, const RuleT* rules, const uint32_t* order,
                        uint32_t n, uint32_t* out) {
  const uint32_t blocks = (n + kLinearLanes - 1) / kLinearLanes;
  for (uint32_t b = 0; b < blocks; ++b) {
    uint32_t* blk = out + size_t(b) * l.block_words();
    for (unsigned lane = 0; lane < kLinearLanes; ++lane) {
      const uint32_t p = b * kLinearLanes + lane;
      for (uint32_t j = 0; j < l.words; ++j) {
        const unsigned w                       = l.word_ids[j];
        blk[2 * j * kLinearLanes + lane]       = p < n ? rules[order[p]].value[w] : 1u;
        blk[(2 * j + 1) * kLinearLanes + lane] = p < n ? rules[order[p]].mask[w] : 0u;
      }
      if (l.ranges) {
        uint32_t* r = blk + 2 * l.words * kLinearLanes;
        if (p < n) {
          const RuleT& x = rules[order[p]];
          r[lane]        = uint32_t(x.sport_lo) << 16 | x.dport_lo;
          r[kLinearLanes + lane] =
              uint32_t(x.sport_hi - x.sport_lo) << 16 | uint32_t(x.dport_hi - x.dport_lo);
        } else {
          r[lane] = 1u;  // dport 1..1 and, with words == 0, the last hope of a non-match
          r[kLinearLanes + lane] = 0u;
        }
      }
    }
  }
}

}  // namespace warpath::classify::core
