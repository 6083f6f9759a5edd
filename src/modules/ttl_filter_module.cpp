// src/modules/ttl_filter_module.cpp: the `ttl-filter` module, and the example of
// docs/modules.md: a whole module in one small file.
//
// What: drops IPv4 packets whose TTL, and IPv6 packets whose hop limit, is below `min`
// (reason "ttl_below_min"); every other packet continues. With min=255 and a context, it is
// the Generalized TTL Security Mechanism (RFC 5082): a BGP session's packets must arrive with
// TTL 255, so they cannot come from more than one hop away:
//   acl(rules=bgp.rules) -> ttl-filter(min=255, when=bgp) -> router
// where the ACL's rules for TCP port 179 say goto:bgp.
//
// Contract: reads parse (the TTL the parser read); sets verdict. No keys, no shade: the work is
// one comparison per packet, in post().
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {
namespace {

class TtlFilterModule final : public Module {
 public:
  TtlFilterModule(uint8_t min, uint16_t reason) : min_(min), reason_(reason) {}
  std::string_view kind() const noexcept override { return "ttl-filter"; }
  // The contract, written once: the kind declares it (below) and every instance keeps it.
  static ModuleContract declared() {
    return {field_bit(Field::kParse), field_bit(Field::kVerdict), {}};
  }
  ModuleContract contract() const override { return declared(); }
  std::string describe() const override { return "min " + std::to_string(min_); }
  void post(Frame& f, ModuleSlot*, const Selection& sel) const override {
    for (uint32_t i : sel.list) {
      const packet::PacketInfo& p = f.infos[i];
      const bool ip = p.l3 == packet::L3::kIpv4 || p.l3 == packet::L3::kIpv6;  // header read
      if (ip && (p.fields & packet::kFieldDst) && p.ttl < min_) f.reason[i] = reason_;
    }
  }

 private:
  uint8_t min_;
  uint16_t reason_;
};

}  // namespace

ModuleInfo ttl_filter_module_info() {
  ModuleInfo i;
  i.kind    = "ttl-filter";
  i.summary = "drop IP packets whose TTL / hop limit is below min (RFC 5082 with min=255)";
  i.args    = {{"min", "1", "lowest TTL / hop limit let through, 0..255"}};
  i.contract = TtlFilterModule::declared();
  i.make    = [](const ModuleArgs& args, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    WARPATH_ASSIGN_OR_RETURN(const uint64_t min, args.get_u64("min", 1, 255));
    WARPATH_ASSIGN_OR_RETURN(const uint16_t reason,
                             env.reasons->add("ttl_below_min", Verdict::kDrop, env.position));
    return std::unique_ptr<Module>(std::make_unique<TtlFilterModule>(uint8_t(min), reason));
  };
  return i;
}

WARPATH_REGISTER_MODULE(ttl_filter_module_info);

}  // namespace warpath::runtime
