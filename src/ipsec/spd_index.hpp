// src/ipsec/spd_index.hpp: the security policy database's lookup structure (SaDatabase's
// match_out and admits_in), so that a gateway with thousands of tunnels does not test every
// policy on every packet.
//
// A tuple space, as Open vSwitch's classifier and the kernel's xfrm policy hash tables do it:
// policies are grouped by shape (family, source and destination prefix lengths, which of
// protocol / source port / destination port they name); a shape is a hash table from the
// selectors masked by it to the first policy (in match order) with those selectors. A lookup
// masks the packet's selectors once per shape and probes, visiting shapes in order of their
// first policy and stopping at one whose first policy comes after the best found: as many
// probes as shapes (a handful in real configurations), whatever the number of policies.
//
// SaDatabase scans small sets (kLinearMax policies or fewer) instead: one or two policies,
// the usual case, cost a few compares where a probe costs a hash (bench/ipsec: --policies).
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec::detail {

class SpdIndex {
 public:
  static constexpr size_t kLinearMax = 8;

  /// `order`: indices into `policies`, in match order (the answer is the first that selects).
  SpdIndex(const std::vector<PolicySpec>& policies, const std::vector<uint32_t>& order);

  /// The first policy of the order selecting the packet, or -1. With `ports_known`, a policy's
  /// ports are compared where it names them; without (a later fragment), policies are
  /// matched on addresses and protocol alone, through a second tuple space that leaves the
  /// ports out: hostile fragments cost a few probes too, not a scan. Without `proto_known`
  /// (an upper layer the parser could not reach), on addresses alone, through a third.
  int32_t first(uint8_t family, const uint8_t* src, const uint8_t* dst, uint8_t proto,
                uint16_t sport, uint16_t dport, bool ports_known = true,
                bool proto_known = true) const;

 private:
  struct Key {
    uint64_t w[5];  // source hi, lo; destination hi, lo; family, proto, sport, dport
    bool operator==(const Key& o) const noexcept {
      return ((w[0] ^ o.w[0]) | (w[1] ^ o.w[1]) | (w[2] ^ o.w[2]) | (w[3] ^ o.w[3]) |
              (w[4] ^ o.w[4])) == 0;
    }
  };
  static uint64_t hash(const Key& k) noexcept;
  /// Masked selectors and the first policy (a rank: position in order_) with them; rank
  /// kEmpty marks a free slot.
  struct Slot {
    Key key;
    uint32_t rank;
  };
  static constexpr uint32_t kEmpty = UINT32_MAX;
  struct Shape {
    uint8_t family = 4;
    AddrWords smask, dmask;
    uint64_t fields = 0;  ///< mask of Key::w[4]
    uint32_t best   = 0;  ///< the shape's first policy
    std::vector<Slot> slots;  ///< open addressing, linear probing, at most half full
  };
  static Key key_of(uint8_t family, const AddrWords& s, const AddrWords& d, uint8_t proto,
                    uint16_t sport, uint16_t dport);

  std::vector<uint32_t> order_;
  /// By best: [0] addresses and protocol, [1] ports too where named, [2] addresses alone.
  std::vector<Shape> shapes_[3];
};

}  // namespace warpath::ipsec::detail
