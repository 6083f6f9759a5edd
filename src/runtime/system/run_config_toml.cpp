// src/runtime/system/run_config_toml.cpp: the TOML run configuration (schema: run_config.hpp).
//
// How
//   toml++ (Debian's shared library, built with exceptions) parses the text; a syntax error is
//   caught here and returned as kParseError "file:line: reason". The document is then walked
//   key by key: an unknown key or a wrong type is kParseError "file:line: key: reason", with
//   the key as the file spells it under its table ("acl.rules", "ports.in"). Values are range
//   checked by RunConfig::validate(), whose messages start with the same key names; the line
//   of that key is put in front. A file without [ports] is valid (the CLI fills default ports
//   later), so validate()'s "ports: ..." error is ignored then.
//
//   toml++ tables are ordered by key, not by position in the file; [ports] is sorted back into
//   file order by the source line (and column) of each key, because the position is the port
//   number.
//
//   The preset applications' settings ([router], [acl], sa, ...) are the keys the chain
//   modules' library declares (run_config.hpp: PresetCatalog); the loader knows none by name.
//
//   Relative paths (the preset settings that are paths, json, slow_path and the files in
//   pcap port specs) are resolved against the directory of the config file, so a config works
//   from any working directory.
#include <toml++/toml.h>

#include <algorithm>
#include <cstdint>
#include <exception>
#include <filesystem>
#include <map>
#include <string>
#include <string_view>
#include <tuple>
#include <vector>

#include "warpath/io/text_file.hpp"
#include "warpath/runtime/module.hpp"
#include "warpath/runtime/run_config.hpp"

namespace warpath::runtime {
namespace {

const char* type_name(toml::node_type t) {
  switch (t) {
    case toml::node_type::table:
      return "a table";
    case toml::node_type::array:
      return "an array";
    case toml::node_type::string:
      return "a string";
    case toml::node_type::integer:
      return "an integer";
    case toml::node_type::floating_point:
      return "a float";
    case toml::node_type::boolean:
      return "a boolean";
    case toml::node_type::date:
      return "a date";
    case toml::node_type::time:
      return "a time";
    case toml::node_type::date_time:
      return "a date-time";
    case toml::node_type::none:
      break;
  }
  return "nothing";
}

class Loader {
 public:
  Loader(std::string_view name, RunConfig& config)
      : name_(name), base_(std::filesystem::path(std::string(name)).parent_path()), c_(config) {}

  Status load(const toml::table& root) {
    for (auto&& [k, v] : root) {
      const std::string key(k.str());
      const uint32_t line = uint32_t(k.source().begin.line);
      lines_[key]         = line;
      if (key == "module") {
        WARPATH_TRY(modules(line, v));
      } else if (key == "ports" || preset_table(key)) {
        const toml::table* t = v.as_table();
        if (!t) return wrong_type(line, key, "a table", v);
        lines_[key] = uint32_t(t->source().begin.line ? t->source().begin.line : line);
        WARPATH_TRY(key == "ports" ? ports(*t) : preset_settings(key, *t));
      } else if (const PresetKey* pk = preset_key(key)) {
        WARPATH_TRY(setting(line, *pk, v));
      } else {
        WARPATH_TRY(top(line, key, v));
      }
    }
    // The file's first preset key: app, a preset's table or one of its settings.
    const std::string* first = nullptr;
    uint32_t first_line      = 0;
    for (const auto& [key, line] : lines_)
      if ((key == "app" || preset_table(key) || preset_key(key)) && (!first || line < first_line)) {
        first      = &key;
        first_line = line;
      }
    if (first) c_.preset_where = name_ + ":" + std::to_string(first_line);
    if (first && !c_.chain.empty())  // the presets' settings have no place in a chain
      return error(Errc::kInvalidArgument, first_line,
                   *first +
                       ": not with [[module]] (a chain takes its tables from its modules' "
                       "arguments)");
    return check();
  }

 private:
  /// [[module]] tables: kind, then every other key an argument (a string, an integer, a float
  /// or a boolean, kept as text). The arguments the module marks as files (ArgInfo::file) are
  /// paths, resolved against the file's directory; for a kind this program does not know, the
  /// usual names of file arguments are.
  Status modules(uint32_t line, const toml::node& v) {
    const toml::array* a = v.as_array();
    if (!a) return wrong_type(line, "module", "an array of tables ([[module]])", v);
    std::vector<ModuleSpec> chain;
    for (const toml::node& e : *a) {
      const toml::table* t = e.as_table();
      const uint32_t at    = uint32_t(e.source().begin.line ? e.source().begin.line : line);
      if (!t) return wrong_type(at, "module", "a table", e);
      ModuleSpec spec;
      spec.where             = name_ + ":" + std::to_string(at);
      const toml::node* kind = t->get("kind");
      const ModuleInfo* info =
          kind && kind->as_string() ? find_module_kind(kind->as_string()->get()) : nullptr;
      const auto names_a_file = [info](const std::string& key) {
        if (info == nullptr)
          return key == "rules" || key == "fib" || key == "neighbors" || key == "patterns" ||
                 key == "sa" || key == "flows" || key == "dump" || key == "log" || key == "eve";
        for (const ArgInfo& arg : info->args)
          if (arg.name == key) return arg.file != ArgFile::kNone;
        return false;
      };
      for (auto&& [k, val] : *t) {
        const std::string key = std::string(k.str());
        const uint32_t kl     = uint32_t(k.source().begin.line);
        std::string text;
        if (const auto* str = val.as_string()) {
          text = str->get();
          if (names_a_file(key)) text = resolve(text);
        } else if (const auto* i = val.as_integer()) {
          text = std::to_string(i->get());
        } else if (const auto* f = val.as_floating_point()) {
          text = std::to_string(f->get());
        } else if (const auto* b = val.as_boolean()) {
          text = b->get() ? "true" : "false";
        } else {
          return wrong_type(kl, "module." + key, "a string, a number or a boolean", val);
        }
        if (key == "kind")
          spec.kind = text;
        else
          spec.args.emplace_back(key, text);
      }
      if (spec.kind.empty())
        return error(Errc::kParseError, at, "module: every [[module]] needs kind = \"...\"");
      chain.push_back(std::move(spec));
    }
    c_.chain = std::move(chain);
    return Status::ok();
  }

  Status error(Errc code, uint32_t line, const std::string& text) const {
    return Status(code, name_ + ":" + std::to_string(line) + ": " + text);
  }
  Status wrong_type(uint32_t line, const std::string& key, const char* want,
                    const toml::node& v) const {
    return error(Errc::kParseError, line,
                 key + ": expected " + want + ", got " + type_name(v.type()));
  }
  Status unknown(uint32_t line, const std::string& key, const char* known) const {
    return error(Errc::kParseError, line, key + ": unknown key (known here: " + known + ")");
  }

  std::string resolve(const std::string& path) const {
    if (path.empty() || base_.empty() || std::filesystem::path(path).is_absolute()) return path;
    return (base_ / path).string();
  }
  /// pcap:IN:OUT with IN and OUT resolved; other kinds unchanged. OUT starts after the last
  /// colon, as parse_port_spec() splits it.
  std::string resolve_spec(const std::string& spec) const {
    constexpr std::string_view kPcap = "pcap:";
    if (spec.rfind(kPcap, 0) != 0) return spec;
    const std::string rest = spec.substr(kPcap.size());
    const size_t colon     = rest.rfind(':');
    const std::string in   = rest.substr(0, colon);
    const std::string out  = colon == std::string::npos ? "" : rest.substr(colon + 1);
    std::string resolved   = std::string(kPcap) + resolve(in);
    if (colon != std::string::npos) resolved += ":" + resolve(out);
    return resolved;
  }

  Status get_string(uint32_t line, const std::string& key, const toml::node& v, std::string& out) {
    const auto* s = v.as_string();
    if (!s) return wrong_type(line, key, "a string", v);
    out = s->get();
    return Status::ok();
  }
  Status get_path(uint32_t line, const std::string& key, const toml::node& v, std::string& out) {
    WARPATH_TRY(get_string(line, key, v, out));
    out = resolve(out);
    return Status::ok();
  }
  Status get_u32(uint32_t line, const std::string& key, const toml::node& v, uint32_t& out) {
    const auto* i = v.as_integer();
    if (!i) return wrong_type(line, key, "an integer", v);
    const int64_t x = i->get();
    if (x < 0 || x > int64_t(UINT32_MAX))
      return error(Errc::kInvalidArgument, line, key + ": out of range, got " + std::to_string(x));
    out = uint32_t(x);
    return Status::ok();
  }

  /// Seconds, written as an integer or a float (range checked by RunConfig::validate()).
  Status get_seconds(uint32_t line, const std::string& key, const toml::node& v, double& out) {
    if (const auto* f = v.as_floating_point()) {
      out = f->get();
    } else if (const auto* i = v.as_integer()) {
      out = double(i->get());
    } else {
      return wrong_type(line, key, "a number of seconds", v);
    }
    return Status::ok();
  }

  Status top(uint32_t line, const std::string& key, const toml::node& v) {
    if (key == "app") return get_string(line, key, v, c_.app);  // checked by validate()
    if (key == "engine") {
      std::string text;
      WARPATH_TRY(get_string(line, key, v, text));
      if (!parse_offload(text, c_.engine))
        return error(Errc::kInvalidArgument, line,
                     key + ": must be one of cpu, gpu, auto, got '" + text + "'");
      return Status::ok();
    }
    if (key == "offload_device") return get_string(line, key, v, c_.offload_device);
    if (key == "offload_depth") return get_u32(line, key, v, c_.offload_depth);
    if (key == "offload_delay_us") return get_u32(line, key, v, c_.offload_delay_us);
    if (key == "workers") return get_u32(line, key, v, c_.workers);
    if (key == "batch") return get_u32(line, key, v, c_.batch);
    if (key == "delay_us") return get_u32(line, key, v, c_.delay_us);
    if (key == "stats_interval") return get_seconds(line, key, v, c_.stats_interval_s);
    if (key == "duration") return get_seconds(line, key, v, c_.duration_s);
    if (key == "seed") {
      const auto* i = v.as_integer();
      if (!i) return wrong_type(line, key, "an integer", v);
      if (i->get() < 0)
        return error(Errc::kInvalidArgument, line,
                     key + ": must be >= 0, got " + std::to_string(i->get()));
      c_.seed = uint64_t(i->get());
      return Status::ok();
    }
    if (key == "json") return get_path(line, key, v, c_.json);
    if (key == "slow_path") {  // a capture file (resolved like every path) or tap:IFACE
      WARPATH_TRY(get_string(line, key, v, c_.slow_path));
      if (c_.slow_path.rfind("tap:", 0) != 0) c_.slow_path = resolve(c_.slow_path);
      return Status::ok();
    }
    if (key == "metrics") return get_string(line, key, v, c_.metrics);
    // The OpenFlow agent's TLS files (pssl:, ssl:) and inactivity probe.
    if (key == "openflow_private_key") return get_path(line, key, v, c_.openflow_private_key);
    if (key == "openflow_certificate") return get_path(line, key, v, c_.openflow_certificate);
    if (key == "openflow_ca_cert") return get_path(line, key, v, c_.openflow_ca_cert);
    if (key == "openflow_probe") {
      double s = 0;
      WARPATH_TRY(get_seconds(line, key, v, s));
      if (s > 3600) return error(Errc::kInvalidArgument, line, key + ": at most 3600 seconds");
      c_.openflow_probe_ms = s > 0 ? std::max(1u, uint32_t(s * 1000 + 0.5)) : 0;  // 0: off
      return Status::ok();
    }
    if (key == "pin_threads") {
      const auto* b = v.as_boolean();
      if (!b) return wrong_type(line, key, "a boolean", v);
      c_.pin_threads = b->get();
      return Status::ok();
    }
    if (key == "zero_copy") {
      const auto* b = v.as_boolean();
      if (!b) return wrong_type(line, key, "a boolean", v);
      c_.zero_copy = b->get();
      return Status::ok();
    }
    if (key == "schedule") return get_string(line, key, v, c_.schedule);
    if (key == "gen_profile") {
      const auto* s = v.as_string();
      if (!s) return wrong_type(line, key, "a string", v);
      c_.gen_profile = s->get();
      return Status::ok();
    }
    if (key == "cpus") {
      const auto* a = v.as_array();
      if (!a) return wrong_type(line, key, "an array of core numbers", v);
      std::vector<int> cpus;
      for (const toml::node& e : *a) {
        const auto* i = e.as_integer();
        if (!i || i->get() < 0 || i->get() > 65535)
          return error(Errc::kInvalidArgument, line, key + ": core numbers must be 0..65535");
        cpus.push_back(int(i->get()));
      }
      c_.cpus = std::move(cpus);
      return Status::ok();
    }
    if (key == "openflow") {  // the switch's agent: a target or an array of them
      std::vector<std::string> targets;
      if (const auto* one = v.as_string()) {
        targets.push_back(one->get());
      } else if (const auto* a = v.as_array()) {
        for (const toml::node& e : *a) {
          const auto* t = e.as_string();
          if (!t) return wrong_type(line, key, "a string or an array of strings", v);
          targets.push_back(t->get());
        }
      } else {
        return wrong_type(line, key, "a string or an array of strings", v);
      }
      c_.openflow = std::move(targets);
      return Status::ok();
    }
    std::string known =
        "app, engine, offload_device, offload_depth, offload_delay_us, workers, batch, delay_us, "
        "duration, seed, json, slow_path, metrics, stats_interval, schedule, pin_threads, "
        "zero_copy, cpus, "
        "gen_profile";
    std::vector<std::string> tables;
    for (const PresetKey& k : presets().keys) {
      const size_t dot = k.key.find('.');
      if (dot == std::string::npos) {
        known += ", " + k.key;
      } else if (std::find(tables.begin(), tables.end(), k.key.substr(0, dot)) == tables.end()) {
        tables.push_back(k.key.substr(0, dot));
      }
    }
    known +=
        ", openflow, openflow_probe, openflow_private_key, openflow_certificate, "
        "openflow_ca_cert, [ports]";
    for (const std::string& t : tables) known += ", [" + t + "]";
    return unknown(line, key, (known + ", [[module]]").c_str());
  }

  Status ports(const toml::table& t) {
    struct Entry {
      uint32_t line, column;
      std::string name, spec;
    };
    std::vector<Entry> entries;
    for (auto&& [k, v] : t) {
      const std::string key = "ports." + std::string(k.str());
      const uint32_t line   = uint32_t(k.source().begin.line);
      lines_[key]           = line;
      std::string spec;
      WARPATH_TRY(get_string(line, key, v, spec));
      entries.push_back(
          {line, uint32_t(k.source().begin.column), std::string(k.str()), resolve_spec(spec)});
    }
    std::sort(entries.begin(), entries.end(), [](const Entry& a, const Entry& b) {
      return std::tie(a.line, a.column) < std::tie(b.line, b.column);
    });
    c_.ports.clear();
    for (Entry& e : entries) c_.ports.emplace_back(std::move(e.name), std::move(e.spec));
    file_has_ports_ = true;
    return Status::ok();
  }

  /// A preset's table: [T] when some key of the catalog is "T.KEY".
  static bool preset_table(const std::string& name) {
    for (const PresetKey& k : presets().keys)
      if (k.key.rfind(name + ".", 0) == 0) return true;
    return false;
  }
  static const PresetKey* preset_key(const std::string& key) {
    for (const PresetKey& k : presets().keys)
      if (k.key == key) return &k;
    return nullptr;
  }

  /// A preset's setting: a string (a path resolved against the file's directory).
  Status setting(uint32_t line, const PresetKey& k, const toml::node& v) {
    std::string text;
    WARPATH_TRY(k.path ? get_path(line, k.key, v, text) : get_string(line, k.key, v, text));
    c_.set_setting(k.key, std::move(text));
    return Status::ok();
  }

  /// [T]: each key one of the catalog's "T.KEY".
  Status preset_settings(const std::string& table, const toml::table& t) {
    for (auto&& [k, v] : t) {
      const std::string key = table + "." + std::string(k.str());
      const uint32_t line   = uint32_t(k.source().begin.line);
      lines_[key]           = line;
      if (const PresetKey* pk = preset_key(key)) {
        WARPATH_TRY(setting(line, *pk, v));
        continue;
      }
      std::string known;
      for (const PresetKey& pk2 : presets().keys)
        if (pk2.key.rfind(table + ".", 0) == 0)
          known += (known.empty() ? "" : ", ") + pk2.key.substr(table.size() + 1);
      return unknown(line, key, known.c_str());
    }
    return Status::ok();
  }

  /// validate(), with the file and line of the key its message names.
  Status check() const {
    const Status s = c_.validate();
    if (s.is_ok()) return s;
    const std::string& m = s.message();
    // The longest key of this file that the message starts with ("ports.in" before "ports").
    const std::string* best = nullptr;
    uint32_t line           = 0;
    for (const auto& [key, at] : lines_)
      if (m.rfind(key + ": ", 0) == 0 && (!best || key.size() > best->size())) {
        best = &key;
        line = at;
      }
    if (best) return error(s.code(), line, m);
    if (!file_has_ports_ && m.rfind("ports: ", 0) == 0) return Status::ok();  // filled later
    return Status(s.code(), name_ + ": " + m);
  }

  std::string name_;
  std::filesystem::path base_;
  RunConfig& c_;
  std::map<std::string, uint32_t> lines_;  ///< key as the file spells it -> its line
  bool file_has_ports_ = false;
};

}  // namespace

Status parse_run_config(std::string_view text, std::string_view name, RunConfig& config) {
  WARPATH_TRY(io::check_toml_ascii(text, name));
  try {
    toml::table root;
    try {
      root = toml::parse(text, name);
    } catch (const toml::parse_error& e) {
      return Status(Errc::kParseError, std::string(name) + ":" +
                                           std::to_string(e.source().begin.line) + ": " +
                                           std::string(e.description()));
    }
    // Work on a copy: a failed load leaves `config` as it was.
    RunConfig updated = config;
    WARPATH_TRY(Loader(name, updated).load(root));
    config = std::move(updated);
    return Status::ok();
  } catch (const std::exception& e) {  // allocation failure and the like
    return Status(Errc::kParseError, std::string(name) + ": " + e.what());
  }
}

Status load_run_config(const std::string& path, RunConfig& config) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_run_config(*text, path, config);
}

}  // namespace warpath::runtime
