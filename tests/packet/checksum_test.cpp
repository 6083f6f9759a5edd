// The Internet checksum (src/packet/core/bytes.hpp): the host's word-wide ones_sum folds as the
// device's word-by-word definition (ones_sum_words) does, for every length, alignment, initial
// sum and content, chained as the pseudo-header sums are, and at the all-zero and all-0xFF
// edges where a one's-complement sum has two zeros.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "packet/core/bytes.hpp"

namespace warpath::packet::core {
namespace {

TEST(Checksum, WordWideSumFoldsAsTheWordByWordDefinition) {
  std::mt19937_64 rng(7);
  std::vector<uint8_t> buf(1600 + 8);
  for (int round = 0; round < 4000; ++round) {
    const uint32_t len    = uint32_t(rng() % 1600);
    const uint32_t offset = uint32_t(rng() % 8);  // any alignment
    const int fill        = round % 4;            // random, zeros, 0xFF, sparse
    for (auto& b : buf)
      b = fill == 0   ? uint8_t(rng())
          : fill == 1 ? 0
          : fill == 2 ? 0xFF
                      : (rng() % 16 ? 0 : uint8_t(rng()));
    const uint32_t initial = round % 3 == 0 ? 0 : uint32_t(rng() % (1u << 20));
    const uint8_t* p       = buf.data() + offset;
    ASSERT_EQ(fold_checksum(ones_sum(p, len, initial)),
              fold_checksum(ones_sum_words(p, len, initial)))
        << "length " << len << " offset " << offset << " fill " << fill << " initial " << initial;
    // Chained, as a pseudo-header's addresses then the segment are summed.
    const uint32_t cut = len ? uint32_t(rng() % len) & ~1u : 0;
    ASSERT_EQ(fold_checksum(ones_sum(p + cut, len - cut, ones_sum(p, cut, initial))),
              fold_checksum(ones_sum_words(p + cut, len - cut, ones_sum_words(p, cut, initial))))
        << "length " << len << " cut " << cut;
  }
}

// ones_sum20, the parser's sum of an option-less IPv4 header, folds as the general sums do.
TEST(Checksum, TwentyByteSumIsTheGeneralOne) {
  std::mt19937_64 rng(11);
  uint8_t buf[20 + 8];
  for (int round = 0; round < 20000; ++round) {
    const int fill = round % 4;
    for (auto& b : buf)
      b = fill == 0 ? uint8_t(rng()) : fill == 1 ? 0 : fill == 2 ? 0xFF : (rng() % 8 ? 0xFF : 0);
    const uint8_t* p = buf + round % 8;
    ASSERT_EQ(fold_checksum(ones_sum20(p)), fold_checksum(ones_sum_words(p, 20)))
        << "round " << round;
    ASSERT_EQ(fold_checksum(ones_sum20(p)), fold_checksum(ones_sum(p, 20))) << "round " << round;
  }
}

TEST(Checksum, AValidIpv4HeaderSumsToZero) {
  uint8_t h[20] = {0x45, 0, 0,   60, 0x1c, 0x46, 0x40, 0,  0x40, 6,
                   0,    0, 172, 16, 10,   99,   172,  16, 10,   12};
  store_be16(h + 10, fold_checksum(ones_sum(h, 20)));
  EXPECT_EQ(load_be16(h + 10), 0xb1e6);  // the worked example of Wikipedia's "IPv4 header checksum"
  EXPECT_EQ(fold_checksum(ones_sum(h, 20)), 0);
  h[15] ^= 1;
  EXPECT_NE(fold_checksum(ones_sum(h, 20)), 0);
  const uint8_t zeros[20] = {};
  EXPECT_EQ(fold_checksum(ones_sum(zeros, 20)), 0xFFFF);
  EXPECT_EQ(fold_checksum(ones_sum(zeros, 0)), 0xFFFF);
}

}  // namespace
}  // namespace warpath::packet::core
