// src/nids/cpu/port_filter.cpp: port classes and the rules' bitsets per class (port_filter.hpp).
#include "nids/cpu/port_filter.hpp"

namespace warpath::nids::detail {
namespace {

// Where the membership of `s` may change: the first port of each range and the one after it.
void cuts(const PortSet& s, std::vector<uint8_t>& starts) {
  auto range = [&](const PortRange& r) {
    starts[r.lo] = 1;
    if (r.hi < 65535) starts[size_t(r.hi) + 1] = 1;
  };
  for (const PortRange& r : s.include) range(r);
  for (const PortRange& r : s.exclude) range(r);
  for (const PortSet& n : s.include_sets) cuts(n, starts);
  for (const PortSet& n : s.exclude_sets) cuts(n, starts);
}

}  // namespace

PortFilter::PortFilter(const std::vector<Rule>& rules) : class_of_(65536) {
  std::vector<uint8_t> starts(65536, 0);
  starts[0] = 1;
  // A class lies within one port group (group_of), so the group of its ports is the class's.
  for (uint32_t p = 1; p < 65536; ++p)
    if (group_of(uint16_t(p)) != group_of(uint16_t(p - 1))) starts[p] = 1;
  for (const Rule& r : rules) {
    cuts(r.sport, starts);
    cuts(r.dport, starts);
  }
  for (uint32_t p = 0; p < 65536; ++p) {
    if (starts[p]) reps_.push_back(uint16_t(p));
    class_of_[p] = uint16_t(reps_.size() - 1);
  }
  words_ = (rules.size() + 63) / 64;
  if (reps_.size() * words_ > kMaxWords) {
    words_ = 0;
    return;
  }
  by_dport_.assign(reps_.size() * words_, 0);
  by_sport_.assign(reps_.size() * words_, 0);
  // The cache: 64 slots, fewer when a slot's set is large (1 MiB in all at most, or one slot
  // when a set alone is larger).
  while (cache_bits_ < 6 && (size_t(2) << cache_bits_) * words_ * 8 <= (size_t(1) << 20))
    ++cache_bits_;
  keys_.assign(size_t(1) << cache_bits_, ~uint64_t(0));
  cache_.assign((size_t(1) << cache_bits_) * words_, 0);
  for (size_t k = 0; k < reps_.size(); ++k) {
    const uint16_t port = reps_[k];
    for (uint32_t i = 0; i < rules.size(); ++i) {
      const Rule& r  = rules[i];
      const bool dst = r.dport.contains(port), src = r.sport.contains(port);
      const uint64_t bit = uint64_t(1) << (i % 64);
      if (dst || (r.bidirectional && src)) by_dport_[k * words_ + i / 64] |= bit;
      if (src || (r.bidirectional && dst)) by_sport_[k * words_ + i / 64] |= bit;
    }
  }
  for (int grp = 0; grp < 2; ++grp) {
    shared_dport_[grp].assign(words_, 0);
    shared_sport_[grp].assign(words_, 0);
    std::vector<uint8_t> in(reps_.size(), 0);  // classes with a port of the group
    for (uint32_t p = 0; p < 65536; ++p)
      if (group_of(uint16_t(p)) == grp) in[class_of_[p]] = 1;
    for (size_t k = 0; k < reps_.size(); ++k)
      if (in[k])
        for (size_t w = 0; w < words_; ++w) {
          shared_dport_[grp][w] |= by_dport_[k * words_ + w];
          shared_sport_[grp][w] |= by_sport_[k * words_ + w];
        }
  }
}

void PortFilter::group_allowed(uint16_t sport, uint16_t dport, uint64_t* out) const {
  const int dg = group_of(dport), sg = group_of(sport);
  const uint64_t* d =
      dg < 0 ? &by_dport_[size_t(class_of_[dport]) * words_] : shared_dport_[dg].data();
  const uint64_t* s =
      sg < 0 ? &by_sport_[size_t(class_of_[sport]) * words_] : shared_sport_[sg].data();
  for (size_t w = 0; w < words_; ++w) out[w] = d[w] & s[w];
}

void PortFilter::fill(uint32_t slot, uint64_t key) {
  const size_t classes = reps_.size();
  const uint64_t* d    = &by_dport_[key / classes * words_];
  const uint64_t* s    = &by_sport_[key % classes * words_];
  uint64_t* out        = &cache_[size_t(slot) * words_];
  for (size_t w = 0; w < words_; ++w) out[w] = d[w] & s[w];
  keys_[slot] = key;
}

}  // namespace warpath::nids::detail
