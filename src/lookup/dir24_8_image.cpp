// src/lookup/dir24_8_image.cpp: building and updating DIR-24-8 images (see dir24_8_image.hpp).
#include "lookup/dir24_8_image.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <cstring>
#include <new>
#include <unordered_set>

namespace warpath::lookup::detail {

namespace {

template <class E>
void store(E* p, E v) {
  __atomic_store_n(p, v, __ATOMIC_RELEASE);
}

}  // namespace

void Dir24_8Image::mark(uint8_t table, uint32_t begin, uint32_t end) {
  if (!logging_) return;
  if (!dirty_.empty()) {
    DirtyRange& last = dirty_.back();
    if (last.table == table && begin >= last.begin && begin <= last.end) {
      last.end = std::max(last.end, end);
      return;
    }
  }
  dirty_.push_back({table, begin, end});
}

std::vector<DirtyRange> Dir24_8Image::drain_dirty() {
  std::vector<DirtyRange> out;
  out.swap(dirty_);
  return out;
}

template <class E>
Status Dir24_8Image::value_of(NextHop nh, E& out) {
  if (nh > kMaxNextHop)
    return Status(
        Errc::kInvalidArgument,
        "next hop " + std::to_string(nh) + " is above the maximum " + std::to_string(kMaxNextHop));
  if constexpr (sizeof(E) == 4) {
    out = E(nh);
  } else {
    auto it = nh_index_.find(nh);
    if (it == nh_index_.end()) {
      const auto index = uint32_t(nh_index_.size());
      if (index >= core::Dir24_8Traits<E>::kMaxValues)
        return Status(Errc::kCapacity, "16-bit DIR-24-8 image is out of next-hop values");
      nh_[index] = nh;  // published by the release store of the first entry that uses it
      mark(2, index, index + 1);
      it = nh_index_.emplace(nh, index).first;
    }
    out = E(it->second);
  }
  return Status::ok();
}

template <class E>
void Dir24_8Image::paint_group(uint32_t g, uint32_t lo, uint32_t hi, E value, uint8_t depth,
                               bool replace_eq) {
  E* t8       = tbl8<E>() + (size_t(g) << 8);
  uint8_t* d8 = depth8_.data() + (size_t(g) << 8);
  for (uint32_t k = lo; k < hi; ++k) {
    if (d8[k] < depth || (replace_eq && d8[k] == depth)) {
      d8[k] = depth;
      store(&t8[k], value);
    }
  }
  mark(1, (g << 8) + lo, (g << 8) + hi);
}

template <class E>
Status Dir24_8Image::add_impl(const Route4& r) {
  using T = core::Dir24_8Traits<E>;
  E v{};
  WARPATH_TRY(value_of(r.nh, v));
  const auto d = uint8_t(r.len + 1);
  E* t24       = tbl24<E>();
  if (r.len <= 24) {
    const uint32_t lo = r.prefix >> 8, n = 1u << (24 - r.len);
    for (uint32_t s = lo; s < lo + n; ++s) {
      if (depth24_[s] > d) continue;  // a longer route of length <= 24 owns this /24
      depth24_[s] = d;
      const E e   = t24[s];
      if (e & T::kGroup) {
        paint_group<E>(uint32_t(e & ~T::kGroup), 0, 256, v, d, true);
      } else {
        store(&t24[s], v);
      }
    }
    mark(0, lo, lo + n);
    return Status::ok();
  }
  const uint32_t s = r.prefix >> 8;
  E e              = t24[s];
  if (!(e & T::kGroup)) {
    uint32_t g = 0;
    if (!free_groups_.empty()) {
      g = free_groups_.back();
      free_groups_.pop_back();
    } else if (groups_next_ < group_cap_) {
      g = groups_next_++;
    } else {
      return Status(Errc::kCapacity, "DIR-24-8 image is out of tbl8 groups");
    }
    // Fill the group with the /24's current answer before publishing it.
    E* t8 = tbl8<E>() + (size_t(g) << 8);
    for (unsigned k = 0; k < 256; ++k) store(&t8[k], e);
    std::memset(depth8_.data() + (size_t(g) << 8), depth24_[s], 256);
    mark(1, g << 8, (g << 8) + 256);
    e = E(T::kGroup | g);
    store(&t24[s], e);
    mark(0, s, s + 1);
    ++groups_used_;
  }
  const uint32_t lo = r.prefix & 0xffu, n = 1u << (32 - r.len);
  paint_group<E>(uint32_t(e & ~T::kGroup), lo, lo + n, v, d, true);
  return Status::ok();
}

template <class E>
Status Dir24_8Image::remove_impl(const Rib4& rib, uint32_t prefix, uint8_t len) {
  using T                = core::Dir24_8Traits<E>;
  const Rib4::Match repl = rib.best_covering(prefix, len);
  E rv                   = T::kEmpty;
  const auto rd          = uint8_t(repl.len + 1);  // 0 when there is none
  if (repl.len >= 0) WARPATH_TRY(value_of(repl.nh, rv));
  const auto d   = uint8_t(len + 1);
  E* t24         = tbl24<E>();
  auto fall_back = [&](uint32_t g, uint32_t lo, uint32_t hi) {
    E* t8       = tbl8<E>() + (size_t(g) << 8);
    uint8_t* d8 = depth8_.data() + (size_t(g) << 8);
    for (uint32_t k = lo; k < hi; ++k)
      if (d8[k] == d) {
        d8[k] = rd;
        store(&t8[k], rv);
      }
    mark(1, (g << 8) + lo, (g << 8) + hi);
  };
  if (len <= 24) {
    const uint32_t lo = prefix >> 8, n = 1u << (24 - len);
    for (uint32_t s = lo; s < lo + n; ++s) {
      if (depth24_[s] != d) continue;
      depth24_[s] = rd;
      const E e   = t24[s];
      if (e & T::kGroup) {
        fall_back(uint32_t(e & ~T::kGroup), 0, 256);
      } else {
        store(&t24[s], rv);
      }
    }
    mark(0, lo, lo + n);
    return Status::ok();
  }
  const uint32_t s = prefix >> 8;
  const E e        = t24[s];
  if (!(e & T::kGroup))
    return Status(Errc::kInvalidArgument, "DIR-24-8 image has no group for " + format_ipv4(prefix) +
                                              "/" + std::to_string(len) +
                                              " (image and RIB differ)");
  const auto g = uint32_t(e & ~T::kGroup);
  fall_back(g, prefix & 0xffu, (prefix & 0xffu) + (1u << (32 - len)));
  // A group whose entries all come from routes of length <= 24 equals its /24: collapse it.
  const uint8_t* d8 = depth8_.data() + (size_t(g) << 8);
  if (std::all_of(d8, d8 + 256, [](uint8_t x) { return x <= 25; })) {
    store(&t24[s], tbl8<E>()[size_t(g) << 8]);
    mark(0, s, s + 1);
    retired_.push_back(g);  // readers may still be inside it
    --groups_used_;
  }
  return Status::ok();
}

Dir24_8Image::~Dir24_8Image() = default;

bool Dir24_8Image::has_retired() const {
  return !retired_.empty() || (chunks_ && chunks_->wants_release());
}

void Dir24_8Image::release_retired() {
  free_groups_.insert(free_groups_.end(), retired_.begin(), retired_.end());
  retired_.clear();
  if (chunks_) chunks_->release_retired();
}

// An in-place update of tbl24/tbl8, then of the compressed chunks the route covers. The pool
// is checked first, so a kCapacity leaves the image as it was.
template <class E>
Status Dir24_8Image::update(uint32_t prefix, uint8_t len, const std::function<Status()>& write) {
  if (!chunks_) return write();
  const uint32_t lo = prefix >> 16;
  const uint32_t hi = len >= 16 ? lo : (prefix | (0xFFFF'FFFFu >> len)) >> 16;
  WARPATH_TRY(chunks_->reserve(lo, hi));
  WARPATH_TRY(write());
  chunks_->refresh(tbl24<E>(), lo, hi);
  return Status::ok();
}

Status Dir24_8Image::add(const Route4& r) {
  if (bits_ == 16) return update<uint16_t>(r.prefix, r.len, [&] { return add_impl<uint16_t>(r); });
  return update<uint32_t>(r.prefix, r.len, [&] { return add_impl<uint32_t>(r); });
}

Status Dir24_8Image::remove(const Rib4& rib, uint32_t prefix, uint8_t len) {
  if (bits_ == 16)
    return update<uint16_t>(prefix, len, [&] { return remove_impl<uint16_t>(rib, prefix, len); });
  return update<uint32_t>(prefix, len, [&] { return remove_impl<uint32_t>(rib, prefix, len); });
}

core::Dir24_8View<uint16_t> Dir24_8Image::view16() const {
  return {tbl24<uint16_t>(), tbl8<uint16_t>(), nh_.data()};
}
core::Dir24_8View<uint32_t> Dir24_8Image::view32() const {
  return {tbl24<uint32_t>(), tbl8<uint32_t>(), nullptr};
}

uint64_t Dir24_8Image::memory_bytes() const {
  const uint64_t entry = bits_ / 8;
  const uint64_t first = chunks_ ? chunks_->memory_bytes() : (uint64_t(1) << 24) * entry;
  return first + uint64_t(group_cap_) * 256 * entry + nh_.size() * sizeof(NextHop);
}

uint64_t Dir24_8Image::writer_bytes() const {
  const uint64_t tbl24 = chunks_ ? (uint64_t(1) << 24) * (bits_ / 8) + chunks_->writer_bytes() : 0;
  return tbl24 + depth24_.size() + depth8_.size() + nh_index_.size() * 32 +
         free_groups_.capacity() * sizeof(uint32_t);
}

Result<std::unique_ptr<Dir24_8Image>> Dir24_8Image::build(const Rib4& rib, unsigned entry_bits,
                                                          uint32_t spare_groups, bool compress) {
  if (entry_bits != 0 && entry_bits != 16 && entry_bits != 32)
    return Status(Errc::kInvalidArgument, "DIR-24-8 entry width must be 16 or 32 bits");
  // Groups needed: distinct /24s holding a route longer than /24.
  std::unordered_set<uint32_t> slots;
  std::unordered_set<NextHop> nhs;
  for (unsigned len = 0; len <= 32; ++len)
    for (const auto& [prefix, nh] : rib.of_length(len)) {
      if (len > 24) slots.insert(prefix >> 8);
      if (nhs.size() <= core::Dir24_8Traits<uint16_t>::kMaxValues) nhs.insert(nh);
      if (nh > kMaxNextHop)
        return Status(Errc::kInvalidArgument, "next hop " + std::to_string(nh) +
                                                  " is above the maximum " +
                                                  std::to_string(kMaxNextHop));
    }
  const uint64_t want = uint64_t(slots.size()) + spare_groups;
  const bool fits16   = nhs.size() < core::Dir24_8Traits<uint16_t>::kMaxValues &&
                      slots.size() <= core::Dir24_8Traits<uint16_t>::kMaxGroups;
  unsigned bits = entry_bits ? entry_bits : (fits16 ? 16 : 32);
  if (bits == 16 && !fits16)
    return Status(Errc::kCapacity, "the table needs more than a 16-bit DIR-24-8 image holds (" +
                                       std::to_string(nhs.size()) + " next hops, " +
                                       std::to_string(slots.size()) + " tbl8 groups)");
  const uint64_t max_groups = bits == 16 ? core::Dir24_8Traits<uint16_t>::kMaxGroups
                                         : core::Dir24_8Traits<uint32_t>::kMaxGroups;
  if (slots.size() > max_groups)
    return Status(Errc::kCapacity, "the table needs " + std::to_string(slots.size()) +
                                       " tbl8 groups, more than " + std::to_string(max_groups));
  std::unique_ptr<Dir24_8Image> img(new Dir24_8Image());
  img->bits_         = bits;
  img->group_cap_    = uint32_t(std::min(want, max_groups));
  const size_t entry = bits / 8;
  try {
    img->tbl24_ = HugeArray((size_t(1) << 24) * entry);
    img->tbl8_  = HugeArray(size_t(img->group_cap_) * 256 * entry);
    img->depth24_.assign(size_t(1) << 24, 0);
    img->depth8_.assign(size_t(img->group_cap_) * 256, 0);
    if (bits == 16) img->nh_.assign(core::Dir24_8Traits<uint16_t>::kNhSlots, kNoRoute);
    if (bits == 16) {
      std::fill_n(img->tbl24<uint16_t>(), size_t(1) << 24, core::Dir24_8Traits<uint16_t>::kEmpty);
    } else {
      std::fill_n(img->tbl24<uint32_t>(), size_t(1) << 24, core::Dir24_8Traits<uint32_t>::kEmpty);
    }
    // Shorter routes first, so each paints over what it covers and longer ones over it.
    for (unsigned len = 0; len <= 32; ++len)
      for (const auto& [prefix, nh] : rib.of_length(len)) {
        const Route4 r{prefix, uint8_t(len), nh};
        WARPATH_TRY(bits == 16 ? img->add_impl<uint16_t>(r) : img->add_impl<uint32_t>(r));
      }
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory building a DIR-24-8 image");
  }
  if (compress) {
    if (bits == 16) {
      WARPATH_ASSIGN_OR_RETURN(img->chunks_, Tbl24Chunks::build(img->tbl24<uint16_t>()));
    } else {
      WARPATH_ASSIGN_OR_RETURN(img->chunks_, Tbl24Chunks::build(img->tbl24<uint32_t>()));
    }
  }
  img->logging_ = true;
  return img;
}

}  // namespace warpath::lookup::detail
