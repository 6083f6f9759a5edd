// src/openflow/flow_table_registry.cpp: the flow-lookup engine registry (the only list of them), the
// validating wrapper and the self-test's differential check (flow_lookup.hpp).
#include <algorithm>
#include <random>
#include <string>

#include "core/engine_table.hpp"
#include "core/validating.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/openflow/flow_lookup.hpp"

namespace warpath::openflow {
namespace {

class RefFlow final : public FlowLookup {
 public:
  explicit RefFlow(const FlowTable& t) : table_(t) {}
  std::string_view id() const noexcept override { return "ref.flowtable"; }
  Status do_lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const override {
    for (uint32_t i = 0; i < keys.size; ++i) {
      const FlowEntry* e = table_.lookup(keys[i]);
      ids[i]             = e ? e->id : kNoFlow;
    }
    return Status::ok();
  }

 private:
  FlowTable table_;
};

class CpuFlow final : public FlowLookup {
 public:
  explicit CpuFlow(std::shared_ptr<const FlowImage> image) : image_(std::move(image)) {}
  std::string_view id() const noexcept override { return "cpu.flowtable"; }
  Status do_lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const override {
    image_->lookup(keys, ids);
    return Status::ok();
  }

 private:
  std::shared_ptr<const FlowImage> image_;
};

class ValidatingFlow final : public ValidatingPair<FlowLookup> {
 public:
  ValidatingFlow(std::unique_ptr<FlowLookup> e, std::unique_ptr<FlowLookup> r)
      : ValidatingPair(std::move(e), std::move(r), "ref.flowtable") {}
  Status do_lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const override {
    WARPATH_TRY(engine_->lookup(keys, ids));
    std::vector<uint32_t> want(keys.size);
    WARPATH_TRY(ref_->lookup(keys, {want.data(), keys.size}));
    return first_difference(keys.size, "key", [&](uint32_t i) { return ids[i] == want[i]; },
                            [&](uint32_t i) {
                              return " of " + std::to_string(keys.size) + ": hits flow " +
                                     std::to_string(ids[i]) + ", reference flow " +
                                     std::to_string(want[i]);
                            });
  }
};

using FlowLookupTable = EngineTable<FlowLookup(const FlowTable&)>;

// Outputs do not matter to a lookup: compiled for the most ports an image takes.
Result<std::shared_ptr<const FlowImage>> lookup_image(const FlowTable& table) {
  return FlowImage::build(table, 64);
}

FlowLookupTable::Made validated(std::unique_ptr<FlowLookup> engine, const FlowTable& table) {
  return std::unique_ptr<FlowLookup>(
      std::make_unique<ValidatingFlow>(std::move(engine), std::make_unique<RefFlow>(table)));
}

const FlowLookupTable& flow_lookup_table() {
  static const FlowLookupTable table(
      "flow table",
      {
          {{"ref.flowtable", "FlowTable's plain scan under the precedence rules (the oracle)", 0,
            engine_always},
           [](const FlowTable& t) -> FlowLookupTable::Made {
             return std::unique_ptr<FlowLookup>(std::make_unique<RefFlow>(t));
           }},
          {{"cpu.flowtable",
            "exact-match hash + ranked tuple-space subtables, staged prefetch, SSE2/AVX-512VL", 10,
            engine_always},
           [](const FlowTable& t) -> FlowLookupTable::Made {
             WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> image, lookup_image(t));
             return std::unique_ptr<FlowLookup>(std::make_unique<CpuFlow>(std::move(image)));
           }},
#if defined(WARPATH_HAVE_CUDA)
          {{"cuda.flowtable", "the same image on the device, one thread per key", 20,
            cuda_engine_available},
           [](const FlowTable& t) -> FlowLookupTable::Made {
             WARPATH_ASSIGN_OR_RETURN(std::shared_ptr<const FlowImage> image, lookup_image(t));
             return detail::make_cuda_flow(std::move(image));
           }},
#endif
      },
      &validated);
  return table;
}

constexpr uint64_t kMaxCheckKeys = 200'000;

}  // namespace

namespace detail {

uint32_t FlowPools::pick(std::initializer_list<uint32_t> v) { return *(v.begin() + rng() % v.size()); }
bool FlowPools::coin(unsigned percent) { return rng() % 100 < percent; }

FlowSpec FlowPools::flow(bool exact) {
  FlowSpec s;
  packet::OfFields& f = s.match.f;
  uint32_t wc         = kWcAll;
  auto field          = [&](uint32_t bit) {
    if (exact || coin(35)) {
      wc &= ~bit;
      return true;
    }
    return false;
  };
  if (field(kWcInPort)) f.in_port = uint16_t(pick({1, 2}));
  if (field(kWcDlVlan)) f.dl_vlan = uint16_t(pick({packet::kOfNoVlan, 7}));
  if (field(kWcDlVlanPcp)) f.dl_vlan_pcp = uint8_t(pick({0, 3}));
  if (field(kWcDlSrc)) f.dl_src[5] = uint8_t(pick({1, 2}));
  if (field(kWcDlDst)) f.dl_dst[5] = uint8_t(pick({1, 2}));
  if (exact || coin(70)) {
    wc &= ~kWcDlType;
    f.dl_type = uint16_t(exact ? kEthIp : pick({kEthIp, kEthIp, kEthArp}));
  }
  if (field(kWcNwProto)) f.nw_proto = uint8_t(pick({6, 17}));
  if (field(kWcNwTos)) f.nw_tos = uint8_t(pick({0, 32}));
  const uint32_t sl = exact ? 32 : pick({0, 8, 16, 32}), dl = exact ? 32 : pick({0, 8, 24, 32});
  f.nw_src = pick({0x0a000001, 0x0a010001, 0x0b000001});
  f.nw_dst = pick({0x14000001, 0x14000101});
  wc = (wc & ~(kWcNwSrcMask | kWcNwDstMask)) | (32 - sl) << kWcNwSrcShift | (32 - dl) << kWcNwDstShift;
  if (field(kWcTpSrc)) f.tp_src = uint16_t(pick({1000, 2000}));
  if (field(kWcTpDst)) f.tp_dst = uint16_t(pick({80, 443}));
  s.match    = make_match(f, wc);
  s.priority = uint16_t(pick({1, 2, 3, 100}));
  s.actions.push_back(Action{});
  s.actions[0].port = uint16_t(1 + rng() % 4);
  return s;
}

packet::OfTuple FlowPools::key() {
  packet::OfFields f;
  f.in_port     = uint16_t(pick({1, 2, 3}));
  f.dl_vlan     = uint16_t(pick({packet::kOfNoVlan, 7, 8}));
  f.dl_vlan_pcp = f.dl_vlan == packet::kOfNoVlan ? 0 : uint8_t(pick({0, 3}));
  f.dl_src[5]   = uint8_t(pick({1, 2, 3}));
  f.dl_dst[5]   = uint8_t(pick({1, 2}));
  f.dl_type     = uint16_t(pick({kEthIp, kEthIp, kEthIp, kEthArp, 0x86dd}));
  if (f.dl_type == kEthIp || f.dl_type == kEthArp) {
    f.nw_proto = uint8_t(pick({6, 17, 1}));
    f.nw_src   = pick({0x0a000001, 0x0a010001, 0x0b000001, 0x0a0000ff});
    f.nw_dst   = pick({0x14000001, 0x14000101, 0x15000001});
  }
  if (f.dl_type == kEthIp) {
    f.nw_tos = uint8_t(pick({0, 32}));
    f.tp_src = uint16_t(pick({1000, 2000, 3000}));
    f.tp_dst = uint16_t(pick({80, 443}));
  }
  return packet::of_pack(f);
}

}  // namespace detail

std::vector<EngineInfo> flow_table_engines() { return flow_lookup_table().infos(); }

Result<std::unique_ptr<FlowLookup>> make_flow_lookup(std::string_view requested, const FlowTable& table) {
  return flow_lookup_table().make(requested, table);
}

CheckReport check_flow_table_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport rep{"openflow", std::string(id), seed, 0, false, {}};
  items = std::min(items, kMaxCheckKeys);
  detail::FlowPools pools(seed);
  const uint32_t sizes[] = {0, 1, 31, 32, 33, 63, 64, 65, 255, 256, 257, 4096};
  uint64_t done = 0;
  for (int round = 0; done < items || round < 2; ++round) {
    FlowTable table;
    const uint32_t flows = round == 0 ? 0 : uint32_t(pools.rng() % 200);
    for (uint32_t f = 0; f < flows; ++f) table.apply(FlowModCommand::kAdd, pools.flow(pools.coin(15)), 0);
    auto engine = make_flow_lookup(id, table);
    if (!engine.is_ok()) {
      rep.skipped = engine.status().code() == Errc::kNotSupported;
      rep.detail  = engine.status().message();
      return rep;
    }
    RefFlow ref(table);
    for (uint32_t n : sizes) {
      std::vector<packet::OfTuple> keys(n);
      for (auto& k : keys) k = pools.key();
      std::vector<uint32_t> got(n, 12345), want(n);
      Status s = (*engine)->lookup({keys.data(), n}, {got.data(), n});
      if (!s.is_ok()) {
        rep.detail = "batch of " + std::to_string(n) + ": " + s.message();
        return rep;
      }
      (void)ref.lookup({keys.data(), n}, {want.data(), n});
      for (uint32_t i = 0; i < n; ++i)
        if (got[i] != want[i]) {
          rep.detail = "table of " + std::to_string(table.size()) + " flows, batch of " + std::to_string(n) +
                       ", key " + std::to_string(i) + ": flow " + std::to_string(got[i]) +
                       ", ref.flowtable says " + std::to_string(want[i]);
          return rep;
        }
      done += n;
      rep.items += n;
    }
  }
  return rep;
}

// The family in `warpath info` and `warpath selftest` (core/registry.hpp).
WARPATH_REGISTER_ENGINE_FAMILY(openflow, "openflow", 110, &flow_table_engines,
                               &check_flow_table_engine);

}  // namespace warpath::openflow
