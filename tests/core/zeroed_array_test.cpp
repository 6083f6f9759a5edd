// src/core/huge_pages.hpp's ZeroedArray: a fixed array of trivial elements on fresh anonymous
// pages, every element zero as value-initialisation would leave it, with or without the pages
// faulted in at once; it moves, and an empty one holds nothing.
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>

#include "core/huge_pages.hpp"

namespace warpath::detail {
namespace {

struct Entry {  // the shape of a flow table's entry: trivial, two cache lines
  uint64_t words[15];
  uint8_t list;
};

TEST(ZeroedArray, ElementsStartZeroWhetherPopulatedOrNot) {
  for (const bool populate : {false, true}) {
    const size_t n = (size_t(3) << 20) / sizeof(Entry) + 7;  // past a huge page, not a multiple
    ZeroedArray<Entry> a(n, populate);
    ASSERT_EQ(a.size(), n);
    // past a huge page: on a 2 MB boundary, so that the kernel can back it with huge pages
    EXPECT_EQ(reinterpret_cast<uintptr_t>(a.data()) % (size_t(2) << 20), 0u);
    for (size_t i = 0; i < n; i += 997) {
      for (const uint64_t w : a[i].words) ASSERT_EQ(w, 0u) << i;
      ASSERT_EQ(a[i].list, 0u) << i;
    }
    EXPECT_EQ(a[n - 1].list, 0u);
    a[n - 1].list  = 9;
    a[0].words[14] = 42;
    const auto& c  = a;
    EXPECT_EQ(c[n - 1].list, 9u);
    EXPECT_EQ(c.data()[0].words[14], 42u);
  }
}

TEST(ZeroedArray, MovesAndEmpty) {
  ZeroedArray<uint32_t> a(1000, false);
  a[999] = 7;
  ZeroedArray<uint32_t> b(std::move(a));
  EXPECT_EQ(a.size(), 0u);
  EXPECT_EQ(a.data(), nullptr);
  ASSERT_EQ(b.size(), 1000u);
  EXPECT_EQ(b[999], 7u);
  ZeroedArray<uint32_t> c(10, true);
  c = std::move(b);  // c's own pages are unmapped
  EXPECT_EQ(c[999], 7u);
  EXPECT_EQ(c[0], 0u);
  ZeroedArray<uint32_t> none(0, false);
  EXPECT_EQ(none.size(), 0u);
  EXPECT_EQ(none.data(), nullptr);
}

}  // namespace
}  // namespace warpath::detail
