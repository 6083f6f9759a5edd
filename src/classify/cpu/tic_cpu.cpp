// cpu.tic: TIC (core/tic_core.hpp) over a host image, G-Opt batched (gopt-nsdi15-slides.md):
// keys advance in groups, and each phase's table entries, then the first code blocks, of the
// whole group are prefetched before any of them is loaded. Large batches are split over
// ExecContext::threads.
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "classify/cpu/image_cpu.hpp"
#include "classify/engines.hpp"
#include "classify/tic_image.hpp"

namespace warpath::classify::detail {
namespace {

/// Keys [begin, end) of `keys`, every step the core body's, reordered per group: the address
/// stage's tables, then each key's first code block, are prefetched for the whole group.
void tic_batched(const core::TicView& t, const KeyBatch& keys, uint32_t* out, uint32_t begin,
                 uint32_t end) {
  constexpr uint32_t kGroup = 16;
  const core::RfcView& v    = t.addr;
  const uint32_t* w0        = keys.words;
  const uint32_t* w1        = w0 + keys.stride;
  const uint32_t* w2        = w1 + keys.stride;
  const uint32_t* w3        = w2 + keys.stride;
  uint32_t cv[4][kGroup], e[kGroup][core::kChunks] = {};
  uint64_t xi[kGroup], yi[kGroup], pi[kGroup];
  const uint32_t* code[kGroup];
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = end - base < kGroup ? end - base : kGroup;
    for (uint32_t j = 0; j < m; ++j) {
      const uint32_t i = base + j;
      uint32_t c7[core::kChunks];
      core::rfc_chunk_values(w0[i], w1[i], 0, 0, 0, c7);
#pragma GCC unroll 4
      for (unsigned c = 0; c < 4; ++c) {
        cv[c][j] = c7[c];
        WARPATH_PREFETCH(v.chunk[c].addr(c7[c]));
      }
    }
    for (uint32_t j = 0; j < m; ++j) {
#pragma GCC unroll 4
      for (unsigned c = 0; c < 4; ++c) e[j][c] = v.chunk[c].at(cv[c][j]);
      xi[j] = core::rfc_x_index(v, e[j]);
      yi[j] = core::rfc_y_index(v, e[j]);
      WARPATH_PREFETCH(v.x.addr(xi[j]));
      WARPATH_PREFETCH(v.y.addr(yi[j]));
    }
    for (uint32_t j = 0; j < m; ++j) {
      pi[j] = core::rfc_p_index(v, v.x.at(xi[j]), v.y.at(yi[j]));
      WARPATH_PREFETCH(v.p.addr(pi[j]));
    }
    for (uint32_t j = 0; j < m; ++j) {
      code[j] = core::tic_code(t, v.p.at(pi[j]));
      if (code[j]) WARPATH_PREFETCH(code[j]);
    }
    for (uint32_t j = 0; j < m; ++j)
      out[base + j] =
          code[j] ? core::tic_interpret(code[j], w2[base + j], w3[base + j]) : core::kTicNoMatch;
  }
}

}  // namespace

Made make_cpu_tic(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cpu<TicImage, core::TicView, &tic_batched>("cpu.tic", rules, params);
}

}  // namespace warpath::classify::detail
