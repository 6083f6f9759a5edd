// xbits across flows (src/nids/xbit_table.hpp).
#include "nids/xbit_table.hpp"

#include <cstring>
#include <iterator>

namespace warpath::nids::detail {

// The bit, where it is kept (a host, or an address pair in a fixed order), its addresses.
void XbitTable::key(const XbitOp& op, const PacketView& p) const {
  const size_t alen = p.ip_version == 6 ? 16 : 4;
  key_.assign(reinterpret_cast<const char*>(&op.bit), sizeof op.bit);
  key_.push_back(char(p.ip_version));
  const uint8_t* a = op.track == Xbit::kIpDst ? p.dst : p.src;
  if (op.track != Xbit::kIpPair) {
    key_.append(reinterpret_cast<const char*>(a), alen);
    return;
  }
  const bool swap = std::memcmp(p.src, p.dst, alen) > 0;  // either direction, one pair
  key_.append(reinterpret_cast<const char*>(swap ? p.dst : p.src), alen);
  key_.append(reinterpret_cast<const char*>(swap ? p.src : p.dst), alen);
}

bool XbitTable::is_set(const XbitOp& op, const PacketView& p) const {
  if (!p.src || !p.dst) return false;
  key(op, p);
  auto it = bits_.find(key_);
  return it != bits_.end() && it->second > p.ts_ns;
}

void XbitTable::apply(const XbitOp& op, const PacketView& p) {
  if (!p.src || !p.dst) return;
  key(op, p);
  auto it = bits_.find(key_);
  const bool live = it != bits_.end() && it->second > p.ts_ns;
  if (op.op == Flowbit::kUnset || (op.op == Flowbit::kToggle && live)) {
    if (it != bits_.end()) bits_.erase(it);
    return;
  }
  if (op.op != Flowbit::kSet && op.op != Flowbit::kToggle) return;
  if (it != bits_.end()) {
    it->second = p.ts_ns + op.expire_ns;
    return;
  }
  if (bits_.size() >= kMaxEntries && p.ts_ns >= last_sweep_ + 1'000'000'000ull) {
    last_sweep_ = p.ts_ns;
    for (auto e = bits_.begin(); e != bits_.end();) e = e->second <= p.ts_ns ? bits_.erase(e) : std::next(e);
  }
  if (bits_.size() >= kMaxEntries) {
    ++full_;
    return;
  }
  bits_.emplace(key_, p.ts_ns + op.expire_ns);
}

}  // namespace warpath::nids::detail
