// src/forward/forward_batch.cpp: key extraction, lookup and the CPU post-shade loop around
// core::forward_packet.
#include <string>

#include "forward/core/forward_core.hpp"
#include "warpath/forward/router.hpp"

namespace warpath::forward {

RouteKeys::RouteKeys(uint32_t max_packets)
    : max_(max_packets),
      dst4_(max_packets),
      index4_(max_packets),
      dst6_(max_packets),
      index6_(max_packets),
      nh4_(max_packets),
      nh6_(max_packets) {}

Status RouteKeys::extract(Span<const packet::PacketInfo> infos) {
  if (infos.size > max_)
    return Status(Errc::kInvalidArgument, "route keys: batch of " + std::to_string(infos.size) +
                                              " packets, room for " + std::to_string(max_));
  packets_ = infos.size;
  count4_ = count6_ = 0;
  for (uint32_t i = 0; i < infos.size; ++i) {
    uint32_t dst = 0;
    uint64_t hi = 0, lo = 0;
    if (core::route_key4(infos[i], dst)) {
      dst4_[count4_]     = dst;
      index4_[count4_++] = i;
    } else if (core::route_key6(infos[i], hi, lo)) {
      dst6_[count6_]     = lookup::Ip6{hi, lo};
      index6_[count6_++] = i;
    }
  }
  return Status::ok();
}

Status RouteKeys::lookup(const lookup::Fib& fib, ExecContext& ctx) {
  if (count4_) WARPATH_TRY(fib.lookup4({dst4_.data(), count4_}, {nh4_.data(), count4_}, ctx));
  if (count6_) WARPATH_TRY(fib.lookup6({dst6_.data(), count6_}, {nh6_.data(), count6_}, ctx));
  return Status::ok();
}

Status RouteKeys::scatter(Span<lookup::NextHop> nexthops) const {
  if (nexthops.size < packets_)
    return Status(Errc::kInvalidArgument, "route keys: next-hop span shorter than the batch");
  for (uint32_t i = 0; i < packets_; ++i) nexthops[i] = lookup::kNoRoute;
  for (uint32_t k = 0; k < count4_; ++k) nexthops[index4_[k]] = nh4_[k];
  for (uint32_t k = 0; k < count6_; ++k) nexthops[index6_[k]] = nh6_[k];
  return Status::ok();
}

Status forward_batch(packet::PacketBatch& batch, Span<const packet::PacketInfo> infos,
                     Span<const lookup::NextHop> nexthops, const RouterTables& tables,
                     Span<ForwardResult> results) {
  const uint32_t n = batch.size();
  if (infos.size < n || nexthops.size < n || results.size < n)
    return Status(Errc::kInvalidArgument,
                  "forward_batch: " + std::to_string(n) + " packets but spans of " +
                      std::to_string(infos.size) + " infos, " + std::to_string(nexthops.size) +
                      " next hops, " + std::to_string(results.size) + " results");
  const RouterView view     = tables.view();
  constexpr uint32_t kAhead = 4;  // the frame's first line: Ethernet and IP headers
  for (uint32_t i = 0; i < n; ++i) {
    if (i + kAhead < n) WARPATH_PREFETCH(batch.data(i + kAhead));
    const packet::PacketMeta& m = batch.meta(i);
    results[i] =
        core::forward_packet(batch.data(i), m.caplen, m.len, infos[i], m.port, nexthops[i], view);
  }
  return Status::ok();
}

Status route_batch(packet::PacketBatch& batch, Span<const packet::PacketInfo> infos,
                   const lookup::Fib& fib, const RouterTables& tables, RouteKeys& keys,
                   Span<lookup::NextHop> nexthops, Span<ForwardResult> results, ExecContext& ctx) {
  const uint32_t n = batch.size();
  if (infos.size < n)
    return Status(Errc::kInvalidArgument, "route_batch: fewer infos than packets");
  WARPATH_TRY(keys.extract({infos.data, n}));
  WARPATH_TRY(keys.lookup(fib, ctx));
  WARPATH_TRY(keys.scatter({nexthops.data, nexthops.size < n ? nexthops.size : n}));
  return forward_batch(batch, infos, {nexthops.data, n}, tables, results);
}

}  // namespace warpath::forward
