// src/lookup/tbl24_chunks.cpp: building and refreshing compressed tbl24 chunks (see
// tbl24_chunks.hpp and core/tbl24_chunks_core.hpp).
#include "lookup/tbl24_chunks.hpp"

#include <algorithm>
#include <cstring>
#include <new>

namespace warpath::lookup::detail {
namespace {

constexpr uint32_t kChunks    = 1u << 16;
constexpr uint32_t kPerChunk  = 256;
constexpr uint32_t kUnit      = core::kChunkRecordAlign;
constexpr uint32_t kMaxRecord = core::kChunkRecordHeader + kPerChunk * 4;  // 32-bit entries
constexpr uint64_t kMinSpare  = uint64_t(1) << 20;  // pool bytes kept free for updates

uint32_t units_for(uint32_t runs, uint32_t entry_bytes) {
  return (core::kChunkRecordHeader + runs * entry_bytes + kUnit - 1) / kUnit;
}

/// The record of a chunk whose 256 entries all hold `value`, into kUnit zeroed bytes: one run
/// from entry 0, and every later word has that one run before it.
template <class E>
void write_uniform(uint8_t* rec, E value) {
  rec[0]  = 1;
  rec[33] = rec[34] = rec[35] = 1;
  std::memcpy(rec + core::kChunkRecordHeader, &value, sizeof value);
}

}  // namespace

template <class E>
uint32_t Tbl24Chunks::compress(const E* entries, uint8_t* rec, uint32_t* uniform) const {
  if (std::all_of(entries + 1, entries + kPerChunk, [&](E e) { return e == entries[0]; })) {
    *uniform = uint32_t(entries[0]);
    return 0;
  }
  uint64_t bits[4] = {0, 0, 0, 0};
  E* runs          = reinterpret_cast<E*>(rec + core::kChunkRecordHeader);
  uint32_t n       = 0;
  for (uint32_t i = 0; i < kPerChunk; ++i)
    if (i == 0 || entries[i] != entries[i - 1]) {
      bits[i >> 6] |= uint64_t(1) << (i & 63);
      runs[n++] = entries[i];
    }
  std::memcpy(rec, bits, sizeof bits);
  uint32_t before = 0;
  for (uint32_t w = 0; w < 4; ++w) {
    rec[32 + w] = uint8_t(before);
    before += uint32_t(__builtin_popcountll(bits[w]));
  }
  return units_for(n, sizeof(E));
}

uint32_t Tbl24Chunks::allocate(uint32_t units) {
  std::vector<uint32_t>& list = free_[units];
  if (!list.empty()) {
    const uint32_t off = list.back();
    list.pop_back();
    free_units_ -= units;
    return off;
  }
  const uint32_t off = bump_;  // reserve() made sure it fits
  bump_ += units;
  return off;
}

template <class E>
uint32_t Tbl24Chunks::uniform_record(E value) {
  const auto it = uniform_.find(uint32_t(value));
  if (it != uniform_.end()) return it->second;
  const uint32_t off = allocate(1);
  uint8_t* rec       = pool() + uint64_t(off) * kUnit;
  std::memset(rec, 0, kUnit);
  write_uniform(rec, value);
  uniform_.emplace(uint32_t(value), off);
  ++records_;
  return off;
}

template <class E>
Result<std::unique_ptr<Tbl24Chunks>> Tbl24Chunks::build(const E* tbl24) {
  std::unique_ptr<Tbl24Chunks> c(new Tbl24Chunks());
  c->entry_bytes_ = sizeof(E);
  c->max_units_   = units_for(kPerChunk, sizeof(E));
  c->free_.resize(c->max_units_ + 1);
  c->units_.assign(kChunks, 0);
  try {
    // Records first into a staging copy, to size the pool: used plus room for updates.
    std::vector<uint8_t> staging;
    std::vector<uint32_t> offsets(kChunks);
    std::unordered_map<uint32_t, uint32_t> uniform_staged;
    alignas(64) uint8_t rec[kMaxRecord + kUnit];
    for (uint32_t ch = 0; ch < kChunks; ++ch) {
      std::memset(rec, 0, sizeof rec);
      uint32_t value       = 0;
      const uint32_t units = c->compress(tbl24 + uint64_t(ch) * kPerChunk, rec, &value);
      if (units == 0) {
        auto [it, fresh] = uniform_staged.emplace(value, uint32_t(staging.size() / kUnit));
        if (fresh) {
          write_uniform(rec, E(value));  // rec is still zero: compress() wrote nothing
          staging.insert(staging.end(), rec, rec + kUnit);
        }
        offsets[ch] = it->second;
        continue;
      }
      offsets[ch]   = uint32_t(staging.size() / kUnit);
      c->units_[ch] = uint8_t(units);
      staging.insert(staging.end(), rec, rec + uint64_t(units) * kUnit);
    }
    const uint64_t used  = staging.size();
    const uint64_t spare = std::max<uint64_t>(used / 2, kMinSpare);
    c->pool_             = HugeArray(used + spare);
    c->chunk_            = HugeArray(kChunks * sizeof(uint32_t));
    std::memcpy(c->pool(), staging.data(), used);
    std::memcpy(c->chunk(), offsets.data(), kChunks * sizeof(uint32_t));
    c->pool_units_ = uint32_t(c->pool_.bytes / kUnit);
    c->bump_       = uint32_t(used / kUnit);
    c->uniform_    = std::move(uniform_staged);
    c->records_    = uint32_t(c->uniform_.size());
    for (uint32_t ch = 0; ch < kChunks; ++ch) c->records_ += c->units_[ch] != 0;
    c->release_units_ = std::max<uint64_t>(spare / kUnit / 8, 1);
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory compressing a tbl24");
  }
  return c;
}

Status Tbl24Chunks::reserve(uint32_t lo, uint32_t hi) const {
  // Each chunk needs at most one record, or one new shared record.
  const uint64_t worst = (uint64_t(hi) - lo + 1) * max_units_;
  if (uint64_t(pool_units_) - bump_ >= worst) return Status::ok();
  return Status(Errc::kCapacity,
                "compressed tbl24 pool has no room for " + std::to_string(hi - lo + 1) + " chunks");
}

template <class E>
void Tbl24Chunks::refresh(const E* tbl24, uint32_t lo, uint32_t hi) {
  alignas(64) uint8_t rec[kMaxRecord + kUnit];
  for (uint32_t ch = lo; ch <= hi; ++ch) {
    std::memset(rec, 0, sizeof rec);
    uint32_t value         = 0;
    const uint32_t units   = compress(tbl24 + uint64_t(ch) * kPerChunk, rec, &value);
    const uint32_t old     = chunk()[ch];
    const uint32_t old_len = units_[ch];
    uint32_t off           = 0;
    if (units == 0) {
      off = uniform_record(E(value));
      if (old_len == 0 && old == off) continue;
    } else {
      if (old_len == units &&
          std::memcmp(pool() + uint64_t(old) * kUnit, rec, uint64_t(units) * kUnit) == 0)
        continue;
      off = allocate(units);
      std::memcpy(pool() + uint64_t(off) * kUnit, rec, uint64_t(units) * kUnit);
      ++records_;
    }
    __atomic_store_n(&chunk()[ch], off, __ATOMIC_RELEASE);
    units_[ch] = uint8_t(units);
    if (old_len != 0) {
      retired_.emplace_back(old, old_len);  // readers may still be inside it
      retired_units_ += old_len;
      --records_;
    }
  }
}

void Tbl24Chunks::release_retired() {
  for (const auto& [off, units] : retired_) free_[units].push_back(off);
  free_units_ += retired_units_;
  retired_.clear();
  retired_units_ = 0;
}

core::Tbl24ChunksView Tbl24Chunks::view() const { return {chunk(), pool()}; }

uint64_t Tbl24Chunks::memory_bytes() const {
  return uint64_t(kChunks) * sizeof(uint32_t) + pool_.bytes;
}

uint64_t Tbl24Chunks::used_bytes() const { return (uint64_t(bump_) - free_units_) * kUnit; }

uint64_t Tbl24Chunks::writer_bytes() const {
  uint64_t free_lists = 0;
  for (const auto& l : free_) free_lists += l.capacity() * sizeof(uint32_t);
  return units_.size() + free_lists + retired_.capacity() * 8 + uniform_.size() * 32;
}

template Result<std::unique_ptr<Tbl24Chunks>> Tbl24Chunks::build<uint16_t>(const uint16_t*);
template Result<std::unique_ptr<Tbl24Chunks>> Tbl24Chunks::build<uint32_t>(const uint32_t*);
template void Tbl24Chunks::refresh<uint16_t>(const uint16_t*, uint32_t, uint32_t);
template void Tbl24Chunks::refresh<uint32_t>(const uint32_t*, uint32_t, uint32_t);

}  // namespace warpath::lookup::detail
