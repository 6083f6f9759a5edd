// src/core/packet_arena.cpp: the packet arena (warpath/core/packet_arena.hpp).
#include "warpath/core/packet_arena.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cstdlib>
#include <string>
#include <utility>

#include "core/cuda_host.hpp"

namespace warpath {
namespace {

constexpr size_t kMaxArena = size_t(4) << 30;  // a 32-bit offset's reach
constexpr size_t kMinArena = size_t(64) << 20;

size_t page_bytes() {
  static const size_t page = [] {
    const long p = sysconf(_SC_PAGESIZE);
    return p > 0 ? size_t(p) : size_t(4096);
  }();
  return page;
}

size_t wanted_capacity() {
  const char* env = std::getenv("WARPATH_PACKET_ARENA_MB");
  if (!env || !*env) return kMaxArena;
  char* end          = nullptr;
  const unsigned long long mb = std::strtoull(env, &end, 10);
  if (end == env || *end != '\0') return kMaxArena;
  const size_t bytes = size_t(mb) << 20;
  return bytes < kMinArena ? kMinArena : bytes > kMaxArena ? kMaxArena : bytes;
}

}  // namespace

PacketArena& PacketArena::get() {
  // Never destroyed: a slice released during static destruction still finds it.
  static PacketArena* arena = new PacketArena;
  return *arena;
}

PacketArena::PacketArena() {
  for (size_t want = wanted_capacity(); want >= kMinArena; want /= 2) {
    void* p = mmap(nullptr, want, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE,
                   -1, 0);
    if (p == MAP_FAILED) continue;
    base_     = static_cast<uint8_t*>(p);
    capacity_ = want;
    free_.emplace(0, want);
    return;
  }
}

size_t PacketArena::in_use() const {
  std::lock_guard<std::mutex> lock(mutex_);
  size_t free = 0;
  for (const auto& [off, bytes] : free_) free += bytes;
  return capacity_ - free;
}

Result<ArenaSlice> PacketArena::allocate(size_t bytes, MemSpace space) {
  if (!base_) return Status(Errc::kOutOfMemory, "no packet arena (the address range was refused)");
  const size_t page = page_bytes();
  const size_t need = (std::max<size_t>(bytes, 1) + page - 1) / page * page;
  ArenaSlice s;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto it = free_.begin();
    while (it != free_.end() && it->second < need) ++it;
    if (it == free_.end()) {
      size_t free_bytes = 0;
      for (const auto& r : free_) free_bytes += r.second;
      return Status(Errc::kOutOfMemory,
                    "the packet arena (" + std::to_string(capacity_ >> 20) + " MiB, " +
                        std::to_string((capacity_ - free_bytes) >> 20) +
                        " MiB in use) has no run of " + std::to_string(need) +
                        " bytes left (WARPATH_PACKET_ARENA_MB sets its size)");
    }
    const auto [off, run] = *it;
    free_.erase(it);
    if (run > need) free_.emplace(off + need, run - need);
    s.offset_ = off;
  }
  s.arena_ = this;
  s.bytes_ = need;
  s.space_ = space == MemSpace::kPinned && detail::cuda_host_register(base_ + s.offset_, need)
                 ? MemSpace::kPinned
                 : MemSpace::kHost;
  return s;
}

void PacketArena::release(uint64_t offset, size_t bytes, MemSpace space) noexcept {
  if (space == MemSpace::kPinned) detail::cuda_host_unregister(base_ + offset);
  (void)madvise(base_ + offset, bytes, MADV_DONTNEED);  // zero and uncommitted again
  std::lock_guard<std::mutex> lock(mutex_);
  auto next = free_.lower_bound(offset);
  if (next != free_.end() && offset + bytes == next->first) {
    bytes += next->second;
    next = free_.erase(next);
  }
  if (next != free_.begin()) {
    auto prev = std::prev(next);
    if (prev->first + prev->second == offset) {
      prev->second += bytes;
      return;
    }
  }
  free_.emplace(offset, bytes);
}

ArenaSlice::~ArenaSlice() {
  if (arena_) arena_->release(offset_, bytes_, space_);
}

ArenaSlice& ArenaSlice::operator=(ArenaSlice&& o) noexcept {
  if (this != &o) {
    if (arena_) arena_->release(offset_, bytes_, space_);
    arena_  = std::exchange(o.arena_, nullptr);
    offset_ = std::exchange(o.offset_, 0);
    bytes_  = std::exchange(o.bytes_, 0);
    space_  = o.space_;
  }
  return *this;
}

uint8_t* ArenaSlice::data() const noexcept { return arena_ ? arena_->base() + offset_ : nullptr; }

}  // namespace warpath
