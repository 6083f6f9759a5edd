// src/pattern/core/dfa_core.hpp
//
// The one body of DFA regex matching (cpu.dfa and cuda.dfa; semantics in
// include/warpath/pattern/pattern.hpp).
//
// A group of patterns is one search DFA (subset construction over their position automata, a
// match may start at any offset): next[state * width + class] is the next state, its top bit
// set when that state ends a match of some pattern of the group; accepts of a state list those
// patterns' ids. State `start` is where a scan begins at offset 0 (^ holds there); later the
// automaton never returns to it. Matches have no length bound, so a block is scanned by one
// thread from its start (no slices, unlike ac_core.hpp).
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::pattern::core {

inline constexpr uint32_t kDfaMatchBit  = 0x80000000u;
inline constexpr uint32_t kDfaStateMask = 0x7fffffffu;

struct DfaView {
  const uint8_t* classes       = nullptr;  ///< [256]
  const uint32_t* next         = nullptr;  ///< [states * width]
  uint32_t width               = 1;
  uint32_t start               = 0;
  const uint32_t* accept_begin = nullptr;  ///< [states + 1]
  const uint32_t* accepts      = nullptr;  ///< pattern ids
};

/// Scans data[from, to) from `state`; emit(id, base + index + 1) for each match. Returns the
/// final state.
template <class Emit>
WARPATH_HD uint32_t dfa_scan(const DfaView& v, uint32_t state, const uint8_t* data, uint64_t from,
                             uint64_t to, uint64_t base, Emit emit) {
  for (uint64_t i = from; i < to; ++i) {
    state = v.next[size_t(state & kDfaStateMask) * v.width + v.classes[data[i]]];
    if (state & kDfaMatchBit) {
      const uint32_t s = state & kDfaStateMask;
      for (uint32_t a = v.accept_begin[s]; a < v.accept_begin[s + 1]; ++a) emit(v.accepts[a], base + i + 1);
    }
  }
  return state & kDfaStateMask;
}

}  // namespace warpath::pattern::core
