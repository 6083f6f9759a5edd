#include "lookup/rib.hpp"

namespace warpath::lookup::detail {

bool Rib4::insert(const Route4& r) {
  auto [it, added] = by_len_[r.len].insert_or_assign(r.prefix, r.nh);
  (void)it;
  size_ += added ? 1 : 0;
  return added;
}

bool Rib4::erase(uint32_t prefix, uint8_t len) {
  if (by_len_[len].erase(prefix) == 0) return false;
  --size_;
  return true;
}

const NextHop* Rib4::find(uint32_t prefix, uint8_t len) const {
  auto it = by_len_[len].find(prefix);
  return it == by_len_[len].end() ? nullptr : &it->second;
}

Rib4::Match Rib4::best_covering(uint32_t prefix, unsigned below) const {
  for (int len = int(below) - 1; len >= 0; --len) {
    if (by_len_[len].empty()) continue;
    if (const NextHop* nh = find(mask4(prefix, unsigned(len)), uint8_t(len))) return {len, *nh};
  }
  return {};
}

uint64_t Rib4::memory_bytes() const {
  uint64_t bytes = 0;
  // Node (key, value, next pointer, cached hash) plus the bucket pointer, per entry.
  for (const auto& m : by_len_) bytes += m.size() * 32 + m.bucket_count() * sizeof(void*);
  return bytes;
}

bool Rib6::insert(const Route6& r) {
  return map_.insert_or_assign(Key{r.prefix.hi, r.prefix.lo, r.len}, r.nh).second;
}

bool Rib6::erase(Ip6 prefix, uint8_t len) {
  return map_.erase(Key{prefix.hi, prefix.lo, len}) != 0;
}

std::vector<Route6> Rib6::routes() const {
  std::vector<Route6> out;
  out.reserve(map_.size());
  for (const auto& [k, nh] : map_) out.push_back(Route6{Ip6{k.hi, k.lo}, k.len, nh});
  return out;
}

uint64_t Rib6::memory_bytes() const {
  return map_.size() * 48 + map_.bucket_count() * sizeof(void*);
}

}  // namespace warpath::lookup::detail
