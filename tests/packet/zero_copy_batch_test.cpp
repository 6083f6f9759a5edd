// tests/packet/zero_copy_batch_test.cpp: the packet arena (core/packet_arena.hpp) and batches
// that hold packets where a port put them (PacketBatch::attach, packet/batch.hpp).
//
// A fake port lends buffers from its own arena slice and counts what comes back: every buffer
// a batch takes goes back exactly once (clear, destruction, own_all, relocate then clear),
// except one a port took to send (take_handle); modules' views (data, headroom, room) answer
// for a held packet from its buffer; attach refuses what it cannot hold.
#include <gtest/gtest.h>

#include <cstring>
#include <map>
#include <vector>

#include "warpath/core/packet_arena.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::packet {
namespace {

// Buffers of 256 bytes in an arena slice; handles are buffer numbers + 1 (as pointers).
struct FakePort {
  static constexpr uint32_t kBuf = 256;
  ArenaSlice mem;
  static inline std::map<uintptr_t, int> returned;  // handle -> times given back

  explicit FakePort(uint32_t buffers) {
    auto s = PacketArena::get().allocate(size_t(buffers) * kBuf);
    EXPECT_TRUE(s.is_ok()) << s.status().to_string();
    if (s.is_ok()) mem = std::move(*s);
    returned.clear();
  }
  static void release(void* const* h, uint32_t n) {
    for (uint32_t k = 0; k < n; ++k) ++returned[reinterpret_cast<uintptr_t>(h[k])];
  }
  static void other_release(void* const*, uint32_t) {}
  uint8_t* buf(uint32_t k) const { return mem.data() + size_t(k) * kBuf; }
  // Lends buffer k holding `len` bytes of value `fill` at offset 64 (its headroom).
  bool lend(PacketBatch& b, uint32_t k, uint32_t len, uint8_t fill) const {
    std::memset(buf(k) + 64, fill, len);
    return b.attach(buf(k) + 64, len, len, 7, 3, buf(k), buf(k) + kBuf,
                    reinterpret_cast<void*>(uintptr_t(k + 1)), release);
  }
};

TEST(PacketArena, SlicesAreZeroedPageRoundedAndReused) {
  PacketArena& a = PacketArena::get();
  ASSERT_NE(a.base(), nullptr) << "no arena: the address range was refused";
  const size_t before = a.in_use();
  uint64_t first      = 0;
  {
    auto s = a.allocate(100);
    ASSERT_TRUE(s.is_ok());
    EXPECT_EQ(s->bytes() % 4096, 0u);
    EXPECT_TRUE(a.contains(s->data(), s->bytes()));
    EXPECT_EQ(s->data()[0], 0);
    s->data()[0] = 42;
    first        = s->offset();
    EXPECT_EQ(a.in_use(), before + s->bytes());
  }
  EXPECT_EQ(a.in_use(), before);  // released, merged back
  auto again = a.allocate(100);
  ASSERT_TRUE(again.is_ok());
  EXPECT_EQ(again->offset(), first);  // first fit takes the same run
  EXPECT_EQ(again->data()[0], 0);     // and it is zero again
  auto huge = a.allocate(a.capacity() + 1);
  EXPECT_EQ(huge.status().code(), Errc::kOutOfMemory);
  EXPECT_NE(huge.status().message().find("WARPATH_PACKET_ARENA_MB"), std::string::npos);
}

TEST(ZeroCopyBatch, HeldPacketsReadLikeOwnOnesAndGoBackOnce) {
  FakePort port(64);
  auto b = PacketBatch::create_in_arena(8, 2048, 0, MemSpace::kHost, 66);
  ASSERT_TRUE(b.is_ok()) << b.status().to_string();
  ASSERT_TRUE(b->in_arena());
  EXPECT_TRUE(b->attachable(FakePort::release));
  ASSERT_TRUE(port.lend(*b, 0, 60, 0xaa));
  ASSERT_TRUE(b->append(std::vector<uint8_t>(40, 0xbb).data(), 40, 40, 8, 1));  // own cells
  ASSERT_TRUE(port.lend(*b, 1, 100, 0xcc));
  EXPECT_FALSE(b->attachable(FakePort::other_release));  // one kind of lender a batch
  ASSERT_EQ(b->size(), 3u);
  EXPECT_EQ(b->data(0), port.buf(0) + 64);
  EXPECT_EQ(b->data(0)[59], 0xaa);
  EXPECT_EQ(b->data(1)[39], 0xbb);
  EXPECT_EQ(b->headroom(0), 64u);
  EXPECT_EQ(b->room(0), FakePort::kBuf - 64);
  EXPECT_EQ(b->headroom(1), 66u);  // the batch's own headroom
  EXPECT_EQ(b->meta(0).port, 3);
  EXPECT_EQ(b->meta(0).timestamp_ns, 7u);
  EXPECT_NE(b->handle(0), nullptr);
  EXPECT_EQ(b->handle(1), nullptr);
  // The view every engine reads: offsets from the arena's base.
  const BatchView v = b->view();
  EXPECT_EQ(v.data(2), port.buf(1) + 64);
  // A port sends packet 2's buffer itself: it is no longer the batch's to give back.
  EXPECT_EQ(b->take_handle(2), reinterpret_cast<void*>(uintptr_t(2)));
  EXPECT_EQ(b->handle(2), nullptr);
  b->clear();
  EXPECT_EQ(FakePort::returned, (std::map<uintptr_t, int>{{1, 1}}));
  b->clear();  // nothing twice
  EXPECT_EQ(FakePort::returned.size(), 1u);
}

TEST(ZeroCopyBatch, RelocateOwnAllAndDestructionGiveBuffersBack) {
  FakePort port(64);
  {
    auto b = PacketBatch::create_in_arena(16);
    ASSERT_TRUE(b.is_ok());
    for (uint32_t k = 0; k < 4; ++k) ASSERT_TRUE(port.lend(*b, k, 50 + k, uint8_t(k)));
    // A module grows packet 1 into fresh cells: its buffer waits for the clear.
    uint8_t* moved = b->relocate(1, 500, 500);
    ASSERT_NE(moved, nullptr);
    EXPECT_EQ(b->handle(1), nullptr);
    EXPECT_TRUE(FakePort::returned.empty());
    // own_all copies the other held packets into the cells and gives every buffer back now.
    ASSERT_TRUE(b->own_all());
    EXPECT_EQ(FakePort::returned.size(), 4u);
    for (uint32_t k : {0u, 2u, 3u}) {
      EXPECT_EQ(b->handle(k), nullptr);
      EXPECT_EQ(b->meta(k).caplen, 50 + k);
      EXPECT_EQ(b->data(k)[49 + k], uint8_t(k)) << k;
      EXPECT_FALSE(port.mem.data() <= b->data(k) && b->data(k) < port.mem.data() + port.mem.bytes());
    }
    // Held again, then the batch is destroyed (moved first: one owner gives back).
    ASSERT_TRUE(port.lend(*b, 10, 20, 1));
    ASSERT_TRUE(port.lend(*b, 11, 20, 1));
    PacketBatch moved_to = std::move(*b);
    EXPECT_EQ(moved_to.handle(4), reinterpret_cast<void*>(uintptr_t(11)));
  }
  EXPECT_EQ(FakePort::returned.size(), 6u);
  for (const auto& [h, n] : FakePort::returned) EXPECT_EQ(n, 1) << h;
}

TEST(ZeroCopyBatch, AttachRefusesWhatItCannotHold) {
  FakePort port(8);
  auto own = PacketBatch::create(4);  // not in the arena
  ASSERT_TRUE(own.is_ok());
  EXPECT_FALSE(own->attachable(FakePort::release));
  EXPECT_FALSE(port.lend(*own, 0, 10, 1));
  auto b = PacketBatch::create_in_arena(2);
  ASSERT_TRUE(b.is_ok());
  // No release function on a fresh batch (nothing could give the buffer back), and on one that
  // is not in the arena.
  EXPECT_FALSE(b->attach(port.buf(1), 10, 10, 0, 0, port.buf(1), port.buf(1) + 256, port.buf(1),
                         nullptr));
  EXPECT_FALSE(own->attach(port.buf(1), 10, 10, 0, 0, port.buf(1), port.buf(1) + 256,
                           port.buf(1), nullptr));
  EXPECT_EQ(b->size(), 0u);
  EXPECT_EQ(b->handle(0), nullptr);
  // Bytes beyond the buffer, a start before it, data past the end, no release function, a
  // full batch.
  EXPECT_FALSE(b->attach(port.buf(1) + 300, 0, 0, 0, 0, port.buf(1), port.buf(1) + 256,
                         port.buf(1), FakePort::release));
  EXPECT_FALSE(b->attach(port.buf(0) + 200, 100, 100, 0, 0, port.buf(0), port.buf(0) + 256,
                         port.buf(0), FakePort::release));
  EXPECT_FALSE(b->attach(port.buf(1), 10, 10, 0, 0, port.buf(1) + 8, port.buf(1) + 256,
                         port.buf(1), FakePort::release));
  EXPECT_FALSE(b->attach(port.buf(1), 10, 10, 0, 0, port.buf(1), port.buf(1) + 256, port.buf(1),
                         nullptr));
  EXPECT_EQ(b->size(), 0u);
  ASSERT_TRUE(port.lend(*b, 0, 10, 1));
  ASSERT_TRUE(port.lend(*b, 1, 10, 1));
  EXPECT_FALSE(port.lend(*b, 2, 10, 1));
  EXPECT_EQ(b->size(), 2u);
  // A batch of 0 packets holds nothing and clears.
  auto empty = PacketBatch::create_in_arena(0, 2048, 4096);
  ASSERT_TRUE(empty.is_ok());
  EXPECT_FALSE(port.lend(*empty, 3, 10, 1));
  empty->clear();
}

}  // namespace
}  // namespace warpath::packet

namespace warpath::packet {
namespace {

// attach_burst is attach() over a run (the dpdk port's receive loop): the same metas, bounds,
// handles and refusals; a run ends at the first packet it cannot hold or when the batch is
// full. take_handles is take_handle() over a burst, leaving shared packets' handles alone.
TEST(ZeroCopyBatch, BurstsDoWhatAttachAndTakeHandleDoOneByOne) {
  FakePort port(64);
  auto one  = PacketBatch::create_in_arena(6);
  auto many = PacketBatch::create_in_arena(6);
  ASSERT_TRUE(one.is_ok() && many.is_ok());
  // Buffers 0..7: the fifth's data runs past its buffer (refused: ends the run).
  auto describe = [&](uint32_t k, PacketBatch::Held1& p) {
    const uint32_t len = k == 4 ? 300 : 40 + k;
    p = {port.buf(k) + 64, len, len + 10, port.buf(k), port.buf(k) + FakePort::kBuf,
         reinterpret_cast<void*>(uintptr_t(k + 1))};
  };
  for (uint32_t k = 0; k < 4; ++k) {
    PacketBatch::Held1 p;
    describe(k, p);
    ASSERT_TRUE(one->attach(p.data, p.caplen, p.len, 7, 3, p.begin, p.end, p.handle, FakePort::release));
  }
  uint64_t bytes = 0;
  const uint32_t held = many->attach_burst(8, 7, 3, FakePort::release, bytes, [&](uint32_t j, auto& p) {
    describe(j, p);
    return true;
  });
  EXPECT_EQ(held, 4u);
  EXPECT_EQ(bytes, 50u + 51 + 52 + 53);
  ASSERT_EQ(many->size(), one->size());
  for (uint32_t i = 0; i < 4; ++i) {
    EXPECT_EQ(std::memcmp(&many->meta(i), &one->meta(i), sizeof(PacketMeta)), 0) << i;
    EXPECT_EQ(many->headroom(i), one->headroom(i));
    EXPECT_EQ(many->room(i), one->room(i));
    EXPECT_EQ(many->handle(i), one->handle(i));
  }
  // A packet `get` declines (a chain of buffers) ends the run too; a full batch takes two more.
  EXPECT_EQ(many->attach_burst(3, 7, 3, FakePort::release, bytes, [](uint32_t, auto&) { return false; }), 0u);
  EXPECT_EQ(many->attach_burst(8, 7, 3, FakePort::release, bytes, [&](uint32_t j, auto& p) {
    describe(10 + j, p);
    return true;
  }), 2u);
  EXPECT_EQ(many->size(), 6u);
  // No lender, another kind of lender, a batch outside the arena: nothing.
  auto own = PacketBatch::create(4);
  ASSERT_TRUE(own.is_ok());
  auto any = [&](uint32_t j, auto& p) {
    describe(j, p);
    return true;
  };
  EXPECT_EQ(own->attach_burst(2, 0, 0, FakePort::release, bytes, any), 0u);
  auto fresh = PacketBatch::create_in_arena(4);
  ASSERT_TRUE(fresh.is_ok());
  EXPECT_EQ(fresh->attach_burst(2, 0, 0, nullptr, bytes, any), 0u);
  ASSERT_TRUE(port.lend(*fresh, 20, 10, 1));  // fresh has room, and FakePort's lender now
  EXPECT_EQ(fresh->attach_burst(2, 0, 0, FakePort::other_release, bytes, any), 0u);
  EXPECT_EQ(fresh->size(), 1u);
  // take_handles: a shared packet keeps its handle (the port copies it), the rest are taken.
  many->meta(1).flags |= kMetaShared;
  const uint32_t which[] = {0, 1, 3, 5};
  void* out[4];
  EXPECT_EQ(many->take_handles(which, 4, out), 3u);
  EXPECT_EQ(out[0], reinterpret_cast<void*>(uintptr_t(1)));
  EXPECT_EQ(out[1], nullptr);
  EXPECT_EQ(out[2], reinterpret_cast<void*>(uintptr_t(4)));
  EXPECT_EQ(out[3], reinterpret_cast<void*>(uintptr_t(12)));
  EXPECT_EQ(many->handle(0), nullptr);
  EXPECT_NE(many->handle(1), nullptr);
  EXPECT_EQ(many->take_handles(which, 4, out), 0u);  // taken once
  FakePort::returned.clear();
  many->clear();  // what was not taken goes back: packets 1, 2 and 4 (handles 2, 3, 11)
  EXPECT_EQ(FakePort::returned, (std::map<uintptr_t, int>{{2, 1}, {3, 1}, {11, 1}}));
  EXPECT_EQ(own->take_handles(which, 0, out), 0u);
}

}  // namespace
}  // namespace warpath::packet
