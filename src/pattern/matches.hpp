// src/pattern/matches.hpp: the last step of every scan: a match is (id, end), so matches are
// sorted by (end, id) and a repeat (two patterns with one id ending at one offset) is dropped,
// as Hyperscan reports them.
#pragma once
#include <algorithm>
#include <vector>

#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

inline void sort_unique(std::vector<Match>& out, size_t from) {
  // Most engines report in offset order already (Vectorscan does, ids at one offset in any
  // order): an insertion sort is linear there; when it has moved too much (interleaved lanes or
  // DFA groups report several sorted runs), a full sort takes over.
  const auto first = out.begin() + long(from);
  size_t moves = 0;
  const size_t budget = 4 * (out.size() - from) + 64;
  bool sorted = true;
  for (auto it = first + (first != out.end()); it < out.end() && sorted; ++it) {
    const Match m = *it;
    auto hole     = it;
    while (hole != first && m < *(hole - 1)) {
      *hole = *(hole - 1);
      --hole;
      if (++moves > budget) {
        sorted = false;
        break;
      }
    }
    *hole = m;
  }
  if (!sorted) std::sort(first, out.end());
  out.erase(std::unique(first, out.end()), out.end());
}

}  // namespace warpath::pattern::detail
