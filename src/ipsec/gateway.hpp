// src/ipsec/gateway.hpp: the ESP gateway's protocol logic that the esp-in and esp-out chain
// modules (src/modules/esp_module.cpp) run per frame and packet: the SAs' tables with their
// running state kept across reloads, per-frame SA tallies, the outer header templates, the
// selectors' view of a parsed packet (RFC 4301 4.4.1.1), and lifetime limits (4.4.2.1).
#pragma once
#include <atomic>
#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "ipsec/core/esp_core.hpp"
#include "warpath/ipsec/ipsec.hpp"
#include "warpath/net/protocols.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::ipsec {

using packet::PacketInfo;

// Per-frame accounting of the SAs a frame touches: one atomic update per SA and frame instead
// of one per packet (a locked add costs about what sealing 40 bytes does).
struct SaTally {
  explicit SaTally(size_t sas)
      : count(sas), bytes(sas), next(sas), packets(sas), total(sas), id(sas), careful(sas) {}
  std::vector<uint32_t> count;
  std::vector<uint64_t> bytes;
  std::vector<uint64_t> next, packets, total;  ///< running sequence number and lifetime counts
  std::vector<uint32_t> id;                    ///< running outer IPv4 ID (EspTables::ids)
  /// Outbound, per SA: can some packet of this frame overflow the sequence number or pass a
  /// lifetime limit? Decided once per frame from its reservation; only then does each packet
  /// check (the counts only grow, so the frame's last packet bounds every other).
  std::vector<uint8_t> careful;
  std::vector<uint32_t> touched;
  __attribute__((always_inline)) void add(uint32_t sa, uint64_t b) {
    if (!count[sa]++) touched.push_back(sa);
    bytes[sa] += b;
  }
  void clear() {
    for (uint32_t sa : touched) count[sa] = 0, bytes[sa] = 0;
    touched.clear();
  }
};

// Holds one SA's lock across a run of packets of that SA (frames usually carry one SA's
// packets in a row), switching when the SA changes.
class SaLockRun {
 public:
  ~SaLockRun() { release(); }
  void hold(SaState& s) {
    if (held_ == &s) return;
    release();
    s.lock.lock();
    held_ = &s;
  }
  void release() {
    if (held_) held_->lock.unlock();
    held_ = nullptr;
  }

 private:
  SaState* held_ = nullptr;
};

// An outbound SA's tunnel packet, what is the same for all of its packets: the outer header
// and what the parser says of it (esp-out writes copies and sets the per-packet fields).
struct OuterTemplate {
  core::OuterHeader header;
  PacketInfo info;
  /// What the parser says about a tunnel packet of this SA: `info` with the packet's VLAN
  /// tags, offsets and TOS (tests/ipsec compares it with the parse of every packet). Written
  /// over the packet's own parse in place, not built on the stack and copied: byte stores
  /// read back as vectors stall store forwarding.
  void set_info(PacketInfo& o, uint8_t tos, uint32_t outer_hdr) const {
    const uint8_t vlans = o.vlan_count;
    const uint16_t tci0 = o.vlan_tci[0], tci1 = o.vlan_tci[1], l3 = o.l3_offset;
    o             = info;
    o.vlan_count  = vlans;
    o.vlan_tci[0] = tci0;
    o.vlan_tci[1] = tci1;
    o.l3_offset   = l3;
    o.l4_offset   = uint16_t(l3 + outer_hdr);
    o.tos         = tos;
  }
};

// What both directions share: the database, its engine and the SAs' mutable state.
struct EspTables {
  SaDatabase db;
  std::vector<OuterTemplate> outer;  ///< per SA (outbound ones used)
  std::unique_ptr<EspCrypto> crypto, offload;
  std::vector<std::shared_ptr<SaState>> states;  ///< kept across reloads (same SA)
  /// Outbound SAs with an IPv4 outer header: the counter their packets' IDs come from, one per
  /// pair of tunnel endpoints, shared by its SAs. RFC 6864 asks a source to keep the ID of a
  /// datagram that may be fragmented (DF clear) unique per source, destination and protocol;
  /// SAs between the same gateways each taking its sequence number's low bits would repeat
  /// each other's IDs, and the peer could join fragments of two tunnel packets. Seeded at
  /// random (as Linux's ip_idents), kept across reloads.
  std::vector<std::shared_ptr<std::atomic<uint32_t>>> ids;
  std::string describe;
};

/// The tables of `file`'s SAs and policies on `engine` (and `offload` for the offload place
/// when not empty), for one direction's module. With `previous` (a reload), an SA with the same
/// index keeps its state (sequence numbers, window, lifetime) and the outer IPv4 ID counters
/// go on. `warnings` gets "no inbound SA: ..." when the direction has none.
Result<std::unique_ptr<EspTables>> build_gateway_tables(SaConfig config, const std::string& file,
                                                        const std::string& engine,
                                                        const std::string& offload, Dir dir,
                                                        const EspTables* previous,
                                                        std::vector<std::string>* warnings);

inline uint8_t family_of(const PacketInfo& in) { return in.ip_version == 6 ? 6 : 4; }
// The selectors' ports: those of TCP/UDP/SCTP first fragments, else 0 (a policy with ports
// then does not select the packet).
inline uint16_t sport_of(const PacketInfo& in) { return (in.flags & packet::kHasPorts) ? in.sport : 0; }
inline uint16_t dport_of(const PacketInfo& in) { return (in.flags & packet::kHasPorts) ? in.dport : 0; }
// Are the packet's ports known? Not for a later fragment or a transport header the parser could
// not read: a policy with ports then cannot decide it (and nothing may leave in the clear).
inline bool ports_known(const PacketInfo& in) {
  const bool has_ports = in.proto == 6 || in.proto == 17 || in.proto == 132;
  return !has_ports || (in.flags & packet::kHasPorts);
}
// The IP header was read (addresses, protocol): what the selectors need. A packet whose IP
// header is broken is the router's to drop.
inline bool ip_readable(const PacketInfo& in) {
  using packet::ParseStatus;
  switch (in.status) {
    case ParseStatus::kBadIpv4Header:
    case ParseStatus::kBadIpv4Checksum:
    case ParseStatus::kBadIpv4Length:
    case ParseStatus::kBadIpv6Header:
    case ParseStatus::kBadIpv6Length:
      return false;
    default:
      break;
  }
  const uint8_t need = packet::kFieldSrc | packet::kFieldDst | packet::kFieldProto;
  return in.ip_version != 0 && (in.fields & need) == need;
}

// The addresses were read but not the upper layer: an IPv6 extension header chain the parser
// could not follow (malformed, or longer than it walks) or one the capture cut short. The
// router forwards such a packet (it does not read extension headers), so the policies must
// decide it: its next-layer protocol and ports are RFC 4301 4.4.1.1's OPAQUE. The first policy
// on its addresses alone decides: one with ANY protocol and ports selects it; one that names
// a protocol or ports cannot be told, and the packet is dropped rather than let out in the
// clear (ports_unknown, as a later fragment under a policy with ports).
inline bool opaque_upper(const PacketInfo& in) {
  using packet::ParseStatus;
  const uint8_t addrs = packet::kFieldSrc | packet::kFieldDst;
  return in.ip_version == 6 && (in.fields & addrs) == addrs && !(in.fields & packet::kFieldProto) &&
         (in.status == ParseStatus::kBadIpv6ExtHeader || in.status == ParseStatus::kTruncated);
}

// The first `out` policy selecting the packet (SaDatabase::match_out: -1 none, kPortsUnknown
// when one that names ports, or for an OPAQUE packet a protocol, would have to decide it
// without them), its SA in `sa`.
inline int32_t out_policy(const EspTables& t_, const PacketInfo& in, int32_t* sa) {
  if (opaque_upper(in)) return t_.db.match_out(6, in.src, in.dst, 0, 0, 0, sa, false, false);
  return t_.db.match_out(family_of(in), in.src, in.dst, in.proto, sport_of(in), dport_of(in), sa,
                         ports_known(in));
}

// Does some `in` policy cover the packet, arrived in the clear (it should have come through
// its tunnel)? Fail closed: without known ports, a policy with ports covers it; with an OPAQUE
// upper layer, any policy on its addresses.
inline bool in_policy_covers(const EspTables& t_, const PacketInfo& in) {
  if (opaque_upper(in)) return t_.db.admits_in(-1, 6, in.src, in.dst, 0, 0, 0, false, false);
  return t_.db.admits_in(-1, family_of(in), in.src, in.dst, in.proto, sport_of(in), dport_of(in),
                         ports_known(in));
}

// The IP packet's length from its header (the frame may carry Ethernet padding after it).
inline uint32_t ip_length(const uint8_t* ip, uint8_t version) {
  return version == 4 ? core::load_be16(ip + 2) : 40u + core::load_be16(ip + 4);
}

// Moves the link-layer header (n bytes) to `to`, `from` and `to` at least n apart (the
// usual 14-22 bytes as two overlapping words each way, without a call to memmove).
inline __attribute__((always_inline)) void move_link_header(uint8_t* to, const uint8_t* from,
                                                            uint32_t n) {
  const uint64_t apart = to > from ? uint64_t(to - from) : uint64_t(from - to);
  if (n < 8 || n > 32 || apart < n) {
    std::memmove(to, from, n);
  } else if (n >= 16) {
    uint8_t a[16], b[16];
    std::memcpy(a, from, 16);
    std::memcpy(b, from + n - 16, 16);
    std::memcpy(to, a, 16);
    std::memcpy(to + n - 16, b, 16);
  } else {
    uint64_t a, b;
    std::memcpy(&a, from, 8);
    std::memcpy(&b, from + n - 8, 8);
    std::memcpy(to, &a, 8);
    std::memcpy(to + n - 8, &b, 8);
  }
}

inline void set_ethertype(uint8_t* frame, uint32_t l3, uint8_t family) {
  core::store_be16(frame + l3 - 2, family == 4 ? net::kEthIpv4 : net::kEthIpv6);
}

// Does the SA's p-th packet, with b bytes so far, stay within every limit, the soft ones
// included unless the SA already reported its soft expiry (then only the hard ones can change
// a packet's fate, and frames need not check each packet until one may reach them)?
inline bool within_all_limits(const SaSpec& sa, const SaState& st, uint64_t p,
                              uint64_t b) {
  const bool soft = !st.soft_expired.load(std::memory_order_relaxed);
  return (!sa.hard_packets || p <= sa.hard_packets) && (!sa.hard_bytes || b <= sa.hard_bytes) &&
         (!soft ||
          ((!sa.soft_packets || p <= sa.soft_packets) && (!sa.soft_bytes || b <= sa.soft_bytes)));
}

}  // namespace warpath::ipsec
