// src/pattern/ac_image.hpp: the Aho-Corasick automaton of a literal set (core/ac_core.hpp has
// its layout and the scan body), built on the host and owned here; cuda.ac copies the arrays
// to the device.
#pragma once
#include <cstdint>
#include <unordered_set>
#include <vector>

#include "pattern/core/ac_core.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

struct AcImage {
  uint8_t classes[256] = {};
  uint32_t width = 1, states = 1, max_len = 1;
  std::vector<uint32_t> next, out_begin, out_link;
  std::vector<core::AcOutput> outputs;
  std::vector<uint8_t> literals;
  std::vector<uint32_t> single_match;  ///< sorted ids of H patterns: only their first match

  core::AcView view() const {
    core::AcView v;
    v.classes   = classes;
    v.next      = next.data();
    v.width     = width;
    v.out_begin = out_begin.data();
    v.out_link  = out_link.data();
    v.outputs   = outputs.data();
    v.literals  = literals.data();
    v.max_len   = max_len;
    return v;
  }
  size_t bytes() const {
    return sizeof classes + next.size() * 4 + out_begin.size() * 4 + out_link.size() * 4 +
           outputs.size() * sizeof(core::AcOutput) + literals.size();
  }
};

/// The largest transition table an automaton may have (states x classes x 4 bytes).
inline constexpr uint64_t kMaxAcTableBytes = uint64_t(2) << 30;

/// The automaton of `patterns`; kNotSupported naming the first pattern that is not a literal
/// (as_literal), or when the table would exceed kMaxAcTableBytes.
Result<AcImage> build_ac_image(const std::vector<Pattern>& patterns);

/// Keeps only each single-match (H) pattern's first match in out[from, end) (sorted).
/// `reported`: the H patterns reported already (per block or per stream).
void keep_first_matches(const AcImage& image, std::vector<Match>& out, size_t from,
                        std::unordered_set<uint32_t>& reported);

}  // namespace warpath::pattern::detail
