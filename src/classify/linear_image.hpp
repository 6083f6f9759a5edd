// src/classify/linear_image.hpp: what cpu.linear and cuda.linear share beyond the core body.
#pragma once
#include <cstdint>
#include <vector>

#include "classify/core/linear_core.hpp"
#include "classify/engines.hpp"

namespace warpath::classify::detail {

/// The image of core/linear_core.hpp for `rules` (built in cpu/linear_cpu.cpp): live rules
/// sorted by (priority desc, index asc) into `order`, blocks in `storage` from a 64-byte
/// aligned start. The view points into both vectors.
core::LinearView build_linear_image(const RuleSet& rules, std::vector<uint32_t>& order,
                                    std::vector<uint32_t>& storage);

/// The scan path of a cpu.linear engine: 0 best available, 1 portable, 2 AVX2, 3 AVX-512
/// (kNotSupported when this CPU lacks it). Tests use it to cover every path on one machine;
/// make_cpu_linear() passes 0.
Made make_cpu_linear_isa(const RuleSet& rules, const ClassifyParams& params, int isa);

}  // namespace warpath::classify::detail
