// tests/openflow/flow_hash_test.cpp: the flow tables' per-key functions
// (openflow/core/flow_hash_core.hpp). The host runs them with SSE2 and the CUDA kernel word by
// word over tables the host built, so both must give the same bits.
#include <gtest/gtest.h>

#include <random>

#include "openflow/core/flow_hash_core.hpp"

namespace warpath::openflow::core {
namespace {

packet::OfTuple random_tuple(std::mt19937_64& rng) {
  packet::OfTuple t;
  for (uint32_t& w : t.w) w = uint32_t(rng());
  return t;
}

TEST(FlowHashCore, HostHashIsTheWordByWordDefinition) {
  std::mt19937_64 rng(7);
  for (int i = 0; i < 100000; ++i) {
    packet::OfTuple k = random_tuple(rng);
    if (i % 4 == 1) k.w[i % packet::kOfWords] = 0xFFFF'FFFFu;  // sums that wrap
    if (i % 4 == 2) k = packet::OfTuple{};
    ASSERT_EQ(hash_key(k), hash_key_words(k)) << "key " << i;
  }
}

TEST(FlowHashCore, SameKeyAndMaskSeeEveryWord) {
  std::mt19937_64 rng(11);
  for (int i = 0; i < 2000; ++i) {
    const packet::OfTuple a = random_tuple(rng), m = random_tuple(rng);
    const packet::OfTuple r = apply_mask(a, m);
    for (int w = 0; w < packet::kOfWords; ++w) ASSERT_EQ(r.w[w], a.w[w] & m.w[w]) << "word " << w;
    EXPECT_TRUE(same_key(a, a));
    for (int w = 0; w < packet::kOfWords; ++w) {
      for (uint32_t bit : {0u, 17u, 31u}) {
        packet::OfTuple b = a;
        b.w[w] ^= 1u << bit;
        ASSERT_FALSE(same_key(a, b)) << "word " << w << " bit " << bit;
        ASSERT_FALSE(same_key(b, a)) << "word " << w << " bit " << bit;
      }
    }
  }
}

}  // namespace
}  // namespace warpath::openflow::core
