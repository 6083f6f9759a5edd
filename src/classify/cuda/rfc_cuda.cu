/*
 * src/classify/cuda/rfc_cuda.cu: cuda.rfc, the RFC reduction tree on the GPU.
 *
 * Computes   out[i] = core::rfc_lookup(view, key i) for i in [0, n).
 * Algorithm  src/classify/core/rfc_core.hpp, shared with cpu/rfc_cpu.cpp. Do not fork.
 * Engine     cuda/image_cuda.cuh (launch shape, memory, copies), shared with cuda.tic.
 * Tested by  tests/classify/rfc_tic_test.cpp and tests/classify/engines_test.cpp (vs the
 *            oracles) where a GPU is present; warpath selftest.
 */
#include "classify/cuda/image_cuda.cuh"
#include "classify/cuda/image_lookups.cuh"
#include "classify/rfc_image.hpp"

namespace warpath::classify::detail {
Made make_cuda_rfc(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cuda<RfcImage, core::RfcView, RfcLookup>("cuda.rfc", rules, params);
}

}  // namespace warpath::classify::detail
