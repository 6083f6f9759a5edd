// src/modules/chain_check.cpp: the self-test's check of chains (chain_check.hpp).
#include "warpath/modules/chain_check.hpp"

#include <algorithm>
#include <memory>
#include <thread>

#include "warpath/classify/check.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/forward/router.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/lookup/check.hpp"
#include "warpath/net/checksum.hpp"

namespace warpath::runtime {
namespace {

constexpr const char* kFast = "acl(default=permit) -> ttl-filter(min=64, when=inspect) -> router";
constexpr const char* kReference =
    "acl(default=permit, algo=ref) -> ttl-filter(min=64, when=inspect) -> router(lookup=ref.lpm)";

struct Tables {
  lookup::RouteTable fib;
  forward::RouterConfig neighbors;
  classify::RuleSet rules;
  TableSource source;
  explicit Tables(uint64_t seed) {
    fib = lookup::random_route_table(seed, 3000, 800);
    fib.v4.push_back({0, 0, 1});
    neighbors = forward::default_neighbors(fib, 4);
    rules     = classify::random_rule_set(seed, classify::KeyLayout::kFiveTuple, 300);
    for (size_t i = 0; i < rules.rules.size(); ++i)
      rules.rules[i].action = i % 3 == 0 ? "goto:inspect" : i % 7 == 0 ? "deny" : "";
    // Broad rules above the random ones, so generated traffic meets every action.
    const std::pair<uint8_t, const char*> broad[] = {{6, "goto:inspect"}, {17, "deny"}};
    for (const auto& [proto, action] : broad) {
      classify::Rule r;
      r.value[3] = proto, r.mask[3] = 0xFF;
      r.value[0] = proto == 6 ? 0 : 1, r.mask[0] = 1;  // half of the sources
      r.priority = 0xFFFF'FFF0u - uint32_t(rules.rules.size());
      r.action   = action;
      rules.rules.push_back(r);
    }
    source.preload("router.fib", &fib);
    source.preload("router.neighbors", &neighbors);
    source.preload("acl.rules", &rules);
  }
};

Result<std::unique_ptr<Chain>> build(const Tables& t, const char* text, bool offload,
                                     const std::string& device) {
  WARPATH_ASSIGN_OR_RETURN(const std::vector<ModuleSpec> specs, parse_chain(text));
  BuildEnv env;
  env.port_count     = 4;
  env.offload        = offload;
  env.offload_device = device;
  env.tables         = &t.source;
  env.use_preloaded  = true;
  return Chain::build(specs, env);
}

constexpr uint32_t kMaxPackets = 20000;

// `n` generated packets of `seed`, their TTLs spread around the filter's minimum (the
// generator's are all 64).
Result<packet::PacketBatch> traffic(uint64_t seed, uint32_t n) {
  gen::TrafficParams p;
  p.count      = n;
  p.seed       = seed;
  p.flows      = 300;
  p.vlan_share = 0.1;
  WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch in, gen::batch_for(n));
  WARPATH_TRY(gen::generate_traffic(p, in));
  for (uint32_t i = 0; i < in.size(); ++i) {
    uint8_t* d = in.data(i);
    if (in.meta(i).caplen >= 34 && d[12] == 0x08 && d[13] == 0x00 && (d[14] >> 4) == 4) {
      const uint16_t old = net::load_be16(d + 22);  // TTL and protocol: word 4 of the header
      d[22]              = uint8_t(1 + (i * 7) % 128);
      net::store_be16(d + 24, net::checksum_update16(net::load_be16(d + 24), old, net::load_be16(d + 22)));
    }
  }
  return in;
}

// The distinct reasons and contexts of a run's outcomes.
std::pair<size_t, size_t> paths_taken(const std::vector<ChainOutcome>& outcomes) {
  std::vector<std::string> reasons, contexts;
  for (const ChainOutcome& o : outcomes) {
    if (std::find(reasons.begin(), reasons.end(), o.reason) == reasons.end())
      reasons.push_back(o.reason);
    if (std::find(contexts.begin(), contexts.end(), o.context) == contexts.end())
      contexts.push_back(o.context);
  }
  return {reasons.size(), contexts.size()};
}

}  // namespace

std::vector<EngineInfo> chain_engines() {
  std::vector<EngineInfo> engines = {
      {"ref.chain", "the chain on ref.linear and ref.lpm, one packet per frame (the oracle)", 0,
       &engine_always},
      {"cpu.chain", "acl(goto:inspect) -> ttl-filter(when=inspect) -> router, offload place on "
                    "cpu.* engines",
       1, &engine_always},
  };
#if defined(WARPATH_HAVE_CUDA)
  engines.push_back({"cuda.chain",
                     "acl(goto:inspect) -> ttl-filter(when=inspect) -> router, offload place on "
                     "cuda.* engines",
                     2, &cuda_engine_available});
#endif
  return engines;
}

CheckReport check_chain_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"runtime", std::string(id), seed, 0, false, {}};
  if (id != "cpu.chain" && id != "cuda.chain") {
    report.detail = "unknown chain engine '" + std::string(id) + "'";
    return report;
  }
  const std::string device = id == "cuda.chain" ? "cuda" : "cpu";
  if (device == "cuda" && cuda_device_count() == 0) {
    report.skipped = true;
    report.detail  = "no CUDA device: " + cuda_unavailable_reason();
    return report;
  }
  // Packets run one per frame through the reference chain: bounded, so the check stays quick.
  uint32_t n = uint32_t(std::clamp<uint64_t>(items, 1, kMaxPackets));
  const Tables t(seed);
  auto fast = build(t, kFast, true, device);
  auto ref  = build(t, kReference, false, "cpu");
  if (!fast.is_ok() || !ref.is_ok()) {
    const Status& s = fast.is_ok() ? ref.status() : fast.status();
    report.skipped  = s.code() == Errc::kNotSupported;
    report.detail   = s.message();
    return report;
  }
  // The check means something only if the chain's paths are all taken: from 1,000 packets on,
  // traffic that misses some (a seed whose rules few packets meet) is generated again, larger.
  Result<packet::PacketBatch> in = Status(Errc::kNotFound, "no traffic yet");
  Result<std::vector<ChainOutcome>> want = Status(Errc::kNotFound, "no traffic yet");
  for (;;) {
    in = traffic(seed, n);
    if (!in.is_ok()) {
      report.detail = "could not generate traffic: " + in.status().message();
      return report;
    }
    want = run_chain_frames(**ref, *in, 1, Place::kCpu);
    if (!want.is_ok()) {
      report.detail = "reference chain: " + want.status().message();
      return report;
    }
    if (n < 1000) break;
    const auto [reasons, contexts] = paths_taken(*want);
    if (reasons >= 4 && contexts >= 2) break;
    if (n == kMaxPackets) {
      report.detail = "the generated traffic takes only " + std::to_string(reasons) +
                      " reasons and " + std::to_string(contexts) + " contexts";
      return report;
    }
    n = std::min(2 * n, kMaxPackets);
  }
  // Each batch size shaded frame by frame on the offload place, then through the offload
  // master, three frames a launch (on a GPU whose engines take device memory: one upload,
  // every module, one download).
  for (uint32_t batch : {1u, 31u, 32u, 33u, 1024u, 8192u})
    for (uint32_t launch : {0u, 3u}) {
      const std::string where =
          "batch " + std::to_string(batch) +
          (launch ? ", offload master, " + std::to_string(launch) + " frames a launch" : "");
      auto got = run_chain_frames(**fast, *in, batch, Place::kOffload, nullptr, launch);
      if (!got.is_ok()) {
        report.detail = where + ": " + got.status().message();
        return report;
      }
      if (got->size() != want->size()) {
        report.detail = where + ": " + std::to_string(got->size()) + " outcomes for " +
                        std::to_string(want->size()) + " packets";
        return report;
      }
      for (uint32_t i = 0; i < n; ++i) {
        const ChainOutcome &g = (*got)[i], &w = (*want)[i];
        if (g == w) continue;
        report.detail = where + ", packet " + std::to_string(i) + ": got " + g.reason + " out " +
                        std::to_string(g.out) + " context " + g.context +
                        (g.bytes == w.bytes ? "" : " (bytes differ)") + ", reference " + w.reason +
                        " out " + std::to_string(w.out) + " context " + w.context;
        return report;
      }
      report.items += n;
    }
  return report;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(runtime, "runtime", 130, &chain_engines, &check_chain_engine);

}  // namespace warpath::runtime
