// tests/runtime/chain_test.cpp: chains of modules (chain.hpp, module.hpp).
//  - the one-line form: parse, format round trip, errors with their column;
//  - build errors: unknown module or argument, bad values, a module that reads what nothing
//    before it sets, when= a context nothing tags, each with its message;
//  - chains of 2-3 modules, context keys splitting the batch, against the same chain run packet
//    by packet (frames of one) on the reference engines (ref.linear, ref.lpm), at batch sizes
//    0, 1, the lane edges and large, shaded on the CPU engines and on the offload place (the
//    master's engines, offload_device=cpu here; cuda in the self-test on a GPU).
#include "warpath/runtime/chain.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <map>
#include <set>
#include <string>
#include <vector>

#include "warpath/classify/check.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/packet/parser.hpp"
#include "runtime/core/schedule_key.hpp"
#include "warpath/modules/chain_check.hpp"

namespace warpath::runtime {
namespace {

using Bytes = std::vector<uint8_t>;

std::vector<ModuleSpec> parse(std::string_view text) {
  auto r = parse_chain(text);
  EXPECT_TRUE(r.is_ok()) << text << ": " << r.status().message();
  return r.is_ok() ? *r : std::vector<ModuleSpec>{};
}

std::string parse_error(std::string_view text) {
  auto r = parse_chain(text);
  EXPECT_FALSE(r.is_ok()) << text;
  return r.is_ok() ? std::string() : r.status().message();
}

TEST(ChainText, ParsesModulesAndArguments) {
  auto s = parse(R"(acl(rules=fw.rules, default = permit) -> router ->wire())");
  ASSERT_EQ(s.size(), 3u);
  EXPECT_EQ(s[0].kind, "acl");
  ASSERT_EQ(s[0].args.size(), 2u);
  EXPECT_EQ(s[0].args[0], (std::pair<std::string, std::string>{"rules", "fw.rules"}));
  EXPECT_EQ(s[0].args[1], (std::pair<std::string, std::string>{"default", "permit"}));
  EXPECT_EQ(s[1].kind, "router");
  EXPECT_TRUE(s[1].args.empty());
  EXPECT_EQ(s[2].kind, "wire");
  // Quoted values keep ',', ')' and spaces; paths with '/' and '.' need no quotes.
  auto q = parse(R"x(acl(rules="my rules, v2).txt", when=a|b) -> router(fib=/data/t-1.fib))x");
  ASSERT_EQ(q.size(), 2u);
  EXPECT_EQ(q[0].args[0].second, "my rules, v2).txt");
  EXPECT_EQ(q[0].args[1].second, "a|b");
  EXPECT_EQ(q[1].args[0].second, "/data/t-1.fib");
}

TEST(ChainText, FormatReadsBack) {
  for (const char* text : {"acl", "acl -> router", "acl(rules=a b.txt, match=goto:x) -> router",
                           R"x(ttl-filter(min=5, when=x|y) -> wire(when="q,)"))x"}) {
    auto s = parse(text);
    auto t = parse(format_chain(s));
    ASSERT_EQ(s.size(), t.size()) << text << " -> " << format_chain(s);
    for (size_t i = 0; i < s.size(); ++i) {
      EXPECT_EQ(s[i].kind, t[i].kind) << format_chain(s);
      EXPECT_EQ(s[i].args, t[i].args) << format_chain(s);
    }
  }
  EXPECT_EQ(format_chain(parse("acl ->  router( )")), "acl -> router");
}

TEST(ChainText, PresetLeavesOutOnlyThePreloadedTables) {
  RunConfig c;
  c.app = "router+acl";
  c.set_setting("acl.rules", "fw.rules");
  c.set_setting("router.fib", "t.fib");
  c.set_setting("router.neighbors", "n.txt");
  auto arg = [](const std::vector<ModuleSpec>& specs, const std::string& kind,
                const std::string& name) {
    for (const ModuleSpec& m : specs)
      if (m.kind == kind)
        for (const auto& [k, v] : m.args)
          if (k == name) return v;
    return std::string("(absent)");
  };
  auto none = preset_chain(c, TableSource{});
  EXPECT_EQ(arg(none, "acl", "rules"), "fw.rules");
  EXPECT_EQ(arg(none, "router", "fib"), "t.fib");
  EXPECT_EQ(arg(none, "router", "neighbors"), "n.txt");
  // The FIB passed in, the rules and neighbours still read from their files.
  const lookup::RouteTable fib;  // its contents do not matter to the chain text
  const forward::RouterConfig neighbors;
  const classify::RuleSet rules;
  TableSource given;
  given.preload("router.fib", &fib);
  auto fib_only = preset_chain(c, given);
  EXPECT_EQ(arg(fib_only, "router", "fib"), "(absent)");
  EXPECT_EQ(arg(fib_only, "router", "neighbors"), "n.txt");
  EXPECT_EQ(arg(fib_only, "acl", "rules"), "fw.rules");
  given.preload("router.neighbors", &neighbors);
  given.preload("acl.rules", &rules);
  auto all = preset_chain(c, given);
  EXPECT_EQ(arg(all, "acl", "rules"), "(absent)");
  EXPECT_EQ(arg(all, "router", "neighbors"), "(absent)");
}

TEST(TableSource, PreloadedTablesAreFoundByKeyAndType) {
  const lookup::RouteTable fib;
  const classify::RuleSet rules, other_rules;
  TableSource t;
  EXPECT_EQ(t.preloaded<lookup::RouteTable>("router.fib"), nullptr);
  t.preload("router.fib", &fib);
  t.preload("acl.rules", &rules);
  EXPECT_EQ(t.preloaded<lookup::RouteTable>("router.fib"), &fib);
  EXPECT_EQ(t.preloaded<classify::RuleSet>("router.fib"), nullptr);  // another type
  EXPECT_EQ(t.preloaded<classify::RuleSet>("acl.rules"), &rules);
  EXPECT_TRUE(t.has_preloaded("acl.rules"));
  EXPECT_FALSE(t.has_preloaded("router.neighbors"));
  t.preload("acl.rules", &other_rules);  // replaces
  EXPECT_EQ(t.preloaded<classify::RuleSet>("acl.rules"), &other_rules);
  // A chain takes them only where its environment says so (presets; a chain's modules load
  // what their arguments name).
  BuildEnv env;
  env.tables = &t;
  EXPECT_EQ(env.preloaded<lookup::RouteTable>("router.fib"), nullptr);
  env.use_preloaded = true;
  EXPECT_EQ(env.preloaded<lookup::RouteTable>("router.fib"), &fib);
}

TEST(ChainText, ErrorsNameTheColumn) {
  EXPECT_EQ(parse_error(""), "chain: column 1: expected a module name");
  EXPECT_EQ(parse_error("acl -> "), "chain: column 8: expected a module name");
  EXPECT_EQ(parse_error("acl router"), "chain: column 5: expected '->' or the end of the chain");
  EXPECT_NE(parse_error("acl(rules)").find("column 10"), std::string::npos);
  EXPECT_NE(parse_error("acl(rules=x").find("column 12"), std::string::npos);
  EXPECT_NE(parse_error(R"x(acl(rules="x))x").find("unterminated"), std::string::npos);
  EXPECT_NE(parse_error("acl(=x)").find("expected an argument name"), std::string::npos);
}

// ---- building ----------------------------------------------------------------------------

struct Tables {
  lookup::RouteTable fib;
  forward::RouterConfig neighbors;
  classify::RuleSet rules;
  TableSource source;
  Tables() {
    fib = lookup::random_route_table(7, 3000, 800);
    fib.v4.push_back({0, 0, 1});  // a default route, so most packets are routed
    neighbors = forward::default_neighbors(fib, 4);
    rules     = classify::random_rule_set(11, classify::KeyLayout::kFiveTuple, 300);
    // Every third rule sends its packets to the context "inspect", every seventh denies;
    // the rest take the chain's match action.
    for (size_t i = 0; i < rules.rules.size(); ++i) {
      if (i % 3 == 0) rules.rules[i].action = "goto:inspect";
      else if (i % 7 == 0) rules.rules[i].action = "deny";
    }
    // Random rules seldom match generated traffic: three broad rules above them that do.
    auto broad = [&](uint8_t proto, uint32_t src_mask, uint32_t src_value, const char* action) {
      classify::Rule r;
      r.value[3] = proto;
      r.mask[3]  = 0xFF;
      r.value[0] = src_value;
      r.mask[0]  = src_mask;
      r.priority = 0xFFFF'FFF0u - uint32_t(rules.rules.size());
      r.action   = action;
      rules.rules.push_back(r);
    };
    broad(6, 1, 0, "goto:inspect");   // TCP from even addresses
    broad(17, 1, 1, "deny");          // UDP from odd addresses
    broad(17, 2, 0, "goto:inspect");  // the rest of UDP, half of it
    source.preload("router.fib", &fib);
    source.preload("router.neighbors", &neighbors);
    source.preload("acl.rules", &rules);
  }
  BuildEnv env(bool offload = false) const {
    BuildEnv e;
    e.port_count     = 4;
    e.offload        = offload;
    e.offload_device = "cpu";
    e.tables         = &source;
    e.use_preloaded  = true;
    return e;
  }
};

const Tables& tables() {
  static const Tables t;
  return t;
}

std::string build_error(std::string_view text) {
  auto specs = parse_chain(text);
  if (!specs.is_ok()) return "parse: " + specs.status().message();
  auto c = Chain::build(*specs, tables().env());
  EXPECT_FALSE(c.is_ok()) << text;
  return c.is_ok() ? std::string() : c.status().message();
}

TEST(ChainBuild, ErrorsNamePositionArgumentAndReason) {
#if defined(WARPATH_HAVE_NIDS)  // the nids module is built where PCRE2 is
  EXPECT_EQ(build_error("acl -> nosuch"),
            "chain position 2: unknown module 'nosuch' (known: acl, defrag, esp-in, esp-out, flow, "
            "flow-aes, l7, match, nids, router, stream, switch, ttl-filter, wire)");
#else
  EXPECT_EQ(build_error("acl -> nosuch"),
            "chain position 2: unknown module 'nosuch' (known: acl, defrag, esp-in, esp-out, flow, flow-aes, match, router, stream, switch, ttl-filter, wire)");
#endif
  EXPECT_EQ(build_error("acl -> router(fibb=x)"),
            "chain position 2 (router): unknown argument 'fibb' (known: fib, neighbors, lookup, mac_check, "
            "when)");
  EXPECT_EQ(build_error("ttl-filter(min=1, min=2)"),
            "chain position 1 (ttl-filter): argument 'min' given twice");
  EXPECT_EQ(build_error("ttl-filter(min=256)"),
            "chain position 1 (ttl-filter): min=256: expected an integer 0..255");
  EXPECT_EQ(build_error("ttl-filter(min=ten)"),
            "chain position 1 (ttl-filter): min=ten: expected an integer 0..255");
  EXPECT_EQ(build_error("acl(algo=fast)"),
            "chain position 1 (acl): algo=fast: must be one of linear, tuple, bloom, rfc, tic, "
            "split, tuplemerge, overlay, auto, ref");
  EXPECT_EQ(build_error("acl(malformed=maybe)"),
            "chain position 1 (acl): malformed=maybe: must be drop or continue");
  EXPECT_NE(build_error("acl(default=output:9)").find("output:9"), std::string::npos);
  EXPECT_NE(build_error("acl(default=jump)").find("chain position 1 (acl): default="),
            std::string::npos);
  EXPECT_EQ(build_error("router -> wire(when=inspect)"),
            "chain position 2 (wire): when=inspect: no module before it tags packets with "
            "context 'inspect'");
  EXPECT_EQ(build_error("wire(when=inspect) -> acl"),
            "chain position 1 (wire): when=inspect: no module before it tags packets with "
            "context 'inspect'");
  EXPECT_EQ(build_error("acl -> wire(when=inspect|)"),
            "chain position 2 (wire): when=inspect|: empty context name");
  EXPECT_NE(build_error("router(lookup=cpu.nosuch)").find("chain position 1 (router)"),
            std::string::npos);
  // Files need a loader: a Chain built without one says so.
  EXPECT_EQ(build_error("router(fib=t.fib)"),
            "chain position 1 (router): fib=t.fib: this program cannot load route files");
  auto none = Chain::build({}, tables().env());
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().message(), "chain: no modules");
}

// A module that reads the flow id, which only a flow tracker sets: the contract check.
class FlowReader final : public Module {
 public:
  std::string_view kind() const noexcept override { return "test-flow-reader"; }
  ModuleContract contract() const override {
    return {field_bit(Field::kFlow) | field_bit(Field::kParse), field_bit(Field::kVerdict), {}};
  }
  void post(Frame&, ModuleSlot*, const Selection&) const override {}
};

TEST(ChainBuild, ReadingWhatNothingSetsIsAnError) {
  ModuleInfo info;
  info.kind  = "test-flow-reader";
  info.contract = FlowReader().contract();
  info.make  = [](const ModuleArgs&, BuildEnv&) -> Result<std::unique_ptr<Module>> {
    return std::unique_ptr<Module>(std::make_unique<FlowReader>());
  };
  const Status first = register_module_kind(info);
  // (other tests of this binary may have registered it already)
  EXPECT_TRUE(first.is_ok() || first.message().find("taken") != std::string::npos);
  EXPECT_FALSE(register_module_kind(info).is_ok());
  ModuleInfo nameless = info;
  nameless.kind       = "";
  EXPECT_FALSE(register_module_kind(nameless).is_ok());
  EXPECT_EQ(build_error("acl -> test-flow-reader"),
            "chain position 2 (test-flow-reader): reads flow, which no module before it sets");
  EXPECT_NE(find_module_kind("test-flow-reader"), nullptr);
  EXPECT_EQ(find_module_kind("nosuch"), nullptr);
}

// A module whose contract() promises more than its kind declares: a side queue it produces
// and a field it sets that ModuleInfo does not name.
class Overreacher final : public Module {
 public:
  std::string_view kind() const noexcept override { return "test-overreacher"; }
  ModuleContract contract() const override {
    return {field_bit(Field::kParse), field_bit(Field::kVerdict) | field_bit(Field::kBytes), {},
            {"test-queue"}, {}, {}};
  }
  void post(Frame&, ModuleSlot*, const Selection&) const override {}
};

// A consumer of the overreacher's queue, declared as such.
class QueueReader final : public Module {
 public:
  std::string_view kind() const noexcept override { return "test-queue-reader"; }
  ModuleContract contract() const override {
    return {field_bit(Field::kParse), 0, {}, {}, {"test-queue"}, {}};
  }
  void post(Frame&, ModuleSlot*, const Selection&) const override {}
};

TEST(ChainBuild, ContractsAreDeclaredOnceAndSideQueuesChecked) {
  ModuleInfo over;
  over.kind           = "test-overreacher";
  over.contract.reads = field_bit(Field::kParse);
  over.contract.sets  = field_bit(Field::kVerdict);
  over.make           = [](const ModuleArgs&, BuildEnv&) -> Result<std::unique_ptr<Module>> {
    return std::unique_ptr<Module>(std::make_unique<Overreacher>());
  };
  (void)register_module_kind(over);  // (a repeat of the test finds it registered)
  EXPECT_EQ(build_error("test-overreacher"),
            "chain position 1 (test-overreacher): its contract() sets bytes; produces test-queue, "
            "beyond its kind's declared contract (ModuleInfo)");
  ModuleInfo reader;
  reader.kind     = "test-queue-reader";
  reader.contract = QueueReader().contract();
  reader.make     = [](const ModuleArgs&, BuildEnv&) -> Result<std::unique_ptr<Module>> {
    return std::unique_ptr<Module>(std::make_unique<QueueReader>());
  };
  (void)register_module_kind(reader);
  // Nothing before it produces the queue, and no kind declares it: named in the error.
  EXPECT_EQ(build_error("acl -> test-queue-reader"),
            "chain position 2 (test-queue-reader): needs a module producing 'test-queue' before "
            "it (e.g. producer -> test-queue-reader): it consumes 'test-queue'");
  // The built-in consumers: l7 and stream need flows (flow produces them), match may read
  // flows and streams; every built-in kind's contract is what `warpath modules` prints.
  EXPECT_EQ(build_error("stream -> wire"),
            "chain position 1 (stream): needs a flow module before it (e.g. flow -> stream): it "
            "consumes 'flows'");
  const ModuleInfo* stream = find_module_kind("stream");
  ASSERT_NE(stream, nullptr);
  EXPECT_EQ(contract_text(stream->contract), "reads parse, flow; sets -; produces streams; consumes flows");
  EXPECT_EQ(contract_excess(Overreacher().contract(), over.contract), "sets bytes; produces test-queue");
  EXPECT_EQ(contract_excess(over.contract, Overreacher().contract()), "");
  ModuleContract opt;
  opt.may_consume = {"test-queue"};
  EXPECT_EQ(contract_excess(opt, QueueReader().contract()), "");  // consumes covers may consume
  EXPECT_EQ(contract_excess(QueueReader().contract(), opt), "reads parse; consumes test-queue");
}

TEST(ChainBuild, RegistryListsTheBuiltInModules) {
  std::vector<std::string> kinds;
  for (const ModuleInfo* m : module_kinds()) kinds.push_back(m->kind);
  for (const char* k : {"acl", "flow", "router", "ttl-filter", "wire"})
    EXPECT_NE(std::find(kinds.begin(), kinds.end(), k), kinds.end()) << k;
  EXPECT_TRUE(std::is_sorted(kinds.begin(), kinds.end()));
  for (const ModuleInfo* m : module_kinds()) {
    EXPECT_FALSE(m->summary.empty() && m->kind.rfind("test-", 0) != 0) << m->kind;
    EXPECT_TRUE(m->make) << m->kind;
  }
}

TEST(ChainBuild, ReasonTableRefusesForwardReasonsAndOverflow) {
  ReasonTable r;
  auto fwd = r.add("my_forward", Verdict::kForward, 1);
  ASSERT_FALSE(fwd.is_ok());
  EXPECT_EQ(fwd.status().code(), Errc::kInvalidArgument);
  EXPECT_NE(fwd.status().message().find("forwarded"), std::string::npos);
  const size_t before = r.size();
  for (size_t i = before; i < 0xFFFF; ++i) ASSERT_TRUE(r.add("x", Verdict::kDrop, 1).is_ok()) << i;
  auto full = r.add("one_too_many", Verdict::kDrop, 1);  // ids stay below 0xFFFF
  ASSERT_FALSE(full.is_ok());
  EXPECT_EQ(full.status().code(), Errc::kCapacity);
  EXPECT_EQ(r.size(), 0xFFFFu);
}

TEST(ChainBuild, ContractsAndReasonsOfABuiltChain) {
  auto c = Chain::build(parse("acl(default=permit) -> ttl-filter(min=64, when=inspect) -> router"),
                        tables().env());
  ASSERT_TRUE(c.is_ok()) << c.status().message();
  const Chain& chain = **c;
  EXPECT_EQ(chain.describe(), "acl -> ttl-filter -> router");
  EXPECT_EQ(chain.size(), 3u);
  EXPECT_TRUE(chain.contexts().find("inspect").is_ok());
  EXPECT_FALSE(chain.contexts().find("other").is_ok());
  // Reasons: the pipeline's four first, then each module's, with the module's position.
  const ReasonTable& r = chain.reasons();
  EXPECT_EQ(r[kReasonForwarded].name, "forwarded");
  EXPECT_EQ(r[kReasonNoVerdict].name, "no_verdict");
  std::map<std::string, int> owner;
  for (const auto& e : r.entries()) owner[e.name] = e.module;
  EXPECT_EQ(owner["acl_deny"], 1);
  EXPECT_EQ(owner["ttl_below_min"], 2);
  EXPECT_EQ(owner["no_route"], 3);
  EXPECT_EQ(owner["forwarded"], kPipelineOwner);
  // Every module's contract holds what the registry says (acl with goto: rules tags contexts).
  for (size_t m = 0; m < chain.size(); ++m) {
    const ModuleInfo* info = find_module_kind(chain.module(m).kind());
    ASSERT_NE(info, nullptr);
    EXPECT_EQ(chain.module(m).contract().reads, info->contract.reads) << info->kind;
    EXPECT_EQ(chain.module(m).contract().sets, info->contract.sets) << info->kind;
  }
}

// ---- running against the packet-by-packet reference ---------------------------------------

packet::PacketBatch traffic(uint32_t count, uint64_t seed) {
  gen::TrafficParams p;
  p.count      = count;
  p.seed       = seed;
  p.flows      = 300;
  p.vlan_share = 0.1;
  auto b       = gen::batch_for(count);
  EXPECT_TRUE(b.is_ok());
  EXPECT_TRUE(gen::generate_traffic(p, *b).is_ok());
  // A spread of TTLs (below and above the filters' minimum, some expired for the router).
  auto infos = packet::parse_batch(*b, "ref.parse");
  for (uint32_t i = 0; i < b->size(); ++i) {
    const packet::PacketInfo& info = (*infos)[i];
    if (info.l3 != packet::L3::kIpv4 || !info.l3_offset) continue;
    uint8_t* ip        = b->data(i) + info.l3_offset;
    ip[8]              = uint8_t(1 + (i * 7) % 128);
    ip[10] = ip[11]    = 0;
    const uint16_t sum = gen::internet_checksum(ip, size_t(ip[0] & 0xf) * 4);
    ip[10]             = uint8_t(sum >> 8);
    ip[11]             = uint8_t(sum);
  }
  return std::move(*b);
}

using Outcome = ChainOutcome;

std::string text(const Outcome& o) {
  return o.reason + " out " + std::to_string(o.out) + " context " + o.context + " (" +
         std::to_string(o.bytes.size()) + " bytes)";
}

// Packets of `in` through `chain` as frames of `batch` (chain_check.hpp's runner), checking
// that the module counters add up: what entered a module left it decided or passed on.
std::vector<Outcome> run_chain(const Chain& chain, const packet::PacketBatch& in, uint32_t batch,
                               Place place) {
  std::vector<ModuleCounters> counters(chain.size());
  auto out = run_chain_frames(chain, in, batch, place, counters.data());
  EXPECT_TRUE(out.is_ok()) << out.status().message();
  if (!out.is_ok()) return {};
  uint64_t decided = 0;
  for (size_t m = 0; m < chain.size(); ++m) {
    EXPECT_LE(counters[m].out.load(), counters[m].in.load());
    decided += counters[m].in - counters[m].out;
  }
  uint64_t no_verdict = 0;
  for (const Outcome& o : *out) no_verdict += o.reason == "no_verdict";
  EXPECT_EQ(decided + no_verdict, out->size());
  return std::move(*out);
}

std::unique_ptr<Chain> build(std::string_view text, bool offload) {
  auto c = Chain::build(parse(text), tables().env(offload));
  EXPECT_TRUE(c.is_ok()) << text << ": " << c.status().message();
  return c.is_ok() ? std::move(*c) : nullptr;
}

struct ChainCase {
  const char* fast;
  const char* reference;
  size_t reasons;  ///< distinct reasons the reference gives at least
};

class ChainsAgainstReference : public ::testing::TestWithParam<ChainCase> {};

TEST_P(ChainsAgainstReference, EveryBatchSizeCpuAndOffload) {
  const auto in   = traffic(3000, 5);
  auto reference  = build(GetParam().reference, false);
  ASSERT_TRUE(reference);
  const std::vector<Outcome> expect = run_chain(*reference, in, 1, Place::kCpu);
  ASSERT_EQ(expect.size(), in.size());
  // The chain does something worth comparing: several verdicts, and (for chains with a
  // goto) packets in the context "inspect" next to packets outside it.
  std::map<std::string, uint32_t> reasons, contexts;
  for (const Outcome& o : expect) ++reasons[o.reason], ++contexts[o.context];
  std::string seen;
  for (const auto& [name, n] : reasons) seen += name + "=" + std::to_string(n) + " ";
  EXPECT_GE(reasons.size(), GetParam().reasons) << seen;
  if (std::string(GetParam().fast).find("goto") != std::string::npos ||
      std::string(GetParam().fast).find("when=") != std::string::npos) {
    EXPECT_GT(contexts["inspect"], 50u);
    EXPECT_GT(contexts["default"], 50u);
  }

  auto fast = build(GetParam().fast, true);
  ASSERT_TRUE(fast);
  for (bool sort : {false, true})
  for (Place place : {Place::kCpu, Place::kOffload})
    for (uint32_t batch : {0u, 1u, 7u, 8u, 9u, 31u, 32u, 33u, 255u, 256u, 257u, 2048u}) {
      if (sort && place == Place::kOffload && batch != 33u && batch != 2048u) continue;
      fast->set_schedule_sort(sort);
      SCOPED_TRACE("batch " + std::to_string(batch) +
                   (place == Place::kCpu ? " cpu" : " offload") + (sort ? " sorted" : ""));
      std::vector<Outcome> got;
      if (batch == 0) {  // an empty frame: nothing in, nothing out, no error
        auto empty = packet::PacketBatch::create(1, 2048);
        ASSERT_TRUE(empty.is_ok());
        EXPECT_TRUE(run_chain(*fast, *empty, 0, place).empty());
        continue;
      }
      got = run_chain(*fast, in, batch, place);
      ASSERT_EQ(got.size(), expect.size());
      uint32_t bad = 0;
      for (size_t i = 0; i < got.size() && bad < 5; ++i)
        if (!(got[i] == expect[i])) {
          ++bad;
          ADD_FAILURE() << "packet " << i << ": " << text(got[i]) << ", reference " << text(expect[i]);
        }
    }
}

INSTANTIATE_TEST_SUITE_P(
    Chains, ChainsAgainstReference,
    ::testing::Values(
        ChainCase{"acl(default=permit) -> router",
                  "acl(default=permit, algo=ref) -> router(lookup=ref.lpm)", 3},
        // A context splits the batch: only the ACL's goto:inspect packets meet the TTL filter.
        ChainCase{"acl(default=permit) -> ttl-filter(min=64, when=inspect) -> router",
                  "acl(default=permit, algo=ref) -> ttl-filter(min=64, when=inspect) -> "
                  "router(lookup=ref.lpm)", 4},
        // Two applications in one chain: inspect packets are bumped in the wire, the rest routed.
        ChainCase{"ttl-filter(min=3) -> acl(algo=rfc, default=permit) -> wire(when=inspect) -> "
                  "router",
                  "ttl-filter(min=3) -> acl(algo=ref, default=permit) -> wire(when=inspect) -> "
                  "router(lookup=ref.lpm)", 3},
        // A stateful module first: a flow table too small for the traffic's flows drops the
        // packets of flows it cannot hold; its per-worker state outlives the frames.
        ChainCase{"flow(capacity=64, on_full=drop) -> acl(default=permit) -> router",
                  "flow(capacity=64, on_full=drop, engine=ref.flow) -> acl(default=permit, "
                  "algo=ref) -> router(lookup=ref.lpm)", 4},
        // Nothing decides the inspect packets: they leave as no_verdict.
        ChainCase{"acl(algo=tic, default=deny, match=permit) -> wire(when=default)",
                  "acl(algo=ref, default=deny, match=permit) -> wire(when=default)", 3}),
    [](const ::testing::TestParamInfo<ChainCase>& info) {
      return "chain" + std::to_string(info.index);
    });

// Records the order post() is shown packets in.
class OrderRecorder final : public Module {
 public:
  std::string_view kind() const noexcept override { return "test-order"; }
  ModuleContract contract() const override { return {field_bit(Field::kParse), 0, {}}; }
  void post(Frame&, ModuleSlot*, const Selection& sel) const override {
    seen.assign(sel.list.begin(), sel.list.end());
  }
  mutable std::vector<uint32_t> seen;
};

TEST(ChainRun, SchedulingGroupsPacketsStablyAndKeepsTheFrameOrder) {
  static OrderRecorder* recorder = nullptr;
  ModuleInfo info;
  info.kind  = "test-order";
  info.contract.reads = field_bit(Field::kParse);
  info.make  = [](const ModuleArgs&, BuildEnv&) -> Result<std::unique_ptr<Module>> {
    auto m   = std::make_unique<OrderRecorder>();
    recorder = m.get();
    return std::unique_ptr<Module>(std::move(m));
  };
  (void)register_module_kind(info);  // (again when the test repeats)
  auto chain = build("acl(default=permit) -> test-order -> wire", false);
  ASSERT_TRUE(chain && recorder);
  const auto in = traffic(1000, 21);
  for (bool sort : {false, true}) {
    chain->set_schedule_sort(sort);
    auto b = packet::PacketBatch::create(1000, 2048);
    Frame f(std::move(*b));
    chain->make_slots(f);
    for (uint32_t i = 0; i < in.size(); ++i)
      f.batch.append(in.data(i), in.meta(i).caplen, in.meta(i).len, 0, in.meta(i).port);
    ASSERT_TRUE(chain->pre(f).is_ok());
    ExecContext ctx;
    ASSERT_TRUE(chain->shade(f, Place::kCpu, ctx).is_ok());
    Chain::Scratch scratch;
    ASSERT_TRUE(chain->post(f, scratch, nullptr).is_ok());
    const std::vector<uint32_t>& seen = recorder->seen;
    ASSERT_GT(seen.size(), 500u);  // the ACL denies some; the rest reach the recorder
    if (!sort) {
      EXPECT_TRUE(std::is_sorted(seen.begin(), seen.end()));
      continue;
    }
    EXPECT_FALSE(std::is_sorted(seen.begin(), seen.end()));
    // Grouped by key, ascending; within a key, arrival order (stable).
    std::set<uint8_t> keys;
    for (size_t k = 1; k < seen.size(); ++k) {
      const auto key = [&](uint32_t i) {
        return core::schedule_key(f.infos[i], f.context[i], f.batch.meta(i).len);
      };
      const uint8_t a = key(seen[k - 1]), c = key(seen[k]);
      EXPECT_LE(a, c) << k;
      if (a == c) EXPECT_LT(seen[k - 1], seen[k]) << k;
      keys.insert(c);
    }
    EXPECT_GE(keys.size(), 4u);
    // The frame is untouched: the wire sends every packet in arrival order.
    for (uint32_t i = 0; i + 1 < f.size(); ++i) EXPECT_EQ(f.batch.meta(i).len, in.meta(i).len);
  }
}

// The self-test's check (chain_check.hpp): passes on the CPU offload place.
TEST(ChainRun, SelfTestCheckOfChains) {
  const CheckReport r = check_chain_engine("cpu.chain", 11, 3000);
  EXPECT_TRUE(r.passed()) << r.detail;
  EXPECT_EQ(r.items, 12u * 3000);
  EXPECT_FALSE(check_chain_engine("cpu.nosuch", 1, 10).passed());
  const CheckReport gpu = check_chain_engine("cuda.chain", 11, 100);
  EXPECT_TRUE(gpu.skipped || gpu.passed()) << gpu.detail;
  std::vector<std::string> ids;
  for (const EngineInfo& e : chain_engines()) ids.emplace_back(e.id);
  EXPECT_NE(std::find(ids.begin(), ids.end(), "cpu.chain"), ids.end());

}

TEST(ChainRun, TtlFilterDropsBelowMinimumAndTheAclDecidesFirst) {
  const auto in = traffic(500, 9);
  auto chain    = build("ttl-filter(min=64) -> wire", false);
  ASSERT_TRUE(chain);
  const auto got = run_chain(*chain, in, 64, Place::kCpu);
  auto infos     = packet::parse_batch(in, "ref.parse");
  uint32_t dropped = 0;
  for (uint32_t i = 0; i < in.size(); ++i) {
    const packet::PacketInfo& p = (*infos)[i];
    const bool ip = (p.l3 == packet::L3::kIpv4 || p.l3 == packet::L3::kIpv6) &&
                    (p.fields & packet::kFieldDst);
    if (ip && p.ttl < 64) {
      EXPECT_EQ(got[i].reason, "ttl_below_min") << i;
      ++dropped;
    } else {
      EXPECT_EQ(got[i].reason, "forwarded") << i;
      EXPECT_EQ(got[i].out, in.meta(i).port ^ 1) << i;
    }
  }
  EXPECT_GT(dropped, 100u);
  EXPECT_LT(dropped, 400u);
}

// A chain parses its frames only where a module reads headers (its contract's kParse) or
// packet scheduling keys on them: `wire` alone moves packets as an io-forwarding loop does.
TEST(ChainBuild, ParsesOnlyWhereAModuleReadsHeaders) {
  auto built = [](std::string_view text) {
    auto specs = parse_chain(text);
    EXPECT_TRUE(specs.is_ok()) << text;
    auto c = Chain::build(*specs, tables().env());
    EXPECT_TRUE(c.is_ok()) << text << ": " << c.status().message();
    return std::move(*c);
  };
  auto wire = built("wire");
  EXPECT_FALSE(wire->parses());
  wire->set_schedule_sort(true);  // the scheduling key is the headers'
  EXPECT_TRUE(wire->parses());
  EXPECT_TRUE(built("ttl-filter(min=1) -> wire")->parses());
  EXPECT_TRUE(built("router")->parses());
  // Unparsed, the frame's infos keep what they held: a chain that reads none cannot tell.
  auto c        = built("wire");
  const auto in = traffic(1, 3);
  auto b        = packet::PacketBatch::create(4, 2048);
  ASSERT_TRUE(b.is_ok());
  Frame f(std::move(*b));
  c->make_slots(f);
  f.batch.append(in.data(0), in.meta(0).caplen, in.meta(0).len, 0, 0);
  f.infos[0].ip_version = 7;
  ASSERT_TRUE(c->pre(f).is_ok());
  EXPECT_EQ(f.infos[0].ip_version, 7);
  ASSERT_TRUE(c->parse(f).is_ok());
  EXPECT_TRUE(f.infos[0].ip_version == 4 || f.infos[0].ip_version == 6);
}

}  // namespace
}  // namespace warpath::runtime
