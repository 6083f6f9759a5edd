// src/openflow/match.cpp: the OpenFlow 1.0 match (flow.hpp): normalisation, value/mask over
// the OfTuple, loose and overlap tests.
#include <cstring>

#include "warpath/openflow/flow.hpp"

namespace warpath::openflow {
namespace {

uint32_t prefix_mask(unsigned len) { return len == 0 ? 0u : 0xFFFF'FFFFu << (32 - len); }

bool is_transport(uint8_t proto) { return proto == 6 || proto == 17 || proto == 1 || proto == 132; }

}  // namespace

packet::OfTuple Match::value() const noexcept {
  packet::OfTuple v       = packet::of_pack(f);
  const packet::OfTuple m = mask();
  for (int i = 0; i < packet::kOfWords; ++i) v.w[i] &= m.w[i];
  return v;
}

packet::OfTuple Match::mask() const noexcept {
  packet::OfFields m;
  m.in_port = wildcards & kWcInPort ? 0 : 0xffff;
  m.dl_vlan = wildcards & kWcDlVlan ? 0 : 0xffff;
  if (!(wildcards & kWcDlSrc)) std::memset(m.dl_src, 0xff, 6);
  if (!(wildcards & kWcDlDst)) std::memset(m.dl_dst, 0xff, 6);
  m.dl_type     = wildcards & kWcDlType ? 0 : 0xffff;
  m.dl_vlan_pcp = wildcards & kWcDlVlanPcp ? 0 : 0x07;
  m.nw_tos      = wildcards & kWcNwTos ? 0 : 0xfc;
  m.nw_proto    = wildcards & kWcNwProto ? 0 : 0xff;
  m.nw_src      = prefix_mask(nw_src_len());
  m.nw_dst      = prefix_mask(nw_dst_len());
  m.tp_src      = wildcards & kWcTpSrc ? 0 : 0xffff;
  m.tp_dst      = wildcards & kWcTpDst ? 0 : 0xffff;
  return packet::of_pack(m);
}

bool operator==(const Match& a, const Match& b) noexcept {
  if (a.wildcards != b.wildcards) return false;
  const packet::OfTuple x = a.value(), y = b.value();
  return std::memcmp(x.w, y.w, sizeof x.w) == 0;
}

bool operator==(const Action& a, const Action& b) noexcept {
  return a.type == b.type && a.port == b.port && a.max_len == b.max_len && a.value == b.value &&
         std::memcmp(a.mac, b.mac, 6) == 0;
}

void normalize(Match& m) {
  uint32_t wc = m.wildcards & kWcAll;
  // Counts above 32 mean "all of it".
  unsigned src = (wc & kWcNwSrcMask) >> kWcNwSrcShift, dst = (wc & kWcNwDstMask) >> kWcNwDstShift;
  if (src > 32) src = 32;
  if (dst > 32) dst = 32;
  const bool type_exact = !(wc & kWcDlType);
  const uint16_t type   = m.f.dl_type;
  const bool ip = type_exact && type == kEthIp, arp = type_exact && (type == kEthArp || type == kEthRarp);
  if (!ip && !arp) {
    wc |= kWcNwProto | kWcNwTos;
    src = dst = 32;
  } else if (!ip) {
    wc |= kWcNwTos;
  }
  if (!(ip && !(wc & kWcNwProto) && is_transport(m.f.nw_proto))) wc |= kWcTpSrc | kWcTpDst;
  // "No tag" is Open vSwitch's vlan_tci=0x0000: the PCP is part of it (0).
  const bool untagged = !(wc & kWcDlVlan) && m.f.dl_vlan == packet::kOfNoVlan;
  if (untagged) wc &= ~kWcDlVlanPcp;
  wc = (wc & ~(kWcNwSrcMask | kWcNwDstMask)) | src << kWcNwSrcShift | dst << kWcNwDstShift;
  m.wildcards = wc;
  // Values outside the mask read zero.
  packet::OfFields& f = m.f;
  if (wc & kWcInPort) f.in_port = 0;
  if (wc & kWcDlVlan) f.dl_vlan = 0;
  if (wc & kWcDlSrc) std::memset(f.dl_src, 0, 6);
  if (wc & kWcDlDst) std::memset(f.dl_dst, 0, 6);
  if (wc & kWcDlType) f.dl_type = 0;
  f.dl_vlan_pcp = wc & kWcDlVlanPcp || untagged ? 0 : f.dl_vlan_pcp & 7;
  f.nw_tos      = wc & kWcNwTos ? 0 : f.nw_tos & 0xfc;
  if (wc & kWcNwProto) f.nw_proto = 0;
  f.nw_src &= prefix_mask(32 - src);
  f.nw_dst &= prefix_mask(32 - dst);
  if (wc & kWcTpSrc) f.tp_src = 0;
  if (wc & kWcTpDst) f.tp_dst = 0;
}

Match make_match(const packet::OfFields& f, uint32_t wildcards) {
  Match m;
  m.f         = f;
  m.wildcards = wildcards;
  normalize(m);
  return m;
}

bool matches(const Match& m, const packet::OfTuple& key) noexcept {
  const packet::OfTuple v = m.value(), k = m.mask();
  for (int i = 0; i < packet::kOfWords; ++i)
    if ((key.w[i] & k.w[i]) != v.w[i]) return false;
  return true;
}

bool covers(const Match& general, const Match& specific) noexcept {
  const packet::OfTuple vg = general.value(), mg = general.mask();
  const packet::OfTuple vs = specific.value(), ms = specific.mask();
  for (int i = 0; i < packet::kOfWords; ++i)
    if ((mg.w[i] & ms.w[i]) != mg.w[i] || (vs.w[i] & mg.w[i]) != vg.w[i]) return false;
  return true;
}

bool overlaps(const Match& a, const Match& b) noexcept {
  const packet::OfTuple va = a.value(), ma = a.mask(), vb = b.value(), mb = b.mask();
  for (int i = 0; i < packet::kOfWords; ++i)
    if ((va.w[i] ^ vb.w[i]) & ma.w[i] & mb.w[i]) return false;
  return true;
}

packet::OfTuple exact_mask() noexcept {
  Match m;
  m.wildcards = 0;
  return m.mask();
}

bool outputs_to(const std::vector<Action>& actions, uint16_t port) noexcept {
  for (const Action& a : actions)
    if ((a.type == ActionType::kOutput || a.type == ActionType::kEnqueue) && a.port == port)
      return true;
  return false;
}

}  // namespace warpath::openflow
