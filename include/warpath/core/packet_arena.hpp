// include/warpath/core/packet_arena.hpp
//
// The packet arena: one address range, reserved once per process, from which zero-copy frames
// take their cells and ports their receive buffers (DPDK's mbufs), so that a PacketMeta offset
// from the arena's base reaches a packet wherever it lies: in a frame's own cells (copied,
// generated, relocated) or in a port's buffer that the frame holds (packet/batch.hpp: attach).
//
// Memory
//   The range is reserved (mmap, MAP_NORESERVE) at the first use: 4 GiB (the reach of a 32-bit
//   offset), or $WARPATH_PACKET_ARENA_MB, halved down to 64 MiB while the kernel refuses.
//   Pages are committed when touched and returned to the kernel when a slice is released
//   (madvise DONTNEED), so a slice is zeroed when handed out. With MemSpace::kPinned a slice
//   is page-locked (cudaHostRegister) where a CUDA device is present: the memory a GPU
//   offload copies packets from without a staging copy.
//
// Thread safety
//   allocate and release take a lock (they run at set-up, not per packet).
#pragma once
#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>

#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"

namespace warpath {

class PacketArena;

/// A slice of the arena, released when destroyed. Move-only.
class ArenaSlice {
 public:
  ArenaSlice() = default;
  ~ArenaSlice();
  ArenaSlice(ArenaSlice&& o) noexcept { *this = std::move(o); }
  ArenaSlice& operator=(ArenaSlice&& o) noexcept;
  ArenaSlice(const ArenaSlice&)            = delete;
  ArenaSlice& operator=(const ArenaSlice&) = delete;

  uint8_t* data() const noexcept;
  uint64_t offset() const noexcept { return offset_; }  ///< from the arena's base
  size_t bytes() const noexcept { return bytes_; }
  MemSpace space() const noexcept { return space_; }
  explicit operator bool() const noexcept { return arena_ != nullptr; }

 private:
  friend class PacketArena;
  PacketArena* arena_ = nullptr;
  uint64_t offset_    = 0;
  size_t bytes_       = 0;
  MemSpace space_     = MemSpace::kHost;
};

class PacketArena {
 public:
  /// The process's arena (reserved on the first call). Its base() is nullptr when no range
  /// could be reserved; allocate() then fails and callers fall back to their own memory.
  static PacketArena& get();

  uint8_t* base() const noexcept { return base_; }
  size_t capacity() const noexcept { return capacity_; }
  /// Bytes handed out and not yet released.
  size_t in_use() const;
  bool contains(const void* p, size_t bytes = 1) const noexcept {
    const auto* b = static_cast<const uint8_t*>(p);
    return base_ && b >= base_ && bytes <= capacity_ && size_t(b - base_) <= capacity_ - bytes;
  }
  /// A zeroed slice of at least `bytes` (rounded up to whole pages; first fit), page-locked
  /// with kPinned where a device is present (space() says what it got). kOutOfMemory naming
  /// the sizes when the arena has no such run left.
  Result<ArenaSlice> allocate(size_t bytes, MemSpace space = MemSpace::kHost);

 private:
  friend class ArenaSlice;
  PacketArena();
  void release(uint64_t offset, size_t bytes, MemSpace space) noexcept;

  uint8_t* base_   = nullptr;
  size_t capacity_ = 0;
  mutable std::mutex mutex_;
  std::map<uint64_t, size_t> free_;  ///< offset -> bytes of each free run (merged)
};

}  // namespace warpath
