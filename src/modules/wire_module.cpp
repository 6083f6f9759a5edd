// src/modules/wire_module.cpp: the `wire` module, a bump in the wire: every packet it
// sees leaves, unchanged, out of the port paired with the one it came in on (port p -> p ^ 1, or
// p itself when that port does not exist). The end of the acl preset: a firewall between two
// ports.
//
// Contract: reads nothing (the ingress port is the packet's own); sets verdict.
#include "warpath/runtime/module.hpp"

namespace warpath::runtime {
namespace {

// The kind's contract, declared once (ModuleInfo) and kept by every instance.
ModuleContract wire_contract() { return {0, field_bit(Field::kVerdict)}; }

class WireModule final : public Module {
 public:
  explicit WireModule(uint16_t ports) : ports_(ports) {}
  std::string_view kind() const noexcept override { return "wire"; }
  ModuleContract contract() const override { return wire_contract(); }
  void post(Frame& f, ModuleSlot*, const Selection& sel) const override {
    for (uint32_t i : sel.list) {
      const uint16_t in   = f.batch.meta(i).port;
      const auto pair     = uint16_t(in ^ 1u);
      f.reason[i]         = kReasonForwarded;
      f.out[i]            = pair < ports_ ? pair : in;
    }
  }

 private:
  uint16_t ports_;
};

}  // namespace

ModuleInfo wire_module_info() {
  ModuleInfo i;
  i.kind    = "wire";
  i.summary = "bump in the wire: out of the paired port (p -> p ^ 1), unchanged";
  i.contract = wire_contract();
  i.make    = [](const ModuleArgs&, BuildEnv& env) -> Result<std::unique_ptr<Module>> {
    return std::unique_ptr<Module>(std::make_unique<WireModule>(env.port_count));
  };
  return i;
}

WARPATH_REGISTER_MODULE(wire_module_info);

}  // namespace warpath::runtime
