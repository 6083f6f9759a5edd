// tests/openflow/flow_hash_test.cpp: the flow tables' per-key functions
// (openflow/core/flow_hash_core.hpp, and core/flow_hash_avx512.hpp's AVX-512VL forms). The host
// runs them with SSE2 or AVX-512VL and the CUDA kernel word by
// word over tables the host built, so both must give the same bits.
#include <gtest/gtest.h>

#include <random>

#include "openflow/core/flow_hash_core.hpp"
#include "openflow/flow_image_table.hpp"  // WARPATH_AVX512_LOOKUP
#include "warpath/openflow/flow_table.hpp"

#if WARPATH_AVX512_LOOKUP
#include <immintrin.h>  // before the pragma, as the library's file does
#pragma GCC push_options
#pragma GCC target("avx2,avx512f,avx512vl")
#include "openflow/core/flow_hash_avx512.hpp"
#define WARPATH_TEST_AVX512 1
namespace warpath::openflow::core {
namespace {
// Called only where the CPU has AVX-512VL (FlowImage::has_isa).
uint64_t avx512_hash(const packet::OfTuple& k) { return avx512::Ops::hash_key(k); }
packet::OfTuple avx512_mask(const packet::OfTuple& k, const packet::OfTuple& m) {
  return avx512::Ops::apply_mask(k, m);
}
bool avx512_same(const packet::OfTuple& a, const packet::OfTuple& b) {
  return avx512::Ops::same_key(a, b);
}
uint32_t avx512_sigs(const Bucket& bk, uint32_t sig, bool& open) {
  return avx512::Ops::sig_matches(bk, sig, open);
}
}  // namespace
}  // namespace warpath::openflow::core
#pragma GCC pop_options
#endif

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

#ifdef WARPATH_TEST_AVX512
// FlowImage::lookup's AVX-512VL steps give core's values (the images' lookups are also checked
// against the reference with each instruction set: flow_table_test.cpp).
TEST(FlowHashCore, Avx512StepsAreCores) {
  if (!FlowImage::has_isa(FlowImage::LookupIsa::kAvx512)) GTEST_SKIP() << "no AVX-512VL here";
  std::mt19937_64 rng(13);
  for (int i = 0; i < 20000; ++i) {
    packet::OfTuple a = random_tuple(rng), m = random_tuple(rng);
    if (i % 4 == 1) a.w[i % packet::kOfWords] = 0xFFFF'FFFFu;
    ASSERT_EQ(avx512_hash(a), hash_key_words(a)) << "key " << i;
    const packet::OfTuple r = avx512_mask(a, m), want = apply_mask(a, m);
    for (int w = 0; w < packet::kOfWords; ++w) ASSERT_EQ(r.w[w], want.w[w]) << "word " << w;
    ASSERT_TRUE(avx512_same(a, a));
    packet::OfTuple b = a;
    b.w[i % packet::kOfWords] ^= 1u << (i % 32);
    ASSERT_FALSE(avx512_same(a, b)) << "key " << i;
    ASSERT_FALSE(avx512_same(b, a)) << "key " << i;
    // A bucket with signatures drawn from a few values, some ways empty.
    Bucket bk{};
    for (uint32_t j = 0; j < kBucketWays; ++j) bk.sig[j] = uint32_t(rng() % 4);
    const uint32_t sig = uint32_t(rng() % 4);
    bool open = false, want_open = false;
    const uint32_t got = avx512_sigs(bk, sig, open);
    ASSERT_EQ(got, sig_matches(bk, sig, want_open)) << "bucket " << i;
    ASSERT_EQ(open, want_open) << "bucket " << i;
  }
}
#endif

}  // namespace
}  // namespace warpath::openflow::core
