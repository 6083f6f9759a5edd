// SerialMap against std::unordered_map: random inserts, erases and lookups over key patterns
// that cluster (consecutive serials, as a tracker gives), spread (random) and collide (strided
// by the table size), with the whole content compared after every step of churn.
#include "core/serial_map.hpp"

#include <gtest/gtest.h>

#include <map>
#include <random>
#include <string>
#include <unordered_map>
#include <vector>

namespace {

using warpath::detail::SerialMap;

struct Value {
  uint64_t a = 0;
  std::string s;  // owns memory: erase must release and reuse it cleanly
};

std::map<uint64_t, uint64_t> contents(SerialMap<Value>& m) {
  std::map<uint64_t, uint64_t> out;
  m.for_each([&](uint64_t k, Value& v) { out[k] = v.a; });
  return out;
}

// slots_out: the map's slots at the end (after its clear, which keeps none of them).
void churn(const std::vector<uint64_t>& keys, uint32_t seed, size_t reserve = 0,
           size_t* slots_out = nullptr) {
  SerialMap<Value> m;
  m.reserve(reserve);
  std::unordered_map<uint64_t, uint64_t> oracle;
  std::mt19937_64 rng(seed);
  for (int step = 0; step < 20000; ++step) {
    const uint64_t k = keys[rng() % keys.size()];
    const int op     = int(rng() % 3);
    if (op == 0 && !oracle.count(k)) {
      Value& v = m.emplace(k, Value{k * 3, std::string(size_t(k % 40), 'x')});
      ASSERT_EQ(v.a, k * 3);
      oracle[k] = k * 3;
    } else if (op == 1) {
      m.erase(k);
      oracle.erase(k);
    } else {
      Value* v = m.find(k);
      ASSERT_EQ(v != nullptr, oracle.count(k) == 1) << "key " << k << " step " << step;
      if (v) {
        ASSERT_EQ(v->a, oracle[k]);
        ASSERT_EQ(v->s.size(), size_t(k % 40));
      }
    }
    ASSERT_EQ(m.size(), oracle.size());
    if (step % 997 == 0) {
      const std::map<uint64_t, uint64_t> want(oracle.begin(), oracle.end());
      ASSERT_EQ(contents(m), want) << "step " << step;
    }
  }
  for (const auto& [k, a] : oracle) {
    Value* v = m.find(k);
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->a, a);
  }
  if (slots_out) *slots_out = m.slots();
  m.clear();
  EXPECT_EQ(m.size(), 0u);
  for (const auto& [k, a] : oracle) EXPECT_EQ(m.find(k), nullptr);
}

TEST(SerialMap, AgreesWithUnorderedMapOnConsecutiveSerials) {
  std::vector<uint64_t> keys;
  for (uint64_t k = 1; k <= 3000; ++k) keys.push_back(k);
  churn(keys, 1);
}

// Room made up front (reserve): the first inserts neither rehash nor allocate; past it the map
// grows as before, and the answers are the same as without it.
TEST(SerialMap, ReservedRoomIsUsedFirstThenTheMapGrows) {
  SerialMap<Value> m;
  m.reserve(5000);
  const size_t slots = m.slots(), values = m.values_allocated();
  EXPECT_EQ(slots, 16384u);  // 5,000 at most half full
  EXPECT_EQ(values, 5000u);  // a map without values: one pool of exactly that many
  for (uint64_t k = 1; k <= 5000; ++k) m.emplace(k, Value{k, {}});
  EXPECT_EQ(m.slots(), slots);
  EXPECT_EQ(m.values_allocated(), values);
  for (uint64_t k = 5001; k <= 20000; ++k) m.emplace(k, Value{k, {}});
  EXPECT_GT(m.slots(), slots);
  EXPECT_GT(m.values_allocated(), values);  // blocks after the pool
  for (uint64_t k = 1; k <= 20000; ++k) ASSERT_EQ(m.find(k)->a, k);
  // Reserving on a map with entries and erased values: the entries are placed again and kept,
  // values come as blocks after what exists, and the free list is used first.
  for (uint64_t k = 1; k <= 20000; k += 2) m.erase(k);
  m.reserve(40000);
  EXPECT_GE(m.slots(), 80000u);
  EXPECT_GE(m.values_allocated(), 40000u);
  const size_t after = m.values_allocated(), slots_after = m.slots();
  for (uint64_t k = 20001; k <= 40000; ++k) m.emplace(k, Value{k, {}});
  EXPECT_EQ(m.values_allocated(), after);
  EXPECT_EQ(m.slots(), slots_after);
  for (uint64_t k = 1; k <= 40000; ++k) {
    Value* v = m.find(k);
    ASSERT_EQ(v != nullptr, k > 20000 || k % 2 == 0) << k;
    if (v) ASSERT_EQ(v->a, k);
  }
  m.reserve(10);  // less than it has: nothing changes
  EXPECT_EQ(m.slots(), slots_after);
  m.clear();
  EXPECT_EQ(m.values_allocated(), 0u);
  m.reserve(300);  // after clear() the pool may be made again
  EXPECT_EQ(m.values_allocated(), 300u);
  std::vector<uint64_t> keys;
  for (uint64_t k = 1; k <= 3000; ++k) keys.push_back(k);
  size_t below = 0, above = 0;
  churn(keys, 11, 100, &below);   // reserved below the peak: grows past it
  churn(keys, 12, 4000, &above);  // reserved above it: never grows
  EXPECT_GT(below, 256u);
  EXPECT_EQ(above, 8192u);
}

TEST(SerialMap, AgreesWithUnorderedMapOnRandomKeys) {
  std::mt19937_64 rng(7);
  std::vector<uint64_t> keys;
  for (int i = 0; i < 3000; ++i) keys.push_back(rng());
  keys.push_back(0);  // zero is a key like any other
  keys.push_back(~uint64_t(0));
  churn(keys, 2);
}

TEST(SerialMap, AgreesWithUnorderedMapOnKeysThatShareAHomeSlot) {
  std::vector<uint64_t> keys;
  // Keys that pile onto a few home slots (one up to 1,024 slots, four at 2,048): long runs.
  for (uint64_t k = 0; k < 600; ++k) keys.push_back(k << 20);
  for (uint64_t k = 0; k < 600; ++k) keys.push_back((k << 20) + 1);
  churn(keys, 3);
}

TEST(SerialMap, FindOrEmplaceInsertsOnceThenFinds) {
  SerialMap<Value> m;
  Value& a = m.find_or_emplace(42);
  EXPECT_EQ(a.a, 0u);  // a default value
  a.a = 7;
  EXPECT_EQ(m.find_or_emplace(42).a, 7u);  // found, not inserted again
  EXPECT_EQ(&m.find_or_emplace(42), &a);
  EXPECT_EQ(m.size(), 1u);
}

TEST(SerialMap, AWindowOfLiveSerialsSlidesWithoutGrowing) {
  // A tracker's view: serials created in order, each ended a while later.
  SerialMap<Value> m;
  for (uint64_t k = 1; k <= 200000; ++k) {
    m.emplace(k, Value{k, {}});
    if (k > 1000) m.erase(k - 1000);
    ASSERT_EQ(m.size(), std::min<uint64_t>(k, 1000));
  }
  EXPECT_LE(m.slots(), 4096u);
  EXPECT_LE(m.values_allocated(), 2 * 1001u + 256u);  // blocks double: at most 2x the peak
  for (uint64_t k = 199001; k <= 200000; ++k) ASSERT_NE(m.find(k), nullptr);
  EXPECT_EQ(m.find(199000), nullptr);
}

// A value with recycle() is recycled by erase (not destroyed and rebuilt), and the next entry
// that takes its slot finds it as recycle() left it.
struct Recyclable {
  uint64_t a = 0;
  std::string kept;  // what recycle() keeps (a store's small vectors)
  int recycled = 0;
  void recycle() {
    a = 0;
    recycled += 1;
  }
};

TEST(SerialMap, EraseRecyclesValuesThatCanBeRecycled) {
  SerialMap<Recyclable> m;
  m.emplace(7).a  = 70;
  m.find(7)->kept = "room";
  m.erase(7);
  EXPECT_EQ(m.find(7), nullptr);
  Recyclable& v = m.emplace(8);  // the freed value, taken again
  EXPECT_EQ(v.a, 0u);
  EXPECT_EQ(v.recycled, 1);
  EXPECT_EQ(v.kept, "room");
  EXPECT_EQ(m.size(), 1u);
}

}  // namespace
