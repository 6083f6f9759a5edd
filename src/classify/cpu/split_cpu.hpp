// src/classify/cpu/split_cpu.hpp: the CPU loops of cpu.split over core/split_core.hpp.
//
//   split_batched           G-Opt groups (see split_cpu.cpp); on a CPU with AVX-512 a node's
//                           16 keys are compared with the address in one instruction.
//   split_batched_portable  the same with the portable node count, whatever the CPU (what
//                           tests compare).
// Both give out[i] = core::split_lookup(v, key i) for keys [begin, end) of `keys`.
#pragma once
#include <cstdint>

#include "classify/core/split_core.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

void split_batched(const core::SplitView& v, const KeyBatch& keys, uint32_t* out, uint32_t begin,
                   uint32_t end);
void split_batched_portable(const core::SplitView& v, const KeyBatch& keys, uint32_t* out,
                            uint32_t begin, uint32_t end);

}  // namespace warpath::classify::detail
