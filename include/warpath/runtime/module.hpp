// include/warpath/runtime/module.hpp
//
// A module: one function of a chain (a VPP node, a Click element, a GASPP module): the ACL, the
// router, a TTL filter, later the OpenFlow switch, ESP, flow tracking and the NIDS. docs/
// modules.md shows how one is written, with a complete example (src/modules/
// ttl_filter_module.cpp).
//
// Compile, then run
//   A module is built once from its arguments (its factory in the registry below loads and
//   compiles its tables into immutable images) and is then shared, const, by every worker and
//   the offload master. What changes per frame lives in the frame's metadata (frame.hpp) and in
//   the module's own slot (make_slot), one per frame.
//
// The three stages (PacketShader's pre-shade / shade / post-shade), per frame
//   pre(frame, slot)       gather keys from the packets into the slot (CPU, in the worker).
//                          Runs for every module before any post, so it sees every packet,
//                          not only those that will reach the module: gathering must be
//                          harmless for packets an earlier module will decide.
//   jobs                   the shade: job j of the slot is `count` keys of a fixed shape and
//                          their answers (job_shape, job_data); run_job answers them on the
//                          CPU engines (in the worker) or on the offload engines (in the master,
//                          which gathers the same job of many frames into one launch without
//                          knowing what the keys are). A packet job also transforms bytes of
//                          the frame in place (JobShape::buffer_field: ESP's packets). On a
//                          GPU whose engines take device memory (job_resident) the master
//                          uploads every job's keys and bytes of a launch in one copy, runs
//                          every module's jobs on them, and downloads every answer and byte in
//                          one copy (master.hpp). A module without jobs has nothing to shade.
//   post(frame, slot, sel) decide, in chain order, for the packets of `sel`: those no earlier
//                          module decided (reason == kContinue) whose context the module
//                          accepts (the chain's `when=`). It sets reason/out (and context or
//                          bytes, as its contract says) of those packets only.
//
// Contract (VPP's Uses / Sets)
//   contract() names the metadata fields the module reads and those it sets (Field), and the
//   contexts it may tag packets with. The chain is checked when it is built: a module that
//   reads a field nothing before it sets, or runs `when=` a context nothing before it tags, is
//   an error naming its position. The head of every chain is the parser, which sets kParse.
//
// Reasons
//   A module registers the reasons it may give when it is built (BuildEnv::reasons), and sets a
//   packet's reason to one of those ids or to kReasonForwarded (with out = the port).
//
// Stateful modules (flow tracking)
//   make_state() builds the module's per-worker state (frame.hpp: ModuleState), reached from
//   each of the worker's frames through slot->state; finish() ends it when the worker stops
//   (flush the flows, close a log). Flows stay on one worker: RX queues are hashed by flow
//   (RSS, AF_PACKET fanout), and a worker owns queue q of every port when ports have as many
//   queues as there are workers. stat_names() names the counters the state keeps for the report.
//
// Thread safety
//   Every method is const and may be called concurrently for different frames; a state is
//   touched only by its worker.
#pragma once
#include <cstdint>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/runtime/frame.hpp"
#include "warpath/runtime/port.hpp"
#include "warpath/runtime/reasons.hpp"
#include "warpath/runtime/run_config.hpp"
#include "warpath/runtime/tables_fwd.hpp"

namespace warpath::runtime {

/// The per-packet metadata fields of a frame (frame.hpp lists their columns).
enum class Field : uint8_t { kParse, kFlow, kContext, kVerdict, kBytes, kCount };
using FieldSet = uint32_t;
constexpr FieldSet field_bit(Field f) { return FieldSet(1) << unsigned(f); }
/// "parse", "flow", "context", "verdict", "bytes".
const char* field_name(Field f) noexcept;
/// "parse, verdict" (in Field order); "-" when empty.
std::string field_list(FieldSet s);

struct ModuleContract {
  ModuleContract(FieldSet r = 0, FieldSet s = 0, std::vector<std::string> ctx = {},
                 std::vector<std::string> prod = {}, std::vector<std::string> cons = {},
                 std::vector<std::string> may = {})
      : reads(r), sets(s), contexts(std::move(ctx)), produces(std::move(prod)),
        consumes(std::move(cons)), may_consume(std::move(may)) {}
  FieldSet reads = 0, sets = 0;
  /// Context names the module may tag packets with (those of goto: actions, say).
  std::vector<std::string> contexts;
  /// Side queues (docs/modules.md): per-worker state the module's state offers the modules
  /// after it (`produces`: "flows", the flow tracker's answers per packet and the flows that
  /// ended; "streams", the stream bytes the frame delivered), and those it reads from the
  /// nearest earlier module producing them: each of `consumes` must have one (the chain is
  /// refused otherwise, naming the position); `may_consume` is read when there is one.
  std::vector<std::string> produces, consumes, may_consume;
};

/// Whether `a` promises nothing beyond `b` (fields, side queues; contexts are named by the
/// module's arguments and are not compared): a module's contract() against its kind's declared
/// one (ModuleInfo::contract), which Chain::build checks for every module it builds. Empty when
/// it does not, else what is beyond ("sets context", "produces streams").
std::string contract_excess(const ModuleContract& a, const ModuleContract& b);
/// "reads parse, flow; sets verdict; produces flows; consumes flows; may consume streams": the
/// line `warpath modules` prints (parts without entries left out but reads and sets).
std::string contract_text(const ModuleContract& c);

/// The shape of one shade job: `columns` arrays of keys of `key_bytes` each (structure of
/// arrays: column c of key k at keys + c * column_stride + k * key_bytes), one answer of
/// `answer_bytes` per key (0: the job answers nothing; JobData::answers may be null).
///
/// Key jobs (buffer_field < 0) read their keys and write their answers. Packet jobs also
/// transform bytes of the frame in place (ESP seals and opens packets): each key holds, at
/// byte offset `buffer_field`, a `uint8_t*` to its bytes (JobData::buffer_bytes long). The
/// offload master moves those bytes with the keys (to the device in its one upload and back
/// in its one download) and points its copy of each key at the moved bytes, so run_job finds
/// them where the key says. A packet job has one column.
struct JobShape {
  uint32_t columns = 1, key_bytes = 4, answer_bytes = 4;
  int32_t buffer_field = -1;
};
/// One job's data in one frame's slot (or gathered by the master). `count` is at most the
/// frame's packet count (the master gathers frames up to its launch size and returns
/// kInvalidArgument for a module that breaks this).
struct JobData {
  const uint8_t* keys  = nullptr;
  size_t column_stride = 0;  ///< bytes between columns
  uint8_t* answers     = nullptr;
  uint32_t count       = 0;
  const uint32_t* buffer_bytes = nullptr;  ///< packet jobs: the length of each key's bytes
};

/// The packets post() decides: their indices, ascending (or in the scheduling order when the
/// chain sorts: Chain::set_schedule_sort), and a byte per packet of the frame (1 = in).
struct Selection {
  Span<const uint32_t> list;
  const uint8_t* mask = nullptr;
  bool contains(uint32_t i) const noexcept { return mask[i] != 0; }
};

/// Where the shade runs: the worker's CPU engines or the master's offload engines.
enum class Place : uint8_t { kCpu, kOffload };

class Module {
 public:
  virtual ~Module() = default;
  virtual std::string_view kind() const noexcept = 0;
  virtual ModuleContract contract() const = 0;
  /// One line for the summary: what the module was built from ("acl1_10K (9,603 rules)").
  virtual std::string describe() const { return {}; }
  /// The engines of a place ("cpu.rfc"), empty when the module has none.
  virtual std::string engines(Place) const { return {}; }
  /// Bytes the module may prepend to a packet (ESP's outer headers): the pipeline's frames
  /// leave that much free before each packet (PacketBatch headroom), so prepending moves the
  /// link-layer header only, not the packet.
  virtual uint32_t headroom() const noexcept { return 0; }
  /// Bytes the module may need past the packets of a frame of `batch` packets, for packets it
  /// makes larger (PacketBatch::relocate: a reassembled datagram in place of its last
  /// fragment): the pipeline's frames get that much more buffer.
  virtual size_t tail_room(uint32_t /*batch*/) const noexcept { return 0; }
  /// Reads the module's files again and publishes what they say while packets flow (`warpath
  /// run` on SIGHUP): a frame sees the old tables or the new ones, never a mix. The new
  /// tables' one-line description, or an error (the old tables stay); kNotSupported for a
  /// module that does not reload.
  virtual Result<std::string> reload() const {
    return Status(Errc::kNotSupported, "does not reload");
  }

  virtual std::unique_ptr<ModuleSlot> make_slot(uint32_t /*capacity*/) const { return nullptr; }
  /// Per-worker state (stateful modules only); nullptr for a stateless module.
  virtual Result<std::unique_ptr<ModuleState>> make_state() const {
    return std::unique_ptr<ModuleState>();
  }
  /// Ends a worker's state when the worker stops (flows flushed, logs closed).
  virtual Status finish(ModuleState&) const { return Status::ok(); }
  /// The worker has had no packet for a while (called at most every 100 ms while it stays
  /// idle, with nothing in flight): time-driven work, such as ending idle flows. `mono_ns` is
  /// the monotonic clock of Frame::rx_ns.
  virtual void idle(ModuleState&, uint64_t /*mono_ns*/) const {}
  /// Packets the module originates (OpenFlow PACKET_OUT): appended to `out` (meta.port = the
  /// ingress port they claim), with per packet the ports to send them from in `masks` (bit p:
  /// port p). Worker 0 asks on every loop, so an implementation returns at once when it has
  /// nothing (an atomic load). `state` is worker 0's state of the module (nullptr when
  /// stateless). Originated packets are counted apart from rx (RunReport::originated).
  virtual uint32_t originate(ModuleState* /*state*/, packet::PacketBatch& /*out*/,
                             std::vector<uint64_t>& /*masks*/) const {
    return 0;
  }
  /// Names of the counters of ModuleState::stats, in order ("flows", "active", ...).
  virtual std::vector<std::string> stat_names() const { return {}; }
  virtual Status pre(Frame&, ModuleSlot*) const { return Status::ok(); }

  virtual uint32_t job_count() const noexcept { return 0; }
  virtual JobShape job_shape(uint32_t /*job*/) const { return {}; }
  virtual JobData job_data(Frame&, ModuleSlot*, uint32_t /*job*/) const { return {}; }
  virtual Status run_job(Place, uint32_t /*job*/, const JobData&, ExecContext&) const {
    return Status::ok();
  }
  /// Whether run_job(Place::kOffload, job, ...) takes device memory (ExecContext::resident):
  /// keys, answers and a packet job's bytes already on the device, where the offload master's
  /// one upload put them. True when the module's offload engine takes device memory (the
  /// CUDA engines); the master uses the resident path only when every job of the launch can.
  virtual bool job_resident(uint32_t /*job*/) const { return false; }

  virtual void post(Frame&, ModuleSlot*, const Selection&) const = 0;

  /// The answer the slow path sends back out of the ingress port about packet i, whose reason
  /// this module gave (the router's ICMP Time Exceeded): its length, written to `out`
  /// (kMaxReplyBytes); 0 when one is due but may not be sent (counted as suppressed); -1 when
  /// none is due.
  virtual int32_t reply(const Frame&, uint32_t /*i*/, uint8_t* /*out*/) const { return -1; }
};

inline constexpr uint32_t kMaxReplyBytes = 14 + 8 + 1280;

/// Context names <-> ids of one chain; "default" is id 0.
class ContextTable {
 public:
  ContextTable() : names_{"default"} {}
  uint16_t intern(std::string_view name);
  /// kNotFound when the name was never interned.
  Result<uint16_t> find(std::string_view name) const;
  const std::string& name(uint16_t id) const { return names_[id]; }
  size_t size() const noexcept { return names_.size(); }

 private:
  std::vector<std::string> names_;
};

/// What a module's factory gets besides its arguments.
struct BuildEnv {
  uint16_t port_count = 1;
  /// Per port (Port::link()): promiscuous live ports and their interfaces' MACs. Empty when
  /// the caller has no ports (tests).
  std::vector<PortLink> links;
  bool offload        = false;          ///< also build the offload engines
  std::string offload_device = "cuda";  ///< "cuda" or "cpu" (engines of the offload place)
  uint64_t seed       = 1;              ///< for built-in tables
  int position        = 0;              ///< the module's chain position (1-based)
  ReasonTable* reasons   = nullptr;
  ContextTable* contexts = nullptr;
  const TableSource* tables = nullptr;
  bool use_preloaded = false;  ///< presets: take TableSource's tables when an argument is absent
  /// The table the caller preloaded under `key` ("router.fib": the module's kind and the
  /// argument it stands for) when this chain takes preloaded tables, else nullptr.
  template <class T>
  const T* preloaded(std::string_view key) const {
    return use_preloaded && tables != nullptr ? tables->preloaded<T>(key) : nullptr;
  }
  /// The modules built before this one, by position (earlier[0] is position 1): a module that
  /// consumes another's per-worker state (a side queue: the stream module reads the flow
  /// module's answers) finds its producer here and reads `frame.slots[index]->state` in post.
  std::vector<const Module*> earlier;
  /// What a factory found odd but workable (an empty rule set): one line each, without the
  /// module's position (the chain adds it). Chain::warnings() keeps them.
  std::vector<std::string>* warnings = nullptr;
};

/// A module's arguments as given. Names outside its ModuleInfo::args (and `when`) were already
/// refused by Chain::build with the known ones listed, so a factory reads only what it declares.
class ModuleArgs {
 public:
  explicit ModuleArgs(const ModuleSpec& spec) : spec_(spec) {}
  bool has(std::string_view name) const;
  /// The value, or `fallback` when absent.
  std::string get(std::string_view name, std::string_view fallback = {}) const;
  Result<uint64_t> get_u64(std::string_view name, uint64_t fallback, uint64_t max) const;
  const ModuleSpec& spec() const noexcept { return spec_; }

 private:
  const ModuleSpec& spec_;
};

/// What an argument's value names when it names a file: an input the module reads (a table),
/// or an output it writes. RunConfig::validate refuses an output over any input or other output
/// of the run (a rule file overwritten by an EVE log is lost), asking the registry which
/// arguments of a chain's modules are files.
enum class ArgFile : uint8_t { kNone, kInput, kOutput };

struct ArgInfo {
  std::string name, fallback, help;
  ArgFile file = ArgFile::kNone;
};

/// A kind of module in the registry.
struct ModuleInfo {
  std::string kind, summary;
  std::vector<ArgInfo> args;  ///< besides `when`, which every module takes
  /// The kind's contract, the one place it is written: what `warpath modules` prints, and the
  /// bound every module of the kind keeps to (its contract() may promise less, as acl without
  /// goto: rules tags no context; Chain::build refuses more).
  ModuleContract contract;
  std::function<Result<std::unique_ptr<Module>>(const ModuleArgs&, BuildEnv&)> make;
};

/// The position in env.earlier of the nearest module before this one whose contract produces
/// `queue`, or env.earlier.size() when there is none.
size_t find_producer(const BuildEnv& env, std::string_view queue);

/// A side queue's producer, found by the queue's state type: T is the producing module's
/// per-worker state and names its queue (`static constexpr std::string_view kQueue`). The
/// position of the nearest earlier producer, or env.earlier.size() when there is none; in a
/// frame, frame.slots[position]->state is then a T (side_queue reads it).
template <class T>
size_t producer(const BuildEnv& env) {
  return find_producer(env, T::kQueue);
}

/// The state of side queue T in frame `f`, at the position producer<T>() found. A producer
/// whose contract names T::kQueue makes a T (checked in debug builds).
template <class T>
const T& side_queue(const Frame& f, size_t position) {
  const ModuleState* s = f.slots[position]->state;
#if !defined(NDEBUG)
  if (dynamic_cast<const T*>(s) == nullptr) std::abort();
#endif
  return static_cast<const T&>(*s);
}

/// Every module kind the program holds, in name order (`warpath modules` lists them).
std::vector<const ModuleInfo*> module_kinds();
const ModuleInfo* find_module_kind(std::string_view kind);
/// Adds a kind (a user's module, a test's); kInvalidArgument when the name is taken or empty.
Status register_module_kind(ModuleInfo info);

namespace detail {
/// Keeps `info` to be registered on the registry's first use (WARPATH_REGISTER_MODULE). Only a
/// function pointer is stored while the program starts, so no module's static state is read
/// before main; a kind registered twice stops the program there, naming it.
bool add_module_kind_source(ModuleInfo (*info)()) noexcept;
}  // namespace detail

/// Registers a module kind from its own file, as DPDK's RTE_INIT and VPP's VLIB_REGISTER_NODE
/// do: `WARPATH_REGISTER_MODULE(acl_module_info);` after the function that returns its
/// ModuleInfo. The runtime names no module: the chain modules are a library above it
/// (src/modules/), linked whole into every program (CMake: `warpath_module(... WHOLE)`), so
/// the linker keeps every registration although nothing calls it.
#define WARPATH_REGISTER_MODULE(info_fn) \
  WARPATH_REGISTER_MODULE_AT(info_fn, __LINE__)
#define WARPATH_REGISTER_MODULE_AT(info_fn, line) WARPATH_REGISTER_MODULE_AT2(info_fn, line)
#define WARPATH_REGISTER_MODULE_AT2(info_fn, line)                 \
  [[maybe_unused]] static const bool warpath_module_registered_##line = \
      ::warpath::runtime::detail::add_module_kind_source(&(info_fn))

}  // namespace warpath::runtime
