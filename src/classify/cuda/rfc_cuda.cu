// cuda.rfc: under construction.
#include "classify/engines.hpp"

namespace warpath::classify::detail {

Made make_cuda_rfc(const RuleSet& rules, const ClassifyParams& params) {
  (void)rules, (void)params;
  return Status(Errc::kNotSupported, "cuda.rfc is under construction");
}

}  // namespace warpath::classify::detail
