// src/pattern/matches.hpp: the last step of every scan: a match is (id, end), so matches are
// sorted by (end, id) and a repeat (two patterns with one id ending at one offset) is dropped,
// as Hyperscan reports them.
#pragma once
#include <algorithm>
#include <vector>

#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern::detail {

inline void sort_unique(std::vector<Match>& out, size_t from) {
  std::sort(out.begin() + long(from), out.end());
  out.erase(std::unique(out.begin() + long(from), out.end()), out.end());
}

}  // namespace warpath::pattern::detail
