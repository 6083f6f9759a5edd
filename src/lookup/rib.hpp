// src/lookup/rib.hpp: the control-plane routing tables (RIBs) the lookup images are built from.
//
// Rib4 keeps one hash map per prefix length, so "is this route present", "the longest route
// shorter than L covering this prefix" (what a deletion falls back to) and "every route of
// length L" (what a build paints) are all direct. Rib6 is a plain map; IPv6 images are rebuilt
// from it. Neither is used on the data path.
#pragma once
#include <cstdint>
#include <unordered_map>
#include <vector>

#include "warpath/lookup/route.hpp"

namespace warpath::lookup::detail {

class Rib4 {
 public:
  /// Inserts or replaces; returns true when the route is new.
  bool insert(const Route4& r);
  /// Removes; false when absent.
  bool erase(uint32_t prefix, uint8_t len);
  const NextHop* find(uint32_t prefix, uint8_t len) const;
  /// Longest route of length < `below` covering `prefix` (len = -1 in the result: none).
  struct Match {
    int len    = -1;
    NextHop nh = kNoRoute;
  };
  Match best_covering(uint32_t prefix, unsigned below) const;
  const std::unordered_map<uint32_t, NextHop>& of_length(unsigned len) const {
    return by_len_[len];
  }
  uint64_t size() const { return size_; }
  uint64_t memory_bytes() const;

 private:
  std::unordered_map<uint32_t, NextHop> by_len_[33];
  uint64_t size_ = 0;
};

class Rib6 {
 public:
  bool insert(const Route6& r);
  bool erase(Ip6 prefix, uint8_t len);
  std::vector<Route6> routes() const;
  uint64_t size() const { return map_.size(); }
  uint64_t memory_bytes() const;

 private:
  struct Key {
    uint64_t hi, lo;
    uint8_t len;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    size_t operator()(const Key& k) const noexcept {
      uint64_t h = k.hi * 0x9e3779b97f4a7c15ull ^ (k.lo + k.len) * 0xc2b2ae3d27d4eb4full;
      return size_t(h ^ (h >> 29));
    }
  };
  std::unordered_map<Key, NextHop, KeyHash> map_;
};

}  // namespace warpath::lookup::detail
