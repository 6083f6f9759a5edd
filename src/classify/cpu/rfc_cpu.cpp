// cpu.rfc: the RFC reduction tree (core/rfc_core.hpp) over a host image, G-Opt batched
// (gopt-nsdi15-slides.md): keys advance in groups, and each phase's table entries of the whole
// group are prefetched before any of them is loaded. Large batches are split over
// ExecContext::threads.
#include <algorithm>
#include <chrono>
#include <thread>
#include <vector>

#include "classify/cpu/image_cpu.hpp"
#include "classify/cpu/rfc_batched.hpp"
#include "classify/engines.hpp"
#include "classify/rfc_image.hpp"

namespace warpath::classify::detail {

void rfc_batched(const core::RfcView& v, const KeyBatch& keys, uint32_t* out, uint32_t begin,
                 uint32_t end) {
  constexpr uint32_t kGroup =
      32;  // 16 and 32 measured on acl1_10K and ipc1_10K: 32 as good or better
  const uint32_t* w0 = keys.words;
  const uint32_t* w1 = w0 + keys.stride;
  const uint32_t* w2 = w1 + keys.stride;
  const uint32_t* w3 = w2 + keys.stride;
  uint32_t cv[core::kChunks][kGroup], e[kGroup][core::kChunks];
  uint64_t xi[kGroup], yi[kGroup], zi[kGroup], pi[kGroup], fi[kGroup];
  uint32_t z[kGroup];
  for (uint32_t base = begin; base < end; base += kGroup) {
    const uint32_t m = end - base < kGroup ? end - base : kGroup;
    for (uint32_t j = 0; j < m; ++j) {
      const uint32_t i = base + j;
      uint32_t c7[core::kChunks];
      core::rfc_chunk_values(w0[i], w1[i], w2[i], w3[i], v.proto_mask, c7);
#pragma GCC unroll 7
      for (unsigned c = 0; c < core::kChunks; ++c) {
        cv[c][j] = c7[c];
        WARPATH_PREFETCH(v.chunk[c].addr(c7[c]));
      }
    }
    for (uint32_t j = 0; j < m; ++j) {
#pragma GCC unroll 7
      for (unsigned c = 0; c < core::kChunks; ++c) e[j][c] = v.chunk[c].at(cv[c][j]);
      xi[j] = core::rfc_x_index(v, e[j]);
      yi[j] = core::rfc_y_index(v, e[j]);
      zi[j] = core::rfc_z_index(v, e[j]);
      WARPATH_PREFETCH(v.x.addr(xi[j]));
      WARPATH_PREFETCH(v.y.addr(yi[j]));
      WARPATH_PREFETCH(v.z.addr(zi[j]));
    }
    for (uint32_t j = 0; j < m; ++j) {
      pi[j] = core::rfc_p_index(v, v.x.at(xi[j]), v.y.at(yi[j]));
      z[j]  = v.z.at(zi[j]);
      WARPATH_PREFETCH(v.p.addr(pi[j]));
    }
    for (uint32_t j = 0; j < m; ++j) {
      fi[j] = core::rfc_f_index(v, v.p.at(pi[j]), z[j]);
      WARPATH_PREFETCH(v.f.addr(fi[j]));
    }
    for (uint32_t j = 0; j < m; ++j) out[base + j] = v.answers[v.f.at(fi[j])];
  }
}

Made make_cpu_rfc(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cpu<RfcImage, core::RfcView, &rfc_batched>("cpu.rfc", rules, params);
}

}  // namespace warpath::classify::detail
