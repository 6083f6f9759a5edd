// RangeStore (the engines' store) against ByteStore (the oracle's): random inserts that land in
// order, in holes and across stored ranges under several overlap rules, with every answer
// compared after each step, runs read both ways (view + drop, take), and the arena bound.
#include "core/ranges/range_store.hpp"

#include <gtest/gtest.h>

#include <random>
#include <vector>

#include "core/ranges/byte_store.hpp"

namespace {

using warpath::ranges::ByteStore;
using warpath::ranges::RangeStore;

// Overlap rules of the kind the stream policies use: a function of the new piece's extent and
// the stored piece's.
struct Wins {
  int rule;
  uint64_t os, oe;
  bool operator()(uint64_t a, uint64_t b) const {
    switch (rule) {
      case 0:
        return false;  // first wins
      case 1:
        return true;  // last wins
      case 2:
        return os < a;  // the earlier start wins
      default:
        return os < a || (os == a && oe > b);  // earlier start, then longer
    }
  }
};

void compare(const RangeStore& r, const ByteStore& b, int step) {
  ASSERT_EQ(r.buffered(), b.buffered()) << "step " << step;
  ASSERT_EQ(r.first_start(), b.first_start()) << "step " << step;
  ASSERT_EQ(r.max_end(), b.max_end()) << "step " << step;
  if (b.buffered()) ASSERT_EQ(r.contiguous_end(b.first_start()), b.contiguous_end(b.first_start()));
  ASSERT_LE(r.arena_bytes(), 2 * r.buffered() + RangeStore::kSlack) << "step " << step;
}

// `given`: a store to run (a recycled one); a fresh one without. Pieces of 1..max_len bytes,
// those out of order up to `ahead` bytes past the in-order point. The most pieces the store held
// at once in *most.
void run(uint32_t seed, int rule, bool in_order_mostly, RangeStore* given = nullptr,
         uint32_t max_len = 600, uint32_t ahead = 1200, int steps = 2000, size_t* most = nullptr) {
  std::mt19937 rng(seed);
  RangeStore own;
  RangeStore& r = given ? *given : own;
  ByteStore b;
  uint64_t base = 0;  // everything below was taken
  uint64_t next = 0;  // where an in-order sender would go on
  std::vector<uint8_t> data(3000), out_r, out_b;
  for (int step = 0; step < steps; ++step) {
    const uint32_t n = 1 + rng() % max_len;
    uint64_t at;
    if (in_order_mostly && rng() % 8) {
      at = next;
    } else {  // behind, at, or ahead of the in-order point, overlapping what is stored
      at = base + rng() % uint32_t(next - base + ahead);
    }
    for (uint32_t i = 0; i < n; ++i) data[i] = uint8_t(rng());
    const Wins w{rule, at, at + n};
    const auto ir = r.insert(at, data.data(), n, at, at + n, w);
    const auto ib = b.insert(at, data.data(), n, at, at + n, w);
    ASSERT_EQ(ir.added, ib.added) << "step " << step;
    ASSERT_EQ(ir.overlap, ib.overlap) << "step " << step;
    ASSERT_EQ(ir.differ, ib.differ) << "step " << step;
    next = std::max(next, at + n);
    if (most) *most = std::max(*most, r.pieces());
    compare(r, b, step);
    const uint64_t lo = rng() % 40, hi = rng() % 40;
    ASSERT_EQ(r.overlaps(base + lo, base + lo + hi), b.overlaps(base + lo, base + lo + hi));
    // Sometimes deliver part or all of the run at the front, in place when the store can.
    if (b.buffered() && b.first_start() == base && rng() % (max_len < 8 ? 16 : 2) == 0) {
      const uint64_t end = b.contiguous_end(base);
      const uint64_t to  = base + 1 + rng() % (end - base);
      out_b.resize(to - base);
      out_r.resize(to - base);
      b.take(base, to, out_b.data());
      if (const uint8_t* v = r.view(base, to)) {
        ASSERT_EQ(std::vector<uint8_t>(v, v + (to - base)),
                  std::vector<uint8_t>(out_b.begin(), out_b.begin() + long(to - base)))
            << "step " << step;
        r.drop(base, to);
      } else {
        r.take(base, to, out_r.data());
        ASSERT_EQ(std::vector<uint8_t>(out_r.begin(), out_r.begin() + long(to - base)),
                  std::vector<uint8_t>(out_b.begin(), out_b.begin() + long(to - base)))
            << "step " << step;
      }
      base = to;
      compare(r, b, step);
    }
    // A hole at the front: skip to the first stored byte (as a gap would).
    if (b.buffered() && b.first_start() > base && rng() % 4 == 0) base = b.first_start();
  }
  // Everything still stored, run by run across the holes: the same bytes.
  while (b.buffered()) {
    const uint64_t from = b.first_start(), to = b.contiguous_end(from);
    ASSERT_EQ(r.first_start(), from);
    ASSERT_EQ(r.contiguous_end(from), to);
    out_b.resize(to - from);
    out_r.resize(to - from);
    b.take(from, to, out_b.data());
    r.take(from, to, out_r.data());
    ASSERT_EQ(out_r, out_b);
  }
  EXPECT_EQ(r.buffered(), 0u);
  EXPECT_EQ(r.arena_bytes(), 0u);
}

TEST(RangeStore, AnswersAsTheByteStoreInOrder) {
  for (int rule = 0; rule < 4; ++rule) run(10 + rule, rule, true);
}

TEST(RangeStore, AnswersAsTheByteStoreOnOverlapsAndHoles) {
  for (int rule = 0; rule < 4; ++rule) run(20 + rule, rule, false);
}

// Pieces of 1-3 bytes scattered over a few thousand: the store holds hundreds of them, so
// inserts split chunks, overlaps split pieces across chunk edges, deliveries end inside later
// chunks and in-place runs span chunks; every answer still the ByteStore's.
TEST(RangeStore, AnswersAsTheByteStoreAcrossManyChunks) {
  for (int rule = 0; rule < 4; ++rule) {
    SCOPED_TRACE(rule);
    size_t most = 0;
    run(60 + rule, rule, rule % 2 == 0, nullptr, 3, 3000, 12000, &most);
    EXPECT_GT(most, 200u);
  }
}

TEST(RangeStore, InOrderRunsAreReadInPlace) {
  RangeStore r;
  const Wins w{0, 0, 0};
  std::vector<uint8_t> a(100, 1), b(200, 2);
  r.insert(0, a.data(), 100, 0, 100, w);
  r.insert(100, b.data(), 200, 100, 300, w);
  const uint8_t* v = r.view(0, 300);
  ASSERT_NE(v, nullptr);
  EXPECT_EQ(v[99], 1);
  EXPECT_EQ(v[100], 2);
  r.drop(0, 150);
  EXPECT_EQ(r.buffered(), 150u);
  EXPECT_EQ(r.first_start(), 150u);
  // The piece that came early lies after the run in the arena, and the one that filled the
  // hole after it: the run of all three is copied, not viewed; its first range still is.
  r.insert(400, a.data(), 100, 400, 500, w);
  r.insert(300, b.data(), 100, 300, 400, w);
  EXPECT_EQ(r.contiguous_end(150), 500u);
  EXPECT_EQ(r.view(150, 500), nullptr);
  EXPECT_EQ(r.view(150, 400), nullptr);
  EXPECT_NE(r.view(150, 300), nullptr);
  r.drop(150, 500);
  EXPECT_EQ(r.buffered(), 0u);
  EXPECT_EQ(r.arena_bytes(), 0u);  // an empty store holds no arena
  // It starts another from the pool when bytes come again.
  r.insert(500, b.data(), 200, 500, 700, w);
  ASSERT_NE(r.view(500, 700), nullptr);
  EXPECT_EQ(r.view(500, 700)[0], 2);
  EXPECT_EQ(r.arena_bytes(), 200u);
}

TEST(RangeStore, OverwritesAreCompactedAway) {
  // A hole at 0 keeps the store from draining; the same 10 bytes overwritten again and again
  // (last wins) leave dead bytes that compaction must bound.
  RangeStore r;
  const Wins last{1, 0, 0};
  std::vector<uint8_t> v(10);
  for (int k = 0; k < 1000; ++k) {
    std::fill(v.begin(), v.end(), uint8_t(k));
    r.insert(100, v.data(), 10, 100, 110, last);
    ASSERT_EQ(r.buffered(), 10u);
    ASSERT_LE(r.arena_bytes(), 2 * r.buffered() + RangeStore::kSlack);
  }
  std::vector<uint8_t> out(10);
  r.take(100, 110, out.data());
  EXPECT_EQ(out, std::vector<uint8_t>(10, uint8_t(999)));
}

// Orders a hostile sender picks against a sorted vector of pieces (each insert or delivery
// moving every piece after it): descending, from the middle outward, holes filled one by one
// from the front (each fill delivers and drops the front piece), and one wide segment
// filling thousands of holes at once. The answers match the ByteStore's, and the pieces moved
// in memory stay within a constant per piece (SortedChunks' chunk of 64), not O(pieces).
std::vector<uint64_t> hostile_order(int kind, uint32_t n) {
  std::vector<uint64_t> at;
  switch (kind) {
    case 0:  // descending, a one-byte hole after each
      for (uint32_t k = n; k-- > 0;) at.push_back(2 * uint64_t(k) + 1);
      break;
    case 1:  // from the middle outward, alternating sides
      for (uint32_t k = 0; k < n / 2; ++k) {
        at.push_back(2 * uint64_t(n / 2 - 1 - k) + 1);
        at.push_back(2 * uint64_t(n / 2 + k) + 1);
      }
      break;
    default:  // odd bytes ascending, then the even ones (the holes) ascending
      for (uint32_t k = 0; k < n; ++k) at.push_back(2 * uint64_t(k) + 1);
      for (uint32_t k = 0; k < n; ++k) at.push_back(2 * uint64_t(k));
      break;
  }
  return at;
}

TEST(RangeStore, HostileOrdersCostAConstantPerPiece) {
  constexpr uint32_t kPieces = 6000;
  for (int kind = 0; kind < 3; ++kind) {
    SCOPED_TRACE(kind);
    RangeStore r;
    ByteStore b;
    uint64_t base    = 0;
    uint32_t inserts = 0;
    std::vector<uint8_t> out_r, out_b;
    for (const uint64_t at : hostile_order(kind, kPieces)) {
      const uint8_t byte = uint8_t(at * 7);
      const Wins w{1, at, at + 1};
      const auto ir = r.insert(at, &byte, 1, at, at + 1, w);
      const auto ib = b.insert(at, &byte, 1, at, at + 1, w);
      ++inserts;
      ASSERT_EQ(ir.added, ib.added);
      compare(r, b, int(inserts));
      // Deliver the run at the front, if any (as a stream does once its hole fills).
      if (b.buffered() && b.first_start() == base) {
        const uint64_t to = b.contiguous_end(base);
        out_b.resize(to - base);
        out_r.resize(to - base);
        b.take(base, to, out_b.data());
        r.take(base, to, out_r.data());
        ASSERT_EQ(out_r, out_b);
        base = to;
      }
    }
    if (kind < 2) {  // the hole at 0 was never filled: everything is still stored
      EXPECT_EQ(r.buffered(), kPieces);
    } else {
      EXPECT_EQ(r.buffered(), 0u);
      EXPECT_EQ(base, 2 * uint64_t(kPieces));
    }
    // A sorted vector moves about kPieces^2 / 4 pieces here (9 million); the chunks at most
    // half a chunk per insert, a chunk per split and a header per chunk.
    EXPECT_LE(r.piece_moves(), uint64_t(inserts) * 100) << "pieces moved: " << r.piece_moves();
  }
  // One wide segment across thousands of holes (first wins: it fills each one, a piece per
  // hole): linear too, and the bytes read back are the old ones with the holes filled.
  RangeStore r;
  ByteStore b;
  std::vector<uint8_t> one(1, 1), wide(2 * kPieces + 1, 2);
  for (uint32_t k = 0; k < kPieces; ++k) {
    const uint64_t at = 2 * uint64_t(k) + 1;
    r.insert(at, one.data(), 1, at, at + 1, Wins{0, at, at + 1});
    b.insert(at, one.data(), 1, at, at + 1, Wins{0, at, at + 1});
  }
  const uint64_t before = r.piece_moves();
  const auto ir =
      r.insert(0, wide.data(), uint32_t(wide.size()), 0, wide.size(), Wins{0, 0, wide.size()});
  const auto ib =
      b.insert(0, wide.data(), uint32_t(wide.size()), 0, wide.size(), Wins{0, 0, wide.size()});
  EXPECT_EQ(ir.added, ib.added);
  EXPECT_EQ(ir.overlap, ib.overlap);
  compare(r, b, 0);
  EXPECT_LE(r.piece_moves() - before, uint64_t(kPieces) * 100);
  std::vector<uint8_t> out_r(wide.size()), out_b(wide.size());
  r.take(0, wide.size(), out_r.data());
  b.take(0, wide.size(), out_b.data());
  EXPECT_EQ(out_r, out_b);
  EXPECT_EQ(out_r[1], 1);
  EXPECT_EQ(out_r[2], 2);
}

// contiguous_end() from the front, as a stream asks it once or twice per ACK and per FIN: a
// long run behind the front costs no walk of it each time. 6,000 one-byte pieces in order
// stay buffered (nothing acknowledged), then the run is asked for 6,000 times (FINs inside
// it) and taken a byte at a time (ACKs a byte apart), asking before each take; then the same
// with the run built by filling holes from the front and from the back.
TEST(RangeStore, TheFrontRunIsNotWalkedAgainPerQuestion) {
  constexpr uint64_t kPieces = 6000;
  for (int build = 0; build < 3; ++build) {
    SCOPED_TRACE(build);
    RangeStore r;
    ByteStore b;
    const uint8_t byte = 9;
    auto put           = [&](uint64_t at) {
      r.insert(at, &byte, 1, at, at + 1, Wins{0, at, at + 1});
      b.insert(at, &byte, 1, at, at + 1, Wins{0, at, at + 1});
    };
    if (build == 0) {
      for (uint64_t k = 0; k < kPieces; ++k) put(k);
    } else {  // odd bytes first, then the even ones ascending (1) or descending (2)
      for (uint64_t k = 1; k < kPieces; k += 2) put(k);
      for (uint64_t k = 0; k < kPieces; k += 2) put(build == 1 ? k : kPieces - 2 - k);
    }
    for (int q = 0; q < 6000; ++q) ASSERT_EQ(r.contiguous_end(0), kPieces);
    for (uint64_t base = 0; base < kPieces; ++base) {
      ASSERT_EQ(r.contiguous_end(base), kPieces);
      uint8_t out = 0;
      r.take(base, base + 1, &out);
      ASSERT_EQ(out, byte);
      if (base % 1000 == 0) {  // the oracle's answer too (its byte map walks: not each time)
        ASSERT_EQ(b.contiguous_end(base), kPieces);
        std::vector<uint8_t> taken(1000);
        b.take(base, base + 1000, taken.data());
        ASSERT_EQ(taken, std::vector<uint8_t>(1000, byte));
      }
    }
    EXPECT_EQ(r.buffered(), 0u);
    // Walking the run per question would visit about 6,000 x 6,000 / 2 pieces.
    EXPECT_LE(r.run_visits(), 6 * kPieces) << "pieces visited: " << r.run_visits();
  }
}

// recycle() (what SerialMap::erase calls on a finished stream's slot) leaves a store that
// answers as a new one, whatever it held: a run in order, holes, pieces past the room it keeps.
TEST(RangeStore, RecycledStoresAnswerAsNewOnes) {
  std::vector<uint8_t> data(100, 7);
  for (const uint32_t pieces : {1u, 8u, 50u}) {
    RangeStore r;
    for (uint32_t k = 0; k < pieces; ++k)  // 100 bytes every 200: a hole after each
      (void)r.insert(uint64_t(k) * 200, data.data(), 100, uint64_t(k) * 200,
                     uint64_t(k) * 200 + 100, Wins{0, 0, 0});
    ASSERT_EQ(r.buffered(), uint64_t(pieces) * 100);
    const size_t room = r.piece_room();
    r.recycle();
    // The pieces' room is kept up to kKeptPieces and freed past it (a hostile flow's holes do
    // not stay with the slot).
    EXPECT_EQ(r.piece_room(), room <= RangeStore::kKeptPieces ? room : 0u);
    EXPECT_EQ(r.buffered(), 0u);
    EXPECT_EQ(r.arena_bytes(), 0u);
    EXPECT_EQ(r.first_start(), ByteStore().first_start());
    EXPECT_EQ(r.max_end(), ByteStore().max_end());
    for (int rule = 0; rule < 4; ++rule) {
      run(40 + pieces + uint32_t(rule), rule, rule % 2 == 0, &r);
      r.recycle();
    }
  }
}

}  // namespace
