// include/warpath/runtime/chain.hpp
//
// A chain of modules: what `warpath run` runs (GASPP's module chains, section 3.1; Click's
// element graphs reduced to a line). The head is always the parser (cpu.parse, which sets the
// kParse field); then the modules, in order. docs/modules.md has the user's view.
//
// Written as
//   one line     acl(rules=fw.rules, default=permit) -> router(fib=t.fib, neighbors=n.txt)
//                (parse_chain: a module is KIND or KIND(NAME=VALUE, ...); a value runs to the
//                next ',' or ')' unless it is "double quoted"; spaces around tokens are
//                ignored; KIND and NAME are [A-Za-z0-9_.-]+)
//   TOML         [[module]] tables in order: kind = "acl", then the arguments as keys
//                (run_config.hpp)
//   a preset     --app acl | router | router+acl | ipsec | switch (preset_chain, built by the
//                chain modules' library: src/modules/presets.cpp)
//
// Every module takes `when=NAME[|NAME...]`: it then runs only on packets whose context key is
// one of those (GASPP's context keys); an ACL rule with the action goto:NAME tags a packet with
// the context NAME. Without `when`, a module runs on every packet still undecided.
//
// Errors name the position, the argument and the reason:
//   "chain position 2 (router): unknown argument 'fibb' (known: fib, neighbors, lookup, when)"
//   "chain position 1 (acl): reads flow, which no module before it sets"
#pragma once
#include <array>
#include <atomic>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/status.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/runtime/frame.hpp"
#include "warpath/runtime/module.hpp"
#include "warpath/runtime/reasons.hpp"
#include "warpath/runtime/run_config.hpp"

namespace warpath::runtime {

/// Parses the one-line form. kParseError "chain: column N: reason".
Result<std::vector<ModuleSpec>> parse_chain(std::string_view text);
/// The one-line form of specs (what parse_chain reads back).
std::string format_chain(const std::vector<ModuleSpec>& specs);
/// The chain of the preset application `config.app`, with its arguments from the preset's
/// settings, leaving out the file argument of each table the caller preloaded in `tables`
/// (TableSource::preload, under the setting's key). Built by the registered catalog
/// (run_config.hpp: PresetCatalog); without one a preset is an empty chain (run() refuses it).
std::vector<ModuleSpec> preset_chain(const RunConfig& config, const TableSource& tables);

/// Per-module counters of one worker (written by its owner only; relaxed atomics, so the
/// progress display reads them at any time).
struct ModuleCounters {
  std::atomic<uint64_t> in{0};   ///< packets the module decided for (its selection)
  std::atomic<uint64_t> out{0};  ///< of those, the ones it passed on (still undecided)
  std::atomic<uint64_t> forwarded{0};
  std::atomic<uint64_t> ticks{0};  ///< time in its pre, CPU shade and post, in cycle-clock
                                   ///< ticks (the TSC on x86-64; the report converts)
};

class Chain {
 public:
  /// Builds every module (specs in order) and checks the contracts. `env.position`,
  /// `env.reasons` and `env.contexts` are set here.
  static Result<std::unique_ptr<Chain>> build(const std::vector<ModuleSpec>& specs,
                                              BuildEnv env);

  size_t size() const noexcept { return modules_.size(); }
  const Module& module(size_t m) const { return *modules_[m].module; }
  const std::string& where(size_t m) const { return modules_[m].where; }
  const ReasonTable& reasons() const noexcept { return reasons_; }
  const ContextTable& contexts() const noexcept { return contexts_; }
  /// The modules' build warnings ("chain position 2 (router): the FIB is empty ..."); the run
  /// reports them (RunReport::warnings).
  const std::vector<std::string>& warnings() const noexcept { return warnings_; }
  /// The one-line form of the chain as built ("acl -> router").
  std::string describe() const;
  /// Engines of a place, in chain order ("cpu.rfc + cpu.lpm.compressed").
  std::string engines(Place place) const;
  bool has_offload() const noexcept { return offload_; }
  /// The headroom the chain's frames need: 0 when no module prepends, else the largest of its
  /// modules' rounded up to 64, plus kL3Align, so that an untagged Ethernet frame's L3 header
  /// starts 16-byte aligned (Linux's NET_IP_ALIGN). An encapsulating module leaves the inner
  /// packet where it is, so ESP's text is then aligned for the cipher: misaligned by 14 bytes,
  /// AES-GCM ran 15% slower in intel-ipsec-mb's own burst (bench/results/esp-cpu-2026-11-25-*).
  uint32_t headroom() const noexcept;
  static constexpr uint32_t kL3Align = 2;
  /// The buffer the chain's frames of `batch` packets need past their packets (the sum of its
  /// modules').
  size_t tail_room(uint32_t batch) const noexcept;
  /// Every module's reload (Module::reload), one line per module that reloads:
  /// "chain position 1 (esp-in): reloaded: ..." or "... : reload failed (kept the running
  /// tables): ...". Call from one thread at a time.
  std::vector<std::string> reload() const;

  /// Per-worker state of the stateful modules, by position (nullptr for the others).
  using States = std::vector<std::unique_ptr<ModuleState>>;
  Result<States> make_states() const;
  /// One slot per module, for a new frame of the worker owning `states` (made by make_states;
  /// may be nullptr for a chain without stateful modules).
  void make_slots(Frame& f, const States* states = nullptr) const;
  /// A worker's end: every stateful module's finish, in chain order; the first error.
  Status finish_states(States& states) const;
  /// An idle worker: every stateful module's idle, in chain order (Module::idle).
  void idle_states(States& states, uint64_t mono_ns) const;
  /// Every module's Module::originate, in chain order (worker 0).
  uint32_t originate(States& states, packet::PacketBatch& out, std::vector<uint64_t>& masks) const;
  /// Whether pre() parses: some module reads kParse, or packet scheduling (which keys on the
  /// headers) is on. A chain whose modules read no header (`wire` alone) moves packets without
  /// a parse, as an io-forwarding loop does; its frames' infos are then not set (parse() sets
  /// them for a caller that needs them: the worker, for a port's MTU).
  bool parses() const noexcept { return reads_parse_ || sort_; }
  /// The frame's infos from its packets (what pre() does first when parses()).
  Status parse(Frame& f) const;
  /// Pre-shade: parse (when parses()), then every module's pre. `ticks` (one per module, may be nullptr) gets
  /// the time each took, in cycle-clock ticks (ModuleCounters::ticks), and `parse_ticks` (may
  /// be nullptr) the parser's.
  Status pre(Frame& f, uint64_t* ticks = nullptr, uint64_t* parse_ticks = nullptr) const;
  /// Shade on the engines of `place`: every module's jobs.
  Status shade(Frame& f, Place place, ExecContext& ctx, uint64_t* ticks = nullptr) const;
  /// Post-shade: every module's post on its selection, then the chain's end (undecided ->
  /// no_verdict, a port that does not exist -> no_port). `counters` (one per module) and
  /// `ticks` may be nullptr. `scratch` holds the selection (reused; grows to the frame's capacity).
  struct Scratch {
    std::vector<uint32_t> list;
    std::vector<uint8_t> mask;
    std::vector<uint32_t> order;  ///< packet scheduling: the visiting order
    std::vector<uint8_t> keys;
    std::vector<uint32_t> all;  ///< 0, 1, ...: the selection of a whole frame
    std::vector<uint8_t> ones;  ///< its mask
  };
  /// Packet scheduling (GASPP section 5.3): modules visit a frame's packets grouped by traffic
  /// class, context and length (src/runtime/core/schedule_key.hpp) instead of in arrival
  /// order; the frame, and so transmission, keeps arrival order. Off by default: it pays only
  /// where modules branch by class (ADR 0007 has the measurement).
  void set_schedule_sort(bool on) noexcept { sort_ = on; }
  bool schedule_sort() const noexcept { return sort_; }
  /// Fails only where a later stage's pre or shade fails (stages below).
  Status post(Frame& f, Scratch& scratch, ModuleCounters* counters,
              uint64_t* ticks = nullptr) const;

  /// Stages. A module that sets kParse rewrites headers (ESP decapsulates and encapsulates):
  /// what the modules after it gathered in pre would be stale. So the chain is cut after each
  /// such module: pre and shade above run the first stage's modules only (and jobs() lists
  /// only theirs, for the master); post, reaching the first module of a later stage, runs
  /// that stage's pre and its shade on the CPU engines, then goes on. A chain without such a
  /// module has one stage and runs as before.
  size_t stage_count() const noexcept { return stages_; }

  /// The flattened shade jobs: (module, job) pairs in chain order, for the master.
  struct JobRef {
    uint32_t module, job;
    JobShape shape;
  };
  const std::vector<JobRef>& jobs() const noexcept { return jobs_; }

 private:
  struct Entry {
    std::unique_ptr<Module> module;
    std::string where;
    bool any_context  = true;
    bool sets_context = false;  ///< its contract sets kContext (scheduling sorts again after it)
    std::array<uint64_t, 4> when{};  ///< bitmap of accepted context ids (< 256)
    uint32_t stage = 0;
  };
  Status stage_pre_shade(Frame& f, uint32_t stage, uint64_t* ticks) const;
  Chain() = default;
  std::unique_ptr<packet::Parser> parser_;
  std::vector<Entry> modules_;
  std::vector<JobRef> jobs_;
  ReasonTable reasons_;
  ContextTable contexts_;
  std::vector<std::string> warnings_;
  uint16_t port_count_ = 0;
  bool offload_        = false;
  bool sort_           = false;
  bool reads_parse_    = false;  ///< some module's contract reads kParse
  size_t stages_       = 1;
};

}  // namespace warpath::runtime
