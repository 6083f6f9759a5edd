// src/pattern/core/ac_core.hpp
//
// The one body of Aho-Corasick literal matching (cpu.ac and cuda.ac; semantics in
// include/warpath/pattern/pattern.hpp).
//
// The automaton is a full DFA over byte classes: every byte is folded to lower case and mapped
// to a class (bytes no literal uses share class 0), and next[state * width + class] is the next
// state, its top bit set when that state ends some literal (own outputs or, through the output
// link, a suffix's). Caseless literals are in the trie as they are; case-sensitive ones too, in
// lower case, and each of their matches is confirmed against the original bytes. So a match is
// (state walk, optional confirmation): no backtracking, one table load per byte.
//
// Slices: a scan may start anywhere with the root state as long as it begins (max_len - 1)
// bytes before the first offset it reports (no literal is longer), which is how cuda.ac splits
// a block over threads and cpu.ac over interleaved lanes.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::pattern::core {

inline constexpr uint32_t kMatchBit   = 0x80000000u;
inline constexpr uint32_t kStateMask  = 0x7fffffffu;
inline constexpr uint32_t kNoConfirm  = 0xffffffffu;

struct AcOutput {
  uint32_t id;
  uint32_t len;
  uint32_t bytes;  ///< offset of the literal's bytes in AcView::literals, or kNoConfirm (caseless)
};

/// The automaton's arrays (host or device memory).
///
/// States are numbered breadth first. The first `dense` states (those up to a depth, where a
/// scan spends nearly all its time) have full rows in `next`; a deeper state keeps only its
/// trie children (sparse_class / sparse_next, in sparse_begin's range) and its failure link,
/// followed until a child matches or a dense state answers. With every state dense this is the
/// full DFA; the split keeps the table in cache (ET Open's literals: see ac_image.hpp).
struct AcView {
  const uint8_t* classes   = nullptr;  ///< [256] byte -> class
  const uint32_t* next     = nullptr;  ///< [dense * width]
  uint32_t width           = 1;
  uint32_t dense           = 1;        ///< states with full rows: 0 .. dense - 1
  const uint32_t* sparse_begin = nullptr;  ///< [states - dense + 1] into sparse_class/next
  const uint8_t* sparse_class  = nullptr;
  const uint32_t* sparse_next  = nullptr;  ///< the child, with kMatchBit when it ends a literal
  const uint32_t* fail         = nullptr;  ///< [states - dense] failure link of a sparse state
  const uint32_t* out_begin = nullptr;  ///< [states + 1] own outputs of each state
  const uint32_t* out_link  = nullptr;  ///< [states] next state on the suffix chain with outputs; 0: none
  const AcOutput* outputs   = nullptr;
  const uint8_t* literals   = nullptr;
  uint32_t max_len          = 1;
};

WARPATH_HD uint32_t ac_step(const AcView& v, uint32_t state, uint8_t byte) {
  const uint32_t c = v.classes[byte];
  uint32_t s       = state & kStateMask;
  while (s >= v.dense) {  // a deep state: its children, else its failure link
    const uint32_t k = s - v.dense;
    for (uint32_t e = v.sparse_begin[k]; e < v.sparse_begin[k + 1]; ++e)
      if (v.sparse_class[e] == c) return v.sparse_next[e];
    s = v.fail[k];
  }
  return v.next[size_t(s) * v.width + c];
}

/// Every literal ending at offset `end` in state `state` (which has kMatchBit): emit(id, end)
/// for each, case-sensitive ones after comparing their bytes, read with at(offset).
template <class ByteAt, class Emit>
WARPATH_HD void ac_report(const AcView& v, uint32_t state, uint64_t end, ByteAt at, Emit emit) {
  uint32_t s = state & kStateMask;
  while (s != 0) {
    for (uint32_t o = v.out_begin[s]; o < v.out_begin[s + 1]; ++o) {
      const AcOutput out = v.outputs[o];
      bool ok = true;
      if (out.bytes != kNoConfirm)
        for (uint32_t k = 0; k < out.len && ok; ++k)
          ok = at(end - out.len + k) == v.literals[out.bytes + k];
      if (ok) emit(out.id, end);
    }
    s = v.out_link[s];
  }
}

/// Scans data[from, to) from `state`; offsets reported are base + index + 1, and only those
/// above `report_after` (a slice's warm-up bytes report nothing). Returns the final state.
template <class ByteAt, class Emit>
WARPATH_HD uint32_t ac_scan(const AcView& v, uint32_t state, const uint8_t* data, uint64_t from,
                            uint64_t to, uint64_t base, uint64_t report_after, ByteAt at,
                            Emit emit) {
  for (uint64_t i = from; i < to; ++i) {
    state = ac_step(v, state, data[i]);
    if ((state & kMatchBit) && base + i + 1 > report_after) ac_report(v, state, base + i + 1, at, emit);
  }
  return state & kStateMask;
}

}  // namespace warpath::pattern::core
