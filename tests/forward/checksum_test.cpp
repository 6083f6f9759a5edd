// tests/forward/checksum_test.cpp: the RFC 1624 incremental update against full recomputation.
#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "forward/core/forward_core.hpp"
#include "packet/frame_builder.hpp"

namespace warpath::forward {
namespace {

using testing::ones_complement_checksum;

uint16_t full_checksum(std::vector<uint8_t> h) {
  h[10] = h[11] = 0;
  return ones_complement_checksum(h.data(), h.size());
}

void set16(std::vector<uint8_t>& h, size_t at, uint16_t v) {
  h[at]     = uint8_t(v >> 8);
  h[at + 1] = uint8_t(v);
}

// A random IPv4 header of 20-60 bytes with TTL >= 2 and a correct checksum.
std::vector<uint8_t> random_header(std::mt19937_64& rng) {
  const size_t ihl = 5 + rng() % 11;
  std::vector<uint8_t> h(ihl * 4);
  for (auto& b : h) b = uint8_t(rng());
  h[0] = uint8_t(0x40 | ihl);
  h[8] = uint8_t(2 + rng() % 254);
  set16(h, 10, full_checksum(h));
  return h;
}

// Decrements TTL with the code under test, compares with a full recomputation and returns the
// new checksum.
uint16_t expect_incremental_equals_full(std::vector<uint8_t> h) {
  EXPECT_EQ(ones_complement_checksum(h.data(), h.size()), 0) << "input must verify";
  const uint8_t ttl = h[8];
  core::decrement_ttl4(h.data());
  EXPECT_EQ(h[8], ttl - 1);
  const uint16_t got = uint16_t(h[10] << 8 | h[11]);
  EXPECT_EQ(got, full_checksum(h)) << "ttl " << int(ttl);
  EXPECT_EQ(ones_complement_checksum(h.data(), h.size()), 0);
  return got;
}

TEST(Rfc1624, RandomHeadersMatchFullRecomputation) {
  std::mt19937_64 rng(1624);
  for (int i = 0; i < 200000; ++i) {
    SCOPED_TRACE(i);
    expect_incremental_equals_full(random_header(rng));
    if (HasFatalFailure()) return;
  }
}

TEST(Rfc1624, EveryTtlOfOneHeader) {
  std::mt19937_64 rng(7);
  auto h = random_header(rng);
  for (int ttl = 2; ttl <= 255; ++ttl) {
    h[8] = uint8_t(ttl);
    set16(h, 10, full_checksum(h));
    expect_incremental_equals_full(h);
  }
}

// Adjusts the identification field so that the header's words (checksum excluded) sum to
// one's-complement zero, i.e. a full recomputation gives checksum 0x0000.
void make_sum_zero(std::vector<uint8_t>& h) {
  set16(h, 4, 0);
  const uint16_t c = full_checksum(h);  // ~sum: adding it as the ID makes the sum 0xFFFF
  set16(h, 4, c);
  ASSERT_EQ(full_checksum(h), 0x0000);
}

TEST(Rfc1624, ResultIsZeroWhereFullRecomputationIsZero) {
  // After the decrement the header sums to zero: RFC 1141's HC + m - m' would give 0xFFFF here;
  // equation 3 must give 0x0000, as recomputation does.
  std::mt19937_64 rng(3);
  for (int i = 0; i < 2000; ++i) {
    auto h = random_header(rng);
    h[8]   = uint8_t(h[8] - 1);  // the header as it will be after the decrement
    make_sum_zero(h);
    h[8] = uint8_t(h[8] + 1);
    set16(h, 10, full_checksum(h));
    EXPECT_EQ(expect_incremental_equals_full(h), 0x0000) << "checksum after decrement";
  }
}

TEST(Rfc1624, ReceivedChecksumOfFfffIsHandled) {
  // A header whose words sum to zero verifies with checksum 0x0000 and with 0xFFFF (the two
  // one's-complement zeros). Senders may use either; the update must be exact for both.
  std::mt19937_64 rng(5);
  for (int i = 0; i < 2000; ++i) {
    auto h = random_header(rng);
    make_sum_zero(h);
    for (uint16_t hc : {uint16_t(0x0000), uint16_t(0xFFFF)}) {
      auto x = h;
      set16(x, 10, hc);
      expect_incremental_equals_full(x);
    }
  }
}

TEST(Rfc1624, UpdateWordMatchesDefinition) {
  // checksum_update16 against the arithmetic definition, for every received checksum value.
  for (uint32_t hc = 0; hc <= 0xFFFF; ++hc) {
    const uint16_t m_old = 0x4011, m_new = 0x3f11;
    uint32_t sum = (~hc & 0xffff) + (~m_old & 0xffff) + m_new;
    while (sum >> 16) sum = (sum & 0xffff) + (sum >> 16);
    ASSERT_EQ(core::checksum_update16(uint16_t(hc), m_old, m_new), uint16_t(~sum));
  }
}

}  // namespace
}  // namespace warpath::forward
