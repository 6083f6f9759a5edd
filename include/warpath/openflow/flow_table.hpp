// include/warpath/openflow/flow_table.hpp
//
// An OpenFlow 1.0 flow table (one table, as OpenFlow 1.0 switches have): the control side
// (FlowTable: flow_mods, timeouts, counters, statistics, and the reference lookup) and the data
// side (FlowImage: an immutable image the switch module looks packets up in).
//
// Precedence (the oracle's rule, FlowTable::lookup)
//   1. An exact-match flow (no wildcard) beats every wildcarded flow (OpenFlow 1.0; it is stored
//      at priority 65535).
//   2. Then the highest priority.
//   3. Among equal priorities, the flow installed first. OpenFlow leaves such ties undefined and
//      Open vSwitch picks one arbitrarily; warpath's rule is deterministic. A flow replaced by an
//      ADD of the same match and priority counts as newly installed; MODIFY keeps the place.
//
// flow_mod (OpenFlow 1.0, as Open vSwitch 3.1 implements it; FlowTable::apply)
//   ADD            the same match and priority replaces the flow (counters reset); with
//                  check_overlap, a different flow of the same priority that some packet could
//                  match both is refused (kOverlap); emergency flows are refused as Open vSwitch
//                  does (kBadEmergTimeout with a timeout, else kAllTablesFull); a full table is
//                  kAllTablesFull.
//   MODIFY         new actions (and cookie, when one is given) for every flow the match covers
//                  (loose: priority ignored); counters, timeouts, flags and age kept; nothing
//                  covered: added as ADD would.
//   MODIFY_STRICT  the same for the flow of identical match and priority only.
//   DELETE         every flow the match covers, priority ignored; DELETE_STRICT: identical match
//                  and priority. Both keep flows that do not output to out_port (unless
//                  kPortNone).
//
// Timeouts and counters
//   Clocks are nanoseconds from any origin (tests pass a fake one). A hard timeout runs from
//   installation, an idle timeout from the last packet (account()) or installation. expire()
//   removes what has run out: hard first when both have.
//
// Updates while switching
//   FlowImage::build compiles the table as it is; FlowImage::publish builds on the last full
//   image (its tables shared, the flows added and removed since laid over them) until the
//   changes pile up. The switch module publishes each new image with a ReadGuard
//   (core/read_guard.hpp), so a frame sees one image, before or after a flow_mod, never a mix. Entry ids are stable while an entry lives, and `order` is unique over
//   the table's life, so counters the data path keeps per id can tell an id's new flow from the
//   one it replaced.
//
// FlowImage
//   Exact-match flows in a hash table (PacketShader's exact-match table); wildcarded flows in
//   tuple-space subtables, one hash table per distinct mask, ranked by their best flow so a key
//   stops at the first subtable that cannot beat what it has (Open vSwitch's ranked tuple space
//   search). Lookups go in batches: hash, prefetch, then compare (G-Opt). Hash tables are
//   buckets of 8 (32-bit signature, slot) in one cache line, keys in a slot array. An
//   incremental image (publish()) lays a small override table over a mask's table: the matches
//   flow_mods touched since the full image, each with its best live flow or a tombstone,
//   probed with the same hash before the full table's bucket (docs/adr/0012, 3b).
#pragma once
#include <algorithm>
#include <cstdint>
#include <memory>
#include <unordered_map>
#include <vector>

#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/openflow/flow.hpp"

namespace warpath::openflow {

enum class FlowModCommand : uint8_t {
  kAdd          = 0,  // OpenFlow 1.0 wire codes
  kModify       = 1,
  kModifyStrict = 2,
  kDelete       = 3,
  kDeleteStrict = 4,
};

enum class RemovedReason : uint8_t { kIdleTimeout = 0, kHardTimeout = 1, kDelete = 2 };

/// OFPET_FLOW_MOD_FAILED codes (kNone: success).
enum class FlowModError : uint8_t {
  kAllTablesFull   = 0,
  kOverlap         = 1,
  kEperm           = 2,
  kBadEmergTimeout = 3,
  kBadCommand      = 4,
  kUnsupported     = 5,
  kNone            = 255,
};
const char* flow_mod_error_name(FlowModError e) noexcept;

struct FlowEntry {
  FlowSpec spec;            ///< as stored: exact matches at priority 65535; out_port unused
  uint32_t id    = 0;       ///< slot, stable while the entry lives
  uint64_t order = 0;       ///< install order (unique, from 1)
  uint64_t created_ns = 0;  ///< installation
  uint64_t used_ns    = 0;  ///< last packet, or installation
  uint64_t packets = 0, bytes = 0;
};

/// Whether `a` takes precedence over `b` (header comment).
bool precedes(const FlowEntry& a, const FlowEntry& b) noexcept;

struct RemovedFlow {
  FlowEntry entry;
  RemovedReason reason;
};

struct FlowModResult {
  FlowModError error = FlowModError::kNone;
  uint32_t added = 0, modified = 0;
  std::vector<RemovedFlow> removed;  ///< deleted (and replaced-by-ADD are not listed)
  bool ok() const noexcept { return error == FlowModError::kNone; }
};

class FlowTable {
 public:
  static constexpr uint32_t kDefaultCapacity = 1u << 20;
  explicit FlowTable(uint32_t capacity = kDefaultCapacity) : capacity_(capacity) {}

  FlowModResult apply(FlowModCommand cmd, const FlowSpec& spec, uint64_t now_ns);
  /// For a table that replaces `old` (a reloaded flow file): install orders and versions go on
  /// from old's, so nothing keyed by (id, order) or by version mistakes a new flow for an old one.
  void continue_after(const FlowTable& old) noexcept {
    next_order_ = std::max(next_order_, old.next_order_);
    version_    = std::max(version_, old.version_ + 1);
  }
  /// Removes the flows whose timeouts have run out at `now_ns`.
  std::vector<RemovedFlow> expire(uint64_t now_ns);
  /// The data path's counters for the entry of `id` installed as `order` (ignored when the id
  /// now holds another flow).
  void account(uint32_t id, uint64_t order, uint64_t packets, uint64_t bytes, uint64_t used_ns);

  /// The reference lookup (the oracle): every entry tested, the precedence rule applied.
  const FlowEntry* lookup(const packet::OfTuple& key) const;
  /// Entries a statistics request or a non-strict command reaches: covered by `filter`, and
  /// outputting to `out_port` unless kPortNone; in precedence order.
  std::vector<const FlowEntry*> select(const Match& filter, uint16_t out_port) const;
  /// Every entry, in precedence order.
  std::vector<const FlowEntry*> entries() const;
  const FlowEntry* entry(uint32_t id) const;
  /// The flow last at `id`, live or removed: a flow removed since the last full image stays
  /// readable (its id is not given out again before the next one; FlowImage::publish reads the
  /// matches of removed flows here).
  const FlowEntry& last(uint32_t id) const { return slots_[id]; }
  /// The live flows whose match is identical to `m`, at any priority (an exact match has at
  /// most one).
  std::vector<uint32_t> same_match(const Match& m) const;

  size_t size() const noexcept { return count_; }
  /// Entries with an idle or a hard timeout (expire() has nothing to do without them).
  size_t timed() const noexcept { return timed_; }
  uint32_t capacity() const noexcept { return capacity_; }
  /// The largest id ever used + 1 (images size their per-id arrays by it).
  uint32_t id_limit() const noexcept { return uint32_t(slots_.size()); }
  /// Bumped by every change of the entries (not by counters).
  uint64_t version() const noexcept { return version_; }

  /// What changed since the last full image (FlowImage::publish reads it to publish the flows
  /// added and removed without rebuilding everything): one record per entry added, removed or
  /// modified (new actions), with whether it is an exact-match flow.
  struct Change {
    uint32_t id;
    enum Kind : uint8_t { kAdded, kRemoved, kModified } kind;
    bool exact;
  };
  const std::vector<Change>& changes() const noexcept { return changes_; }
  /// Only a full image can follow: the log overflowed (kMaxChanges; a table nobody publishes
  /// incrementally keeps no more), or a retired id had to be given out again because the ids
  /// reached the capacity.
  bool needs_full() const noexcept { return needs_full_; }
  /// A full image was built from the table as it is: the log starts again, and the ids freed
  /// since the previous full image may be given out again (until then a freed id is not
  /// reused while others remain, so no published image can map a key to an id that now holds
  /// another flow). Ids never exceed the capacity.
  void rebuilt() noexcept {
    changes_.clear();
    needs_full_ = false;
    free_.insert(free_.end(), retired_.begin(), retired_.end());
    retired_.clear();
  }
  static constexpr size_t kMaxChanges = 1u << 16;

 private:
  struct StrictKey {
    packet::OfTuple value;
    uint32_t wildcards;
    uint16_t priority;
    bool operator==(const StrictKey& o) const noexcept;
  };
  struct StrictHash {
    size_t operator()(const StrictKey& k) const noexcept;
  };
  static StrictKey strict_key(const Match& m, uint16_t priority);
  FlowEntry* find_strict(const Match& m, uint16_t priority);
  void insert(const FlowSpec& spec, uint16_t priority, uint64_t now_ns);
  void remove(uint32_t id);

  uint32_t capacity_;
  std::vector<FlowEntry> slots_;
  std::vector<uint8_t> live_;
  std::vector<uint32_t> free_;     ///< ids that may be given out
  std::vector<uint32_t> retired_;  ///< ids freed since the last full image (rebuilt())
  std::vector<Change> changes_;
  bool needs_full_ = false;
  void log(Change c) {
    if (needs_full_) return;
    if (changes_.size() >= kMaxChanges) {
      changes_.clear();
      needs_full_ = true;
      return;
    }
    changes_.push_back(c);
  }
  std::unordered_map<StrictKey, uint32_t, StrictHash> index_;  ///< identical match + priority
  /// Wildcarded flows by identical match (priority 0 in the key): same_match().
  std::unordered_map<StrictKey, std::vector<uint32_t>, StrictHash> by_match_;
  size_t count_        = 0;
  size_t timed_        = 0;
  uint64_t next_order_ = 1;
  uint64_t version_    = 0;
};

inline constexpr uint32_t kNoFlow = 0xFFFF'FFFFu;

/// What a flow does to a packet, compiled for the data path.
struct ActionProgram {
  uint32_t first    = 0;  ///< rewrites: FlowImage::rewrites(program)[0, rewrites), from `first`
  uint16_t rewrites = 0;
  uint16_t max_len  = 0;  ///< bytes for the controller
  uint64_t ports    = 0;  ///< bit p: out of port p (0-based: OpenFlow port p + 1)
  uint16_t special  = 0;  ///< ActionBits
  uint64_t order    = 0;  ///< the flow's install order (FlowEntry::order)
};
enum ActionBits : uint16_t {
  kToInPort     = 1,   ///< in_port: back out of the ingress port
  kToFlood      = 2,   ///< every port but the ingress one
  kToAll        = 4,   ///< the same (no port is excluded from flooding)
  kToController = 8,
  kToNormal     = 16,  ///< the L2 learning switch
  kToLocal      = 32,
  kNoSuchPort   = 64,  ///< an output to a port the switch does not have (dropped)
  kLateRewrites = 128, ///< rewrites in the image's second buffer (a flow added incrementally)
};

class FlowImage {
 public:
  /// Compiles `table` for a switch of `port_count` ports (at most 64). kInvalidArgument names
  /// a flow whose actions the data path cannot run (headers rewritten between two outputs).
  static Result<std::shared_ptr<const FlowImage>> build(const FlowTable& table, uint32_t port_count);
  /// The image to publish for `table` now, given the last one published for it (`current`,
  /// or nullptr): when everything that changed since the last full image is flows added or
  /// removed (a reactive controller's microflows, a proactive one's wildcard rules), an
  /// incremental image that shares the full one's tables. For every match (mask and value) a
  /// change touched, an override table of its mask holds the best flow now live with that
  /// match, or a tombstone: a removed flow's equal-match rival of lower priority answers again,
  /// and no entry of the full image answers for a flow that is gone. Only the override tables
  /// of masks touched since `current` are rebuilt (cost: their entries, not the table).
  /// Flows MODIFY gave new actions get their new programs in a small patch the image consults
  /// first (program()). Changes past a sixteenth of the full image's flows (at least 4,096)
  /// take a full build, after which the table's change log restarts (FlowTable::rebuilt).
  /// Either way the image answers exactly as build() would.
  static Result<std::shared_ptr<const FlowImage>> publish(const std::shared_ptr<const FlowImage>& current,
                                                          FlowTable& table, uint32_t port_count);

  /// ids[i] = the id of the flow key i hits (precedence rules), or kNoFlow. The fastest
  /// instruction set the CPU has (LookupIsa); every one gives the same answers.
  void lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const;
  /// The instruction sets of lookup's per-key steps: SSE2 (any x86-64), AVX-512VL (256-bit
  /// loads, compares into mask registers: 6-9% less time per lookup with keys in cache on an
  /// Intel Xeon VM, docs/adr/0012-openflow-switch.md).
  enum class LookupIsa { kAuto, kSse2, kAvx512 };
  /// lookup() with `isa` (kAuto: the fastest; one the CPU lacks: SSE2). For benchmarks, tests.
  void lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids, LookupIsa isa) const;
  /// Whether this build and CPU run `isa`.
  static bool has_isa(LookupIsa isa) noexcept;
  uint32_t lookup_one(const packet::OfTuple& key) const;

  const ActionProgram& program(uint32_t id) const {
    if (patch_) [[unlikely]]
      if (const ActionProgram* p = patched(id)) return *p;
    return programs_[id];
  }
  /// The rewrites of a program of this image (program.rewrites of them).
  const Action* rewrites(const ActionProgram& p) const noexcept;
  /// Ids below this have programs (the lookup answers only such ids).
  uint32_t id_limit() const noexcept { return id_limit_; }
  size_t flows() const noexcept { return flows_; }
  size_t exact_flows() const noexcept { return exact_flows_; }
  size_t subtables() const noexcept { return subtables_.size(); }
  uint64_t version() const noexcept { return version_; }
  /// Built by publish() on top of a full image (its added and removed flows).
  bool incremental() const noexcept { return incremental_; }

  /// One hash table of the image as raw arrays (the CUDA engine copies them to the device):
  /// buckets (openflow/core/flow_hash_core.hpp: Bucket, bucket_count of them), records (Record:
  /// a key and its flow in 64 bytes, `slots` of them), the key mask, and the best rank of its
  /// flows (0 for the exact table).
  struct TableData {
    const void* buckets = nullptr;
    uint32_t bucket_count = 0;
    const void* records   = nullptr;
    uint32_t slots        = 0;
    packet::OfTuple mask{};
    uint64_t max_rank = 0;
  };
  /// The exact-match table first (always there, perhaps empty), then the subtables best first.
  /// Only for a full image (the engines build full images): an incremental one's added and
  /// removed flows are not in them.
  std::vector<TableData> tables() const;
  /// Per flow id: its rank (priority, then earlier install; larger wins).
  const std::vector<uint64_t>& ranks() const noexcept { return *ranks_; }

  struct Table;   // one hash table (openflow/flow_image_table.hpp)
  struct Shared;  // what the incremental images of a full one share with it
  struct Patch;   // the programs of flows modified since the full image
  struct Publish; // publish()'s incremental steps (openflow/flow_image.cpp)
  ~FlowImage();
  FlowImage();

 private:
  /// One mask's tables: the full image's table of the mask (or none) and, in an incremental
  /// image, the masked values flow_mods touched since, in two layers: `recent` (the latest,
  /// copied at each publish) over `over` (merged into when recent passes a quarter of it).
  /// Probed with the same hash, recent first; an answer, a tombstone included, stands for the
  /// mask's. max_rank bounds them all (0 for the exact-match table, whose flows beat every
  /// wildcard flow).
  struct Sub {
    std::shared_ptr<const Table> base, over, recent;
    uint64_t max_rank = 0;
  };
  Sub exact_;                   // the exact-match table (base always there, perhaps empty)
  std::vector<Sub> subtables_;  // wildcard masks, best first
  std::shared_ptr<Shared> shared_;
  const ActionProgram* programs_       = nullptr;  ///< shared_'s (never reallocated)
  const std::vector<uint64_t>* ranks_  = nullptr;  ///< shared_'s
  size_t log_pos_ = 0;  ///< the table's change log (FlowTable::changes) this image covers
  /// An incremental image's programs of flows MODIFY gave new actions since the full image
  /// (the shared array's entry of such an id is what images already published read).
  std::shared_ptr<const Patch> patch_;
  const ActionProgram* patched(uint32_t id) const noexcept;
  /// lookup()'s body over an instruction set's per-key steps (openflow/flow_lookup_body.hpp).
  template <class Ops>
  void lookup_with(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const;
  void lookup_avx512(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const;
  uint32_t id_limit_ = 0;
  bool incremental_  = false;
  size_t flows_ = 0, exact_flows_ = 0;
  uint64_t version_ = 0;
};

/// Compiles one action list (FlowImage::build's per-flow step); the rewrites go to `rewrites`.
/// kInvalidArgument when headers change between two outputs.
Result<ActionProgram> compile_actions(const std::vector<Action>& actions, uint32_t port_count,
                                      std::vector<Action>& rewrites);

}  // namespace warpath::openflow
