// src/openflow/core/flow_hash_avx512.hpp: flow_hash_core.hpp's four per-key steps with
// AVX-512VL on the host: the key's first 32 bytes in one 256-bit register, a bucket's eight
// signatures compared into a mask register. Same values as core's (tests/openflow: every step
// against core's on random keys and buckets). Include it only inside a
// `#pragma GCC target("avx2,avx512f,avx512vl")` region (flow_image_avx512.cpp), and call it
// only where the CPU has them (FlowImage::has_isa).
#pragma once
#include <immintrin.h>

#include <cstdint>

#include "openflow/core/flow_hash_core.hpp"

namespace warpath::openflow::core::avx512 {

inline __m256i words8(const packet::OfTuple& k) {
  return _mm256_loadu_si256(reinterpret_cast<const __m256i*>(k.w));
}

struct Ops {
  static packet::OfTuple apply_mask(const packet::OfTuple& k, const packet::OfTuple& m) {
    packet::OfTuple r;
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(r.w), _mm256_and_si256(words8(k), words8(m)));
    r.w[8] = k.w[8] & m.w[8];
    return r;
  }
  /// hash_key_words: the four products in one vpmuludq (lane i: word 2i times word 2i + 1).
  static uint64_t hash_key(const packet::OfTuple& k) {
    const __m256i x = _mm256_add_epi32(
        words8(k), _mm256_set_epi32(int(0xFD70'46C5u), int(0xD3A2'646Cu), int(0x1656'67B1u),
                                    int(0x27D4'EB2Fu), int(0xC2B2'AE35u), int(0x85EB'CA6Bu),
                                    int(0x7F4A'7C15u), int(0x9E37'79B9u)));
    const __m256i p = _mm256_mul_epu32(x, _mm256_srli_epi64(x, 32));
    const __m128i q = _mm_add_epi64(_mm256_castsi256_si128(p), _mm256_extracti128_si256(p, 1));
    return nh_mix(uint64_t(_mm_cvtsi128_si64(_mm_add_epi64(q, _mm_unpackhi_epi64(q, q)))) +
                  nh_last(k));
  }
  static uint32_t sig_matches(const Bucket& bk, uint32_t sig, bool& open) {
    const __m256i v = _mm256_load_si256(reinterpret_cast<const __m256i*>(bk.sig));
    open            = _mm256_testn_epi32_mask(v, v) != 0;
    return _mm256_cmpeq_epi32_mask(v, _mm256_set1_epi32(int(sig)));
  }
  static bool same_key(const packet::OfTuple& a, const packet::OfTuple& b) {
    const __m256i d = _mm256_xor_si256(words8(a), words8(b));
    return _mm256_testz_si256(d, d) && a.w[8] == b.w[8];
  }
};

}  // namespace warpath::openflow::core::avx512
