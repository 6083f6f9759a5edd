// src/runtime/chain.cpp: building a chain of modules, checking its contracts, and running its
// three stages over a frame (chain.hpp).
#include "warpath/runtime/chain.hpp"

#include <algorithm>
#include <set>

#include "runtime/core/schedule_key.hpp"
#include "runtime/thread_util.hpp"

namespace warpath::runtime {
namespace {

std::string known_kinds() {
  std::string s;
  for (const ModuleInfo* m : module_kinds()) s += (s.empty() ? "" : ", ") + m->kind;
  return s;
}

// The kinds whose declared contract produces `queue`: "flow", "flow or x".
std::string producer_kinds(const std::string& queue) {
  std::string s;
  for (const ModuleInfo* m : module_kinds()) {
    const auto& p = m->contract.produces;
    if (std::find(p.begin(), p.end(), queue) != p.end()) s += (s.empty() ? "" : " or ") + m->kind;
  }
  return s;
}

std::string first_word(const std::string& s) {
  const size_t space = s.find(' ');
  return s.empty() ? "producer" : s.substr(0, space);
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
    env.earlier.clear();
    for (const Entry& before : chain->modules_) env.earlier.push_back(before.module.get());
    // Side queues the kind consumes: an earlier module must produce each (checked before the
    // factory runs, so every consumer is refused the same way).
    for (const std::string& queue : info->contract.consumes)
      if (find_producer(env, queue) == env.earlier.size()) {
        const std::string kinds = producer_kinds(queue);
        return fail(Errc::kInvalidArgument,
                    "needs " + (kinds.empty() ? "a module producing '" + queue + "'"
                                              : "a " + kinds + " module") +
                        " before it (e.g. " + first_word(kinds) + " -> " + spec.kind +
                        "): it consumes '" + queue + "'");
      }
    std::vector<std::string> module_warnings;
    env.warnings = &module_warnings;
    auto made    = info->make(args, env);
    for (const std::string& w : module_warnings) chain->warnings_.push_back(prefix + ": " + w);
    if (!made.is_ok()) return fail(made.status().code(), made.status().message());
    e.module                = std::move(*made);
    const ModuleContract c  = e.module->contract();
    if (const std::string beyond = contract_excess(c, info->contract); !beyond.empty())
      return fail(Errc::kInvalidArgument, "its contract() " + beyond +
                                       ", beyond its kind's declared contract (ModuleInfo)");
    e.sets_context          = (c.sets & field_bit(Field::kContext)) != 0;
    chain->reads_parse_ |= (c.reads & field_bit(Field::kParse)) != 0;
    const FieldSet missing  = c.reads & ~have;
    if (missing)
      return fail(Errc::kInvalidArgument,
                  "reads " + field_list(missing) + ", which no module before it sets");
    have |= c.sets;
    for (const std::string& ctx : c.contexts) {
      tagged.insert(ctx);
      if (chain->contexts_.intern(ctx) >= 256) return fail(Errc::kCapacity, "more than 256 contexts");
    }
    e.stage = uint32_t(chain->stages_ - 1);
    if (e.stage == 0)
      for (uint32_t j = 0; j < e.module->job_count(); ++j)
        chain->jobs_.push_back({uint32_t(i), j, e.module->job_shape(j)});
    // A module that rewrites headers ends its stage (chain.hpp: Stages).
    if (c.sets & field_bit(Field::kParse)) ++chain->stages_;
    chain->modules_.push_back(std::move(e));
  }
  return chain;
}

std::string Chain::describe() const {
  std::string s;
  for (const Entry& e : modules_) s += (s.empty() ? "" : " -> ") + std::string(e.module->kind());
  return s;
}

size_t Chain::tail_room(uint32_t batch) const noexcept {
  size_t t = 0;
  for (const Entry& e : modules_) t += e.module->tail_room(batch);
  return t;
}

uint32_t Chain::headroom() const noexcept {
  uint32_t h = 0;
  for (const Entry& e : modules_) h = std::max(h, e.module->headroom());
  return h ? (h + 63) / 64 * 64 + kL3Align : 0;
}

std::vector<std::string> Chain::reload() const {
  std::vector<std::string> lines;
  for (const Entry& e : modules_) {
    auto r = e.module->reload();
    if (r.is_ok()) lines.push_back(e.where + ": reloaded: " + r.value());
    else if (r.status().code() != Errc::kNotSupported)
      lines.push_back(e.where + ": reload failed (kept the running tables): " + r.status().message());
  }
  return lines;
}

std::string Chain::engines(Place place) const {
  std::string s;
  for (const Entry& e : modules_) {
    const std::string one = e.module->engines(place);
    if (!one.empty()) s += (s.empty() ? "" : " + ") + one;
  }
  return s;
}

Result<Chain::States> Chain::make_states() const {
  States states;
  for (const Entry& e : modules_) {
    auto st = e.module->make_state();
    if (!st.is_ok()) return Status(st.status().code(), e.where + ": " + st.status().message());
    states.push_back(std::move(*st));
  }
  return states;
}

void Chain::make_slots(Frame& f, const States* states) const {
  f.slots.clear();
  for (size_t m = 0; m < modules_.size(); ++m) {
    auto slot                 = modules_[m].module->make_slot(f.capacity);
    ModuleState* const state = states && m < states->size() ? (*states)[m].get() : nullptr;
    if (state && !slot) slot = std::make_unique<ModuleSlot>();
    if (slot) slot->state = state;
    f.slots.push_back(std::move(slot));
  }
}

void Chain::idle_states(States& states, uint64_t mono_ns) const {
  for (size_t m = 0; m < states.size() && m < modules_.size(); ++m)
    if (states[m]) modules_[m].module->idle(*states[m], mono_ns);
}

uint32_t Chain::originate(States& states, packet::PacketBatch& out, std::vector<uint64_t>& masks) const {
  uint32_t n = 0;
  for (size_t m = 0; m < modules_.size(); ++m)
    n += modules_[m].module->originate(m < states.size() ? states[m].get() : nullptr, out, masks);
  return n;
}

Status Chain::finish_states(States& states) const {
  Status first;
  for (size_t m = 0; m < states.size() && m < modules_.size(); ++m) {
    if (!states[m]) continue;
    Status st = modules_[m].module->finish(*states[m]);
    if (!st.is_ok() && first.is_ok()) first = Status(st.code(), modules_[m].where + ": " + st.message());
  }
  return first;
}

Status Chain::parse(Frame& f) const {
  ExecContext ctx;
  return parser_->parse(f.batch.view(), {f.infos.data(), f.size()}, ctx);
}

Status Chain::pre(Frame& f, uint64_t* ticks_out, uint64_t* parse_ticks) const {
  const uint32_t n = f.size();
  if (parses()) {
    const uint64_t p0 = parse_ticks ? ticks() : 0;
    WARPATH_TRY(parse(f));
    if (parse_ticks) *parse_ticks += ticks() - p0;
  }
  std::fill_n(f.reason.begin(), n, kContinue);
  std::fill_n(f.context.begin(), n, kDefaultContext);
  std::fill_n(f.flow.begin(), n, 0u);
  std::fill_n(f.frag_mtu.begin(), n, uint16_t(0));
  // One clock read per module boundary: each module's time ends where the next one's starts.
  uint64_t t = ticks_out ? ticks() : 0;
  for (size_t m = 0; m < modules_.size() && modules_[m].stage == 0; ++m) {
    WARPATH_TRY(modules_[m].module->pre(f, f.slots[m].get()));
    if (ticks_out) {
      const uint64_t t1 = ticks();
      ticks_out[m] += t1 - t;
      t = t1;
    }
  }
  return Status::ok();
}

namespace {

// Every job of one module for one frame, on the engines of `place`.
Status run_jobs(const Module& mod, Frame& f, ModuleSlot* slot, Place place, ExecContext& ctx) {
  for (uint32_t j = 0; j < mod.job_count(); ++j) {
    const JobData d = mod.job_data(f, slot, j);
    if (d.count) WARPATH_TRY(mod.run_job(place, j, d, ctx));
  }
  return Status::ok();
}

}  // namespace

Status Chain::shade(Frame& f, Place place, ExecContext& ctx, uint64_t* ticks_out) const {
  uint64_t t = ticks_out ? ticks() : 0;
  for (size_t m = 0; m < modules_.size() && modules_[m].stage == 0; ++m) {
    const Module& mod = *modules_[m].module;
    if (!mod.job_count()) continue;
    WARPATH_TRY(run_jobs(mod, f, f.slots[m].get(), place, ctx));
    if (ticks_out) {
      const uint64_t t1 = ticks();
      ticks_out[m] += t1 - t;
      t = t1;
    }
  }
  return Status::ok();
}

Status Chain::stage_pre_shade(Frame& f, uint32_t stage, uint64_t* ticks_out) const {
  ExecContext ctx;
  for (size_t m = 0; m < modules_.size(); ++m) {
    if (modules_[m].stage != stage) continue;
    const uint64_t t = ticks_out ? ticks() : 0;
    const Module& mod = *modules_[m].module;
    Status st         = mod.pre(f, f.slots[m].get());
    if (st.is_ok()) st = run_jobs(mod, f, f.slots[m].get(), Place::kCpu, ctx);
    if (!st.is_ok()) return Status(st.code(), modules_[m].where + ": " + st.message());
    if (ticks_out) ticks_out[m] += ticks() - t;
  }
  return Status::ok();
}

namespace {

// Passes over a whole frame's reasons, once per module and frame: branch-free, and vectorised
// (the build's -O2 leaves such loops scalar; -O3's cost model takes them): 10-12 -> about 1
// instruction a packet each.
#if defined(__clang__)  // clang vectorises these at -O2 and has no such attribute
#define WARPATH_FRAME_PASS
#else
#define WARPATH_FRAME_PASS [[gnu::optimize("tree-vectorize", "vect-cost-model=dynamic")]]
#endif

// Whether every reason[0..n) is kContinue.
WARPATH_FRAME_PASS bool all_continue(const uint16_t* reason, uint32_t n) {
  uint32_t other = 0;
  for (uint32_t i = 0; i < n; ++i) other |= uint32_t(reason[i] ^ kContinue);
  return other == 0;
}

// How many of reason[0..n) are kContinue and how many kReasonForwarded.
WARPATH_FRAME_PASS void count_outcomes(const uint16_t* reason, uint32_t n, uint64_t& out,
                                       uint64_t& fwd) {
  uint32_t o = 0, f = 0;
  for (uint32_t i = 0; i < n; ++i) {
    o += reason[i] == kContinue;
    f += reason[i] == kReasonForwarded;
  }
  out += o, fwd += f;
}

// Whether some packet needs the chain's end: undecided, or forwarded to kOutMany or to a port
// the chain does not have (kOutMany tested apart: with 65,535 ports it is below the count).
WARPATH_FRAME_PASS bool any_unfinished(const uint16_t* reason, const uint16_t* out, uint32_t n,
                                       uint16_t ports) {
  uint32_t odd = 0;
  for (uint32_t i = 0; i < n; ++i)
    odd |= uint32_t(reason[i] == kContinue) |
           (uint32_t(reason[i] == kReasonForwarded) & uint32_t(out[i] >= ports || out[i] == kOutMany));
  return odd != 0;
}

#undef WARPATH_FRAME_PASS

// Stable counting sort of the frame's packets by schedule_key; out of line, so that the post
// loop stays as tight as without scheduling.
[[gnu::noinline]] const uint32_t* schedule_order(const Frame& f, Chain::Scratch& s) {
  const uint32_t n = f.size();
  if (s.order.size() < f.capacity) s.order.resize(f.capacity), s.keys.resize(f.capacity);
  uint32_t start[core::kScheduleKeys] = {};
  for (uint32_t i = 0; i < n; ++i) {
    s.keys[i] = core::schedule_key(f.infos[i], f.context[i], f.batch.meta(i).len);
    ++start[s.keys[i]];
  }
  uint32_t sum = 0;
  for (uint32_t& c : start) {
    const uint32_t k = c;
    c                = sum;
    sum += k;
  }
  for (uint32_t i = 0; i < n; ++i) s.order[start[s.keys[i]]++] = i;
  return s.order.data();
}

}  // namespace

Status Chain::post(Frame& f, Scratch& s, ModuleCounters* counters, uint64_t* ticks_out) const {
  const uint32_t n = f.size();
  if (s.mask.size() < f.capacity) s.mask.resize(f.capacity);
  if (s.list.size() < f.capacity) s.list.resize(f.capacity);
  // Packet scheduling (GASPP 5.3): the visiting order, sorted again after a module that may
  // change contexts (schedule_order). The frame itself (and so TX) keeps its order.
  const uint32_t* order = nullptr;
  bool resort           = sort_ && n > 1;
  uint64_t t = ticks_out ? ticks() : 0;
  for (size_t m = 0; m < modules_.size(); ++m) {
    const Entry& e    = modules_[m];
    if (m > 0 && e.stage != modules_[m - 1].stage) {
      WARPATH_TRY(stage_pre_shade(f, e.stage, ticks_out));
      if (ticks_out) t = ticks();
    }
    if (resort) {
      order  = schedule_order(f, s);
      resort = false;
    }
    // The selection, branch-free: the list gets every index, its length only the chosen.
    uint32_t count = 0;
    uint32_t* list = s.list.data();
    uint8_t* mask  = s.mask.data();
    if (order) {
      for (uint32_t k = 0; k < n; ++k) {
        const uint32_t i = order[k];
        const uint16_t c = f.context[i];
        const bool in    = f.reason[i] == kContinue &&
                        (e.any_context || (c < 256 && (e.when[c / 64] >> (c % 64) & 1)));
        mask[i]     = in;
        list[count] = i;
        count += in;
      }
    } else if (e.any_context && all_continue(f.reason.data(), n)) {
      // Every packet (a chain's first module, usually): the prebuilt selection of all.
      if (s.all.size() < f.capacity) {
        s.all.resize(f.capacity);
        for (uint32_t i = 0; i < f.capacity; ++i) s.all[i] = i;
        s.ones.assign(f.capacity, 1);
      }
      list  = s.all.data();
      mask  = s.ones.data();
      count = n;
    } else if (e.any_context) {
      for (uint32_t i = 0; i < n; ++i) {
        const bool in = f.reason[i] == kContinue;
        mask[i]       = in;
        list[count]   = i;
        count += in;
      }
    } else {
      for (uint32_t i = 0; i < n; ++i) {
        const uint16_t c = f.context[i];
        const bool in    = f.reason[i] == kContinue && c < 256 && (e.when[c / 64] >> (c % 64) & 1);
        mask[i]          = in;
        list[count]      = i;
        count += in;
      }
    }
    const Selection sel{{list, count}, mask};
    e.module->post(f, f.slots[m].get(), sel);
    resort = sort_ && n > 1 && e.sets_context;
    if (ticks_out) {
      const uint64_t t1 = ticks();
      ticks_out[m] += t1 - t;
      t = t1;
    }
    if (counters) {
      uint64_t out = 0, fwd = 0;
      if (list == s.all.data()) {  // the whole frame
        count_outcomes(f.reason.data(), n, out, fwd);
      } else {
        for (uint32_t k = 0; k < count; ++k) {
          const uint16_t r = f.reason[list[k]];
          out += r == kContinue;
          fwd += r == kReasonForwarded;
        }
      }
      add_owned(counters[m].in, count);
      add_owned(counters[m].out, out);
      add_owned(counters[m].forwarded, fwd);
    }
  }
  // The chain's end, for the packets that need it (a test over the frame first).
  const bool odd = any_unfinished(f.reason.data(), f.out.data(), n, port_count_);
  for (uint32_t i = 0; odd && i < n; ++i) {
    if (f.reason[i] == kContinue)
      f.reason[i] = kReasonNoVerdict;
    else if (f.reason[i] == kReasonForwarded && f.out[i] == kOutMany) {
      if (port_count_ < kMaxMaskPorts)
        f.out_mask[i] &= kOutSlowPathBit | ((uint64_t(1) << port_count_) - 1);
      if ((f.out_mask[i] & ~kOutSlowPathBit) == 0) f.reason[i] = kReasonNoPort;
    } else if (f.reason[i] == kReasonForwarded && f.out[i] >= port_count_)
      f.reason[i] = kReasonNoPort;
  }
  return Status::ok();
}

}  // namespace warpath::runtime
