// include/warpath/packet/batch.hpp
//
// Packet batches.
//
// What
//   A PacketBatch holds up to `max_packets` packets in one contiguous buffer of fixed-size cells
//   (PacketShader's huge packet buffer, section 4.2), plus one compact PacketMeta per packet. A
//   packet starts at a cell boundary and takes as many consecutive cells as its captured length
//   needs, so jumbo frames and GSO super-frames fit without a second allocation path. Because
//   cells and metadata are two flat arrays, a whole batch moves to a GPU in two copies, and a
//   CUDA thread finds its packet with one load (meta[i].offset).
//
// Memory
//   With MemSpace::kPinned both arrays are page-locked when a CUDA device is present (see
//   HostBuffer); otherwise ordinary 64-byte-aligned memory.
//
// Thread safety
//   A batch is filled by one thread; afterwards any number of engines may read it.
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/core/hd.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"

namespace warpath::packet {

/// Per-packet metadata: 24 bytes.
struct PacketMeta {
  uint32_t offset;        ///< byte offset of the first byte in the batch buffer
  uint32_t caplen;        ///< bytes captured (present in the buffer)
  uint32_t len;           ///< bytes on the wire (>= caplen)
  uint16_t port;          ///< input port
  uint16_t flags;         ///< reserved for the pipeline
  uint64_t timestamp_ns;  ///< nanoseconds since the Unix epoch
};
static_assert(sizeof(PacketMeta) == 24, "PacketMeta layout is part of the GPU contract");

/// POD view of a batch, valid on host or device (depending on where the pointers point).
struct BatchView {
  const uint8_t* buffer   = nullptr;
  const PacketMeta* metas = nullptr;
  uint32_t count          = 0;

  WARPATH_HD const uint8_t* data(uint32_t i) const { return buffer + metas[i].offset; }
};

class PacketBatch {
 public:
  static constexpr uint32_t kDefaultCellBytes = 2048;

  PacketBatch() = default;
  /// A batch for up to `max_packets` packets and `buffer_bytes` bytes of cells (default:
  /// max_packets cells of `cell_bytes`). Fails with kInvalidArgument or kOutOfMemory.
  /// `headroom` bytes are left free before each packet (DPDK's mbuf headroom), for a module
  /// that prepends headers (ESP encapsulation) without moving the packet; below cell_bytes.
  /// Cells start 64-byte aligned, so a packet starts at headroom mod 64 in its line (the
  /// pipeline's chains use 64n + 2: Chain::kL3Align).
  static Result<PacketBatch> create(uint32_t max_packets, uint32_t cell_bytes = kDefaultCellBytes,
                                    size_t buffer_bytes = 0, MemSpace space = MemSpace::kHost,
                                    uint32_t headroom = 0);

  /// Appends a copy of `caplen` bytes. Returns false (and changes nothing) when the batch is
  /// full. `len` is the wire length; it is raised to caplen if smaller.
  bool append(const uint8_t* bytes, uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
              uint16_t port = 0);
  /// Reserves space for a packet of `caplen` bytes and returns where to write it (nullptr when
  /// full); the generator builds frames in place this way.
  uint8_t* append_uninitialized(uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
                                uint16_t port = 0);
  /// Moves packet i to fresh cells at the end of the buffer, with room for `caplen` bytes (and
  /// the batch's headroom before them), and returns where to write them (its old cells stay
  /// unused until clear()); nullptr, changing nothing, when the buffer has no room left. A
  /// module that replaces a packet by a larger one (a reassembled datagram in place of its last
  /// fragment) writes it there; the count of packets does not change.
  uint8_t* relocate(uint32_t i, uint32_t caplen, uint32_t len);
  /// Bytes of cells the buffer has left (what relocate() can still take; append() leaves the
  /// tail reserve alone).
  size_t free_bytes() const noexcept { return buffer_.bytes() - used_bytes_; }
  /// Keeps the last `bytes` of the buffer (at most all of it) for relocate(): append() stops
  /// short of them, so packets as they arrive (jumbo frames taking many cells) cannot use up
  /// the room a module needs to grow one (a reassembled datagram). 0 by default.
  void set_tail_reserve(size_t bytes) noexcept {
    tail_reserve_ = bytes < buffer_.bytes() ? bytes : buffer_.bytes();
  }
  size_t tail_reserve() const noexcept { return tail_reserve_; }
  /// Would `count` more packets of at most `caplen` bytes each fit append()?
  bool can_append(uint32_t count, uint32_t caplen) const noexcept {
    return max_packets_ - count_ >= count &&
           buffer_.bytes() - used_bytes_ >= tail_reserve_ + size_t(count) * cells_for(caplen);
  }
  void clear() noexcept;

  uint32_t size() const noexcept { return count_; }
  uint32_t max_packets() const noexcept { return max_packets_; }
  uint32_t cell_bytes() const noexcept { return cell_bytes_; }
  size_t buffer_bytes() const noexcept { return buffer_.bytes(); }
  MemSpace space() const noexcept { return buffer_.space(); }
  const PacketMeta& meta(uint32_t i) const { return metas()[i]; }
  PacketMeta& meta(uint32_t i) { return metas()[i]; }
  const uint8_t* data(uint32_t i) const { return buffer_.data() + meta(i).offset; }
  uint8_t* data(uint32_t i) { return buffer_.data() + meta(i).offset; }
  BatchView view() const noexcept { return {buffer_.data(), metas(), count_}; }
  /// Packet i's cells: a module may move the packet's start (meta(i).offset) anywhere within
  /// them and change its length, as long as it stays inside. headroom(i) bytes are free
  /// before the packet (an encapsulating module lowers offset into them); room(i) bytes from
  /// its first byte to the end of its cells (what it may grow to). A module that strips a
  /// header may advance offset instead of moving the rest (ESP decapsulation).
  uint32_t headroom(uint32_t i) const noexcept { return metas()[i].offset - starts_[i]; }
  uint32_t room(uint32_t i) const noexcept { return ends_[i] - metas()[i].offset; }
  uint32_t headroom() const noexcept { return headroom_; }

 private:
  /// Bytes of the whole cells a packet of `caplen` bytes takes (with the headroom before it).
  size_t cells_for(uint32_t caplen) const noexcept;
  PacketMeta* metas() const noexcept { return reinterpret_cast<PacketMeta*>(meta_buffer_.data()); }

  HostBuffer buffer_;
  HostBuffer meta_buffer_;
  uint32_t max_packets_ = 0;
  uint32_t cell_bytes_  = kDefaultCellBytes;
  uint32_t headroom_    = 0;
  std::vector<uint32_t> starts_;  ///< per packet: where its cells start
  std::vector<uint32_t> ends_;    ///< and end
  uint32_t count_       = 0;
  size_t used_bytes_    = 0;
  size_t tail_reserve_  = 0;
};

}  // namespace warpath::packet
