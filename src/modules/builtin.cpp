// src/modules/builtin.cpp: the built-in tables (include/warpath/modules/builtin.hpp).
#include "warpath/modules/builtin.hpp"

#include "warpath/classify/check.hpp"
#include "warpath/lookup/check.hpp"

namespace warpath::runtime {

lookup::RouteTable builtin_fib(uint64_t seed) {
  lookup::RouteTable t = lookup::synthetic_full_table(seed, 200'000, 40'000);
  t.v4.push_back({0, 0, 1});
  t.v6.push_back({lookup::Ip6{}, 0, 2});
  return t;
}

classify::RuleSet builtin_acl(uint64_t seed) {
  classify::RuleSet rules = classify::random_rule_set(seed, classify::KeyLayout::kFiveTuple, 1000);
  classify::Rule& icmp    = rules.rules.front();
  const uint32_t prio     = icmp.priority;
  icmp                    = classify::Rule{};
  icmp.value[3]           = 1;
  icmp.mask[3]            = 0xFF;
  icmp.priority           = prio;
  icmp.action             = "deny";
  for (size_t i = 1; i + 1 < rules.rules.size(); ++i)
    if (i % 8 == 3) rules.rules[i].action = "deny";
  return rules;
}

forward::RouterConfig neighbors_to_port(const lookup::RouteTable& fib, uint16_t port) {
  forward::RouterConfig c = forward::default_neighbors(fib, 1);
  for (auto& n : c.neighbors) n.port = port;
  return c;
}

}  // namespace warpath::runtime
