// tests/openflow/flow_text_test.cpp: the OpenFlow 1.0 match and the ovs-ofctl flow syntax
// (include/warpath/openflow/flow.hpp). Expected texts and normalisations were checked with
// `ovs-ofctl -O OpenFlow10 parse-flow` (Open vSwitch 3.1).
#include <gtest/gtest.h>

#include "warpath/openflow/flow.hpp"

namespace warpath::openflow {
namespace {

FlowSpec flow(std::string_view text) {
  Result<FlowSpec> f = parse_flow(text);
  EXPECT_TRUE(f.is_ok()) << text << ": " << f.status().message();
  return f.is_ok() ? *f : FlowSpec{};
}

TEST(FlowText, ParsesAndPrintsInOvsOrder) {
  const FlowSpec f = flow(
      "priority=100,tcp,nw_src=10.0.0.0/8,tp_dst=80,actions=mod_dl_dst:02:00:00:00:00:01,output:2");
  EXPECT_EQ(f.priority, 100);
  EXPECT_EQ(f.match.f.dl_type, kEthIp);
  EXPECT_EQ(f.match.f.nw_proto, 6);
  EXPECT_EQ(f.match.nw_src_len(), 8u);
  EXPECT_EQ(f.match.nw_dst_len(), 0u);
  ASSERT_EQ(f.actions.size(), 2u);
  EXPECT_EQ(f.actions[0].type, ActionType::kSetDlDst);
  EXPECT_EQ(f.actions[1].port, 2);
  EXPECT_EQ(format_flow(f),
            "priority=100,tcp,nw_src=10.0.0.0/8,tp_dst=80 actions=mod_dl_dst:02:00:00:00:00:01,output:2");
  // ovs-ofctl's own dump order and names.
  EXPECT_EQ(format_match(flow("arp,nw_proto=2,nw_src=1.2.3.4,actions=drop").match),
            "arp,nw_src=1.2.3.4,nw_proto=2");
  EXPECT_EQ(format_match(flow("icmp,icmp_type=8,icmp_code=0,in_port=3,actions=drop").match),
            "icmp,in_port=3,icmp_type=8,icmp_code=0");
  EXPECT_EQ(format_actions(flow("actions=controller").actions), "controller:65535");
  EXPECT_EQ(format_actions(flow("actions=controller:128,in_port,flood,all,normal,local").actions),
            "controller:128,in_port,flood,all,normal,local");
  EXPECT_EQ(format_actions(flow("actions=drop").actions), "drop");
  EXPECT_TRUE(flow("actions=drop").actions.empty());
  EXPECT_EQ(flow("actions=3").actions.at(0).port, 3) << "a bare number is output";
}

TEST(FlowText, RoundTripsEveryFieldAndAction) {
  const char* lines[] = {
      "priority=7,in_port=1,dl_vlan=10,dl_vlan_pcp=3,dl_src=00:11:22:33:44:55,"
      "dl_dst=66:77:88:99:aa:bb,udp,nw_src=1.2.3.0/24,nw_dst=5.6.7.8,nw_tos=32,tp_src=53,tp_dst=1000 "
      "actions=mod_vlan_vid:5,mod_vlan_pcp:2,strip_vlan,mod_dl_src:00:00:00:00:00:01,"
      "mod_dl_dst:00:00:00:00:00:02,mod_nw_src:9.9.9.9,mod_nw_dst:8.8.8.8,mod_nw_tos:64,"
      "mod_tp_src:1,mod_tp_dst:2,enqueue:1:3,output:4",
      "cookie=77,idle_timeout=10,hard_timeout=20,send_flow_rem,priority=0,dl_type=0x88cc actions=drop",
      "priority=32768,dl_vlan=0xffff actions=output:1",
  };
  for (const char* line : lines) {
    const FlowSpec a = flow(line);
    const FlowSpec b = flow(format_flow(a));
    EXPECT_EQ(format_flow(a), format_flow(b)) << line;
    EXPECT_TRUE(a.match == b.match) << line;
    EXPECT_EQ(a.actions.size(), b.actions.size());
    for (size_t i = 0; i < a.actions.size() && i < b.actions.size(); ++i)
      EXPECT_TRUE(a.actions[i] == b.actions[i]) << line << " action " << i;
    EXPECT_EQ(a.cookie, b.cookie);
    EXPECT_EQ(a.idle_timeout, b.idle_timeout);
    EXPECT_EQ(a.hard_timeout, b.hard_timeout);
    EXPECT_EQ(a.flags, b.flags);
  }
}

TEST(FlowText, NormalisesAsOpenVswitch) {
  // Transport ports without a transport protocol are dropped (ovs-ofctl: "normalization
  // changed ofp_match, pre: tp_dst=80 post: ").
  EXPECT_EQ(format_match(flow("tp_dst=80,actions=drop").match), "");
  EXPECT_EQ(format_match(flow("ip,nw_tos=33,tp_src=5,actions=drop").match), "ip,nw_tos=32");
  EXPECT_EQ(format_match(flow("nw_src=1.2.3.4,actions=drop").match), "") << "no dl_type";
  EXPECT_EQ(format_match(flow("arp,nw_tos=4,actions=drop").match), "arp") << "tos is IPv4 only";
  EXPECT_EQ(format_match(flow("dl_vlan=0xffff,dl_vlan_pcp=3,actions=drop").match), "dl_vlan=0xffff");
  // The same packets, the same match.
  EXPECT_TRUE(flow("tcp,nw_src=10.1.2.3/8,actions=drop").match ==
              flow("nw_proto=6,dl_type=0x800,nw_src=10.0.0.0/255.0.0.0,actions=drop").match);
  // Exact matches: every field given.
  const FlowSpec e = flow(
      "priority=5,in_port=1,dl_src=00:00:00:00:00:01,dl_dst=00:00:00:00:00:02,dl_vlan=0xffff,"
      "tcp,nw_src=1.1.1.1,nw_dst=2.2.2.2,nw_tos=0,tp_src=1,tp_dst=2,actions=drop");
  EXPECT_TRUE(e.match.exact());
  EXPECT_FALSE(flow("tcp,actions=drop").match.exact());
}

TEST(FlowText, MatchAlgebra) {
  const Match all = flow("actions=drop").match;
  const Match a   = flow("ip,nw_src=10.0.0.0/8,actions=drop").match;
  const Match b   = flow("ip,nw_src=10.1.0.0/16,actions=drop").match;
  const Match c   = flow("ip,nw_dst=20.0.0.0/8,actions=drop").match;
  const Match d   = flow("ip,nw_src=11.0.0.0/8,actions=drop").match;
  EXPECT_TRUE(covers(all, a));
  EXPECT_TRUE(covers(a, b));
  EXPECT_FALSE(covers(b, a));
  EXPECT_FALSE(covers(a, c));
  EXPECT_TRUE(overlaps(a, c));
  EXPECT_FALSE(overlaps(a, d));
  EXPECT_TRUE(overlaps(all, d));
  packet::OfFields k;
  k.dl_type = kEthIp;
  k.nw_src  = 0x0a010203;
  k.nw_dst  = 0x14000001;
  const packet::OfTuple key = packet::of_pack(k);
  EXPECT_TRUE(matches(a, key));
  EXPECT_TRUE(matches(b, key));
  EXPECT_TRUE(matches(c, key));
  EXPECT_FALSE(matches(d, key));
  EXPECT_TRUE(matches(all, key));
}

TEST(FlowText, RefusesWhatOpenFlow10CannotSayWithTheFieldAndReason) {
  struct Bad {
    const char* line;
    const char* says;
  } bad[] = {
      {"ip,nw_dst=10.0.0.0/255.0.255.0,actions=drop", "nw_dst=10.0.0.0/255.0.255.0: not a CIDR prefix"},
      {"dl_dst=01:00:00:00:00:00/01:00:00:00:00:00,actions=drop", "Ethernet masks need NXM"},
      {"tcp,tp_dst=0x50/0xfff0,actions=drop", "tp_dst=0x50/0xfff0: masks on this field"},
      {"ipv6,actions=drop", "ipv6: IPv6 fields need OpenFlow 1.2"},
      {"tcp,nw_proto=17,actions=drop", "nw_proto: given twice"},
      {"priority=70000,actions=drop", "priority=70000: not a number 0..65535"},
      {"dl_vlan=5000,actions=drop", "a VLAN id is 0..4095"},
      {"frobnicate=1,actions=drop", "frobnicate=1: unknown field"},
      {"tcp", "actions: missing"},
      {"actions=", "actions: empty"},
      {"actions=output:1,,output:2", "an empty action"},
      {"actions=mod_nw_tos:33", "mod_nw_tos:33: not a valid TOS"},
      {"actions=output:0", "output:0: not an output port"},
      {"actions=fly:3", "fly:3: unknown action"},
      {"actions=drop,output:1", "no action may follow drop"},
      {"actions=output:1,drop", "drop must be the only action"},
      {"nw_src=1.2.3.256,actions=drop", "not an IPv4 address"},
      {"dl_src=00:11:22:33:44,actions=drop", "not a MAC address"},
      {"out_port=2,actions=drop", "out_port=2: only for deletes and filters"},
      {"actions=output:65280", "output:65280: not an output port"},  // OFPP_MAX is not a port
      {"in_port=65280,actions=drop", "not a port number 1..65279 or LOCAL"},
  };
  for (const Bad& b : bad) {
    Result<FlowSpec> f = parse_flow(b.line);
    ASSERT_FALSE(f.is_ok()) << b.line;
    EXPECT_EQ(f.status().code(), Errc::kParseError);
    EXPECT_NE(f.status().message().find(b.says), std::string::npos)
        << b.line << " -> " << f.status().message();
  }
  // A flow's statistics must fit one OpenFlow message: at most 4,000 actions.
  std::string many = "actions=output:1";
  for (int i = 0; i < 4000; ++i) many += ",output:2";
  Result<FlowSpec> too_many = parse_flow(many);
  ASSERT_FALSE(too_many.is_ok());
  EXPECT_NE(too_many.status().message().find("more than 4000 actions"), std::string::npos);
  // Filters take out_port and no actions.
  Result<FlowSpec> filter = parse_flow("out_port=2,ip", FlowText::kFilter);
  ASSERT_TRUE(filter.is_ok()) << filter.status().message();
  EXPECT_EQ(filter->out_port, 2);
  EXPECT_FALSE(parse_flow("ip,actions=drop", FlowText::kFilter).is_ok());
  EXPECT_FALSE(parse_flow("idle_timeout=5", FlowText::kFilter).is_ok());
}

TEST(FlowText, FileErrorsNameFileAndLine) {
  Result<std::vector<FlowSpec>> ok =
      parse_flow_file("# a comment\n\npriority=1,actions=drop  # trailing\nip,actions=output:2\n", "f");
  ASSERT_TRUE(ok.is_ok()) << ok.status().message();
  EXPECT_EQ(ok->size(), 2u);
  Result<std::vector<FlowSpec>> bad =
      parse_flow_file("ip,actions=drop\n\nip,nw_src=1.2.3.4/40,actions=drop\n", "flows.txt");
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("flows.txt:3: nw_src=1.2.3.4/40"), std::string::npos)
      << bad.status().message();
  Result<std::vector<FlowSpec>> empty = parse_flow_file("", "empty");
  ASSERT_TRUE(empty.is_ok());
  EXPECT_TRUE(empty->empty());
}

}  // namespace
}  // namespace warpath::openflow
