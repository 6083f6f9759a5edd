// tests/gen/frame_check.hpp: an independent parser and verifier for generated frames.
//
// The verifier shares no code with the generator: its own one's-complement sum and
// pseudo-headers, so a checksum bug in src/gen cannot hide behind the same bug here.
#pragma once
#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>

#include "warpath/packet/batch.hpp"

namespace warpath::gen::check {

inline uint32_t be16(const uint8_t* p) { return uint32_t{p[0]} << 8 | p[1]; }
inline uint32_t be32(const uint8_t* p) { return be16(p) << 16 | be16(p + 2); }

// Independent one's-complement sum (not complemented); a valid checksum sums to 0xffff.
inline uint32_t ones_sum(const uint8_t* p, size_t n, uint64_t sum = 0) {
  for (size_t i = 0; i < n; ++i) sum += (i % 2 == 0) ? uint32_t{p[i]} << 8 : p[i];
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  return static_cast<uint32_t>(sum);
}

struct Frame {
  const uint8_t* p = nullptr;
  uint32_t caplen  = 0;
  bool vlan = false, ipv6 = false;
  uint32_t tci = 0, l3 = 0, l4 = 0, proto = 0;
};

inline Frame parse(const packet::PacketBatch& b, uint32_t i) {
  Frame f;
  f.p           = b.data(i);
  f.caplen      = b.meta(i).caplen;
  uint32_t type = be16(f.p + 12);
  f.l3          = 14;
  if (type == 0x8100) {
    f.vlan = true;
    f.tci  = be16(f.p + 14);
    type   = be16(f.p + 16);
    f.l3   = 18;
  }
  EXPECT_TRUE(type == 0x0800 || type == 0x86dd) << "ethertype " << type;
  f.ipv6  = type == 0x86dd;
  f.l4    = f.l3 + (f.ipv6 ? 40 : 20);
  f.proto = f.p[f.l3 + (f.ipv6 ? 6 : 9)];
  return f;
}

// Checks the IP header fields and the IP and transport checksums of one frame.
inline void verify_frame(const Frame& f) {
  const uint8_t* ip       = f.p + f.l3;
  const uint32_t l4_bytes = f.caplen - f.l4;
  uint64_t pseudo         = f.proto + l4_bytes;
  if (f.ipv6) {
    EXPECT_EQ(ip[0] >> 4, 6);
    EXPECT_EQ(be16(ip + 4), l4_bytes);
    EXPECT_EQ(ip[7], 64);
    EXPECT_EQ(ip[8], 0xfd);  // fd00::/8
    EXPECT_EQ(ip[24], 0xfd);
    pseudo += ones_sum(ip + 8, 32);
  } else {
    EXPECT_EQ(ip[0], 0x45);
    EXPECT_EQ(be16(ip + 2), f.caplen - f.l3);
    EXPECT_EQ(be16(ip + 6), 0x4000u);  // DF
    EXPECT_EQ(ip[8], 64);
    EXPECT_EQ(ones_sum(ip, 20), 0xffffu);
    pseudo += ones_sum(ip + 12, 8);
  }
  const uint8_t* tp = f.p + f.l4;
  switch (f.proto) {
    case 6:
      EXPECT_EQ(tp[12], 0x50);
      EXPECT_TRUE(tp[13] == 0x10 || tp[13] == 0x18 || tp[13] == 0x02 || tp[13] == 0x11);
      EXPECT_EQ(ones_sum(tp, l4_bytes, pseudo), 0xffffu);
      break;
    case 17:
      EXPECT_EQ(be16(tp + 4), l4_bytes);
      EXPECT_NE(be16(tp + 6), 0u);
      EXPECT_EQ(ones_sum(tp, l4_bytes, pseudo), 0xffffu);
      break;
    case 1:
      EXPECT_FALSE(f.ipv6);
      EXPECT_EQ(tp[0], 8);
      EXPECT_EQ(ones_sum(tp, l4_bytes), 0xffffu);  // ICMP has no pseudo-header.
      break;
    case 58:
      EXPECT_TRUE(f.ipv6);
      EXPECT_EQ(tp[0], 128);
      EXPECT_EQ(ones_sum(tp, l4_bytes, pseudo), 0xffffu);
      break;
    default:
      ADD_FAILURE() << "unexpected protocol " << f.proto;
  }
}

}  // namespace warpath::gen::check
