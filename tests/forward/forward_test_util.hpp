// tests/forward/forward_test_util.hpp: helpers shared by the router data-path tests.
//
// route_one() runs one hand-built frame through the production path: the "auto" parser, then
// forward_batch() with a given next hop. LinearFib is a deliberately naive Fib (a linear
// longest-prefix scan) so the batch driver can be tested through the Fib interface on its own.
#pragma once
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "packet/frame_builder.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::testing {

inline uint16_t be16_at(const std::vector<uint8_t>& b, size_t at) {
  return uint16_t(b[at] << 8 | b[at + 1]);
}

/// True when the IPv4 header at `l3` verifies (full recomputation, independent of the code).
inline bool ipv4_checksum_ok(const std::vector<uint8_t>& b, size_t l3) {
  const size_t ihl = size_t(b[l3] & 15) * 4;
  return ones_complement_checksum(b.data() + l3, ihl) == 0;
}

struct Routed {
  forward::ForwardResult result{};
  packet::PacketInfo info{};
  std::vector<uint8_t> bytes;  ///< the frame after the data path
};

inline Routed route_one(const Frame& f, lookup::NextHop nh, const forward::RouterTables& tables) {
  Routed out;
  auto batch = packet::PacketBatch::create(1, 2048, 16384);
  EXPECT_TRUE(batch.is_ok());
  EXPECT_TRUE(batch->append(f.bytes.data(), f.caplen(), f.len, 0));
  auto parser = packet::make_parser("auto");
  EXPECT_TRUE(parser.is_ok());
  ExecContext ctx;
  EXPECT_TRUE((*parser)->parse(batch->view(), {&out.info, 1}, ctx).is_ok());
  Status s = forward::forward_batch(*batch, {&out.info, 1}, {&nh, 1}, tables, {&out.result, 1});
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  out.bytes.assign(batch->data(0), batch->data(0) + batch->meta(0).caplen);
  return out;
}

/// Next hop 7 -> port 2, MAC 0a:00:00:00:00:07; next hop 9 -> port 3. Default addresses.
inline forward::RouterTables test_tables() {
  forward::RouterConfig c;
  c.neighbors.push_back({7, 2, {0x0a, 0, 0, 0, 0, 0x07}});
  c.neighbors.push_back({9, 3, {0x0a, 0, 0, 0, 0, 0x09}});
  return forward::RouterTables::build(c).value();
}

/// A naive Fib: linear scan for the longest matching prefix.
class LinearFib final : public lookup::Fib {
 public:
  std::vector<lookup::Route4> v4;
  std::vector<lookup::Route6> v6;

  std::string_view id() const noexcept override { return "test.linear"; }
  Status do_lookup4(Span<const uint32_t> addrs, Span<lookup::NextHop> out,
                 ExecContext&) const override {
    if (out.size < addrs.size) return Status(Errc::kInvalidArgument, "short");
    for (uint32_t i = 0; i < addrs.size; ++i) {
      int best = -1;
      out[i]   = lookup::kNoRoute;
      for (const auto& r : v4)
        if (lookup::mask4(addrs[i], r.len) == r.prefix && int(r.len) > best) {
          best   = r.len;
          out[i] = r.nh;
        }
    }
    return Status::ok();
  }
  Status do_lookup6(Span<const lookup::Ip6> addrs, Span<lookup::NextHop> out,
                 ExecContext&) const override {
    if (out.size < addrs.size) return Status(Errc::kInvalidArgument, "short");
    for (uint32_t i = 0; i < addrs.size; ++i) {
      int best = -1;
      out[i]   = lookup::kNoRoute;
      for (const auto& r : v6)
        if (lookup::mask6(addrs[i], r.len) == r.prefix && int(r.len) > best) {
          best   = r.len;
          out[i] = r.nh;
        }
    }
    return Status::ok();
  }
  Status add4(const lookup::Route4&) override { return Status(Errc::kNotSupported, "test"); }
  Status add6(const lookup::Route6&) override { return Status(Errc::kNotSupported, "test"); }
  Status remove4(uint32_t, uint8_t) override { return Status(Errc::kNotSupported, "test"); }
  Status remove6(lookup::Ip6, uint8_t) override { return Status(Errc::kNotSupported, "test"); }
  lookup::FibStats stats() const override { return {}; }
};

}  // namespace warpath::testing
