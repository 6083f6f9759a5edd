// tests/lookup/tbl24_chunks_test.cpp: the compressed tbl24 (lookup/tbl24_chunks.hpp) against the
// plain tbl24 it is derived from, entry by entry over all 2^24 /24s: after build, for uniform
// chunks, chunks of 256 distinct entries (the largest records) and both entry widths; after
// every step of a stream of writes with refresh(), with records retired, released and reused;
// and the pool's capacity check. The engine built on it (cpu.lpm.compressed) is checked
// against ref.lpm in fib_engines_test.cpp.
#include "lookup/tbl24_chunks.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <random>
#include <vector>

#include "lookup/core/tbl24_chunks_core.hpp"

namespace warpath::lookup {
namespace {

using detail::Tbl24Chunks;

constexpr uint32_t kSlots = 1u << 24;

/// Runs of random lengths (1 to 2^17 slots) and random values from a small set, so that some
/// chunks are uniform, some equal neighbours, and the first chunks hold 256 distinct entries.
template <class E>
std::vector<E> pattern(uint64_t seed) {
  std::mt19937_64 rng(seed);
  std::vector<E> t(kSlots);
  for (uint32_t s = 0; s < kSlots;) {
    const uint32_t len = 1u + uint32_t(rng() % (1u << (rng() % 18)));
    const E v          = E(rng() % 40);
    for (uint32_t k = 0; k < len && s < kSlots; ++k) t[s++] = v;
  }
  for (uint32_t s = 0; s < 3 * 256; ++s) t[s] = E(s % 256 + 1000);  // every entry its own run
  return t;
}

template <class E>
void expect_equal(const Tbl24Chunks& c, const std::vector<E>& t, uint32_t lo_chunk,
                  uint32_t hi_chunk) {
  const core::Tbl24ChunksView v = c.view();
  uint64_t bad                  = 0;
  for (uint64_t s = uint64_t(lo_chunk) << 8; s < (uint64_t(hi_chunk) + 1) << 8; ++s) {
    // Any address of the /24: the host byte must not matter.
    const auto addr = uint32_t(s << 8 | (s * 37 & 255));
    if (core::tbl24_chunk_entry<E>(v, addr) != t[s] && bad++ < 5)
      ADD_FAILURE() << "slot " << s << ": chunks say "
                    << uint64_t(core::tbl24_chunk_entry<E>(v, addr)) << ", tbl24 "
                    << uint64_t(t[s]);
  }
  EXPECT_EQ(bad, 0u);
}

template <class E>
void build_and_update(uint64_t seed) {
  std::vector<E> t = pattern<E>(seed);
  auto built       = Tbl24Chunks::build(t.data());
  ASSERT_TRUE(built.is_ok()) << built.status().message();
  Tbl24Chunks& c = **built;
  expect_equal(c, t, 0, 0xFFFF);
  const uint64_t used0 = c.used_bytes();

  std::mt19937_64 rng(seed * 7 + 1);
  for (int step = 0; step < 300; ++step) {
    // A route's footprint: one /24 up to a /12 (4,096 /24s), aligned as routes are.
    const unsigned len   = 12 + unsigned(rng() % 13);
    const uint32_t n     = 1u << (24 - len);
    const uint32_t first = uint32_t(rng() % kSlots) & ~(n - 1);
    const E v            = E(rng() % 50);
    const bool patchy    = rng() % 3 == 0;  // only some slots change, as under longer routes
    for (uint32_t s = first; s < first + n; ++s)
      if (!patchy || rng() % 4 == 0) t[s] = v;
    const uint32_t lo = first >> 8, hi = (first + n - 1) >> 8;
    ASSERT_TRUE(c.reserve(lo, hi).is_ok()) << "step " << step;
    c.refresh(t.data(), lo, hi);
    expect_equal(c, t, lo, hi);
    if (c.wants_release() || step % 10 == 0) c.release_retired();
    if (step % 50 == 49) expect_equal(c, t, 0, 0xFFFF);
  }
  c.release_retired();
  expect_equal(c, t, 0, 0xFFFF);
  // Released records are reused: the pool in use stays near its start.
  EXPECT_LT(c.used_bytes(), used0 * 2 + (uint64_t(1) << 20));
  EXPECT_FALSE(c.has_retired());

  // Refreshing unchanged chunks publishes nothing.
  const uint32_t records = c.records();
  c.refresh(t.data(), 0, 0xFFFF);
  EXPECT_FALSE(c.has_retired());
  EXPECT_EQ(c.records(), records);
}

TEST(Tbl24Chunks, SixteenBitEntriesEqualTbl24ThroughUpdates) { build_and_update<uint16_t>(1); }
TEST(Tbl24Chunks, ThirtyTwoBitEntriesEqualTbl24ThroughUpdates) { build_and_update<uint32_t>(2); }

TEST(Tbl24Chunks, UniformTableSharesOneRecord) {
  std::vector<uint16_t> t(kSlots, 7);
  auto c = Tbl24Chunks::build(t.data());
  ASSERT_TRUE(c.is_ok());
  EXPECT_EQ((*c)->records(), 1u);
  expect_equal(**c, t, 0, 0xFFFF);
  // One /24 changes: its chunk gets a record of its own; changed back, it shares again.
  t[0x1234 * 256 + 9] = 8;
  (*c)->refresh(t.data(), 0x1234, 0x1234);
  EXPECT_EQ((*c)->records(), 2u);
  expect_equal(**c, t, 0x1233, 0x1235);
  t[0x1234 * 256 + 9] = 7;
  (*c)->refresh(t.data(), 0x1234, 0x1234);
  EXPECT_EQ((*c)->records(), 1u);
  EXPECT_TRUE((*c)->has_retired());
  expect_equal(**c, t, 0, 0xFFFF);
}

TEST(Tbl24Chunks, ReserveRefusesWhatMightNotFit) {
  std::vector<uint16_t> t = pattern<uint16_t>(3);
  auto c                  = Tbl24Chunks::build(t.data());
  ASSERT_TRUE(c.is_ok());
  EXPECT_TRUE((*c)->reserve(5, 5).is_ok());
  // Every chunk at its largest record (256 runs) is more than the pool keeps spare.
  const Status all = (*c)->reserve(0, 0xFFFF);
  EXPECT_EQ(all.code(), Errc::kCapacity);
  EXPECT_NE(all.message().find("65536 chunks"), std::string::npos) << all.message();
}

}  // namespace
}  // namespace warpath::lookup
