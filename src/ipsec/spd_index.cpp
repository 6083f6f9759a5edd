// src/ipsec/spd_index.cpp: the policy tuple space (spd_index.hpp).
#include "ipsec/spd_index.hpp"

#include <algorithm>
#include <map>
#include <tuple>

#include "core/hash_words.hpp"

namespace warpath::ipsec::detail {

uint64_t SpdIndex::hash(const Key& k) noexcept { return warpath::detail::hash_words5(k.w); }

SpdIndex::Key SpdIndex::key_of(uint8_t family, const AddrWords& s, const AddrWords& d,
                               uint8_t proto, uint16_t sport, uint16_t dport) {
  return {{s.hi, s.lo, d.hi, d.lo,
           uint64_t(family) << 40 | uint64_t(proto) << 32 | uint64_t(sport) << 16 | dport}};
}

SpdIndex::SpdIndex(const std::vector<PolicySpec>& policies, const std::vector<uint32_t>& order)
    : order_(order) {
  for (const int space : {0, 1, 2}) {
    const bool ports = space == 1, proto = space != 2;
    std::vector<Shape>& shapes = shapes_[space];
    std::map<std::tuple<uint8_t, uint8_t, uint8_t, uint64_t>, size_t> shape_of;
    std::vector<std::vector<Slot>> staged;  // per shape, in rank order
    for (uint32_t r = 0; r < order_.size(); ++r) {
      const PolicySpec& p  = policies[order_[r]];
      const uint8_t family = p.src.addr.family;
      const uint16_t sport = ports ? p.sport : 0, dport = ports ? p.dport : 0;
      const uint8_t pproto  = proto ? p.proto : 0;
      const uint64_t fields = uint64_t(0xFF) << 40 | (pproto ? uint64_t(0xFF) << 32 : 0) |
                              (sport ? uint64_t(0xFFFF) << 16 : 0) | (dport ? 0xFFFFu : 0);
      auto [it, fresh] =
          shape_of.emplace(std::make_tuple(family, p.src.len, p.dst.len, fields), shapes.size());
      if (fresh) {
        Shape sh;
        sh.family = family;
        sh.smask  = prefix_mask(p.src.len);
        sh.dmask  = prefix_mask(p.dst.len);
        sh.fields = fields;
        sh.best   = r;
        shapes.push_back(std::move(sh));
        staged.emplace_back();
      }
      Shape& sh         = shapes[it->second];
      const AddrWords s = addr_words(family, p.src.addr.bytes.data());
      const AddrWords d = addr_words(family, p.dst.addr.bytes.data());
      const Key k       = key_of(family, {s.hi & sh.smask.hi, s.lo & sh.smask.lo},
                                 {d.hi & sh.dmask.hi, d.lo & sh.dmask.lo}, pproto, sport, dport);
      staged[it->second].push_back({k, r});
    }
    for (size_t x = 0; x < shapes.size(); ++x) {
      Shape& sh = shapes[x];
      size_t n  = 4;
      while (n < 2 * staged[x].size()) n <<= 1;
      sh.slots.assign(n, Slot{Key{}, kEmpty});
      for (const Slot& e : staged[x])  // in rank order: the first policy with these selectors stays
        for (size_t at = hash(e.key) & (n - 1);; at = (at + 1) & (n - 1)) {
          if (sh.slots[at].rank == kEmpty) {
            sh.slots[at] = e;
            break;
          }
          if (sh.slots[at].key == e.key) break;
        }
    }
    // Shapes were made in rank order, each at its first policy: they are ordered by best.
  }
}

int32_t SpdIndex::first(uint8_t family, const uint8_t* src, const uint8_t* dst, uint8_t proto,
                        uint16_t sport, uint16_t dport, bool ports_known, bool proto_known) const {
  const bool ports = ports_known && proto_known;
  const Key k      = key_of(family, addr_words(family, src), addr_words(family, dst),
                       proto_known ? proto : 0, ports ? sport : 0, ports ? dport : 0);
  uint32_t best    = UINT32_MAX;
  for (const Shape& sh : shapes_[!proto_known ? 2 : ports ? 1 : 0]) {
    if (sh.best >= best) break;  // by best: no later shape has an earlier policy
    if (sh.family != family) continue;
    const Key m       = {{k.w[0] & sh.smask.hi, k.w[1] & sh.smask.lo, k.w[2] & sh.dmask.hi,
                          k.w[3] & sh.dmask.lo, k.w[4] & sh.fields}};
    const size_t mask = sh.slots.size() - 1;
    for (size_t at = hash(m) & mask;; at = (at + 1) & mask) {
      const Slot& e = sh.slots[at];
      if (e.rank == kEmpty) break;
      if (e.key == m) {
        best = std::min(best, e.rank);
        break;
      }
    }
  }
  return best == UINT32_MAX ? -1 : int32_t(order_[best]);
}

}  // namespace warpath::ipsec::detail
