// warpath/core/memory.hpp's PinnedVector: a vector over page-locked memory where a device is, ordinary memory
// otherwise; either way it grows, copies and frees like std::vector, and its data is 64-byte
// aligned (the header that records how to free it keeps the alignment).
#include <gtest/gtest.h>

#include <cstdint>
#include <numeric>

#include "warpath/core/memory.hpp"

namespace warpath {
namespace {

TEST(PinnedVector, GrowsCopiesAndKeepsAlignment) {
  PinnedVector<uint32_t> v;
  for (uint32_t i = 0; i < 100'000; ++i) {
    v.push_back(i);
    if ((i & (i + 1)) == 0)  // after each reallocation point
      EXPECT_EQ(reinterpret_cast<uintptr_t>(v.data()) % 64, 0u) << i;
  }
  ASSERT_EQ(v.size(), 100'000u);
  EXPECT_EQ(std::accumulate(v.begin(), v.end(), uint64_t(0)), uint64_t(99'999) * 100'000 / 2);
  PinnedVector<uint32_t> copy(v.begin() + 10, v.begin() + 20);
  ASSERT_EQ(copy.size(), 10u);
  EXPECT_EQ(copy.front(), 10u);
  EXPECT_EQ(copy.back(), 19u);
  v.clear();
  v.shrink_to_fit();  // frees through the allocator's header
  EXPECT_EQ(v.capacity(), 0u);
}

TEST(PinnedVector, EmptyAndLargeElements) {
  struct Wide {
    uint64_t w[9];
  };
  PinnedVector<Wide> v(3);
  for (size_t i = 0; i < v.size(); ++i) EXPECT_EQ(reinterpret_cast<uintptr_t>(&v[i]) % 8, 0u);
  v.resize(0);
  EXPECT_TRUE(v.empty());
  PinnedVector<uint8_t> none;
  EXPECT_EQ(none.data(), nullptr);
}

}  // namespace
}  // namespace warpath
