// src/modules/presets.cpp: the preset applications of `warpath run --app` (acl, router,
// router+acl, ipsec, switch) as chains of the built-in modules, with the settings they take,
// registered with the runtime when the program starts (run_config.hpp: register_presets), so
// that the runtime names no module and no setting. A preset is what `--chain` would say:
// `warpath run --app router+acl` runs "acl(...) -> router(...)" with the [acl] and [router]
// settings as the modules' arguments.
//
// The settings (config file keys; the CLI's flags set the same):
//   [router] fib        route file (default: a built-in synthetic Internet table)
//            neighbors  lines `nexthop port dst_mac` (default: next hop N -> port N % ports)
//            lookup     the CPU side's lookup engine (cpu.lpm, ref.lpm, ...; default auto)
//   [acl]    rules      rule file (default: a built-in 1,000-rule ACL)
//            format     classbench | openflow (default classbench)
//            algo       linear | tuple | bloom | rfc | tic | split | auto (default)
//            match      action of a matching rule that names none (default permit)
//            default    action when no rule matches (default deny)
//            ipv6       IPv6 packets under a 5-tuple ACL (its keys are IPv4); default: `default`
//                       (a firewall fails closed; counted as acl_ipv6 when denied), permit with
//                       the built-in ACL
//            nonip      frames neither IPv4 nor IPv6 (ARP, MPLS, PPPoE) under a 5-tuple ACL;
//                       default: `default` in the acl app (acl_non_ip when denied), permit
//                       before the router
//   sa                  app ipsec: the SA file (io/sa_file.hpp)
//   flows               app switch: the OpenFlow flow file (empty: every packet misses)
#include <algorithm>
#include <initializer_list>
#include <string>
#include <string_view>

#include "warpath/classify/classifier.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {
namespace {

Status bad(std::string_view key, const std::string& reason) {
  return Status(Errc::kInvalidArgument, std::string(key) + ": " + reason);
}

/// "permit", "deny", "drop" or "output:N" with N a decimal port number below 65536.
bool valid_action(std::string_view a) {
  if (a == "permit" || a == "deny" || a == "drop") return true;
  constexpr std::string_view kOutput = "output:";
  if (a.substr(0, kOutput.size()) != kOutput) return false;
  const std::string_view n = a.substr(kOutput.size());
  if (n.empty() || n.size() > 5) return false;
  uint32_t v = 0;
  for (char c : n) {
    if (c < '0' || c > '9') return false;
    v = v * 10 + uint32_t(c - '0');
  }
  return v < 65536;
}

Status check_action(std::string_view key, const std::string& a) {
  if (valid_action(a)) return Status::ok();
  return bad(key, "must be permit, deny, drop or output:N (N < 65536), got '" + a + "'");
}

/// The settings' values (RunConfig::validate() calls it for a preset run).
Status check_settings(const RunConfig& c) {
  if (c.has_setting("router.lookup") && c.setting("router.lookup").empty())
    return bad("router.lookup", "must not be empty (use \"auto\")");
  if (c.app == "ipsec" && c.setting("sa").empty())
    return bad("sa", "app ipsec needs the SA file (--sa FILE)");
  const std::string format = c.setting("acl.format", "classbench");
  if (format != "classbench" && format != "openflow")
    return bad("acl.format", "must be one of classbench, openflow, got '" + format + "'");
  const std::string algo = c.setting("acl.algo", "auto");
  const auto algos       = classify::classifier_algorithms();
  if (std::find(algos.begin(), algos.end(), algo) == algos.end())
    return bad("acl.algo",
               "must be one of " + classify::classifier_algorithm_list() + ", got '" + algo + "'");
  WARPATH_TRY(check_action("acl.match", c.setting("acl.match", "permit")));
  WARPATH_TRY(check_action("acl.default", c.setting("acl.default", "deny")));
  for (const char* key : {"acl.ipv6", "acl.nonip"})
    if (!c.setting(key).empty()) WARPATH_TRY(check_action(key, c.setting(key)));
  return Status::ok();
}

std::vector<ModuleSpec> builtin_preset_chain(const RunConfig& c, const TableSource& tables) {
  const bool preloaded_rules = tables.has_preloaded("acl.rules");
  const std::string where = "app " + c.app;
  const std::string rules = c.setting("acl.rules");
  ModuleSpec acl{"acl", {}, where};
  if (!preloaded_rules && !rules.empty()) {
    acl.args.emplace_back("rules", rules);
    acl.args.emplace_back("format", c.setting("acl.format", "classbench"));
  }
  acl.args.emplace_back("algo", c.setting("acl.algo", "auto"));
  acl.args.emplace_back("match", c.setting("acl.match", "permit"));
  acl.args.emplace_back("default", c.setting("acl.default", "deny"));
  // IPv6 under 5-tuple rules (IPv4 keys): the default action unless told (a firewall fails
  // closed), but the built-in random ACL, the demo's and the benches', lets it reach the router.
  if (!c.setting("acl.ipv6").empty())
    acl.args.emplace_back("ipv6", c.setting("acl.ipv6"));
  else if (rules.empty() && !preloaded_rules)
    acl.args.emplace_back("ipv6", "permit");
  // Non-IP frames: alone, the firewall applies its default action to them (it cannot inspect
  // them, so it must not pass them unasked); before the router they continue to it, which
  // sends ARP to the slow path and drops the rest as not_ip.
  if (!c.setting("acl.nonip").empty())
    acl.args.emplace_back("nonip", c.setting("acl.nonip"));
  else if (c.app == "router+acl")
    acl.args.emplace_back("nonip", "permit");
  ModuleSpec router{"router", {}, where};
  for (const char* arg : {"fib", "neighbors"}) {
    const std::string key = std::string("router.") + arg;
    if (!tables.has_preloaded(key) && !c.setting(key).empty())
      router.args.emplace_back(arg, c.setting(key));
  }
  router.args.emplace_back("lookup", c.setting("router.lookup", "auto"));
  if (c.app == "router") return {router};
  if (c.app == "ipsec") {
    // The gateway: decapsulate what arrives through a tunnel, encapsulate what an outbound
    // policy selects, then route every packet by its (new) outer header.
    const std::string sa = c.setting("sa");
    return {ModuleSpec{"esp-in", {{"sa", sa}}, where}, ModuleSpec{"esp-out", {{"sa", sa}}, where},
            router};
  }
  if (c.app == "switch") {
    ModuleSpec sw{"switch", {}, where};
    if (!c.setting("flows").empty()) sw.args.emplace_back("flows", c.setting("flows"));
    return {sw};
  }
  if (c.app == "acl") {
    // The firewall alone drops what the parser rejected, before its rules, and sends what
    // it permits out of the paired port (a bump in the wire).
    acl.args.emplace_back("malformed", "drop");
    return {acl, ModuleSpec{"wire", {}, where}};
  }
  if (c.app == "router+acl") return {acl, router};
  return {};
}

PresetCatalog builtin_presets() {
  PresetCatalog p;
  p.apps  = {"acl", "router", "router+acl", "ipsec", "switch"};
  p.keys  = {{"router.fib", true}, {"router.neighbors", true},
             {"router.lookup"},    {"acl.rules", true},
             {"acl.format"},       {"acl.algo"},
             {"acl.match"},        {"acl.default"},
             {"acl.ipv6"},         {"acl.nonip"},
             {"sa", true},         {"flows", true}};
  p.check = &check_settings;
  p.chain = &builtin_preset_chain;
  return p;
}

[[maybe_unused]] const bool registered = register_presets(builtin_presets());

}  // namespace
}  // namespace warpath::runtime
