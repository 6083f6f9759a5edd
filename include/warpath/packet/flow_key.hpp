// include/warpath/packet/flow_key.hpp
//
// Fixed-layout keys extracted from parsed packets, the input of classification, lookup and
// flow tracking (STYLE.md 8.1.4: extract keys before classifying).
//
//   FiveTuple4  16 bytes  IPv4 5-tuple, host byte order (ClassBench and rte_acl order)
//   FiveTuple6  40 bytes  IPv6 5-tuple, addresses in network byte order
//   OfTuple     36 bytes  OpenFlow 1.0 12-tuple as GSwitch's 288-bit tuple: nine 32-bit words
//
// OfTuple word layout (bits 31..0 of each word):
//   w0  in_port[15:0]      << 16 | dl_vlan[15:0]  (0xffff = no tag, as OpenFlow 1.0)
//   w1  dl_src[0..3]
//   w2  dl_src[4..5] << 16 | dl_dst[0..1]
//   w3  dl_dst[2..5]
//   w4  dl_type << 16 | dl_vlan_pcp << 8 | nw_tos
//   w5  nw_proto << 24     (low 24 bits zero)
//   w6  nw_src             (IPv4, host order; ARP sender address for ARP)
//   w7  nw_dst
//   w8  tp_src << 16 | tp_dst   (ICMP: type and code, as OpenFlow 1.0)
//
// For GPU batches the 288-bit tuples are stored as a structure of arrays with 32-bit
// granularity (GSwitch Algorithm 3, READSOA): word k of tuple i is at words[k * stride + i], so
// consecutive threads load consecutive words and every load is coalesced.
#pragma once
#include <cstdint>

#include "warpath/core/hd.hpp"

namespace warpath::packet {

struct FiveTuple4 {
  uint32_t src;  ///< host order
  uint32_t dst;
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  uint8_t pad[3];  ///< always zero, so keys compare and hash as 16 raw bytes
};
static_assert(sizeof(FiveTuple4) == 16, "FiveTuple4 must be exactly 16 bytes");

struct FiveTuple6 {
  uint8_t src[16];  ///< network order
  uint8_t dst[16];
  uint16_t sport;
  uint16_t dport;
  uint8_t proto;
  uint8_t pad[3];
};
static_assert(sizeof(FiveTuple6) == 40, "FiveTuple6 must be exactly 40 bytes");

inline constexpr int kOfWords       = 9;
inline constexpr uint16_t kOfNoVlan = 0xffff;

struct OfTuple {
  uint32_t w[kOfWords];
};
static_assert(sizeof(OfTuple) == 36, "OfTuple is GSwitch's 288-bit tuple");

/// Structure-of-arrays view of OfTuples (READSOA layout).
struct OfTupleSoA {
  uint32_t* words = nullptr;  ///< kOfWords * stride words
  uint32_t stride = 0;        ///< >= count; a multiple of 32 keeps every column aligned
  uint32_t count  = 0;

  WARPATH_HD OfTuple read(uint32_t i) const {
    OfTuple t;
    for (int k = 0; k < kOfWords; ++k) t.w[k] = words[k * stride + i];
    return t;
  }
  WARPATH_HD void write(uint32_t i, const OfTuple& t) const {
    for (int k = 0; k < kOfWords; ++k) words[k * stride + i] = t.w[k];
  }
};

/// Field accessors for the OfTuple layout, so no caller repeats the bit arithmetic.
struct OfFields {
  uint16_t in_port = 0, dl_vlan = kOfNoVlan, dl_type = 0, tp_src = 0, tp_dst = 0;
  uint8_t dl_src[6] = {}, dl_dst[6] = {};
  uint8_t dl_vlan_pcp = 0, nw_tos = 0, nw_proto = 0;
  uint32_t nw_src = 0, nw_dst = 0;
};

WARPATH_HD OfTuple of_pack(const OfFields& f) {
  OfTuple t;
  t.w[0] = uint32_t(f.in_port) << 16 | f.dl_vlan;
  t.w[1] = uint32_t(f.dl_src[0]) << 24 | uint32_t(f.dl_src[1]) << 16 | uint32_t(f.dl_src[2]) << 8 |
           f.dl_src[3];
  t.w[2] = uint32_t(f.dl_src[4]) << 24 | uint32_t(f.dl_src[5]) << 16 | uint32_t(f.dl_dst[0]) << 8 |
           f.dl_dst[1];
  t.w[3] = uint32_t(f.dl_dst[2]) << 24 | uint32_t(f.dl_dst[3]) << 16 | uint32_t(f.dl_dst[4]) << 8 |
           f.dl_dst[5];
  t.w[4] = uint32_t(f.dl_type) << 16 | uint32_t(f.dl_vlan_pcp) << 8 | f.nw_tos;
  t.w[5] = uint32_t(f.nw_proto) << 24;
  t.w[6] = f.nw_src;
  t.w[7] = f.nw_dst;
  t.w[8] = uint32_t(f.tp_src) << 16 | f.tp_dst;
  return t;
}

WARPATH_HD OfFields of_unpack(const OfTuple& t) {
  OfFields f;
  f.in_port = uint16_t(t.w[0] >> 16);
  f.dl_vlan = uint16_t(t.w[0]);
  for (int i = 0; i < 4; ++i) f.dl_src[i] = uint8_t(t.w[1] >> (24 - 8 * i));
  f.dl_src[4] = uint8_t(t.w[2] >> 24);
  f.dl_src[5] = uint8_t(t.w[2] >> 16);
  f.dl_dst[0] = uint8_t(t.w[2] >> 8);
  f.dl_dst[1] = uint8_t(t.w[2]);
  for (int i = 0; i < 4; ++i) f.dl_dst[2 + i] = uint8_t(t.w[3] >> (24 - 8 * i));
  f.dl_type     = uint16_t(t.w[4] >> 16);
  f.dl_vlan_pcp = uint8_t(t.w[4] >> 8);
  f.nw_tos      = uint8_t(t.w[4]);
  f.nw_proto    = uint8_t(t.w[5] >> 24);
  f.nw_src      = t.w[6];
  f.nw_dst      = t.w[7];
  f.tp_src      = uint16_t(t.w[8] >> 16);
  f.tp_dst      = uint16_t(t.w[8]);
  return f;
}

}  // namespace warpath::packet
