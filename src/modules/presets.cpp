// src/modules/presets.cpp: the preset applications of `warpath run --app` (acl, router,
// router+acl, ipsec, switch) as chains of the built-in modules, registered with the runtime
// when the program starts (chain.hpp: register_preset_builder), so that the runtime names no
// module. A preset is what `--chain` would say: `warpath run --app router+acl` runs
// "acl(...) -> router(...)" with the [acl] and [router] settings as the modules' arguments.
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {
namespace {

std::vector<ModuleSpec> builtin_preset_chain(const RunConfig& c, Preloaded preloaded) {
  const std::string where = std::string("app ") + app_name(c.app);
  ModuleSpec acl{"acl", {}, where};
  if (!preloaded.rules && !c.rules.empty()) {
    acl.args.emplace_back("rules", c.rules);
    acl.args.emplace_back("format", c.rules_format);
  }
  acl.args.emplace_back("algo", c.algo);
  acl.args.emplace_back("match", c.match_action);
  acl.args.emplace_back("default", c.default_action);
  // IPv6 under 5-tuple rules (IPv4 keys): the default action unless told (a firewall fails
  // closed), but the built-in random ACL, the demo's and the benches', lets it reach the router.
  if (!c.ipv6_action.empty())
    acl.args.emplace_back("ipv6", c.ipv6_action);
  else if (c.rules.empty() && !preloaded.rules)
    acl.args.emplace_back("ipv6", "permit");
  // Non-IP frames: alone, the firewall applies its default action to them (it cannot inspect
  // them, so it must not pass them unasked); before the router they continue to it, which
  // sends ARP to the slow path and drops the rest as not_ip.
  if (!c.nonip_action.empty())
    acl.args.emplace_back("nonip", c.nonip_action);
  else if (c.app == AppKind::kRouterAcl)
    acl.args.emplace_back("nonip", "permit");
  ModuleSpec router{"router", {}, where};
  if (!preloaded.fib && !c.fib.empty()) router.args.emplace_back("fib", c.fib);
  if (!preloaded.neighbors && !c.neighbors.empty()) router.args.emplace_back("neighbors", c.neighbors);
  router.args.emplace_back("lookup", c.lookup_engine);
  switch (c.app) {
    case AppKind::kRouter:
      return {router};
    case AppKind::kIpsec: {
      // The gateway: decapsulate what arrives through a tunnel, encapsulate what an outbound
      // policy selects, then route every packet by its (new) outer header.
      ModuleSpec in{"esp-in", {{"sa", c.sa}}, where}, out{"esp-out", {{"sa", c.sa}}, where};
      return {in, out, router};
    }
    case AppKind::kSwitch: {
      ModuleSpec sw{"switch", {}, where};
      if (!c.flows.empty()) sw.args.emplace_back("flows", c.flows);
      return {sw};
    }
    case AppKind::kAcl:
      // The firewall alone drops what the parser rejected, before its rules, and sends what
      // it permits out of the paired port (a bump in the wire).
      acl.args.emplace_back("malformed", "drop");
      return {acl, ModuleSpec{"wire", {}, where}};
    case AppKind::kRouterAcl:
      break;
  }
  return {acl, router};
}

[[maybe_unused]] const bool registered = register_preset_builder(&builtin_preset_chain);

}  // namespace
}  // namespace warpath::runtime
