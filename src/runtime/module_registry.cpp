// src/runtime/module_registry.cpp: the registry of module kinds, module arguments, contexts,
// fields and reasons (module.hpp, reasons.hpp).
#include <algorithm>
#include <charconv>
#include <cstdio>
#include <cstdlib>
#include <map>
#include <mutex>

#include "warpath/runtime/module.hpp"
#include "warpath/runtime/reasons.hpp"

namespace warpath::runtime {

const char* field_name(Field f) noexcept {
  switch (f) {
    case Field::kParse:
      return "parse";
    case Field::kFlow:
      return "flow";
    case Field::kContext:
      return "context";
    case Field::kVerdict:
      return "verdict";
    case Field::kBytes:
      return "bytes";
    case Field::kCount:
      break;
  }
  return "?";
}

std::string field_list(FieldSet s) {
  std::string out;
  for (unsigned f = 0; f < unsigned(Field::kCount); ++f)
    if (s & field_bit(Field(f))) out += (out.empty() ? "" : ", ") + std::string(field_name(Field(f)));
  return out.empty() ? "-" : out;
}

namespace {

std::string names_beyond(const std::vector<std::string>& a, const std::vector<std::string>& b,
                         const std::vector<std::string>* b2 = nullptr) {
  std::string out;
  for (const std::string& n : a)
    if (std::find(b.begin(), b.end(), n) == b.end() &&
        (!b2 || std::find(b2->begin(), b2->end(), n) == b2->end()))
      out += (out.empty() ? "" : ", ") + n;
  return out;
}

std::string join(const std::vector<std::string>& v) {
  std::string out;
  for (const std::string& n : v) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace

std::string contract_excess(const ModuleContract& a, const ModuleContract& b) {
  std::string out;
  auto add = [&out](const char* what, const std::string& names) {
    if (!names.empty()) out += (out.empty() ? "" : "; ") + std::string(what) + " " + names;
  };
  if (a.reads & ~b.reads) add("reads", field_list(a.reads & ~b.reads));
  if (a.sets & ~b.sets) add("sets", field_list(a.sets & ~b.sets));
  add("produces", names_beyond(a.produces, b.produces));
  add("consumes", names_beyond(a.consumes, b.consumes));
  add("may consume", names_beyond(a.may_consume, b.may_consume, &b.consumes));
  return out;
}

std::string contract_text(const ModuleContract& c) {
  std::string s = "reads " + field_list(c.reads) + "; sets " + field_list(c.sets);
  if (!c.produces.empty()) s += "; produces " + join(c.produces);
  if (!c.consumes.empty()) s += "; consumes " + join(c.consumes);
  if (!c.may_consume.empty()) s += "; may consume " + join(c.may_consume);
  return s;
}

size_t find_producer(const BuildEnv& env, std::string_view queue) {
  for (size_t k = env.earlier.size(); k-- > 0;) {
    const ModuleContract c = env.earlier[k]->contract();
    if (std::find(c.produces.begin(), c.produces.end(), queue) != c.produces.end()) return k;
  }
  return env.earlier.size();
}

ReasonTable::ReasonTable() {
  entries_ = {{"forwarded", Verdict::kForward, kPipelineOwner},
              {"no_port", Verdict::kDrop, kPipelineOwner},
              {"tx_error", Verdict::kDrop, kPipelineOwner},
              {"no_verdict", Verdict::kDrop, kPipelineOwner}};
}

Result<uint16_t> ReasonTable::add(std::string_view name, Verdict verdict, int module) {
  if (verdict == Verdict::kForward)
    return Status(Errc::kInvalidArgument,
                  "reason '" + std::string(name) + "': forwarding has one reason, 'forwarded'");
  if (entries_.size() >= 0xFFFF)
    return Status(Errc::kCapacity, "reason '" + std::string(name) + "': more than 65534 reasons");
  entries_.push_back({std::string(name), verdict, module});
  return uint16_t(entries_.size() - 1);
}

uint16_t ContextTable::intern(std::string_view name) {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return uint16_t(i);
  names_.emplace_back(name);
  return uint16_t(names_.size() - 1);
}

Result<uint16_t> ContextTable::find(std::string_view name) const {
  for (size_t i = 0; i < names_.size(); ++i)
    if (names_[i] == name) return uint16_t(i);
  return Status(Errc::kNotFound, "no context '" + std::string(name) + "'");
}

bool ModuleArgs::has(std::string_view name) const {
  for (const auto& [k, v] : spec_.args)
    if (k == name) return true;
  return false;
}

std::string ModuleArgs::get(std::string_view name, std::string_view fallback) const {
  for (const auto& [k, v] : spec_.args)
    if (k == name) return v;
  return std::string(fallback);
}

Result<uint64_t> ModuleArgs::get_u64(std::string_view name, uint64_t fallback,
                                     uint64_t max) const {
  if (!has(name)) return fallback;
  const std::string v = get(name);
  uint64_t x          = 0;
  auto [end, ec]      = std::from_chars(v.data(), v.data() + v.size(), x);
  if (v.empty() || ec != std::errc() || end != v.data() + v.size() || x > max)
    return Status(Errc::kInvalidArgument, std::string(name) + "=" + v +
                                              ": expected an integer 0.." + std::to_string(max));
  return x;
}

namespace {

struct Registry {
  std::mutex mu;
  std::map<std::string, std::unique_ptr<ModuleInfo>, std::less<>> kinds;
  std::vector<ModuleInfo (*)()> pending;  // WARPATH_REGISTER_MODULE's, not yet called

  // Registers the kinds the program's modules declared (under mu).
  void drain() {
    for (ModuleInfo (*source)() : pending) {
      ModuleInfo info = source();
      if (info.kind.empty() || !info.make || kinds.count(info.kind)) {
        std::fprintf(stderr, "warpath: module kind '%s' %s\n", info.kind.c_str(),
                     info.kind.empty() || !info.make ? "has no name or no factory"
                                                     : "is registered twice");
        std::abort();  // a build defect, not an input error: no program may run with it
      }
      std::string kind = info.kind;
      kinds.emplace(kind, std::make_unique<ModuleInfo>(std::move(info)));
    }
    pending.clear();
  }
};

Registry& registry() {
  static Registry r;
  return r;
}

// The registry, its declared kinds registered, locked.
struct Locked {
  Registry& r;
  std::lock_guard<std::mutex> lock;
  Locked() : r(registry()), lock(r.mu) { r.drain(); }
};

}  // namespace

bool detail::add_module_kind_source(ModuleInfo (*info)()) noexcept {
  Registry& r = registry();
  std::lock_guard<std::mutex> lock(r.mu);
  r.pending.push_back(info);
  return true;
}

std::vector<const ModuleInfo*> module_kinds() {
  Locked l;
  Registry& r = l.r;
  std::vector<const ModuleInfo*> out;
  for (const auto& [k, v] : r.kinds) out.push_back(v.get());
  return out;
}

const ModuleInfo* find_module_kind(std::string_view kind) {
  Locked l;
  Registry& r = l.r;
  auto it = r.kinds.find(kind);
  return it == r.kinds.end() ? nullptr : it->second.get();
}

Status register_module_kind(ModuleInfo info) {
  if (info.kind.empty() || !info.make)
    return Status(Errc::kInvalidArgument, "a module kind needs a name and a factory");
  Locked l;
  Registry& r = l.r;
  if (r.kinds.count(info.kind))
    return Status(Errc::kInvalidArgument, "module kind '" + info.kind + "' already exists");
  std::string kind = info.kind;
  r.kinds.emplace(kind, std::make_unique<ModuleInfo>(std::move(info)));
  return Status::ok();
}

}  // namespace warpath::runtime
