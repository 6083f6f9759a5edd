// cpu.split: the address split (core/split_core.hpp) over a host image, G-Opt batched
// (gopt-nsdi15-slides.md): keys advance in groups through the rest tree (rfc_batched), then
// the parts' indexes layer by layer in lockstep, then their runs; each step prefetches what the
// next one reads for the whole group before any of it is loaded. Large batches are split over
// ExecContext::threads.
#include "classify/cpu/split_cpu.hpp"

#include <algorithm>

#if defined(__x86_64__)
#include <immintrin.h>
#endif

#include "classify/cpu/image_cpu.hpp"
#include "classify/cpu/rfc_batched.hpp"
#include "classify/engines.hpp"
#include "classify/split_image.hpp"
#include "warpath/core/cpu_features.hpp"

namespace warpath::classify::detail {
namespace {

struct PortableCount {
  static uint32_t count(const uint32_t* node, uint32_t x) { return core::split_count_le(node, x); }
};

#if defined(__x86_64__)
// A node's 16 keys against the address in one unsigned AVX-512 compare (nodes are 64-byte
// aligned: the image is, and every node is one line).
struct Avx512Count {
  __attribute__((target("avx512f"))) static uint32_t count(const uint32_t* node, uint32_t x) {
    const __m512i keys = _mm512_load_si512(static_cast<const void*>(node));
    return uint32_t(__builtin_popcount(_mm512_cmple_epu32_mask(keys, _mm512_set1_epi32(int(x)))));
  }
};
#endif

template <class Count>
__attribute__((always_inline)) inline void batched(const core::SplitView& v, const KeyBatch& keys,
                                                   uint32_t* out, uint32_t begin, uint32_t end) {
  constexpr uint32_t kGroup = 32;
  constexpr uint32_t kParts = core::kSplitFields;
  const uint32_t* word[4]   = {keys.words, keys.words + keys.stride, keys.words + 2 * keys.stride,
                               keys.words + 3 * keys.stride};
  uint32_t rank[kGroup], x[kParts][kGroup], at[kParts][kGroup];
  core::SplitList run[kParts][kGroup];
  uint32_t layers = 0;
  for (uint32_t p = 0; p < kParts; ++p) layers = std::max(layers, v.part[p].layers);
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = end - base < kGroup ? end - base : kGroup;
    for (uint32_t j = 0; j < m; ++j) rank[j] = core::kSplitNone;
    if (v.has_rest) {
      uint32_t rest[kGroup];
      rfc_batched(v.rest, keys.slice(base, m), rest, 0, m);
      for (uint32_t j = 0; j < m; ++j) rank[j] = core::split_rest_rank(v, rest[j]);
    }
    for (uint32_t p = 0; p < kParts; ++p) {
      if (!v.part[p].layers) continue;
      for (uint32_t j = 0; j < m; ++j) {
        at[p][j] = 0;
        x[p][j]  = core::split_field(p, word[0][base + j], word[1][base + j], word[2][base + j]);
      }
    }
    // Layer l of an index with fewer layers than another starts later, so all end together.
    for (uint32_t step = 0; step < layers; ++step)
      for (uint32_t p = 0; p < kParts; ++p) {
        const core::SplitIndex& ix = v.part[p];
        if (!ix.layers || step + ix.layers < layers) continue;
        const uint32_t l = step + ix.layers - layers;
        for (uint32_t j = 0; j < m; ++j) {
          at[p][j] = core::split_descend(ix, l, at[p][j],
                                         Count::count(core::split_node(ix, l, at[p][j]), x[p][j]));
          if (l + 1 < ix.layers)
            WARPATH_PREFETCH(core::split_node(ix, l + 1, at[p][j]));
          else
            WARPATH_PREFETCH(ix.lists + at[p][j]);
        }
      }
    for (uint32_t p = 0; p < kParts; ++p) {
      if (!v.part[p].layers) continue;
      for (uint32_t j = 0; j < m; ++j) {
        run[p][j] = v.part[p].lists[at[p][j]];
        WARPATH_PREFETCH(v.cands + run[p][j].offset);
      }
    }
    for (uint32_t p = 0; p < kParts; ++p) {
      if (!v.part[p].layers) continue;
      for (uint32_t j = 0; j < m; ++j) {
        const uint32_t i = base + j;
        core::split_scan(v.cands, run[p][j], word[0][i], word[1][i], word[2][i], word[3][i],
                         rank[j]);
      }
    }
    if (v.rank_index)
      for (uint32_t j = 0; j < m; ++j)
        if (rank[j] != core::kSplitNone) WARPATH_PREFETCH(v.rank_index + rank[j]);
    for (uint32_t j = 0; j < m; ++j) out[base + j] = core::split_answer(v, rank[j]);
  }
}

#if defined(__x86_64__)
__attribute__((target("avx512f"))) void batched_avx512(const core::SplitView& v,
                                                       const KeyBatch& keys, uint32_t* out,
                                                       uint32_t begin, uint32_t end) {
  batched<Avx512Count>(v, keys, out, begin, end);
}
#endif

}  // namespace

void split_batched_portable(const core::SplitView& v, const KeyBatch& keys, uint32_t* out,
                            uint32_t begin, uint32_t end) {
  batched<PortableCount>(v, keys, out, begin, end);
}

void split_batched(const core::SplitView& v, const KeyBatch& keys, uint32_t* out, uint32_t begin,
                   uint32_t end) {
#if defined(__x86_64__)
  static const bool avx512 = cpu_features().avx512f;
  if (avx512) return batched_avx512(v, keys, out, begin, end);
#endif
  split_batched_portable(v, keys, out, begin, end);
}

Made make_cpu_split(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cpu<SplitImage, core::SplitView, &split_batched>("cpu.split", rules, params);
}

}  // namespace warpath::classify::detail
