#include "warpath/packet/batch.hpp"

#include <cstring>
#include <utility>

namespace warpath::packet {

Result<PacketBatch> PacketBatch::make(uint32_t max_packets, uint32_t cell_bytes,
                                      size_t buffer_bytes, MemSpace space, uint32_t headroom,
                                      bool arena) {
  if (cell_bytes == 0 || cell_bytes % 64 != 0)
    return Status(Errc::kInvalidArgument, "cell size must be a non-zero multiple of 64 bytes");
  if (headroom >= cell_bytes)
    return Status(Errc::kInvalidArgument, "headroom must be below the cell size");
  if (buffer_bytes == 0) buffer_bytes = size_t(max_packets) * cell_bytes;
  if (buffer_bytes > 0xffffffffull)
    return Status(Errc::kInvalidArgument, "a batch buffer is limited to 4 GiB (32-bit offsets)");
  PacketBatch b;
  b.max_packets_ = max_packets;
  b.cell_bytes_  = cell_bytes;
  b.headroom_    = headroom;
  b.starts_.resize(max_packets);
  b.ends_.resize(max_packets);
  if (arena) {
    PacketArena& a = PacketArena::get();
    WARPATH_ASSIGN_OR_RETURN(b.slice_, a.allocate(buffer_bytes, space));
    if (b.slice_.offset() + buffer_bytes > 0xffffffffull)
      return Status(Errc::kOutOfMemory, "the packet arena's free room lies beyond 4 GiB");
    b.base_        = a.base();
    b.cells_begin_ = b.slice_.offset();
    b.held_.handles.assign(max_packets, nullptr);
    b.held_.orphans.reserve(size_t(max_packets) * 2);
  } else {
    b.buffer_ = HostBuffer(buffer_bytes, space);
    b.base_   = b.buffer_.data();
  }
  b.cells_bytes_ = buffer_bytes;
  b.meta_buffer_ = HostBuffer(size_t(max_packets) * sizeof(PacketMeta), space);
  if ((buffer_bytes && !b.base_) || (max_packets && !b.meta_buffer_.data()))
    return Status(Errc::kOutOfMemory,
                  "cannot allocate a batch of " + std::to_string(buffer_bytes) + " bytes");
  return b;
}

Result<PacketBatch> PacketBatch::create(uint32_t max_packets, uint32_t cell_bytes,
                                        size_t buffer_bytes, MemSpace space, uint32_t headroom) {
  return make(max_packets, cell_bytes, buffer_bytes, space, headroom, false);
}

Result<PacketBatch> PacketBatch::create_in_arena(uint32_t max_packets, uint32_t cell_bytes,
                                                 size_t buffer_bytes, MemSpace space,
                                                 uint32_t headroom) {
  return make(max_packets, cell_bytes, buffer_bytes, space, headroom, true);
}

bool PacketBatch::append(const uint8_t* bytes, uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
                         uint16_t port) {
  uint8_t* dst = append_uninitialized(caplen, len, timestamp_ns, port);
  if (!dst) return false;
  if (caplen) std::memcpy(dst, bytes, caplen);
  return true;
}

uint8_t* PacketBatch::relocate(uint32_t i, uint32_t caplen, uint32_t len) {
  const size_t need = cells_for(caplen);
  if (i >= count_ || used_bytes_ + need > cells_bytes_) return nullptr;
  if (held_.count && held_.handles[i]) {  // its port's buffer goes back at the next clear
    held_.orphans.push_back(held_.handles[i]);
    held_.handles[i] = nullptr;
    --held_.count;
  }
  const uint64_t at = cells_begin_ + used_bytes_;
  starts_[i]        = static_cast<uint32_t>(at);
  ends_[i]          = static_cast<uint32_t>(at + need);
  PacketMeta& m     = metas()[i];
  m.offset          = static_cast<uint32_t>(at + headroom_);
  m.caplen          = caplen;
  m.len             = len < caplen ? caplen : len;
  used_bytes_ += need;
  return base_ + m.offset;
}

bool PacketBatch::own_all() {
  if (!held_.count) return true;
  bool all = true;
  for (uint32_t i = 0; i < count_; ++i) {
    if (!held_.handles[i]) continue;
    const PacketMeta m = metas()[i];
    const uint8_t* src = base_ + m.offset;
    uint8_t* dst       = relocate(i, m.caplen, m.len);
    if (!dst) {
      all = false;
      continue;
    }
    std::memmove(dst, src, m.caplen);
  }
  held_.release_orphans();
  return all;
}

void PacketBatch::clear() noexcept {
  if (held_.count || !held_.orphans.empty()) held_.give_back(count_);
  count_      = 0;
  used_bytes_ = 0;
}

PacketBatch::Held& PacketBatch::Held::operator=(Held&& o) noexcept {
  if (this != &o) {
    give_back(uint32_t(handles.size()));
    handles = std::move(o.handles);
    orphans = std::move(o.orphans);
    release = std::exchange(o.release, nullptr);
    count   = std::exchange(o.count, 0);
    o.handles.clear();
    o.orphans.clear();
  }
  return *this;
}

void PacketBatch::Held::give_back(uint32_t n) noexcept {
  if (!release) return;
  for (uint32_t i = 0; count && i < n && i < handles.size(); ++i)
    if (handles[i]) {
      orphans.push_back(handles[i]);
      handles[i] = nullptr;
      --count;
    }
  release_orphans();
}

void PacketBatch::Held::release_orphans() noexcept {
  if (orphans.empty()) return;
  release(orphans.data(), uint32_t(orphans.size()));
  orphans.clear();
}

}  // namespace warpath::packet
