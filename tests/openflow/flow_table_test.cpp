// tests/openflow/flow_table_test.cpp: OpenFlow 1.0 flow_mod semantics, timeouts and counters
// on a fake clock (FlowTable), and the data side (FlowImage) against the reference lookup on
// random tables, keys and flow_mod sequences at every burst size. The flow_mod cases follow
// what Open vSwitch 3.1 did with the same commands (../shared/notes/openflow-ipsec.md 1.3).
#include <gtest/gtest.h>

#include <random>

#include "support/test_support.hpp"
#include "warpath/openflow/flow_lookup.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {
namespace {

constexpr uint64_t kSec = 1'000'000'000ull;

FlowSpec flow(std::string_view text, FlowText kind = FlowText::kFlow) {
  Result<FlowSpec> f = parse_flow(text, kind);
  EXPECT_TRUE(f.is_ok()) << text << ": " << f.status().message();
  return f.is_ok() ? *f : FlowSpec{};
}

FlowModResult apply(FlowTable& t, FlowModCommand c, std::string_view text, uint64_t now = 0) {
  const bool filter = c == FlowModCommand::kDelete || c == FlowModCommand::kDeleteStrict;
  return t.apply(c, flow(text, filter ? FlowText::kFilter : FlowText::kFlow), now);
}

std::vector<std::string> dump(const FlowTable& t) {
  std::vector<std::string> out;
  for (const FlowEntry* e : t.entries()) out.push_back(format_flow(e->spec));
  return out;
}

packet::OfTuple ip_key(uint32_t src, uint32_t dst, uint8_t proto = 6, uint16_t sport = 1000,
                       uint16_t dport = 80, uint16_t in_port = 1) {
  packet::OfFields f;
  f.in_port  = in_port;
  f.dl_type  = kEthIp;
  f.nw_proto = proto;
  f.nw_src   = src;
  f.nw_dst   = dst;
  f.tp_src   = sport;
  f.tp_dst   = dport;
  return packet::of_pack(f);
}

// Every flow-lookup engine against ref.flowtable (the self-test's check), and the sizes of a
// batch checked once for every engine (the non-virtual lookup).
TEST(FlowLookupEngines, EveryEngineMatchesTheReferenceAndChecksSizes) {
  std::vector<std::string> ids;
  for (const EngineInfo& e : flow_table_engines())
    if (e.available()) ids.emplace_back(e.id);
  ids.emplace_back("validate:cpu.flowtable");
  for (const std::string& id : ids) {
    const CheckReport r = check_flow_table_engine(id, 5, 20000);
    EXPECT_TRUE(r.passed()) << id << ": " << r.detail;
    FlowTable table;
    auto engine = make_flow_lookup(id, table);
    ASSERT_TRUE(engine.is_ok()) << id << ": " << engine.status().message();
    std::vector<packet::OfTuple> keys(3);
    std::vector<uint32_t> ids_out(2, 7);
    const Status s = (*engine)->lookup({keys.data(), 3}, {ids_out.data(), 2});
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id;
    EXPECT_NE(s.message().find("3 keys but 2 answers"), std::string::npos) << id << ": " << s.message();
    EXPECT_EQ(ids_out[0], 7u) << id;
  }
}

TEST(FlowTable, AddReplacesIdenticalAndResetsCounters) {
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_src=10.0.0.0/8,actions=output:1").ok());
  const FlowEntry* e = t.lookup(ip_key(0x0a000001, 1));
  ASSERT_NE(e, nullptr);
  t.account(e->id, e->order, 3, 300, 5 * kSec);
  EXPECT_EQ(t.entry(e->id)->packets, 3u);
  const uint32_t old_id = e->id;  // e points into the table: gone once the ADD replaces it
  const uint64_t v      = t.version();
  FlowModResult r  = apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_src=10.0.0.0/8,actions=output:2", 7 * kSec);
  ASSERT_TRUE(r.ok());
  EXPECT_GT(t.version(), v);
  ASSERT_EQ(t.size(), 1u);
  const FlowEntry* n = t.entries()[0];
  EXPECT_EQ(n->packets, 0u) << "OpenFlow 1.0 ADD resets counters";
  EXPECT_EQ(n->created_ns, 7 * kSec);
  EXPECT_EQ(format_actions(n->spec.actions), "output:2");
  // The old flow's late counters do not land on the new one.
  t.account(old_id, 1, 9, 900, 8 * kSec);
  EXPECT_EQ(t.entry(n->id)->packets, 0u);
  // A different priority is another flow.
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=11,ip,nw_src=10.0.0.0/8,actions=output:3").ok());
  EXPECT_EQ(t.size(), 2u);
}

TEST(FlowTable, CheckOverlapRefusesSamePriorityOverlapOnly) {
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_src=10.0.0.0/8,actions=drop").ok());
  EXPECT_EQ(apply(t, FlowModCommand::kAdd, "check_overlap,priority=10,ip,nw_dst=20.0.0.0/8,actions=drop").error,
            FlowModError::kOverlap);
  EXPECT_TRUE(apply(t, FlowModCommand::kAdd, "check_overlap,priority=11,ip,nw_dst=20.0.0.0/8,actions=drop").ok());
  EXPECT_TRUE(apply(t, FlowModCommand::kAdd, "check_overlap,priority=10,ip,nw_src=11.0.0.0/8,actions=drop").ok())
      << "disjoint";
  EXPECT_EQ(t.size(), 3u);
  EXPECT_EQ(t.entries()[0]->spec.flags, 0) << "check_overlap is not kept";
}

TEST(FlowTable, ExactMatchIsStoredAt65535AndBeatsWildcards) {
  FlowTable t;
  const char* exact =
      "priority=5,in_port=1,dl_src=00:00:00:00:00:00,dl_dst=00:00:00:00:00:00,dl_vlan=0xffff,"
      "tcp,nw_src=10.0.0.1,nw_dst=0.0.0.1,nw_tos=0,tp_src=1000,tp_dst=80,actions=output:1";
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, exact).ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=65535,ip,actions=output:2").ok());
  EXPECT_EQ(t.entries()[0]->spec.priority, 65535);
  packet::OfFields f = packet::of_unpack(ip_key(0x0a000001, 1));
  const FlowEntry* e = t.lookup(packet::of_pack(f));
  ASSERT_NE(e, nullptr);
  EXPECT_TRUE(e->spec.match.exact()) << "exact wins even over an equal-priority wildcard flow";
  // DELETE_STRICT of the exact flow needs priority 65535 too (the stored one) - or none at all,
  // since an exact match is promoted before comparing.
  EXPECT_EQ(apply(t, FlowModCommand::kDeleteStrict, std::string(exact).substr(0, std::string(exact).find(",actions"))).removed.size(), 1u);
}

TEST(FlowTable, TiesGoToTheEarliestInstalled) {
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_dst=20.0.0.0/8,actions=output:2").ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_src=10.0.0.0/8,actions=output:1").ok());
  const FlowEntry* e = t.lookup(ip_key(0x0a000001, 0x14000001));
  ASSERT_NE(e, nullptr);
  EXPECT_EQ(format_actions(e->spec.actions), "output:2");
  // MODIFY keeps the place; a replacing ADD takes a new one.
  ASSERT_TRUE(apply(t, FlowModCommand::kModifyStrict, "priority=10,ip,nw_dst=20.0.0.0/8,actions=output:3").ok());
  EXPECT_EQ(format_actions(t.lookup(ip_key(0x0a000001, 0x14000001))->spec.actions), "output:3");
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=10,ip,nw_dst=20.0.0.0/8,actions=output:4").ok());
  EXPECT_EQ(format_actions(t.lookup(ip_key(0x0a000001, 0x14000001))->spec.actions), "output:1");
}

TEST(FlowTable, ModifyIsLooseKeepsCountersAndAddsWhenNothingMatches) {
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=4,idle_timeout=9,ip,nw_src=10.0.0.0/8,actions=output:1", kSec).ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=3,ip,nw_src=10.1.0.0/16,actions=output:1", kSec).ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=3,ip,nw_src=11.0.0.0/8,actions=output:1", kSec).ok());
  const FlowEntry* e = t.lookup(ip_key(0x0a000001, 1));
  t.account(e->id, e->order, 2, 128, 2 * kSec);
  FlowModResult r = apply(t, FlowModCommand::kModify, "ip,nw_src=10.0.0.0/8,idle_timeout=50,actions=output:2", 3 * kSec);
  EXPECT_EQ(r.modified, 2u);
  EXPECT_EQ(r.added, 0u);
  const std::vector<std::string> d = dump(t);
  EXPECT_EQ(d, (std::vector<std::string>{
                   "idle_timeout=9,priority=4,ip,nw_src=10.0.0.0/8 actions=output:2",
                   "priority=3,ip,nw_src=10.1.0.0/16 actions=output:2",
                   "priority=3,ip,nw_src=11.0.0.0/8 actions=output:1"}))
      << "timeouts kept (mod-flows cannot change them)";
  EXPECT_EQ(t.entry(e->id)->packets, 2u);
  EXPECT_EQ(t.entry(e->id)->created_ns, kSec);
  // Nothing matches: OpenFlow 1.0 MODIFY adds.
  r = apply(t, FlowModCommand::kModify, "udp,tp_dst=99,actions=drop");
  EXPECT_EQ(r.added, 1u);
  EXPECT_EQ(t.size(), 4u);
  r = apply(t, FlowModCommand::kModifyStrict, "priority=3,ip,nw_src=10.0.0.0/8,actions=drop");
  EXPECT_EQ(r.added, 1u) << "strict: priority 3 is not the priority-4 flow";
  EXPECT_EQ(t.size(), 5u);
}

TEST(FlowTable, DeleteLooseStrictAndOutPort) {
  FlowTable t;
  for (const char* f : {"priority=4,ip,nw_src=10.0.0.0/8,actions=output:1",
                        "priority=3,ip,nw_src=10.1.0.0/16,actions=output:2",
                        "priority=3,ip,nw_src=10.2.0.0/16,actions=output:1,output:3",
                        "priority=2,ip,actions=output:1", "priority=1,actions=controller"})
    ASSERT_TRUE(apply(t, FlowModCommand::kAdd, f).ok());
  // The OVS check: strict without a priority means 32768, which matches nothing here.
  EXPECT_EQ(apply(t, FlowModCommand::kDeleteStrict, "ip,nw_src=10.1.0.0/16").removed.size(), 0u);
  EXPECT_EQ(apply(t, FlowModCommand::kDeleteStrict, "priority=3,ip,nw_src=10.1.0.0/16").removed.size(), 1u);
  // out_port: only flows that output there.
  FlowModResult r = apply(t, FlowModCommand::kDelete, "ip,nw_src=10.0.0.0/8,out_port=3");
  ASSERT_EQ(r.removed.size(), 1u);
  EXPECT_EQ(r.removed[0].entry.spec.priority, 3);
  EXPECT_EQ(r.removed[0].reason, RemovedReason::kDelete);
  // Loose: the covered ones whatever their priority; `ip` does not cover the match-all flow.
  r = apply(t, FlowModCommand::kDelete, "ip");
  EXPECT_EQ(r.removed.size(), 2u);
  EXPECT_EQ(dump(t), (std::vector<std::string>{"priority=1 actions=controller:65535"}));
  EXPECT_EQ(apply(t, FlowModCommand::kDelete, "").removed.size(), 1u);
  EXPECT_EQ(t.size(), 0u);
}

TEST(FlowTable, TimeoutsOnAFakeClock) {
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=1,hard_timeout=10,send_flow_rem,ip,nw_src=1.0.0.0/8,actions=drop", 100 * kSec).ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=1,idle_timeout=5,ip,nw_src=2.0.0.0/8,actions=drop", 100 * kSec).ok());
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "priority=1,idle_timeout=5,hard_timeout=7,ip,nw_src=3.0.0.0/8,actions=drop", 100 * kSec).ok());
  EXPECT_TRUE(t.expire(104 * kSec).empty());
  // Traffic keeps the idle ones alive.
  for (uint32_t a : {0x02000001u, 0x03000001u}) {
    const FlowEntry* e = t.lookup(ip_key(a, 1));
    t.account(e->id, e->order, 1, 60, 104 * kSec);
  }
  EXPECT_TRUE(t.expire(108 * kSec).empty() == false);  // 3.0.0.0/8: hard 7 s ran out first
  std::vector<RemovedFlow> r = t.expire(109 * kSec - 1);
  EXPECT_TRUE(r.empty());
  r = t.expire(109 * kSec);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].reason, RemovedReason::kIdleTimeout);
  EXPECT_EQ(r[0].entry.packets, 1u);
  r = t.expire(110 * kSec);
  ASSERT_EQ(r.size(), 1u);
  EXPECT_EQ(r[0].reason, RemovedReason::kHardTimeout);
  EXPECT_EQ(r[0].entry.spec.flags & kSendFlowRem, kSendFlowRem);
  EXPECT_EQ(t.size(), 0u);
}

TEST(FlowTable, EmergencyCapacityAndBadCommands) {
  FlowTable t(2);
  FlowSpec e = flow("ip,actions=drop");
  e.flags    = kEmergency;
  EXPECT_EQ(t.apply(FlowModCommand::kAdd, e, 0).error, FlowModError::kAllTablesFull);
  e.idle_timeout = 3;
  EXPECT_EQ(t.apply(FlowModCommand::kAdd, e, 0).error, FlowModError::kBadEmergTimeout);
  EXPECT_TRUE(apply(t, FlowModCommand::kAdd, "priority=1,actions=drop").ok());
  EXPECT_TRUE(apply(t, FlowModCommand::kAdd, "priority=2,actions=drop").ok());
  EXPECT_EQ(apply(t, FlowModCommand::kAdd, "priority=3,actions=drop").error, FlowModError::kAllTablesFull);
  EXPECT_TRUE(apply(t, FlowModCommand::kAdd, "priority=2,actions=output:1").ok()) << "a replacement fits";
  EXPECT_EQ(t.apply(FlowModCommand(9), FlowSpec{}, 0).error, FlowModError::kBadCommand);
}

TEST(FlowImage, CompilesActionsAndRefusesRewritesBetweenOutputs) {
  std::vector<Action> rw;
  Result<ActionProgram> p = compile_actions(
      flow("actions=mod_dl_dst:00:00:00:00:00:01,output:2,output:4,in_port,controller:64,output:9").actions, 4, rw);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->rewrites, 1);
  EXPECT_EQ(p->ports, 0b1010u);
  EXPECT_EQ(p->special, kToInPort | kToController | kNoSuchPort);
  EXPECT_EQ(p->max_len, 64);
  // Rewrites after the last output change nothing and are dropped.
  rw.clear();
  p = compile_actions(flow("actions=output:1,mod_nw_tos:4").actions, 4, rw);
  ASSERT_TRUE(p.is_ok());
  EXPECT_EQ(p->rewrites, 0);
  Result<ActionProgram> bad = compile_actions(flow("actions=output:1,strip_vlan,output:2").actions, 4, rw);
  ASSERT_FALSE(bad.is_ok());
  EXPECT_NE(bad.status().message().find("headers change between two outputs"), std::string::npos);
  FlowTable t;
  ASSERT_TRUE(apply(t, FlowModCommand::kAdd, "actions=output:1,strip_vlan,output:2").ok());
  EXPECT_FALSE(FlowImage::build(t, 4).is_ok());
  EXPECT_FALSE(FlowImage::build(FlowTable(), 65).is_ok());
}

using Pools = detail::FlowPools;

// Returns how many keys hit a flow (so the tests can check they are not all misses).
size_t expect_same_as_reference(const FlowTable& t, Pools& pools, const char* what) {
  Result<std::shared_ptr<const FlowImage>> img = FlowImage::build(t, 4);
  EXPECT_TRUE(img.is_ok()) << img.status().message();
  if (!img.is_ok()) return 0;
  size_t hits = 0;
  for (uint32_t n : testing::burst_sizes()) {
    std::vector<packet::OfTuple> keys(n);
    for (auto& k : keys) k = pools.key();
    std::vector<uint32_t> ids(n, 12345);
    (*img)->lookup({keys.data(), n}, {ids.data(), n});
    // Every instruction set this CPU has gives the same ids (the reference is checked below).
    for (FlowImage::LookupIsa isa : {FlowImage::LookupIsa::kSse2, FlowImage::LookupIsa::kAvx512}) {
      if (!FlowImage::has_isa(isa)) continue;
      std::vector<uint32_t> other(n, 12345);
      (*img)->lookup({keys.data(), n}, {other.data(), n}, isa);
      EXPECT_EQ(other, ids) << what << ", burst " << n << ", isa " << int(isa);
    }
    for (uint32_t i = 0; i < n; ++i) {
      const FlowEntry* e = t.lookup(keys[i]);
      const uint32_t want = e ? e->id : kNoFlow;
      hits += e != nullptr;
      if (ids[i] != want) ADD_FAILURE() << what << ", burst " << n << ", key " << i << " of a table of "
                              << t.size() << " flows; reference "
                              << (e ? format_flow(e->spec) : std::string("miss")) << ", image "
                              << (ids[i] == kNoFlow || !t.entry(ids[i]) ? std::string("miss")
                                                                        : format_flow(t.entry(ids[i])->spec));
      if (n == 1) EXPECT_EQ((*img)->lookup_one(keys[i]), want);
    }
  }
  return hits;
}

TEST(FlowImage, MatchesTheReferenceOnRandomTables) {
  Pools pools(7);
  size_t hits = 0, keys = 0;
  for (int round = 0; round < 30; ++round) {
    FlowTable t;
    const int flows = std::uniform_int_distribution<int>(0, 120)(pools.rng);
    for (int i = 0; i < flows; ++i) t.apply(FlowModCommand::kAdd, pools.flow(pools.coin(15)), 0);
    hits += expect_same_as_reference(t, pools, "random table");
    for (uint32_t n : testing::burst_sizes()) keys += n;
  }
  EXPECT_GT(hits, keys / 4) << "the pools make hits frequent";
  EXPECT_LT(hits, keys) << "and misses happen";
}

TEST(FlowImage, MatchesTheReferenceThroughRandomFlowMods) {
  Pools pools(11);
  FlowTable t;
  for (int step = 0; step < 300; ++step) {
    const FlowModCommand c = FlowModCommand(std::uniform_int_distribution<int>(0, 4)(pools.rng));
    FlowSpec s             = pools.flow(pools.coin(10));
    if (c == FlowModCommand::kDelete || c == FlowModCommand::kDeleteStrict) {
      s.actions.clear();
      if (pools.coin(30)) s.out_port = uint16_t(std::uniform_int_distribution<int>(1, 4)(pools.rng));
    }
    const size_t before    = t.size();
    const FlowModResult r  = t.apply(c, s, uint64_t(step) * kSec);
    ASSERT_TRUE(r.ok());
    EXPECT_EQ(t.size(), before + r.added - r.removed.size() -
                            (c == FlowModCommand::kAdd && r.added && before + 1 != t.size() ? 1 : 0));
    if (step % 10 == 0) expect_same_as_reference(t, pools, "after flow_mods");
  }
  expect_same_as_reference(t, pools, "at the end");
}

}  // namespace
}  // namespace warpath::openflow

namespace warpath::openflow {
namespace {

// The module publishes with FlowImage::publish: flows added, removed or modified go into an
// incremental image; too many changes rebuild. Whatever it chose, its answers must be the
// reference's after every flow_mod, and the programs of the flows it answers theirs.
// `exact_percent` of the flow_mods name exact flows (a reactive controller's microflows); the
// rest name wildcard flows from small pools, so equal matches at several priorities, flows
// shadowing each other and subtables emptied and refilled all occur.
struct ChurnCounts {
  size_t incremental = 0, full = 0, exact_hits = 0, wild_hits = 0;
};
ChurnCounts churn(uint64_t seed, unsigned exact_percent) {
  detail::FlowPools pools(seed);
  FlowTable t;
  std::shared_ptr<const FlowImage> img;
  ChurnCounts n;
  std::vector<packet::OfTuple> exact_keys;  // of every exact flow ever added: hit, or removed
  for (int step = 0; step < 400; ++step) {
    FlowSpec s        = pools.flow(pools.coin(exact_percent));
    FlowModCommand c  = FlowModCommand::kAdd;
    const unsigned r  = unsigned(pools.rng() % 100);
    if (r < 30) c = FlowModCommand::kDeleteStrict;
    else if (r < 34) c = FlowModCommand::kDelete;
    else if (r < 40) c = FlowModCommand::kModifyStrict;
    else if (r < 43) c = FlowModCommand::kModify;
    if (c == FlowModCommand::kDelete || c == FlowModCommand::kDeleteStrict) s.actions.clear();
    if (c != FlowModCommand::kDelete && c != FlowModCommand::kDeleteStrict && pools.coin(20)) {
      // a rewrite, so late rewrites are used (by added and by modified flows)
      Action a;
      a.type  = ActionType::kSetNwTos;
      a.value = 32;
      s.actions.insert(s.actions.begin(), a);
    }
    EXPECT_TRUE(t.apply(c, s, uint64_t(step)).ok());
    if (s.match.exact()) exact_keys.push_back(s.match.value());
    Result<std::shared_ptr<const FlowImage>> next = FlowImage::publish(img, t, 4);
    EXPECT_TRUE(next.is_ok()) << next.status().message();
    if (!next.is_ok()) return n;
    img = *next;
    (img->incremental() ? n.incremental : n.full) += 1;
    EXPECT_EQ(img->flows(), t.size());
    // Batches of 0, 1, around the lookup's chunk of 64 and larger.
    static constexpr size_t kSizes[] = {300, 0, 1, 63, 64, 65, 129, 500};
    std::vector<packet::OfTuple> keys(kSizes[step % 8]);
    for (auto& k : keys)
      k = !exact_keys.empty() && pools.coin(50) ? exact_keys[pools.rng() % exact_keys.size()] : pools.key();
    std::vector<uint32_t> ids(keys.size()), sse2(keys.size());
    img->lookup({keys.data(), uint32_t(keys.size())}, {ids.data(), uint32_t(ids.size())});
    img->lookup({keys.data(), uint32_t(keys.size())}, {sse2.data(), uint32_t(sse2.size())},
                FlowImage::LookupIsa::kSse2);
    EXPECT_EQ(sse2, ids) << "step " << step << ": SSE2 and the picked instruction set differ";
    for (size_t i = 0; i < keys.size(); ++i) {
      const FlowEntry* e = t.lookup(keys[i]);
      (e && e->spec.match.exact() ? n.exact_hits : n.wild_hits) += e != nullptr;
      EXPECT_EQ(ids[i], e ? e->id : kNoFlow) << "step " << step << ", key " << i
                                             << (img->incremental() ? " (incremental)" : " (full)");
      if (!e || ids[i] != e->id) {
        if (::testing::Test::HasFailure()) return n;
        continue;
      }
      const ActionProgram& p = img->program(ids[i]);
      EXPECT_EQ(p.order, e->order) << "the program is the flow's";
      std::vector<Action> rw;
      const ActionProgram want = compile_actions(e->spec.actions, 4, rw).value();
      EXPECT_EQ(p.rewrites, want.rewrites);
      EXPECT_EQ(p.ports, want.ports);
      EXPECT_EQ(p.special & ~kLateRewrites, want.special) << "a drop flow stays a drop flow";
      for (uint32_t k = 0; k < p.rewrites && k < rw.size(); ++k) EXPECT_TRUE(img->rewrites(p)[k] == rw[k]);
      if (::testing::Test::HasFailure()) return n;
    }
  }
  return n;
}

TEST(FlowImage, PublishedImagesMatchTheReferenceThroughExactChurn) {
  const ChurnCounts n = churn(21, 92);
  EXPECT_GT(n.incremental, 300u) << "exact churn publishes incrementally";
  EXPECT_GT(n.exact_hits, 5000u);
  EXPECT_GT(n.wild_hits, 500u);
}

TEST(FlowImage, PublishedImagesMatchTheReferenceThroughWildcardChurn) {
  for (uint64_t seed : {3, 4, 5}) {
    const ChurnCounts n = churn(seed, 10);
    ASSERT_FALSE(::testing::Test::HasFailure()) << "seed " << seed;
    EXPECT_GT(n.incremental, 300u) << "wildcard churn publishes incrementally";
    EXPECT_GT(n.wild_hits, 10000u);
  }
}

// Thousands of distinct wildcard and exact flows added and deleted, an image published every
// few flow_mods: a mask's recent table passes its merge size (512) and is merged into the
// override table again and again before the changes force a full image. Checked against the
// reference on keys of live flows, of removed flows and random ones.
TEST(FlowImage, LongChurnMergesRecentTablesAndStaysExact) {
  std::mt19937_64 rng(99);
  FlowTable t;
  std::shared_ptr<const FlowImage> img;
  const uint32_t wcs[3] = {kWcAll & ~(kWcDlType | kWcNwProto | kWcTpDst) & ~kWcNwSrcMask,  // nw_src exact
                           kWcAll & ~(kWcDlType | kWcNwProto) & ~kWcNwDstMask | 8u << kWcNwDstShift,
                           0};  // exact
  auto make = [&]() {
    packet::OfFields f;
    f.in_port  = uint16_t(1 + rng() % 4);
    f.dl_vlan  = packet::kOfNoVlan;
    f.dl_type  = kEthIp;
    f.nw_proto = 6;
    f.nw_src   = uint32_t(rng() % 3000);
    f.nw_dst   = uint32_t(rng() % 3000) << 8;
    f.tp_dst   = uint16_t(rng() % 2);
    FlowSpec s;
    s.match    = make_match(f, wcs[rng() % 3]);
    s.priority = uint16_t(1 + rng() % 3);
    s.actions.assign(1, Action{});
    s.actions[0].port = uint16_t(1 + rng() % 4);
    return s;
  };
  std::vector<FlowSpec> live;
  for (int i = 0; i < 600; ++i) {
    live.push_back(make());
    t.apply(FlowModCommand::kAdd, live.back(), 0);
  }
  size_t incremental = 0, full = 0, merged_checks = 0;
  for (int step = 0; step < 9000; ++step) {
    const size_t victim = rng() % live.size();
    FlowSpec del        = live[victim];
    del.actions.clear();
    t.apply(FlowModCommand::kDeleteStrict, del, 0);
    live[victim] = make();
    t.apply(FlowModCommand::kAdd, live[victim], 0);
    if (step % 7) continue;
    img = FlowImage::publish(img, t, 4).value();
    (img->incremental() ? incremental : full) += 1;
    std::vector<packet::OfTuple> keys;
    for (int i = 0; i < 40; ++i) {
      packet::OfTuple k = (i % 2 ? live[rng() % live.size()] : make()).match.value();
      keys.push_back(k);
    }
    std::vector<uint32_t> ids(keys.size());
    img->lookup({keys.data(), uint32_t(keys.size())}, {ids.data(), uint32_t(ids.size())});
    for (size_t i = 0; i < keys.size(); ++i) {
      const FlowEntry* e = t.lookup(keys[i]);
      ASSERT_EQ(ids[i], e ? e->id : kNoFlow) << "step " << step << ", key " << i
                                             << (img->incremental() ? " (incremental)" : " (full)");
      merged_checks += img->incremental();
    }
  }
  EXPECT_GT(incremental, 1000u);
  EXPECT_GE(full, 3u) << "the changes passed 4,096 several times";
  EXPECT_GT(merged_checks, 40000u);
}

// New actions for a flow some published image answers with go into the next image's patch:
// it is incremental, answers with the new program, and the image published before it still
// answers with the old one (a program is never rewritten under a reader).
TEST(FlowImage, ModifiedActionsArePatchedIncrementally) {
  detail::FlowPools pools(8);
  FlowTable t;
  FlowSpec s = pools.flow(false);
  s.actions.assign(1, Action{});
  s.actions[0].port = 1;
  ASSERT_TRUE(t.apply(FlowModCommand::kAdd, s, 0).ok());
  std::shared_ptr<const FlowImage> img = FlowImage::publish(nullptr, t, 4).value();
  FlowSpec other = pools.flow(false);
  other.priority = uint16_t(s.priority + 1);
  ASSERT_TRUE(t.apply(FlowModCommand::kAdd, other, 1).ok());
  img = FlowImage::publish(img, t, 4).value();
  EXPECT_TRUE(img->incremental());
  const std::shared_ptr<const FlowImage> before = img;
  FlowSpec mod = s;
  mod.actions[0].port = 3;
  Action tos;
  tos.type  = ActionType::kSetNwTos;
  tos.value = 64;
  mod.actions.insert(mod.actions.begin(), tos);
  ASSERT_EQ(t.apply(FlowModCommand::kModifyStrict, mod, 2).modified, 1u);
  img = FlowImage::publish(img, t, 4).value();
  EXPECT_TRUE(img->incremental());
  const FlowEntry* modified = nullptr;
  for (const FlowEntry* e : t.entries())
    if (e->spec.match == s.match && e->spec.priority == s.priority) modified = e;
  ASSERT_NE(modified, nullptr);
  const ActionProgram& now = img->program(modified->id);
  EXPECT_EQ(now.ports, uint64_t(1) << 2) << "output:3, as modified";
  ASSERT_EQ(now.rewrites, 1u);
  EXPECT_TRUE(img->rewrites(now)[0] == tos);
  EXPECT_EQ(now.order, modified->order) << "MODIFY keeps the flow's place and counters";
  EXPECT_EQ(before->program(modified->id).ports, 1u) << "the published image is untouched";
  EXPECT_EQ(before->program(modified->id).rewrites, 0u);
  // Modified again, then other changes: the patch carries the latest actions along.
  mod.actions.assign(1, Action{});
  mod.actions[0].port = 2;
  ASSERT_EQ(t.apply(FlowModCommand::kModify, mod, 3).modified, 1u);
  img = FlowImage::publish(img, t, 4).value();
  ASSERT_TRUE(t.apply(FlowModCommand::kDeleteStrict, other, 4).removed.size() == 1);
  img = FlowImage::publish(img, t, 4).value();
  EXPECT_TRUE(img->incremental());
  EXPECT_EQ(img->program(modified->id).ports, uint64_t(1) << 1);
  EXPECT_EQ(img->program(modified->id).rewrites, 0u);
  // A full image has no patch and the same programs.
  const std::shared_ptr<const FlowImage> full = FlowImage::build(t, 4).value();
  EXPECT_EQ(full->program(modified->id).ports, img->program(modified->id).ports);
}

}  // namespace
}  // namespace warpath::openflow

namespace warpath::openflow {
namespace {

TEST(FlowTable, IdsStayBelowTheCapacityAndTheLogIsBounded) {
  FlowTable t(8);
  detail::FlowPools pools(5);
  std::shared_ptr<const FlowImage> img;
  bool forced = false;
  for (int step = 0; step < 2000; ++step) {
    FlowSpec s = pools.flow(true);
    s.match.f.tp_src = uint16_t(step);  // every flow a new exact match
    s.match          = make_match(s.match.f, 0);
    if (t.size() >= 6) {  // delete one, add one: churn at the capacity
      const FlowEntry* e = t.entries().front();
      ASSERT_EQ(t.apply(FlowModCommand::kDeleteStrict, e->spec, 0).removed.size(), 1u);
    }
    ASSERT_TRUE(t.apply(FlowModCommand::kAdd, s, 0).ok());
    ASSERT_LE(t.id_limit(), 8u) << "ids never pass the capacity (the workers' counters are sized by it)";
    forced |= t.needs_full();
    Result<std::shared_ptr<const FlowImage>> next = FlowImage::publish(img, t, 4);
    ASSERT_TRUE(next.is_ok());
    img = *next;
    packet::OfTuple k = s.match.value();
    ASSERT_EQ(img->lookup_one(k), t.lookup(k)->id) << "step " << step;
  }
  EXPECT_TRUE(forced) << "reusing a retired id forces a full image";
  // A table nobody publishes keeps a bounded log and asks for a full image.
  FlowTable big;
  for (uint32_t i = 0; i < FlowTable::kMaxChanges + 10; ++i) {
    FlowSpec s = pools.flow(true);
    s.match.f.nw_src = i;
    s.match          = make_match(s.match.f, 0);
    big.apply(FlowModCommand::kAdd, s, 0);
  }
  EXPECT_TRUE(big.needs_full());
  EXPECT_LE(big.changes().size(), FlowTable::kMaxChanges);
  big.rebuilt();
  EXPECT_FALSE(big.needs_full());
  EXPECT_TRUE(big.changes().empty());
}

}  // namespace
}  // namespace warpath::openflow
