// cuda.tic: under construction.
#include "classify/engines.hpp"

namespace warpath::classify::detail {

Made make_cuda_tic(const RuleSet& rules, const ClassifyParams& params) {
  (void)rules, (void)params;
  return Status(Errc::kNotSupported, "cuda.tic is under construction");
}

}  // namespace warpath::classify::detail
