// tests/packet/frame_builder.hpp: hand-built Ethernet frames for the parser tests.
//
// A FrameBuilder appends headers in wire order. Lengths that depend on what follows (IPv4
// total length and checksum, IPv6 payload length, UDP length) are filled in by build(),
// innermost first, measured to the end of the datagram (trailer bytes added with trailer()
// are Ethernet padding and are not counted). Every derived field can be overridden to build
// malformed packets. The builder shares no code with the parsers or the generator.
//
// Also here: the helpers the parser tests share (engine ids, parse_exact() from a buffer of
// exactly caplen bytes, and expect_info(), a field-by-field PacketInfo comparison).
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "warpath/packet/parser.hpp"

namespace warpath::testing {

struct Frame {
  std::vector<uint8_t> bytes;  ///< the captured bytes
  uint32_t len = 0;            ///< wire length (>= bytes.size())
  uint32_t caplen() const { return uint32_t(bytes.size()); }
};

struct Ipv4Spec {
  uint8_t tos = 0, ttl = 64, proto = 6;
  uint8_t src[4] = {10, 0, 0, 1}, dst[4] = {10, 0, 0, 2};
  uint16_t id   = 0x1234;
  uint16_t frag = 0x4000;                ///< flags and offset field (default: DF)
  std::vector<uint8_t> options;          ///< padded to a multiple of 4 with EOL
  std::optional<uint8_t> version_ihl;    ///< override the first byte
  std::optional<uint16_t> total_length;  ///< override
  bool bad_checksum = false;
};

struct Ipv6Spec {
  uint8_t traffic_class = 0, next = 6, hop_limit = 64;
  uint32_t flow_label = 0;
  uint8_t src[16]     = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1};
  uint8_t dst[16]     = {0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2};
  std::optional<uint8_t> version;          ///< override the version nibble
  std::optional<uint16_t> payload_length;  ///< override
};

inline uint16_t ones_complement_checksum(const uint8_t* p, size_t n) {
  uint64_t sum = 0;
  for (size_t i = 0; i < n; ++i) sum += (i % 2 == 0) ? uint32_t(p[i]) << 8 : p[i];
  while (sum > 0xffff) sum = (sum & 0xffff) + (sum >> 16);
  return uint16_t(~sum & 0xffff);
}

class FrameBuilder {
 public:
  FrameBuilder() = default;

  /// Destination and source MAC (00:11:22:33:44:55, 66:77:88:99:aa:bb by default).
  FrameBuilder& eth(const std::vector<uint8_t>& dst = {0x00, 0x11, 0x22, 0x33, 0x44, 0x55},
                    const std::vector<uint8_t>& src = {0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb}) {
    raw(dst);
    raw(src);
    return *this;
  }
  FrameBuilder& vlan(uint16_t tpid, uint16_t tci) { return be16(tpid).be16(tci); }
  FrameBuilder& ethertype(uint16_t type) { return be16(type); }

  FrameBuilder& ipv4(const Ipv4Spec& s = {}) {
    std::vector<uint8_t> opts = s.options;
    while (opts.size() % 4) opts.push_back(0);
    const size_t at   = b_.size();
    const uint8_t ihl = uint8_t((20 + opts.size()) / 4);
    be8(s.version_ihl ? *s.version_ihl : uint8_t(0x40 | ihl)).be8(s.tos).be16(0).be16(s.id);
    be16(s.frag).be8(s.ttl).be8(s.proto).be16(0);
    raw(s.src, 4);
    raw(s.dst, 4);
    raw(opts);
    fixups_.push_back({Fix::kIpv4, at, 20 + opts.size(), s.total_length, s.bad_checksum});
    return *this;
  }

  FrameBuilder& ipv6(const Ipv6Spec& s = {}) {
    const size_t at       = b_.size();
    const uint8_t version = s.version ? *s.version : 6;
    be32(uint32_t(version) << 28 | uint32_t(s.traffic_class) << 20 | (s.flow_label & 0xfffff));
    be16(0).be8(s.next).be8(s.hop_limit);
    raw(s.src, 16);
    raw(s.dst, 16);
    fixups_.push_back({Fix::kIpv6, at, 40, s.payload_length, false});
    return *this;
  }

  /// Hop-by-hop (0), routing (43) or destination options (60) header of `bytes` bytes
  /// (a multiple of 8, >= 8), padded with PadN. `hdr_ext_len` overrides the length byte.
  FrameBuilder& ext(uint8_t type, uint8_t next, size_t bytes = 8,
                    std::optional<uint8_t> hdr_ext_len = std::nullopt) {
    be8(next).be8(hdr_ext_len ? *hdr_ext_len : uint8_t(bytes / 8 - 1));
    if (type == 43) {
      be8(4).be8(0);  // routing type 4 (SRH), segments left 0
      for (size_t i = 4; i < bytes; ++i) be8(0);
    } else {
      be8(1).be8(uint8_t(bytes - 4));  // PadN covering the rest
      for (size_t i = 4; i < bytes; ++i) be8(0);
    }
    return *this;
  }
  /// Jumbo payload option in a hop-by-hop header (RFC 2675): 8 bytes.
  FrameBuilder& hbh_jumbo(uint8_t next, uint32_t jumbo_length) {
    return be8(next).be8(0).be8(0xc2).be8(4).be32(jumbo_length);
  }
  /// Fragment header (44): offset in 8-byte units, M flag.
  FrameBuilder& frag6(uint8_t next, uint16_t offset_units, bool more, uint32_t id = 0xabcdef01) {
    return be8(next).be8(0).be16(uint16_t(offset_units << 3 | (more ? 1 : 0))).be32(id);
  }

  FrameBuilder& tcp(uint16_t sport, uint16_t dport, uint8_t flags = 0x18,
                    const std::vector<uint8_t>& options = {},
                    std::optional<uint8_t> data_offset  = std::nullopt) {
    std::vector<uint8_t> opts = options;
    while (opts.size() % 4) opts.push_back(0);
    const uint8_t doff = data_offset ? *data_offset : uint8_t((20 + opts.size()) / 4);
    be16(sport).be16(dport).be32(0x01020304).be32(0x05060708);
    be8(uint8_t(doff << 4)).be8(flags).be16(0xffff).be16(0).be16(0);
    raw(opts);
    return *this;
  }
  FrameBuilder& udp(uint16_t sport, uint16_t dport, std::optional<uint16_t> length = std::nullopt) {
    const size_t at = b_.size();
    be16(sport).be16(dport).be16(0).be16(0);
    fixups_.push_back({Fix::kUdp, at, 8, length, false});
    return *this;
  }
  FrameBuilder& sctp(uint16_t sport, uint16_t dport) {
    return be16(sport).be16(dport).be32(0xdeadbeef).be32(0);
  }
  FrameBuilder& icmp(uint8_t type, uint8_t code) {
    return be8(type).be8(code).be16(0).be32(0x00010002);
  }
  FrameBuilder& gre(uint16_t proto) { return be16(0).be16(proto); }
  FrameBuilder& vxlan(uint32_t vni) { return be32(0x08000000).be32(vni << 8); }
  FrameBuilder& arp(uint16_t op, const uint8_t spa[4], const uint8_t tpa[4]) {
    be16(1).be16(0x0800).be8(6).be8(4).be16(op);
    raw({0x66, 0x77, 0x88, 0x99, 0xaa, 0xbb});
    raw(spa, 4);
    raw({0, 0, 0, 0, 0, 0});
    raw(tpa, 4);
    return *this;
  }
  FrameBuilder& payload(size_t n, uint8_t fill = 0xa5) {
    for (size_t i = 0; i < n; ++i) b_.push_back(uint8_t(fill + i));
    return *this;
  }
  /// Bytes after the datagram (Ethernet padding): not counted in any IP or UDP length.
  FrameBuilder& trailer(size_t n) {
    trailer_ += n;
    return *this;
  }

  FrameBuilder& be8(uint8_t v) {
    b_.push_back(v);
    return *this;
  }
  FrameBuilder& be16(uint16_t v) { return be8(uint8_t(v >> 8)).be8(uint8_t(v)); }
  FrameBuilder& be32(uint32_t v) { return be16(uint16_t(v >> 16)).be16(uint16_t(v)); }
  FrameBuilder& raw(const std::vector<uint8_t>& v) {
    b_.insert(b_.end(), v.begin(), v.end());
    return *this;
  }
  FrameBuilder& raw(const uint8_t* p, size_t n) {
    b_.insert(b_.end(), p, p + n);
    return *this;
  }

  /// Fills in the derived fields; `extra_wire` bytes are added to the wire length only (a
  /// snaplen-cut capture).
  Frame build(uint32_t extra_wire = 0) const {
    Frame f;
    f.bytes          = b_;
    const size_t end = f.bytes.size();
    for (auto it = fixups_.rbegin(); it != fixups_.rend(); ++it) {
      uint8_t* p = f.bytes.data() + it->at;
      switch (it->kind) {
        case Fix::kUdp: {
          const uint16_t v = it->length ? *it->length : uint16_t(end - it->at);
          p[4]             = uint8_t(v >> 8);
          p[5]             = uint8_t(v);
          break;
        }
        case Fix::kIpv6: {
          const uint16_t v = it->length ? *it->length : uint16_t(end - it->at - 40);
          p[4]             = uint8_t(v >> 8);
          p[5]             = uint8_t(v);
          break;
        }
        case Fix::kIpv4: {
          const uint16_t v = it->length ? *it->length : uint16_t(end - it->at);
          p[2]             = uint8_t(v >> 8);
          p[3]             = uint8_t(v);
          p[10] = p[11] = 0;
          uint16_t c    = ones_complement_checksum(p, it->header);
          if (it->bad) c = uint16_t(c ^ 0x5a5a);
          p[10] = uint8_t(c >> 8);
          p[11] = uint8_t(c);
          break;
        }
      }
    }
    f.bytes.insert(f.bytes.end(), trailer_, uint8_t(0));
    f.len = uint32_t(f.bytes.size()) + extra_wire;
    return f;
  }

  size_t size() const { return b_.size(); }

 private:
  struct Fix {
    enum Kind { kIpv4, kIpv6, kUdp } kind;
    size_t at, header;
    std::optional<uint16_t> length;
    bool bad;
  };
  std::vector<uint8_t> b_;
  std::vector<Fix> fixups_;
  size_t trailer_ = 0;
};

/// Frame truncated to `cut` captured bytes, keeping the wire length.
inline Frame cut_frame(const Frame& f, uint32_t cut) {
  Frame c;
  c.bytes.assign(f.bytes.begin(), f.bytes.begin() + cut);
  c.len = f.len;
  return c;
}

/// Ids of every parser engine of this build (available or not).
inline std::vector<std::string> parser_engine_ids() {
  std::vector<std::string> ids;
  for (const auto& e : packet::parser_engines()) ids.emplace_back(e.id);
  return ids;
}

/// gtest parameter names: "cpu.parse" -> "cpu_parse".
inline std::string param_name(const std::string& id) {
  std::string name = id;
  for (char& c : name)
    if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9'))) c = '_';
  return name;
}

/// Parses one frame from a heap buffer of exactly caplen bytes, so that AddressSanitizer
/// reports any read past the capture. The output starts as 0xee bytes: every field must be
/// written by the engine.
inline packet::PacketInfo parse_exact(const packet::Parser& parser,
                                      const std::vector<uint8_t>& bytes, uint32_t caplen,
                                      uint32_t len) {
  std::unique_ptr<uint8_t[]> buf(new uint8_t[caplen]);
  if (caplen) std::memcpy(buf.get(), bytes.data(), caplen);
  packet::PacketMeta meta{0, caplen, len, 0, 0, 0};
  packet::BatchView view{buf.get(), &meta, 1};
  packet::PacketInfo out;
  std::memset(&out, 0xee, sizeof out);
  ExecContext ctx;
  Status s = parser.parse(view, {&out, 1}, ctx);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return out;
}
inline packet::PacketInfo parse_exact(const packet::Parser& parser, const Frame& f) {
  return parse_exact(parser, f.bytes, f.caplen(), f.len);
}

/// Field-by-field comparison (names in the failure messages), then the whole 64 bytes.
inline void expect_info(const packet::PacketInfo& got, const packet::PacketInfo& want) {
  auto addr = [](const uint8_t* p) { return std::vector<uint8_t>(p, p + 16); };
  EXPECT_STREQ(packet::parse_status_name(got.status), packet::parse_status_name(want.status));
  EXPECT_EQ(int(got.l3), int(want.l3)) << "l3";
  EXPECT_EQ(got.ip_version, want.ip_version) << "ip_version";
  EXPECT_EQ(got.proto, want.proto) << "proto";
  EXPECT_EQ(got.vlan_count, want.vlan_count) << "vlan_count";
  EXPECT_EQ(got.flags, want.flags) << "flags";
  EXPECT_EQ(int(got.tunnel), int(want.tunnel)) << "tunnel";
  EXPECT_EQ(got.tcp_flags, want.tcp_flags) << "tcp_flags";
  EXPECT_EQ(got.vlan_tci[0], want.vlan_tci[0]) << "vlan_tci[0]";
  EXPECT_EQ(got.vlan_tci[1], want.vlan_tci[1]) << "vlan_tci[1]";
  EXPECT_EQ(got.ethertype, want.ethertype) << "ethertype";
  EXPECT_EQ(got.l3_offset, want.l3_offset) << "l3_offset";
  EXPECT_EQ(got.l4_offset, want.l4_offset) << "l4_offset";
  EXPECT_EQ(got.sport, want.sport) << "sport";
  EXPECT_EQ(got.dport, want.dport) << "dport";
  EXPECT_EQ(got.icmp_type, want.icmp_type) << "icmp_type";
  EXPECT_EQ(got.icmp_code, want.icmp_code) << "icmp_code";
  EXPECT_EQ(got.tos, want.tos) << "tos";
  EXPECT_EQ(got.ttl, want.ttl) << "ttl";
  EXPECT_EQ(got.fields, want.fields) << "fields";
  EXPECT_EQ(addr(got.src), addr(want.src)) << "src";
  EXPECT_EQ(addr(got.dst), addr(want.dst)) << "dst";
  EXPECT_TRUE(got == want) << "the 64 bytes differ (pad?)";
}

}  // namespace warpath::testing
