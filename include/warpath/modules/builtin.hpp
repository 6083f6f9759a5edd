// include/warpath/modules/builtin.hpp
//
// The built-in data `warpath run` uses without files (and `warpath demo`, the pipeline
// benchmark): so that the main job runs on any machine, and every tool runs the same tables.
#pragma once
#include <cstdint>

#include "warpath/classify/rule.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/lookup/route.hpp"

namespace warpath::runtime {

/// An Internet-shaped table (lookup::synthetic_full_table: 200,000 IPv4 + 40,000 IPv6 routes)
/// plus default routes 0.0.0.0/0 -> 1 and ::/0 -> 2, so every packet has a route.
lookup::RouteTable builtin_fib(uint64_t seed);

/// A firewall worth watching: classify::random_rule_set(seed, 5-tuple, 1000) whose first
/// (highest-priority) rule denies ICMP from anywhere, one rule in eight of the rest denies, and
/// the last rule (a catch-all) takes the configured match action.
classify::RuleSet builtin_acl(uint64_t seed);

/// Neighbours that send every next hop of `fib` out of `port` (default MACs): a FIB in front
/// of one sink.
forward::RouterConfig neighbors_to_port(const lookup::RouteTable& fib, uint16_t port);

}  // namespace warpath::runtime
