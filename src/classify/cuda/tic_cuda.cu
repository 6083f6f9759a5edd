/*
 * src/classify/cuda/tic_cuda.cu: cuda.tic, TIC (RFC address tree + range interpreter) on the GPU.
 *
 * Computes   out[i] = core::tic_lookup(view, key i) for i in [0, n).
 * Algorithm  src/classify/core/tic_core.hpp, shared with cpu/tic_cpu.cpp. Do not fork.
 * Engine     cuda/image_cuda.cuh (launch shape, memory, copies), shared with cuda.rfc.
 * Tested by  tests/classify/rfc_tic_test.cpp and tests/classify/engines_test.cpp (vs the
 *            oracles) where a GPU is present; warpath selftest.
 */
#include "classify/cuda/image_cuda.cuh"
#include "classify/cuda/image_lookups.cuh"
#include "classify/tic_image.hpp"

namespace warpath::classify::detail {
Made make_cuda_tic(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cuda<TicImage, core::TicView, TicLookup>("cuda.tic", rules, params);
}

}  // namespace warpath::classify::detail
