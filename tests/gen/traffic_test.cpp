// tests/gen/traffic_test.cpp: the seeded traffic generator and internet_checksum().
//
// Every frame is parsed and checked with gen/frame_check.hpp, a verifier written independently
// of the generator (its own one's-complement sum and pseudo-headers).
#include "warpath/gen/traffic.hpp"

#include <gtest/gtest.h>

#include <array>
#include <cmath>
#include <cstring>
#include <limits>
#include <map>
#include <set>
#include <vector>

#include "gen/frame_check.hpp"

namespace warpath::gen {
namespace {

using check::be16;
using check::be32;
using check::Frame;
using check::parse;
using check::verify_frame;
using packet::PacketBatch;

PacketBatch make(const TrafficParams& params) {
  auto batch = batch_for(params.count);
  EXPECT_TRUE(batch.is_ok());
  Status s = generate_traffic(params, *batch);
  EXPECT_TRUE(s.is_ok()) << s.message();
  return std::move(batch).value();
}

bool same_bytes(const PacketBatch& a, const PacketBatch& b) {
  if (a.size() != b.size()) return false;
  for (uint32_t i = 0; i < a.size(); ++i) {
    const auto &ma = a.meta(i), &mb = b.meta(i);
    if (ma.caplen != mb.caplen || ma.len != mb.len || ma.timestamp_ns != mb.timestamp_ns ||
        std::memcmp(a.data(i), b.data(i), ma.caplen) != 0)
      return false;
  }
  return true;
}

TEST(InternetChecksum, Rfc1071Example) {
  const uint8_t data[] = {0x00, 0x01, 0xf2, 0x03, 0xf4, 0xf5, 0xf6, 0xf7, 0x22, 0x0d};
  EXPECT_EQ(internet_checksum(data, 8), 0x220d);
  EXPECT_EQ(static_cast<uint16_t>(~internet_checksum(data, 8)), 0xddf2);  // The sum.
  EXPECT_EQ(internet_checksum(data, 10), 0);  // Data plus its checksum verifies.
  // `initial` adds a partial sum, as a pseudo-header does.
  EXPECT_EQ(internet_checksum(data + 2, 6, 0x0001), 0x220d);
  EXPECT_EQ(internet_checksum(data + 2, 6, 0x10000 + 0x0001 - 1), 0x220d);  // Carries fold.
  const uint8_t odd[] = {0x01};
  EXPECT_EQ(internet_checksum(odd, 1), 0xfeff);  // A trailing byte is a high half.
  const uint8_t ones[] = {0xff, 0xff, 0xff, 0xff};
  EXPECT_EQ(internet_checksum(ones, 4), 0);
  EXPECT_EQ(internet_checksum(nullptr, 0), 0xffff);
}

TEST(Traffic, BatchForHoldsCountFullSizeFrames) {
  auto batch = batch_for(100);
  ASSERT_TRUE(batch.is_ok());
  EXPECT_EQ(batch->max_packets(), 100u);
  EXPECT_EQ(batch->cell_bytes(), 2048u);
  EXPECT_GE(batch->buffer_bytes(), 100u * 2048u);
  TrafficParams p;
  p.count    = 100;
  p.sizes    = SizeMix::kFixed;
  p.min_size = 1518;
  EXPECT_TRUE(generate_traffic(p, *batch).is_ok());
  EXPECT_EQ(batch->size(), 100u);
}

TEST(Traffic, SameSeedSameBytesDifferentSeedDifferentBytes) {
  TrafficParams p;
  p.count       = 500;
  PacketBatch a = make(p), b = make(p);
  EXPECT_TRUE(same_bytes(a, b));
  p.seed = 2;
  EXPECT_FALSE(same_bytes(a, make(p)));
  // A shorter run is a prefix of a longer one.
  p.seed        = 1;
  p.count       = 200;
  PacketBatch c = make(p);
  for (uint32_t i = 0; i < c.size(); ++i) {
    ASSERT_EQ(c.meta(i).caplen, a.meta(i).caplen);
    ASSERT_EQ(std::memcmp(c.data(i), a.data(i), c.meta(i).caplen), 0) << i;
  }
}

TEST(Traffic, GoldenDigestIsStableAcrossPlatforms) {
  // The generator promises the same bytes for a seed on every platform and standard library.
  // A deliberate change to the generator must update this digest.
  TrafficParams p;
  p.count       = 300;
  p.seed        = 42;
  p.vlan_share  = 0.3;
  PacketBatch b = make(p);
  uint64_t h    = 0xcbf29ce484222325ull;  // FNV-1a over caplens and bytes.
  for (uint32_t i = 0; i < b.size(); ++i) {
    for (int k = 0; k < 4; ++k) h = (h ^ ((b.meta(i).caplen >> (8 * k)) & 0xff)) * 0x100000001b3ull;
    for (uint32_t j = 0; j < b.meta(i).caplen; ++j) h = (h ^ b.data(i)[j]) * 0x100000001b3ull;
  }
  EXPECT_EQ(h, 0x6699c85845546468ull) << std::hex << h;
}

TEST(Traffic, ExactCountSizesAndLengths) {
  TrafficParams p;
  p.count       = 2000;
  p.sizes       = SizeMix::kUniform;
  p.min_size    = 100;
  p.max_size    = 300;
  PacketBatch b = make(p);
  ASSERT_EQ(b.size(), 2000u);
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < b.size(); ++i) {
    const auto& m = b.meta(i);
    EXPECT_EQ(m.len, m.caplen);
    EXPECT_GE(m.caplen + 4, 100u);
    EXPECT_LE(m.caplen + 4, 300u);
    seen.insert(m.caplen);
    verify_frame(parse(b, i));
  }
  EXPECT_GT(seen.size(), 150u);                    // The range is really used.
  EXPECT_TRUE(seen.count(96) && seen.count(296));  // Both ends.
}

TEST(Traffic, TooSmallSizesGrowToFitHeaders) {
  TrafficParams p;
  p.count       = 1000;
  p.sizes       = SizeMix::kFixed;
  p.min_size    = 64;
  p.ipv6_share  = 0.5;
  p.vlan_share  = 0.5;
  PacketBatch b = make(p);
  std::set<uint32_t> seen;
  for (uint32_t i = 0; i < b.size(); ++i) {
    Frame f            = parse(b, i);
    uint32_t transport = f.proto == 6 ? 20 : 8;
    EXPECT_EQ(f.caplen, std::max(60u, f.l4 + transport)) << i;
    seen.insert(f.caplen);
    verify_frame(f);
  }
  EXPECT_EQ(seen, (std::set<uint32_t>{60, 62, 66, 74, 78}));  // 60 / v6 UDP / v6+VLAN UDP / ...
}

TEST(Traffic, EveryChecksumVerifiesAndEveryKindOccurs) {
  TrafficParams p;
  p.count       = 10000;
  p.sizes       = SizeMix::kUniform;
  p.ipv6_share  = 0.5;
  p.vlan_share  = 0.3;
  PacketBatch b = make(p);
  std::map<std::pair<bool, uint32_t>, int> kinds;
  for (uint32_t i = 0; i < b.size(); ++i) {
    Frame f = parse(b, i);
    verify_frame(f);
    ++kinds[{f.ipv6, f.proto}];
    EXPECT_EQ(f.p[0] & 0x03, 0x02);  // Locally administered unicast MACs.
    EXPECT_EQ(f.p[6] & 0x03, 0x02);
    if (f.vlan) {
      EXPECT_GE(f.tci & 0xfff, 1u);
      EXPECT_LE(f.tci & 0xfff, 4094u);
    }
    if (!f.ipv6) {
      EXPECT_EQ(internet_checksum(f.p + f.l3, 20), 0);  // The header verifies.
      EXPECT_EQ(f.p[f.l3 + 12], 10);                    // 10.0.0.0/8
    }
    if (f.proto == 6 || f.proto == 17) {
      EXPECT_GE(be16(f.p + f.l4), 49152u);  // Ephemeral source port.
    }
  }
  EXPECT_EQ(kinds.size(), 6u);  // TCP, UDP, ICMP over IPv4; TCP, UDP, ICMPv6 over IPv6.
}

std::array<double, 3> protocol_fractions(const PacketBatch& b) {
  std::array<uint32_t, 3> n{};
  for (uint32_t i = 0; i < b.size(); ++i) {
    uint32_t proto = parse(b, i).proto;
    ++n[proto == 6 ? 0 : proto == 17 ? 1 : 2];
  }
  return {double(n[0]) / b.size(), double(n[1]) / b.size(), double(n[2]) / b.size()};
}

TEST(Traffic, ProtocolMixFollowsNormalisedShares) {
  TrafficParams p;
  p.count = 10000;
  for (double scale : {1.0, 10.0}) {  // 0.6/0.3/0.1 and 6/3/1 mean the same.
    p.tcp_share = 0.6 * scale, p.udp_share = 0.3 * scale, p.icmp_share = 0.1 * scale;
    std::array<double, 3> f = protocol_fractions(make(p));
    EXPECT_NEAR(f[0], 0.6, 0.03);
    EXPECT_NEAR(f[1], 0.3, 0.03);
    EXPECT_NEAR(f[2], 0.1, 0.03);
  }
  p.tcp_share = 0, p.udp_share = 2, p.icmp_share = 0;
  EXPECT_EQ(protocol_fractions(make(p))[1], 1.0);
}

TEST(Traffic, VlanAndIpv6SharesFollowParams) {
  TrafficParams p;
  p.count = 10000;
  for (double share : {0.0, 0.3, 1.0}) {
    p.vlan_share  = share;
    p.ipv6_share  = 1.0 - share;
    PacketBatch b = make(p);
    int vlan = 0, v6 = 0;
    for (uint32_t i = 0; i < b.size(); ++i) {
      Frame f = parse(b, i);
      vlan += f.vlan;
      v6 += f.ipv6;
    }
    EXPECT_NEAR(vlan / 10000.0, share, 0.04);
    EXPECT_NEAR(v6 / 10000.0, 1.0 - share, 0.04);
  }
}

TEST(Traffic, ImixIsSevenFourOne) {
  TrafficParams p;
  p.count       = 12000;
  p.sizes       = SizeMix::kImix;
  PacketBatch b = make(p);
  int small = 0, medium = 0, large = 0;
  for (uint32_t i = 0; i < b.size(); ++i) {
    uint32_t size = b.meta(i).caplen + 4;
    if (size == 594) {
      ++medium;
    } else if (size == 1518) {
      ++large;
    } else if (size <= 82) {
      ++small;  // 64, or grown for IPv6 / VLAN headers.
    } else {
      ADD_FAILURE() << "unexpected IMIX size " << size;
    }
  }
  EXPECT_NEAR(small / 12000.0, 7 / 12.0, 0.03);
  EXPECT_NEAR(medium / 12000.0, 4 / 12.0, 0.03);
  EXPECT_NEAR(large / 12000.0, 1 / 12.0, 0.02);
}

TEST(Traffic, PacketsComeFromExactlyTheConfiguredFlows) {
  TrafficParams p;
  p.count       = 3000;
  p.flows       = 16;
  PacketBatch b = make(p);
  std::set<std::vector<uint8_t>> keys;
  std::map<std::vector<uint8_t>, uint32_t> next_seq;
  for (uint32_t i = 0; i < b.size(); ++i) {
    Frame f             = parse(b, i);
    const uint8_t* addr = f.p + f.l3 + (f.ipv6 ? 8 : 12);
    std::vector<uint8_t> key(addr, addr + (f.ipv6 ? 32 : 8));
    key.push_back(static_cast<uint8_t>(f.proto));
    if (f.proto == 6 || f.proto == 17) key.insert(key.end(), f.p + f.l4, f.p + f.l4 + 4);
    keys.insert(key);
    if (f.proto == 6) {  // TCP sequence numbers advance by the payload (and SYN / FIN).
      const uint8_t* tcp = f.p + f.l4;
      if (next_seq.count(key)) {
        EXPECT_EQ(be32(tcp + 4), next_seq[key]);
      }
      uint32_t advance = f.caplen - f.l4 - 20 + ((tcp[13] & 0x03) ? 1 : 0);
      next_seq[key]    = be32(tcp + 4) + advance;
    }
  }
  EXPECT_EQ(keys.size(), 16u);
}

TEST(Traffic, TimestampsAndPort) {
  TrafficParams p;
  p.count       = 50;
  p.start_ns    = 1000;
  p.gap_ns      = 7;
  p.port        = 3;
  PacketBatch b = make(p);
  for (uint32_t i = 0; i < b.size(); ++i) {
    EXPECT_EQ(b.meta(i).timestamp_ns, 1000u + 7u * i);
    EXPECT_EQ(b.meta(i).port, 3);
  }
}

TEST(TrafficValidate, NamesTheBadField) {
  EXPECT_TRUE(TrafficParams{}.validate().is_ok());
  auto expect_bad = [](void (*edit)(TrafficParams&), const char* field) {
    TrafficParams p;
    edit(p);
    Status s = p.validate();
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << field;
    EXPECT_NE(s.message().find(field), std::string::npos) << s.message();
    auto batch = batch_for(10);
    ASSERT_TRUE(batch.is_ok());
    EXPECT_EQ(generate_traffic(p, *batch).code(), Errc::kInvalidArgument);
    EXPECT_EQ(batch->size(), 0u);
  };
  expect_bad([](TrafficParams& p) { p.flows = 0; }, "flows");
  expect_bad([](TrafficParams& p) { p.ipv6_share = 1.5; }, "ipv6_share");
  expect_bad([](TrafficParams& p) { p.ipv6_share = std::nan(""); }, "ipv6_share");
  expect_bad([](TrafficParams& p) { p.vlan_share = -0.1; }, "vlan_share");
  expect_bad([](TrafficParams& p) { p.udp_share = -1; }, "udp_share");
  expect_bad([](TrafficParams& p) { p.tcp_share = p.udp_share = p.icmp_share = 0; }, "share");
  expect_bad([](TrafficParams& p) { p.min_size = 63; }, "min_size");
  expect_bad([](TrafficParams& p) { p.max_size = 9019; }, "max_size");
  expect_bad([](TrafficParams& p) { p.min_size = 200, p.max_size = 100; }, "min_size");
  expect_bad([](TrafficParams& p) { p.sizes = static_cast<SizeMix>(7); }, "sizes");
  expect_bad([](TrafficParams& p) { p.gap_ns = std::numeric_limits<uint64_t>::max() / 2; },
             "gap_ns");
}

TEST(Traffic, CapacityIsCheckedBeforeAppending) {
  TrafficParams p;
  p.count    = 11;
  auto batch = batch_for(10);
  ASSERT_TRUE(batch.is_ok());
  EXPECT_EQ(generate_traffic(p, *batch).code(), Errc::kCapacity);
  EXPECT_EQ(batch->size(), 0u);
  p.count = 4;
  EXPECT_TRUE(generate_traffic(p, *batch).is_ok());
  p.count = 6;
  EXPECT_TRUE(generate_traffic(p, *batch).is_ok());
  EXPECT_EQ(batch->size(), 10u);
  p.count = 1;
  EXPECT_EQ(generate_traffic(p, *batch).code(), Errc::kCapacity);
  p.count = 0;
  EXPECT_TRUE(generate_traffic(p, *batch).is_ok());
  EXPECT_EQ(batch->size(), 10u);

  // Jumbo frames take five 2048-byte cells each: three need 15 cells.
  p.count    = 3;
  p.sizes    = SizeMix::kFixed;
  p.min_size = p.max_size = 9018;
  auto small              = PacketBatch::create(10, 2048);
  ASSERT_TRUE(small.is_ok());
  EXPECT_EQ(generate_traffic(p, *small).code(), Errc::kCapacity);
  EXPECT_EQ(small->size(), 0u);
  auto fits = PacketBatch::create(10, 2048, 15 * 2048);
  ASSERT_TRUE(fits.is_ok());
  ASSERT_TRUE(generate_traffic(p, *fits).is_ok());
  for (uint32_t i = 0; i < 3; ++i) {
    EXPECT_EQ(fits->meta(i).caplen, 9014u);
    verify_frame(parse(*fits, i));
  }
}

}  // namespace
}  // namespace warpath::gen
