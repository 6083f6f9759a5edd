// src/runtime/run_config.cpp: names of apps and offload policies, and RunConfig::validate().
//
// Messages name the key as the TOML file spells it ("batch", "acl.match", "ports.NAME"), so
// the TOML loader (system/run_config_toml.cpp) can put the file and line of that key in front
// of them. Checks run in a fixed order with the ports last: the loader validates a config in
// which the file gave no ports and then ignores a "ports:" error alone.
#include "warpath/runtime/run_config.hpp"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <initializer_list>
#include <set>
#include <string>
#include <string_view>

#include "warpath/classify/classifier.hpp"
#include "warpath/io/same_file.hpp"
#include "warpath/runtime/metrics.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::runtime {

const char* app_name(AppKind a) noexcept {
  switch (a) {
    case AppKind::kAcl:
      return "acl";
    case AppKind::kRouter:
      return "router";
    case AppKind::kRouterAcl:
      return "router+acl";
    case AppKind::kIpsec:
      return "ipsec";
    case AppKind::kSwitch:
      return "switch";
  }
  return "?";
}

const char* offload_name(Offload o) noexcept {
  switch (o) {
    case Offload::kCpu:
      return "cpu";
    case Offload::kGpu:
      return "gpu";
    case Offload::kAuto:
      return "auto";
  }
  return "?";
}

bool parse_app(std::string_view text, AppKind& out) noexcept {
  for (AppKind a : {AppKind::kAcl, AppKind::kRouter, AppKind::kRouterAcl, AppKind::kIpsec, AppKind::kSwitch})
    if (text == app_name(a)) {
      out = a;
      return true;
    }
  return false;
}

bool parse_offload(std::string_view text, Offload& out) noexcept {
  for (Offload o : {Offload::kCpu, Offload::kGpu, Offload::kAuto})
    if (text == offload_name(o)) {
      out = o;
      return true;
    }
  return false;
}

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

Status check_one_of(std::string_view key, const std::string& value,
                    std::initializer_list<std::string_view> allowed) {
  std::string list;
  for (std::string_view a : allowed) {
    if (value == a) return Status::ok();
    list += (list.empty() ? "" : ", ") + std::string(a);
  }
  return bad(key, "must be one of " + list + ", got '" + value + "'");
}

bool valid_port_name(const std::string& name) {
  if (name.empty()) return false;
  for (char c : name) {
    const bool ok = (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') ||
                    c == '_' || c == '.' || c == '-';
    if (!ok) return false;
  }
  return true;
}

/// parse_port_spec() says "port NAME: reason"; the key already names the port.
std::string strip_port_prefix(const std::string& message, const std::string& name) {
  const std::string prefix = "port " + name + ": ";
  return message.rfind(prefix, 0) == 0 ? message.substr(prefix.size()) : message;
}

Status check_ports(const RunConfig& c) {
  if (c.ports.empty()) return bad("ports", "no ports configured");
  if (c.ports.size() > 65535)
    return bad("ports", "at most 65535 ports, got " + std::to_string(c.ports.size()));
  // No output may be an input or another output, under any spelling (io::same_file): the
  // files are gathered here, the ports' with their specs.
  struct File {
    std::string key, path;
    bool input;
  };
  std::vector<File> files;
  std::set<std::string> seen;
  bool any_rx = false;
  for (const auto& [name, spec] : c.ports) {
    const std::string key = "ports." + name;
    if (!valid_port_name(name))
      return bad(key, "a port name must be non-empty and use only A-Z a-z 0-9 _ . -");
    if (!seen.insert(name).second) return bad(key, "port name used twice");
    if (spec.empty()) return bad(key, "empty port spec");
    auto parsed = parse_port_spec(name, spec);
    if (!parsed.is_ok()) return bad(key, strip_port_prefix(parsed.status().message(), name));
    const bool rx = parsed->kind != "null" && !(parsed->kind == "pcap" && parsed->in.empty());
    any_rx        = any_rx || rx;
    if (parsed->kind != "pcap") continue;
    if (!parsed->in.empty()) files.push_back({key, parsed->in, true});
    if (!parsed->out.empty()) files.push_back({key, parsed->out, false});
  }
  if (!any_rx) return bad("ports", "no port receives packets (every port is null or send-only)");
  // The tables are inputs too (an output over --fib would destroy the table).
  if (c.chain.empty()) {
    if (!c.fib.empty()) files.push_back({"router.fib", c.fib, true});
    if (!c.neighbors.empty()) files.push_back({"router.neighbors", c.neighbors, true});
    if (!c.rules.empty()) files.push_back({"acl.rules", c.rules, true});
  }
  for (const ModuleSpec& m : c.chain)
    for (const auto& [k, v] : m.args)
      if (k == "fib" || k == "neighbors" || k == "rules") files.push_back({m.kind + "." + k, v, true});
  if (!c.json.empty()) files.push_back({"json", c.json, false});
  if (!c.slow_path.empty() && c.slow_path.rfind("tap:", 0) != 0)
    files.push_back({"slow_path", c.slow_path, false});
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = 0; j < files.size(); ++j)
      if (i != j && !files[i].input && (j < i || files[j].input) &&
          io::same_file(files[i].path, files[j].path))
        return bad(files[i].key, "writes '" + files[i].path + "', the same file as " +
                                     (files[j].input ? "the input of " : "the output of ") +
                                     files[j].key + " ('" + files[j].path + "')");
  return Status::ok();
}

}  // namespace

Status RunConfig::validate() const {
  if (batch < 1 || batch > 65536)
    return bad("batch", "must be 1..65536, got " + std::to_string(batch));
  if (workers < 1 || workers > 256)
    return bad("workers", "must be 1..256, got " + std::to_string(workers));
  if (offload_depth < 1 || offload_depth > 64)
    return bad("offload_depth", "must be 1..64, got " + std::to_string(offload_depth));
  if (delay_us > 1'000'000)
    return bad("delay_us", "must be 0..1000000 (one second), got " + std::to_string(delay_us));
  if (!std::isfinite(duration_s) || duration_s < 0)
    return bad("duration",
               "must be a finite number of seconds >= 0, got " + std::to_string(duration_s));
  WARPATH_TRY(check_one_of("offload_device", offload_device, {"cuda", "cpu"}));
  WARPATH_TRY(check_one_of("schedule", schedule, {"none", "sort"}));
  if (!std::isfinite(stats_interval_s) || stats_interval_s < 0 ||
      (stats_interval_s > 0 && stats_interval_s < 0.05) || stats_interval_s > 86400)
    return bad("stats_interval", "must be 0 (none) or 0.05..86400 seconds, got " +
                                     std::to_string(stats_interval_s));
  if (!metrics.empty())
    if (auto address = parse_listen_address(metrics); !address)
      return bad("metrics", "'" + metrics + "': " + address.status().message());
  if (lookup_engine.empty()) return bad("router.lookup", "must not be empty (use \"auto\")");
  if (chain.empty() && app == AppKind::kIpsec && sa.empty())
    return bad("sa", "app ipsec needs the SA file (--sa FILE)");
  WARPATH_TRY(check_one_of("acl.format", rules_format, {"classbench", "openflow"}));
  {
    const auto algos = classify::classifier_algorithms();
    if (std::find(algos.begin(), algos.end(), algo) == algos.end())
      return bad("acl.algo", "must be one of " + classify::classifier_algorithm_list() +
                                 ", got '" + algo + "'");
  }
  WARPATH_TRY(check_action("acl.match", match_action));
  WARPATH_TRY(check_action("acl.default", default_action));
  if (!ipv6_action.empty()) WARPATH_TRY(check_action("acl.ipv6", ipv6_action));
  if (!nonip_action.empty()) WARPATH_TRY(check_action("acl.nonip", nonip_action));
  return check_ports(*this);  // last: see the header comment
}

}  // namespace warpath::runtime
