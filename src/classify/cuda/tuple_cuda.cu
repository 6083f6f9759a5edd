// cuda.tuple and cuda.bloom (under construction).
#include "classify/engines.hpp"

namespace warpath::classify::detail {

Made make_cuda_tuple(const RuleSet& rules, const ClassifyParams& params, bool bloom) {
  (void)rules, (void)params, (void)bloom;
  return Status(Errc::kNotSupported, "cuda.tuple/cuda.bloom: under construction");
}

}  // namespace warpath::classify::detail
