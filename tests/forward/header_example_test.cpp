// tests/forward/header_example_test.cpp: the examples of the public headers, compiled and run
// as written (STYLE 8.1.7), so they cannot drift from the signatures. router.hpp's, line for
// line, inside a function that returns Status as WARPATH_TRY needs.
#include <gtest/gtest.h>

#include <vector>

#include "warpath/forward/router.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::forward {
namespace {

Status router_example(const lookup::RouteTable& routes, packet::PacketBatch& batch,
                      Span<const packet::PacketInfo> infos, ExecContext& ctx,
                      std::vector<ForwardResult>& out) {
  // --- include/warpath/forward/router.hpp, "Example" ---
  auto fib    = lookup::make_fib("auto", routes).value();
  auto tables = RouterTables::build(default_neighbors(routes)).value();
  RouteKeys keys(batch.max_packets());
  std::vector<lookup::NextHop> nexthops(batch.size());
  std::vector<ForwardResult> results(batch.size());
  WARPATH_TRY(route_batch(batch, infos, *fib, tables, keys, {nexthops.data(), batch.size()},
                          {results.data(), batch.size()}, ctx));
  // ---
  out = std::move(results);
  return Status::ok();
}

TEST(HeaderExamples, RouterExampleRuns) {
  lookup::RouteTable routes = lookup::random_route_table(3, 500, 100);
  routes.v4.push_back({0, 0, 1});
  gen::TrafficParams p;
  p.count    = 300;
  auto batch = gen::batch_for(p.count).value();
  ASSERT_TRUE(gen::generate_traffic(p, batch).is_ok());
  auto infos = packet::parse_batch(batch).value();
  ExecContext ctx;
  std::vector<ForwardResult> results;
  const Status s = router_example(routes, batch, {infos.data(), batch.size()}, ctx, results);
  ASSERT_TRUE(s.is_ok()) << s.message();
  ASSERT_EQ(results.size(), batch.size());
  uint32_t forwarded = 0;
  for (const ForwardResult& r : results) forwarded += r.verdict == Verdict::kForward;
  EXPECT_GT(forwarded, 0u);
}

}  // namespace
}  // namespace warpath::forward
