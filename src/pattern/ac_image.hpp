// src/pattern/ac_image.hpp: the Aho-Corasick automaton of a literal set (core/ac_core.hpp has
// its layout and the scan body), built on the host and owned here; cuda.ac copies the arrays
// to the device.
#pragma once
#include <cstdint>
#include <vector>

#include "pattern/core/ac_core.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

struct AcImage {
  uint8_t classes[256] = {};
  uint32_t width = 1, states = 1, max_len = 1, dense = 1;
  std::vector<uint32_t> next, out_begin, out_link;
  std::vector<uint32_t> sparse_begin, sparse_next, fail;
  std::vector<uint8_t> sparse_class;
  std::vector<core::AcOutput> outputs;
  std::vector<uint8_t> literals;
  std::vector<uint32_t> single_match;  ///< sorted ids of H patterns: only their first match

  core::AcView view() const {
    core::AcView v;
    v.classes   = classes;
    v.next      = next.data();
    v.width     = width;
    v.dense        = dense;
    v.sparse_begin = sparse_begin.data();
    v.sparse_class = sparse_class.data();
    v.sparse_next  = sparse_next.data();
    v.fail         = fail.data();
    v.out_begin = out_begin.data();
    v.out_link  = out_link.data();
    v.outputs   = outputs.data();
    v.literals  = literals.data();
    v.max_len   = max_len;
    return v;
  }
  size_t bytes() const {
    return sizeof classes + next.size() * 4 + out_begin.size() * 4 + out_link.size() * 4 +
           outputs.size() * sizeof(core::AcOutput) + literals.size() + sparse_begin.size() * 4 +
           sparse_next.size() * 4 + fail.size() * 4 + sparse_class.size();
  }
};

/// The largest transition table an automaton may have (states x classes x 4 bytes).
inline constexpr uint64_t kMaxAcTableBytes = uint64_t(2) << 30;

/// Depth up to which states get full rows by default (the rest: children and failure links).
/// Chosen by measurement (docs/adr/0010): on ET Open's 23,609 literals depth 3 keeps 11.2 MB of
/// the full DFA's 196 MB (it fits an H100's 50 MB L2) at 0.96-1.0x its speed on one EPYC core;
/// depth 1 (5.1 MB) costs 20%.
inline constexpr uint32_t kAcDenseDepth = 3;
/// Every state dense: the classic full DFA.
inline constexpr uint32_t kAcAllDense = UINT32_MAX;

/// The automaton of `patterns`, states up to `dense_depth` with full rows; kNotSupported naming
/// the first pattern that is not a literal (as_literal), or when the dense table would exceed
/// kMaxAcTableBytes.
Result<AcImage> build_ac_image(const std::vector<Pattern>& patterns, uint32_t dense_depth = kAcDenseDepth);

}  // namespace warpath::pattern::detail
