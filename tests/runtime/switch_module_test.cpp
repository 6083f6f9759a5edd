// tests/runtime/switch_module_test.cpp: the `switch` module in a chain against a reference
// written here from the specification: for each generated packet, the flow FlowTable::lookup
// (the oracle) picks and the ports its actions name (output, in_port, flood, controller, the
// ingress port left out), at batch sizes 0, 1, the lane edges and large; and the same bytes out
// whatever the batch size.
#include <gtest/gtest.h>

#include <random>

#include "packet/core/key_core.hpp"
#include "packet/core/parse_core.hpp"
#include "support/test_support.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/openflow/flow_table.hpp"
#include "warpath/modules/chain_check.hpp"

namespace warpath::runtime {
namespace {

constexpr uint16_t kPorts = 4;

packet::PacketBatch traffic(uint32_t per_port) {
  auto all = gen::batch_for(per_port * kPorts);
  EXPECT_TRUE(all.is_ok());
  std::vector<packet::PacketBatch> parts;
  for (uint16_t p = 0; p < kPorts; ++p) {
    gen::TrafficParams t;
    t.seed  = 10 + p;
    t.count = per_port;
    t.flows = 64;
    t.port  = p;
    auto b  = gen::batch_for(per_port);
    EXPECT_TRUE(gen::generate_traffic(t, *b).is_ok());
    parts.push_back(std::move(*b));
  }
  for (uint32_t i = 0; i < per_port; ++i)
    for (auto& b : parts)
      all->append(b.data(i), b.meta(i).caplen, b.meta(i).len, b.meta(i).timestamp_ns, b.meta(i).port);
  return std::move(*all);
}

packet::OfTuple key_of(const packet::PacketBatch& b, uint32_t i) {
  const packet::PacketInfo info = packet::core::parse_packet(b.data(i), b.meta(i).caplen, b.meta(i).len);
  return packet::core::of_tuple(b.data(i), b.meta(i).caplen, uint16_t(b.meta(i).port + 1), info);
}

// Flows made from the packets themselves (random fields wildcarded), so they are hit.
std::string random_flows(const packet::PacketBatch& b, std::mt19937_64& rng, openflow::FlowTable& table) {
  std::string text;
  const char* actions[] = {"output:2", "output:1,output:3", "flood", "drop", "in_port",
                           "controller", "output:4,controller", "mod_nw_tos:32,output:2",
                           "output:9", "normal"};
  for (int f = 0; f < 60; ++f) {
    const packet::OfTuple k = key_of(b, uint32_t(rng() % b.size()));
    uint32_t wc             = openflow::kWcAll & ~(openflow::kWcNwSrcMask | openflow::kWcNwDstMask);
    for (uint32_t bit : {openflow::kWcInPort, openflow::kWcDlType, openflow::kWcNwProto, openflow::kWcTpDst,
                         openflow::kWcDlVlan})
      if (rng() % 3 == 0) wc &= ~bit;
    wc |= uint32_t(rng() % 2 ? 32 : 16) << openflow::kWcNwSrcShift | 32u << openflow::kWcNwDstShift;
    openflow::FlowSpec s;
    s.match    = openflow::make_match(packet::of_unpack(k), wc);
    s.priority = uint16_t(100 + f * 7);  // distinct
    Result<openflow::FlowSpec> parsed = openflow::parse_flow(
        "priority=" + std::to_string(s.priority) + "," + openflow::format_match(s.match) +
        ",actions=" + actions[rng() % std::size(actions)]);
    EXPECT_TRUE(parsed.is_ok()) << parsed.status().message();
    text += openflow::format_flow(*parsed) + "\n";
    table.apply(openflow::FlowModCommand::kAdd, *parsed, 0);
  }
  return text;
}

struct Want {
  std::string reason;
  uint16_t out      = 0;
  uint64_t out_mask = 0;
};

// The reference: the oracle's flow, then the ports its actions name. `normal` is left out of
// the tables' comparison (it depends on what was learnt: the CLI tests check it).
bool expected(const openflow::FlowTable& t, const packet::OfTuple& key, uint16_t in, Want& w) {
  const openflow::FlowEntry* e = t.lookup(key);
  if (!e) {
    w.reason = "to_controller";
    return true;
  }
  uint64_t ports = 0;
  bool slow = false, any = false;
  for (const openflow::Action& a : e->spec.actions) {
    if (a.type != openflow::ActionType::kOutput) continue;
    any = true;
    if (a.port == openflow::kPortNormal) return false;
    if (a.port == openflow::kPortInPort) ports |= 1ull << in;
    else if (a.port == openflow::kPortFlood) ports |= ((1ull << kPorts) - 1) & ~(1ull << in);
    else if (a.port == openflow::kPortController) slow = true;
    else if (a.port <= kPorts && a.port - 1 != in) ports |= 1ull << (a.port - 1);
  }
  if (!ports) {
    w.reason = slow ? "to_controller" : any ? "no_output" : "flow_drop";
    return true;
  }
  w.reason = "forwarded";
  if (!slow && !(ports & (ports - 1))) {
    w.out = uint16_t(__builtin_ctzll(ports));
  } else {
    w.out      = kOutMany;
    w.out_mask = ports | (slow ? kOutSlowPathBit : 0);
  }
  return true;
}

TEST(SwitchModule, PicksTheOraclesFlowAndPortsAtEveryBatchSize) {
  const packet::PacketBatch in = traffic(1100);
  std::mt19937_64 rng(3);
  openflow::FlowTable table;
  const std::string flows = random_flows(in, rng, table);
  TableSource src;
  src.read_text = [&](const std::string&) -> Result<std::string> { return flows; };
  BuildEnv env;
  env.port_count = kPorts;
  env.tables     = &src;
  auto chain = Chain::build({ModuleSpec{"switch", {{"flows", "t.flows"}}, ""}}, env);
  ASSERT_TRUE(chain.is_ok()) << chain.status().message();
  std::vector<ChainOutcome> first;
  size_t compared = 0, forwarded = 0, many = 0;
  for (uint32_t batch : testing::burst_sizes()) {
    if (batch == 0) {
      auto none = gen::batch_for(1);
      auto r    = run_chain_frames(**chain, *none, 0, Place::kCpu);
      ASSERT_TRUE(r.is_ok()) << r.status().message();
      EXPECT_TRUE(r->empty());
      continue;
    }
    auto r = run_chain_frames(**chain, in, batch, Place::kCpu);
    ASSERT_TRUE(r.is_ok()) << r.status().message();
    ASSERT_EQ(r->size(), in.size());
    if (first.empty()) {
      first = *r;
      for (uint32_t i = 0; i < in.size(); ++i) {
        Want w;
        if (!expected(table, key_of(in, i), in.meta(i).port, w)) continue;
        const ChainOutcome& o = (*r)[i];
        ASSERT_EQ(o.reason, w.reason) << "packet " << i;
        ASSERT_EQ(o.out, w.out) << "packet " << i;
        ASSERT_EQ(o.out_mask, w.out_mask) << "packet " << i;
        ++compared;
        forwarded += w.reason == "forwarded";
        many += w.out == kOutMany;
      }
    } else {
      for (uint32_t i = 0; i < in.size(); ++i) ASSERT_EQ((*r)[i], first[i]) << "batch " << batch << ", packet " << i;
    }
  }
  EXPECT_GT(compared, in.size() / 2);
  EXPECT_GT(forwarded, 100u);
  EXPECT_GT(many, 20u) << "copies are exercised";
}

TEST(SwitchModule, RefusesWhatItCannotRunAndTooManyPorts) {
  TableSource src;
  src.read_text = [](const std::string&) -> Result<std::string> {
    return std::string("actions=output:1,strip_vlan,output:2\n");
  };
  BuildEnv env;
  env.port_count = 2;
  env.tables     = &src;
  auto c = Chain::build({ModuleSpec{"switch", {{"flows", "x"}}, ""}}, env);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("headers change between two outputs"), std::string::npos)
      << c.status().message();
  src.read_text = [](const std::string&) -> Result<std::string> { return std::string("ip,nw_src=1.2.3.4/33,actions=drop\n"); };
  c = Chain::build({ModuleSpec{"switch", {{"flows", "bad.flows"}}, ""}}, env);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("bad.flows:1: nw_src=1.2.3.4/33"), std::string::npos) << c.status().message();
  BuildEnv big;
  big.port_count = 64;
  c = Chain::build({ModuleSpec{"switch", {}, ""}}, big);
  ASSERT_FALSE(c.is_ok());
  EXPECT_NE(c.status().message().find("at most 63 ports"), std::string::npos) << c.status().message();
  c = Chain::build({ModuleSpec{"switch", {{"miss", "flood"}}, ""}}, env);
  ASSERT_FALSE(c.is_ok());
}

}  // namespace
}  // namespace warpath::runtime
