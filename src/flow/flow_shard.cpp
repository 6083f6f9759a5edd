// Which part of a cut capture a packet belongs to (flow_shard, include/warpath/flow/flow.hpp):
// the tracker's key (flow/core/flow_core.hpp) hashed with a fixed seed.
#include <cstring>

#include "flow/core/flow_core.hpp"
#include "warpath/flow/flow.hpp"

namespace warpath::flow {

using namespace core;

uint32_t flow_shard(const packet::PacketInfo& p, uint32_t shards) noexcept {
  if (shards <= 1) return 0;
  constexpr uint64_t kSeed = 0x77617270617468ull;  // "warpath": the same cut on every machine
  FlowKey key;
  uint8_t from_b = 0;
  uint64_t h     = 0;
  if (make_key(p, key, from_b, /*any_checksum=*/true) == Track::kTracked) {
    h = key_hash(key, kSeed);
  } else {
    constexpr uint8_t kAddrs = packet::kFieldSrc | packet::kFieldDst;
    if ((p.l3 != packet::L3::kIpv4 && p.l3 != packet::L3::kIpv6) || (p.fields & kAddrs) != kAddrs)
      return 0;
    // The address pair alone, the smaller first: both directions alike.
    const unsigned n = p.l3 == packet::L3::kIpv4 ? 4 : 16;
    const bool swap  = std::memcmp(p.src, p.dst, n) > 0;
    std::memset(&key, 0, sizeof key);
    std::memcpy(key.a, swap ? p.dst : p.src, n);
    std::memcpy(key.b, swap ? p.src : p.dst, n);
    key.ip_version = uint8_t(n == 4 ? 4 : 6);
    h              = key_hash(key, kSeed);
  }
  // The high half times the part count (Lemire's range reduction): no modulo bias, no divide.
  return uint32_t(((h >> 32) * uint64_t(shards)) >> 32);
}

}  // namespace warpath::flow
