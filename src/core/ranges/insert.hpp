// src/core/ranges/insert.hpp: what the byte stores (byte_store.hpp, range_store.hpp) share.
#pragma once
#include <cstdint>

namespace warpath::ranges {

inline constexpr uint64_t kNever = ~uint64_t(0);

/// What an insert did.
struct Insert {
  uint64_t added = 0;  ///< bytes newly stored
  bool overlap = false, differ = false;  ///< met stored bytes; some of them differed
};

}  // namespace warpath::ranges
