// src/packet/cuda/info_words.cuh: a PacketInfo to and from device global memory as four
// 16-byte words. The struct is bytes and shorts: assigned or read field by field it costs
// dozens of narrow accesses a packet (cuda.parse's stores, cuda.flow's 62 byte loads). The
// array must be 16-byte aligned: launchers check with info_words_aligned(). Device code only.
#pragma once
#include <cstdint>

#include "warpath/packet/info.hpp"

namespace warpath::packet::detail {

union InfoWords {
  PacketInfo info;
  uint4 words[4];
};
static_assert(sizeof(PacketInfo) == 4 * sizeof(uint4), "a PacketInfo is four 16-byte words");

inline bool info_words_aligned(const PacketInfo* p) {
  return reinterpret_cast<uintptr_t>(p) % alignof(uint4) == 0;
}

/// infos[i] into `r`, read through the read-only cache; use `r.info` in place (copied out of
/// the union, or returned by value, the fields were rebuilt from the words one by one).
__device__ __forceinline__ void load_info(const PacketInfo* __restrict__ infos, uint32_t i,
                                          InfoWords& r) {
  const uint4* from = reinterpret_cast<const uint4*>(infos + i);
#pragma unroll
  for (int w = 0; w < 4; ++w) r.words[w] = __ldg(from + w);
}

/// out[i] = info.
__device__ __forceinline__ void store_info(PacketInfo* __restrict__ out, uint32_t i,
                                           const PacketInfo& info) {
  const InfoWords r{info};
  uint4* to = reinterpret_cast<uint4*>(out + i);
#pragma unroll
  for (int w = 0; w < 4; ++w) to[w] = r.words[w];
}

}  // namespace warpath::packet::detail
