// src/forward/counters.cpp: verdict and reason names, and the counters that must add up.
#include <cstddef>
#include <string>

#include "warpath/forward/router.hpp"

namespace warpath::forward {

const char* verdict_name(Verdict v) noexcept {
  switch (v) {
    case Verdict::kForward:
      return "forward";
    case Verdict::kSlowPath:
      return "slow_path";
    case Verdict::kDrop:
      return "drop";
  }
  return "unknown";
}

const char* reason_name(Reason r) noexcept {
  static constexpr const char* kNames[] = {
      "forwarded",         "to_router",         "multicast",       "ttl_expired",
      "hop_limit_expired", "ipv4_options",      "ipv6_hop_by_hop", "arp",
      "link_local",        "bad_ipv4_header",   "bad_ipv4_checksum", "bad_ipv4_length",
      "bad_ipv6_header",   "bad_ipv6_length",   "truncated",         "not_ip",
      "no_route",          "no_neighbor",       "not_for_us",        "l2_broadcast_unicast_ip",
      "martian_source",    "martian_destination",
  };
  static_assert(sizeof(kNames) / sizeof(kNames[0]) == kReasonCount);
  const auto i = static_cast<unsigned>(r);
  return i < kReasonCount ? kNames[i] : "unknown";
}

void ForwardCounters::add(const ForwardResult& r) {
  ++rx;
  ++by_reason[unsigned(r.reason) < kReasonCount ? unsigned(r.reason) : 0];
  switch (r.verdict) {
    case Verdict::kForward:
      ++tx;
      ++tx_by_port[r.port];
      break;
    case Verdict::kSlowPath:
      ++slow_path;
      break;
    case Verdict::kDrop:
      ++dropped;
      break;
  }
}

void ForwardCounters::add(Span<const ForwardResult> results) {
  for (const ForwardResult& r : results) add(r);
}

Status ForwardCounters::check() const {
  auto bad = [](const std::string& what) {
    return Status(Errc::kInvalidArgument, "counters do not add up: " + what);
  };
  if (rx != tx + dropped + slow_path)
    return bad("rx " + std::to_string(rx) + " != tx " + std::to_string(tx) + " + dropped " +
               std::to_string(dropped) + " + slow_path " + std::to_string(slow_path));
  uint64_t sums[3] = {0, 0, 0};
  for (unsigned i = 0; i < kReasonCount; ++i)
    sums[unsigned(reason_verdict(Reason(i)))] += by_reason[i];
  const uint64_t want[3] = {tx, slow_path, dropped};
  for (unsigned v = 0; v < 3; ++v)
    if (sums[v] != want[v])
      return bad(std::string("the ") + verdict_name(Verdict(v)) + " reasons sum to " +
                 std::to_string(sums[v]) + ", not " + std::to_string(want[v]));
  uint64_t ports = 0;
  for (const auto& [port, n] : tx_by_port) ports += n;
  if (ports != tx)
    return bad("tx by port sums to " + std::to_string(ports) + ", not tx " + std::to_string(tx));
  const uint64_t expired = reason(Reason::kTtlExpired) + reason(Reason::kHopLimitExpired);
  if (icmp_sent + icmp_suppressed > expired)
    return bad("icmp_sent + icmp_suppressed " + std::to_string(icmp_sent + icmp_suppressed) +
               " > expired packets " + std::to_string(expired));
  return Status::ok();
}

}  // namespace warpath::forward
