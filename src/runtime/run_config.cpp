// src/runtime/run_config.cpp: offload policies' names, the preset catalog, a config's settings,
// and RunConfig::validate().
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

#include "warpath/io/same_file.hpp"
#include "warpath/runtime/metrics.hpp"
#include "warpath/runtime/module.hpp"
#include "warpath/runtime/port.hpp"

namespace warpath::runtime {

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

bool parse_offload(std::string_view text, Offload& out) noexcept {
  for (Offload o : {Offload::kCpu, Offload::kGpu, Offload::kAuto})
    if (text == offload_name(o)) {
      out = o;
      return true;
    }
  return false;
}

namespace {
// Registered at start-up by the chain modules' library, read afterwards.
PresetCatalog& catalog() {
  static PresetCatalog c;
  return c;
}
}  // namespace

bool register_presets(const PresetCatalog& c) noexcept {
  try {
    catalog() = c;
  } catch (...) {  // allocation failure at start-up: no presets
  }
  return true;
}

const PresetCatalog& presets() noexcept { return catalog(); }

std::string preset_app_list() {
  std::string list;
  for (const std::string& a : presets().apps) list += (list.empty() ? "" : ", ") + a;
  return list;
}

std::string RunConfig::setting(std::string_view key, std::string_view fallback) const {
  for (const PresetSetting& s : settings)
    if (s.key == key) return s.value;
  return std::string(fallback);
}

bool RunConfig::has_setting(std::string_view key) const {
  for (const PresetSetting& s : settings)
    if (s.key == key) return true;
  return false;
}

void RunConfig::set_setting(std::string_view key, std::string value) {
  for (PresetSetting& s : settings)
    if (s.key == key) {
      s.value = std::move(value);
      return;
    }
  settings.push_back({std::string(key), std::move(value)});
}

namespace {

Status bad(std::string_view key, const std::string& reason) {
  return Status(Errc::kInvalidArgument, std::string(key) + ": " + reason);
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
  if (c.chain.empty())
    for (const PresetKey& k : presets().keys)
      if (k.path && !c.setting(k.key).empty()) files.push_back({k.key, c.setting(k.key), true});
  // A chain's modules say which of their arguments are files (ArgInfo::file).
  for (const ModuleSpec& m : c.chain) {
    const ModuleInfo* info = find_module_kind(m.kind);
    if (info == nullptr) continue;  // Chain::build names the unknown kind
    for (const auto& [k, v] : m.args)
      for (const ArgInfo& a : info->args)
        if (a.name == k && a.file != ArgFile::kNone && !v.empty())
          files.push_back({m.kind + "." + k, v, a.file == ArgFile::kInput});
  }
  if (!c.json.empty()) files.push_back({"json", c.json, false});
  if (!c.slow_path.empty() && c.slow_path.rfind("tap:", 0) != 0)
    files.push_back({"slow_path", c.slow_path, false});
  // /dev/null loses nothing however many outputs it takes.
  for (size_t i = 0; i < files.size(); ++i)
    for (size_t j = 0; j < files.size(); ++j)
      if (i != j && !files[i].input && (j < i || files[j].input) &&
          !io::same_file(files[i].path, "/dev/null") && io::same_file(files[i].path, files[j].path))
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
  if (offload_delay_us > 1'000'000)
    return bad("offload_delay_us",
               "must be 0..1000000 (one second), got " + std::to_string(offload_delay_us));
  if (offload_delay_us && offload_device != "cpu")
    return bad("offload_delay_us",
               "emulates a device's round trip: only with offload_device = \"cpu\"");
  WARPATH_TRY(check_one_of("schedule", schedule, {"none", "sort"}));
  if (!std::isfinite(stats_interval_s) || stats_interval_s < 0 ||
      (stats_interval_s > 0 && stats_interval_s < 0.05) || stats_interval_s > 86400)
    return bad("stats_interval", "must be 0 (none) or 0.05..86400 seconds, got " +
                                     std::to_string(stats_interval_s));
  if (!metrics.empty())
    if (auto address = parse_listen_address(metrics); !address)
      return bad("metrics", "'" + metrics + "': " + address.status().message());
  if (chain.empty()) {
    const PresetCatalog& p = presets();
    if (!p.apps.empty() && std::find(p.apps.begin(), p.apps.end(), app) == p.apps.end())
      return bad("app", "must be one of " + preset_app_list() + ", got '" + app + "'");
    for (const PresetSetting& s : settings)
      if (std::none_of(p.keys.begin(), p.keys.end(),
                       [&](const PresetKey& k) { return k.key == s.key; }))
        return bad(s.key, "not a setting of any app");
    if (p.check) WARPATH_TRY(p.check(*this));
  }
  return check_ports(*this);  // last: see the header comment
}

}  // namespace warpath::runtime
