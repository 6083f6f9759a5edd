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
// Zero copy
//   A batch made by create_in_arena() takes its cells from the packet arena
//   (core/packet_arena.hpp) and measures every offset from the arena's base, so it can also
//   hold packets that stay where a port received them (a DPDK mbuf's data room in the arena):
//   attach() records such a packet with the port's handle for its buffer, and the batch gives
//   the buffers back in bulk (the port's release function) when it is cleared or destroyed,
//   unless a port took one to send it (take_handle). Modules see no difference: data(i),
//   headroom(i) and room(i) answer for a held packet from its buffer's bounds, and relocate()
//   moves one into the batch's own cells like any other. own_all() copies every held packet
//   into the own cells (a frame about to cross to a GPU gets one compact range).
//
// Thread safety
//   A batch is filled by one thread; afterwards any number of engines may read it.
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/core/hd.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/core/packet_arena.hpp"
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

/// PacketMeta::flags: the packet leaves by more than one way (several ports, or a port and the
/// slow path), so a port must not send the buffer it lends (it copies the bytes instead).
inline constexpr uint16_t kMetaShared = 1;

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
  /// Gives `count` buffers back to the port that lent them (attach): one call per clear.
  using ReleaseFn = void (*)(void* const* handles, uint32_t count);

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
  /// The same, its cells a slice of the packet arena, so that attach() can take packets from
  /// the arena's other slices (a port's buffers). kOutOfMemory when the arena has no room.
  static Result<PacketBatch> create_in_arena(uint32_t max_packets,
                                             uint32_t cell_bytes = kDefaultCellBytes,
                                             size_t buffer_bytes = 0,
                                             MemSpace space = MemSpace::kHost,
                                             uint32_t headroom = 0);

  /// Appends a copy of `caplen` bytes. Returns false (and changes nothing) when the batch is
  /// full. `len` is the wire length; it is raised to caplen if smaller.
  bool append(const uint8_t* bytes, uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
              uint16_t port = 0);
  /// Reserves space for a packet of `caplen` bytes and returns where to write it (nullptr when
  /// full); the generator builds frames in place this way.
  /// Inline: the copying ports (generator, pcap, AF_PACKET) call it once a packet.
  uint8_t* append_uninitialized(uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
                                uint16_t port = 0) {
    const size_t need = cells_for(caplen);
    if (count_ == max_packets_ || used_bytes_ + need > cells_bytes_ - tail_reserve_) return nullptr;
    const uint64_t at = cells_begin_ + used_bytes_;
    starts_[count_]   = static_cast<uint32_t>(at);
    ends_[count_]     = static_cast<uint32_t>(at + need);
    PacketMeta& m     = metas()[count_++];
    m.offset          = static_cast<uint32_t>(at + headroom_);
    m.caplen          = caplen;
    m.len             = len < caplen ? caplen : len;
    m.port            = port;
    m.flags           = 0;
    m.timestamp_ns    = timestamp_ns;
    used_bytes_ += need;
    return base_ + m.offset;
  }
  /// Can attach() take packets released by `release`? (an arena batch, holding none of
  /// another port kind's).
  bool attachable(ReleaseFn release) const noexcept {
    return bool(slice_) && (!held_.release || held_.release == release);
  }
  /// Appends a packet that stays in a port's buffer [begin, end) in the arena, `data` its first
  /// byte; the batch holds `handle` until cleared (then `release` gets it back) unless a port
  /// takes it. False, changing nothing, when the batch is full or the buffer is not in reach
  /// (not attachable, outside the arena). A run of one attach_burst(), which ports use.
  bool attach(const uint8_t* data, uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
              uint16_t port, const uint8_t* begin, const uint8_t* end, void* handle,
              ReleaseFn release) noexcept {
    uint64_t bytes = 0;
    return attach_burst(1, timestamp_ns, port, release, bytes, [&](uint32_t, Held1& p) {
             p = {data, caplen, len, begin, end, handle};
             return true;
           }) == 1;
  }
  /// A packet for attach_burst(): what attach() takes of it.
  struct Held1 {
    const uint8_t* data;
    uint32_t caplen, len;
    const uint8_t *begin, *end;
    void* handle;
  };
  /// attach() for a run of up to `k` packets of one port, `get(j, Held1&)` describing the j-th
  /// (false: not one to hold, a chain of buffers say; the run ends before it). The same checks
  /// per packet as attach() (a packet failing them ends the run too), with the batch's state
  /// kept in registers across the run instead of reloaded per packet (a port's receive loop:
  /// 62 -> about 40 instructions a packet). Returns how many were appended, from the first;
  /// adds their wire lengths to `bytes`.
  template <class Get>
  uint32_t attach_burst(uint32_t k, uint64_t timestamp_ns, uint16_t port, ReleaseFn release,
                        uint64_t& bytes, Get&& get) noexcept {
    if (!release || (release != held_.release && !adopt(release))) return 0;
    uint32_t n        = count_;
    const uint32_t to = n + (k < max_packets_ - n ? k : max_packets_ - n);
    uint8_t* const base   = base_;
    void** const handles  = held_.handles.data();
    uint32_t* const starts = starts_.data();
    uint32_t* const ends   = ends_.data();
    PacketMeta* const meta = metas();
    const uint32_t from    = n;
    uint64_t sum           = 0;
    for (Held1 p; n < to; ++n) {
      if (!get(n - from, p) || p.begin < base || p.data < p.begin || p.data > p.end ||
          size_t(p.end - p.data) < p.caplen || size_t(p.end - base) > 0xffffffffull)
        break;
      handles[n]      = p.handle;
      starts[n]       = static_cast<uint32_t>(p.begin - base);
      ends[n]         = static_cast<uint32_t>(p.end - base);
      PacketMeta& m   = meta[n];
      m.offset        = static_cast<uint32_t>(p.data - base);
      m.caplen        = p.caplen;
      m.len           = p.len < p.caplen ? p.caplen : p.len;
      sum += m.len;
      m.port          = port;
      m.flags         = 0;
      m.timestamp_ns  = timestamp_ns;
    }
    held_.count += n - from;
    count_ = n;
    bytes += sum;
    return n - from;
  }
  /// The handle packet i's bytes are held by (nullptr: the batch's own cells).
  void* handle(uint32_t i) const noexcept { return held_.count ? held_.handles[i] : nullptr; }
  /// take_handle() of packets which[0..k) into out[0..k), except that a kMetaShared packet
  /// (it leaves by more than one way: the port must copy it) keeps its handle and gets
  /// nullptr, as does one in the batch's own cells. One pass with the batch's state in
  /// registers (a port's send loop). Returns how many handles were taken.
  uint32_t take_handles(const uint32_t* which, uint32_t k, void** out) noexcept {
    if (!held_.count) {
      for (uint32_t j = 0; j < k; ++j) out[j] = nullptr;
      return 0;
    }
    void** const handles   = held_.handles.data();
    const PacketMeta* meta = metas();
    uint32_t taken         = 0;
    for (uint32_t j = 0; j < k; ++j) {
      const uint32_t i = which[j];
      void* h          = (meta[i].flags & kMetaShared) ? nullptr : handles[i];
      if (h) handles[i] = nullptr;
      out[j] = h;
      taken += h != nullptr;
    }
    held_.count -= taken;
    return taken;
  }
  /// Hands packet i's buffer to the caller (a port sending it): the batch no longer releases
  /// it, and packet i's bytes must not be read after the caller gave the buffer on.
  void* take_handle(uint32_t i) noexcept {
    if (!held_.count) return nullptr;
    void* h          = held_.handles[i];
    held_.handles[i] = nullptr;
    held_.count -= h != nullptr;
    return h;
  }
  /// Copies every held packet into the batch's own cells and gives their buffers back. False
  /// when the cells have no room left (the packets not moved stay held).
  bool own_all();

  /// Moves packet i to fresh cells at the end of the buffer, with room for `caplen` bytes (and
  /// the batch's headroom before them), and returns where to write them (its old cells stay
  /// unused until clear()); nullptr, changing nothing, when the buffer has no room left. A
  /// module that replaces a packet by a larger one (a reassembled datagram in place of its last
  /// fragment) writes it there; the count of packets does not change.
  uint8_t* relocate(uint32_t i, uint32_t caplen, uint32_t len);
  /// Bytes of cells the buffer has left (what relocate() can still take; append() leaves the
  /// tail reserve alone).
  size_t free_bytes() const noexcept { return cells_bytes_ - used_bytes_; }
  /// Keeps the last `bytes` of the buffer (at most all of it) for relocate(): append() stops
  /// short of them, so packets as they arrive (jumbo frames taking many cells) cannot use up
  /// the room a module needs to grow one (a reassembled datagram). 0 by default.
  void set_tail_reserve(size_t bytes) noexcept {
    tail_reserve_ = bytes < cells_bytes_ ? bytes : cells_bytes_;
  }
  size_t tail_reserve() const noexcept { return tail_reserve_; }
  /// Would `count` more packets of at most `caplen` bytes each fit append()?
  bool can_append(uint32_t count, uint32_t caplen) const noexcept {
    return max_packets_ - count_ >= count &&
           cells_bytes_ - used_bytes_ >= tail_reserve_ + size_t(count) * cells_for(caplen);
  }
  /// Empties the batch, giving held buffers back.
  void clear() noexcept;

  uint32_t size() const noexcept { return count_; }
  uint32_t max_packets() const noexcept { return max_packets_; }
  uint32_t cell_bytes() const noexcept { return cell_bytes_; }
  /// Bytes of the batch's own cells.
  size_t buffer_bytes() const noexcept { return cells_bytes_; }
  /// Whether [p, p + n) lies inside the own cells (where every packet not held in a port's
  /// buffer is): the offload master moves a frame's packet bytes as one span when they do.
  bool in_cells(const uint8_t* p, size_t n) const noexcept {
    const uint8_t* cells = base_ + cells_begin_;
    return p >= cells && n <= cells_bytes_ && size_t(p - cells) <= cells_bytes_ - n;
  }
  MemSpace space() const noexcept { return !slice_ ? buffer_.space() : slice_.space(); }
  bool in_arena() const noexcept { return bool(slice_); }
  const PacketMeta& meta(uint32_t i) const { return metas()[i]; }
  PacketMeta& meta(uint32_t i) { return metas()[i]; }
  const uint8_t* data(uint32_t i) const { return base_ + meta(i).offset; }
  uint8_t* data(uint32_t i) { return base_ + meta(i).offset; }
  /// Offsets count from here: the own buffer, or the arena's base for an arena batch.
  uint8_t* base() const noexcept { return base_; }
  BatchView view() const noexcept { return {base_, metas(), count_}; }
  /// Packet i's cells: a module may move the packet's start (meta(i).offset) anywhere within
  /// them and change its length, as long as it stays inside. headroom(i) bytes are free
  /// before the packet (an encapsulating module lowers offset into them); room(i) bytes from
  /// its first byte to the end of its cells (what it may grow to). A module that strips a
  /// header may advance offset instead of moving the rest (ESP decapsulation).
  uint32_t headroom(uint32_t i) const noexcept { return metas()[i].offset - starts_[i]; }
  uint32_t room(uint32_t i) const noexcept { return ends_[i] - metas()[i].offset; }
  uint32_t headroom() const noexcept { return headroom_; }

 private:
  /// Bytes of the whole cells a packet of `caplen` bytes takes (with the headroom before it):
  /// one cell for nearly every packet, without a division.
  size_t cells_for(uint32_t caplen) const noexcept {
    const size_t span = size_t(caplen) + headroom_;
    if (span <= cell_bytes_) return cell_bytes_;
    return (span + cell_bytes_ - 1) / cell_bytes_ * cell_bytes_;
  }
  PacketMeta* metas() const noexcept { return reinterpret_cast<PacketMeta*>(meta_buffer_.data()); }

  // Packets held in ports' buffers (attach): a handle per packet, nullptr for the own cells;
  // buffers of packets relocated away wait in `orphans` for the next clear. Gives everything
  // back when destroyed; a moved-from one holds nothing.
  struct Held {
    std::vector<void*> handles;
    std::vector<void*> orphans;
    ReleaseFn release = nullptr;
    uint32_t count    = 0;  ///< handles set (0: none, and nothing to scan when cleared)
    Held()            = default;
    Held(Held&& o) noexcept { *this = std::move(o); }
    Held& operator=(Held&& o) noexcept;
    ~Held() { give_back(uint32_t(handles.size())); }
    /// Releases the handles of packets [0, n) (a clear passes them all) and the orphans.
    void give_back(uint32_t n) noexcept;
    void release_orphans() noexcept;
  };

  /// attach()'s slow path: takes `release` as the batch's lender when it has none (and is an
  /// arena batch); false when it cannot (attach then refuses the packet).
  bool adopt(ReleaseFn release) noexcept {
    if (!slice_ || !release || held_.release || held_.handles.empty()) return false;
    held_.release = release;
    return true;
  }

  static Result<PacketBatch> make(uint32_t max_packets, uint32_t cell_bytes, size_t buffer_bytes,
                                  MemSpace space, uint32_t headroom, bool arena);

  HostBuffer buffer_;
  ArenaSlice slice_;
  HostBuffer meta_buffer_;
  uint8_t* base_         = nullptr;  ///< offsets count from here
  uint64_t cells_begin_  = 0;        ///< the own cells' offset from base_
  size_t cells_bytes_    = 0;
  Held held_;
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
