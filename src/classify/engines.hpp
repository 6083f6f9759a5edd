// src/classify/engines.hpp: factories of the classifier engines, used only by
// classifier_registry.cpp. Each engine family lives in its own files:
//   reference/linear_ref.cpp          ref.linear
//   cpu/linear_cpu.cpp, cuda/linear_cuda.cu                   *.linear
//   cpu/tuple_cpu.cpp,  cuda/tuple_cuda.cu                    *.tuple and *.bloom
//   cpu/rfc_cpu.cpp, cpu/tic_cpu.cpp, cuda/rfc_cuda.cu, cuda/tic_cuda.cu   *.rfc, *.tic
//   cpu/split_cpu.cpp, cuda/split_cuda.cu                     *.split
//   cpu/tmerge_cpu.cpp, cuda/tmerge_cuda.cu                   *.tuplemerge
//   cpu/overlay_cpu.cpp                                       cpu.overlay
#pragma once
#include <memory>

#include "warpath/classify/classifier.hpp"

namespace warpath::classify::detail {

using Made = Result<std::unique_ptr<Classifier>>;

Made make_ref_linear(const RuleSet& rules);
Made make_cpu_linear(const RuleSet& rules, const ClassifyParams& params);
Made make_cpu_tuple(const RuleSet& rules, const ClassifyParams& params, bool bloom);
Made make_cpu_rfc(const RuleSet& rules, const ClassifyParams& params);
Made make_cpu_tic(const RuleSet& rules, const ClassifyParams& params);
Made make_cpu_split(const RuleSet& rules, const ClassifyParams& params);
Made make_cpu_tuplemerge(const RuleSet& rules, const ClassifyParams& params);
Made make_cpu_overlay(const RuleSet& rules, const ClassifyParams& params);
#if defined(WARPATH_HAVE_CUDA)
Made make_cuda_linear(const RuleSet& rules, const ClassifyParams& params);
Made make_cuda_tuple(const RuleSet& rules, const ClassifyParams& params, bool bloom);
Made make_cuda_rfc(const RuleSet& rules, const ClassifyParams& params);
Made make_cuda_tic(const RuleSet& rules, const ClassifyParams& params);
Made make_cuda_split(const RuleSet& rules, const ClassifyParams& params);
Made make_cuda_tuplemerge(const RuleSet& rules, const ClassifyParams& params);
#endif

}  // namespace warpath::classify::detail
