// src/runtime/chain.cpp: building a chain of modules, checking its contracts, and running its
// three stages over a frame (chain.hpp).
#include "warpath/runtime/chain.hpp"

#include <chrono>
#include <set>

namespace warpath::runtime {
namespace {

uint64_t now_ns() {
  return uint64_t(std::chrono::duration_cast<std::chrono::nanoseconds>(
                      std::chrono::steady_clock::now().time_since_epoch())
                      .count());
}

std::string known_kinds() {
  std::string s;
  for (const ModuleInfo* m : module_kinds()) s += (s.empty() ? "" : ", ") + m->kind;
  return s;
}

std::string known_args(const ModuleInfo& info) {
  std::string s;
  for (const ArgInfo& a : info.args) s += a.name + ", ";
  return s + "when";
}

}  // namespace

Result<std::unique_ptr<Chain>> Chain::build(const std::vector<ModuleSpec>& specs, BuildEnv env) {
  if (specs.empty()) return Status(Errc::kInvalidArgument, "chain: no modules");
  std::unique_ptr<Chain> chain(new Chain());
  WARPATH_ASSIGN_OR_RETURN(chain->parser_, packet::make_parser("cpu.parse"));
  chain->port_count_ = env.port_count;
  chain->offload_    = env.offload;
  env.reasons        = &chain->reasons_;
  env.contexts       = &chain->contexts_;
  // What every frame has before the first module: the parser's results, the packets' bytes,
  // the verdict (continue) and the default context.
  FieldSet have = field_bit(Field::kParse) | field_bit(Field::kBytes) |
                  field_bit(Field::kVerdict) | field_bit(Field::kContext);
  std::set<std::string> tagged = {"default"};
  for (size_t i = 0; i < specs.size(); ++i) {
    const ModuleSpec& spec   = specs[i];
    const int position       = int(i + 1);
    const std::string prefix = (spec.where.empty() ? "" : spec.where + ": ") + "chain position " +
                               std::to_string(position) + " (" + spec.kind + ")";
    auto fail = [&](Errc code, const std::string& why) {
      return Status(code, prefix + ": " + why);
    };
    const ModuleInfo* info = find_module_kind(spec.kind);
    if (!info)
      return Status(Errc::kInvalidArgument,
                    (spec.where.empty() ? "" : spec.where + ": ") + "chain position " +
                        std::to_string(position) + ": unknown module '" + spec.kind +
                        "' (known: " + known_kinds() + ")");
    std::set<std::string> seen;
    for (const auto& [name, value] : spec.args) {
      bool known = name == "when";
      for (const ArgInfo& a : info->args) known = known || a.name == name;
      if (!known)
        return fail(Errc::kInvalidArgument,
                    "unknown argument '" + name + "' (known: " + known_args(*info) + ")");
      if (!seen.insert(name).second)
        return fail(Errc::kInvalidArgument, "argument '" + name + "' given twice");
    }
    Entry e;
    e.where = prefix;
    ModuleArgs args(spec);
    if (args.has("when")) {
      e.any_context         = false;
      const std::string w   = args.get("when");
      size_t pos            = 0;
      for (;;) {
        const size_t bar       = w.find('|', pos);
        const std::string name = w.substr(pos, bar == std::string::npos ? std::string::npos
                                                                         : bar - pos);
        if (name.empty()) return fail(Errc::kInvalidArgument, "when=" + w + ": empty context name");
        if (!tagged.count(name))
          return fail(Errc::kInvalidArgument,
                      "when=" + w + ": no module before it tags packets with context '" + name +
                          "'");
        const uint16_t id = chain->contexts_.intern(name);
        if (id >= 256) return fail(Errc::kCapacity, "more than 256 contexts");
        e.when[id / 64] |= uint64_t(1) << (id % 64);
        if (bar == std::string::npos) break;
        pos = bar + 1;
      }
    }
    env.position = position;
    auto made    = info->make(args, env);
    if (!made.is_ok()) return fail(made.status().code(), made.status().message());
    e.module                = std::move(*made);
    const ModuleContract c  = e.module->contract();
    const FieldSet missing  = c.reads & ~have;
    if (missing)
      return fail(Errc::kInvalidArgument,
                  "reads " + field_list(missing) + ", which no module before it sets");
    have |= c.sets;
    for (const std::string& ctx : c.contexts) {
      tagged.insert(ctx);
      if (chain->contexts_.intern(ctx) >= 256) return fail(Errc::kCapacity, "more than 256 contexts");
    }
    for (uint32_t j = 0; j < e.module->job_count(); ++j)
      chain->jobs_.push_back({uint32_t(i), j, e.module->job_shape(j)});
    chain->modules_.push_back(std::move(e));
  }
  return chain;
}

std::string Chain::describe() const {
  std::string s;
  for (const Entry& e : modules_) s += (s.empty() ? "" : " -> ") + std::string(e.module->kind());
  return s;
}

std::string Chain::engines(Place place) const {
  std::string s;
  for (const Entry& e : modules_) {
    const std::string one = e.module->engines(place);
    if (!one.empty()) s += (s.empty() ? "" : " + ") + one;
  }
  return s;
}

void Chain::make_slots(Frame& f) const {
  f.slots.clear();
  for (const Entry& e : modules_) f.slots.push_back(e.module->make_slot(f.capacity));
}

Status Chain::pre(Frame& f, uint64_t* ns) const {
  const uint32_t n = f.size();
  ExecContext ctx;
  WARPATH_TRY(parser_->parse(f.batch.view(), {f.infos.data(), n}, ctx));
  std::fill_n(f.reason.begin(), n, kContinue);
  std::fill_n(f.context.begin(), n, kDefaultContext);
  std::fill_n(f.flow.begin(), n, 0u);
  for (size_t m = 0; m < modules_.size(); ++m) {
    const uint64_t t0 = ns ? now_ns() : 0;
    WARPATH_TRY(modules_[m].module->pre(f, f.slots[m].get()));
    if (ns) ns[m] += now_ns() - t0;
  }
  return Status::ok();
}

Status Chain::shade(Frame& f, Place place, ExecContext& ctx, uint64_t* ns) const {
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Module& mod = *modules_[m].module;
    const uint32_t jobs = mod.job_count();
    if (!jobs) continue;
    const uint64_t t0 = ns ? now_ns() : 0;
    for (uint32_t j = 0; j < jobs; ++j) {
      const JobData d = mod.job_data(f, f.slots[m].get(), j);
      if (d.count) WARPATH_TRY(mod.run_job(place, j, d, ctx));
    }
    if (ns) ns[m] += now_ns() - t0;
  }
  return Status::ok();
}

void Chain::post(Frame& f, Scratch& s, ModuleCounters* counters, uint64_t* ns) const {
  const uint32_t n = f.size();
  if (s.mask.size() < f.capacity) s.mask.resize(f.capacity);
  s.list.reserve(f.capacity);
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Entry& e    = modules_[m];
    const uint64_t t0 = ns ? now_ns() : 0;
    s.list.clear();
    for (uint32_t i = 0; i < n; ++i) {
      const uint16_t c = f.context[i];
      const bool in    = f.reason[i] == kContinue &&
                      (e.any_context || (c < 256 && (e.when[c / 64] >> (c % 64) & 1)));
      s.mask[i] = in;
      if (in) s.list.push_back(i);
    }
    const Selection sel{{s.list.data(), uint32_t(s.list.size())}, s.mask.data()};
    e.module->post(f, f.slots[m].get(), sel);
    if (ns) ns[m] += now_ns() - t0;
    if (counters) {
      uint64_t out = 0, fwd = 0;
      for (uint32_t i : s.list) {
        out += f.reason[i] == kContinue;
        fwd += f.reason[i] == kReasonForwarded;
      }
      counters[m].in.fetch_add(s.list.size(), std::memory_order_relaxed);
      counters[m].out.fetch_add(out, std::memory_order_relaxed);
      counters[m].forwarded.fetch_add(fwd, std::memory_order_relaxed);
    }
  }
  for (uint32_t i = 0; i < n; ++i) {
    if (f.reason[i] == kContinue)
      f.reason[i] = kReasonNoVerdict;
    else if (f.reason[i] == kReasonForwarded && f.out[i] >= port_count_)
      f.reason[i] = kReasonNoPort;
  }
}

}  // namespace warpath::runtime
