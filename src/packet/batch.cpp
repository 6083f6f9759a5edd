#include "warpath/packet/batch.hpp"

#include <cstring>

namespace warpath::packet {

Result<PacketBatch> PacketBatch::create(uint32_t max_packets, uint32_t cell_bytes,
                                        size_t buffer_bytes, MemSpace space, uint32_t headroom) {
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
  b.buffer_      = HostBuffer(buffer_bytes, space);
  b.meta_buffer_ = HostBuffer(size_t(max_packets) * sizeof(PacketMeta), space);
  if ((buffer_bytes && !b.buffer_.data()) || (max_packets && !b.meta_buffer_.data()))
    return Status(Errc::kOutOfMemory,
                  "cannot allocate a batch of " + std::to_string(buffer_bytes) + " bytes");
  return b;
}

size_t PacketBatch::cells_for(uint32_t caplen) const noexcept {
  const size_t span  = size_t(caplen) + headroom_;
  const size_t cells = span == 0 ? 1 : (span + cell_bytes_ - 1) / cell_bytes_;
  return cells * cell_bytes_;
}

uint8_t* PacketBatch::append_uninitialized(uint32_t caplen, uint32_t len, uint64_t timestamp_ns,
                                           uint16_t port) {
  const size_t need = cells_for(caplen);
  if (count_ == max_packets_ || used_bytes_ + need > buffer_.bytes() - tail_reserve_)
    return nullptr;
  starts_[count_] = static_cast<uint32_t>(used_bytes_);
  ends_[count_]   = static_cast<uint32_t>(used_bytes_ + need);
  PacketMeta& m   = metas()[count_++];
  m.offset        = static_cast<uint32_t>(used_bytes_ + headroom_);
  m.caplen       = caplen;
  m.len          = len < caplen ? caplen : len;
  m.port         = port;
  m.flags        = 0;
  m.timestamp_ns = timestamp_ns;
  used_bytes_ += need;
  return buffer_.data() + m.offset;
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
  if (i >= count_ || used_bytes_ + need > buffer_.bytes()) return nullptr;
  starts_[i]    = static_cast<uint32_t>(used_bytes_);
  ends_[i]      = static_cast<uint32_t>(used_bytes_ + need);
  PacketMeta& m = metas()[i];
  m.offset      = static_cast<uint32_t>(used_bytes_ + headroom_);
  m.caplen      = caplen;
  m.len         = len < caplen ? caplen : len;
  used_bytes_ += need;
  return buffer_.data() + m.offset;
}

void PacketBatch::clear() noexcept {
  count_      = 0;
  used_bytes_ = 0;
}

}  // namespace warpath::packet
