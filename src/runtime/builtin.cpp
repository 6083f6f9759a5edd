// src/runtime/builtin.cpp: the built-in tables (include/warpath/runtime/builtin.hpp).
#include "warpath/runtime/builtin.hpp"

#include "warpath/lookup/check.hpp"

namespace warpath::runtime {

lookup::RouteTable builtin_fib(uint64_t seed) {
  lookup::RouteTable t = lookup::synthetic_full_table(seed, 200'000, 40'000);
  t.v4.push_back({0, 0, 1});
  t.v6.push_back({lookup::Ip6{}, 0, 2});
  return t;
}

forward::RouterConfig neighbors_to_port(const lookup::RouteTable& fib, uint16_t port) {
  forward::RouterConfig c = forward::default_neighbors(fib, 1);
  for (auto& n : c.neighbors) n.port = port;
  return c;
}

}  // namespace warpath::runtime
