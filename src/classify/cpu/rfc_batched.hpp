// src/classify/cpu/rfc_batched.hpp: the G-Opt batched RFC loop of cpu.rfc (rfc_cpu.cpp), also
// run by cpu.split over its rest tree.
#pragma once
#include <cstdint>

#include "classify/core/rfc_core.hpp"
#include "warpath/classify/rule.hpp"

namespace warpath::classify::detail {

/// out[i] = core::rfc_lookup(v, key i) for keys [begin, end): keys advance in groups, and each
/// phase's table entries of the whole group are prefetched before any of them is loaded.
void rfc_batched(const core::RfcView& v, const KeyBatch& keys, uint32_t* out, uint32_t begin,
                 uint32_t end);

}  // namespace warpath::classify::detail
