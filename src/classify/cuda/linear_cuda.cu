// cuda.linear: under construction.
#include "classify/engines.hpp"

namespace warpath::classify::detail {

Made make_cuda_linear(const RuleSet& rules, const ClassifyParams& params) {
  (void)rules, (void)params;
  return Status(Errc::kNotSupported, "cuda.linear is under construction");
}

}  // namespace warpath::classify::detail
