// src/pattern/engines.hpp: factories of the pattern engines, used only by
// pattern_registry.cpp.
#pragma once
#include <memory>
#include <vector>

#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

Result<std::unique_ptr<Matcher>> make_ref_matcher(const std::vector<Pattern>& patterns);
Result<std::unique_ptr<Matcher>> make_ac_cpu_matcher(const std::vector<Pattern>& patterns);
#if defined(WARPATH_HAVE_HS)
bool have_hs();
Result<std::unique_ptr<Matcher>> make_hs_matcher(const std::vector<Pattern>& patterns);
/// Whether Vectorscan compiles `p` alone.
Status hs_supports(const Pattern& p);
#endif
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<Matcher>> make_ac_cuda_matcher(const std::vector<Pattern>& patterns);
#endif

}  // namespace warpath::pattern::detail
