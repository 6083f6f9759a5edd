/*
 * src/classify/cuda/split_cuda.cu: cuda.split, the address split on the GPU.
 *
 * Computes   out[i] = core::split_lookup(view, key i) for i in [0, n).
 * Algorithm  src/classify/core/split_core.hpp, shared with cpu/split_cpu.cpp. Do not fork.
 * Engine     cuda/image_cuda.cuh (launch shape, memory, copies), shared with cuda.rfc/tic.
 * Tested by  tests/classify/split_test.cpp and tests/classify/engines_test.cpp (vs the
 *            oracles) where a GPU is present; warpath selftest.
 */
#include "classify/cuda/image_cuda.cuh"
#include "classify/cuda/image_lookups.cuh"
#include "classify/split_image.hpp"

namespace warpath::classify::detail {
Made make_cuda_split(const RuleSet& rules, const ClassifyParams& params) {
  return make_image_cuda<SplitImage, core::SplitView, SplitLookup>("cuda.split", rules, params);
}

}  // namespace warpath::classify::detail
