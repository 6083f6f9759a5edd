// include/warpath/classify/classifier.hpp
//
// Packet classifiers: compile a RuleSet (rule.hpp) into an immutable image, then classify
// batches of keys. GSwitch (gswitch-conext14.md section 4) and TIC (tic-ppopp08.md section 4).
//
// Engines (classify module registry; ids as in core/registry.hpp: <device>.<algorithm>)
//   ref.linear   the oracle: every rule, every field, rule_matches(), in index order
//   *.linear     GSwitch Algorithm 1. CPU: a vectorised scan over rules in SoA blocks.
//                CUDA: rules staged in shared memory, keys read SoA (coalesced), 64-bit
//                atomicMax of order_key() so priorities and indices are exact.
//   *.tuple      tuple space search (section 4.2): one class per distinct mask after port
//                ranges are expanded to prefixes (expand.hpp), a cuckoo hash table per class
//                with 3 subtables and universal hashing. CPU: classes ranked by hits, as Open
//                vSwitch ranks subtables, and a class is skipped when its best priority cannot
//                beat the match found so far. CUDA: classes of more than 256 rules split so
//                a class table fits in shared memory (Table 2).
//   *.bloom      tuple search with a Bloom filter per class (k = 2, m a power of two) checked
//                before the table probe (section 4.3, Algorithm 5).
//   *.rfc        Recursive Flow Classification, 4 phases over the 5-tuple's chunks
//                (tic-ppopp08.md section 4.1, Figure 2). kFiveTuple only.
//   *.tic        RFC over the addresses, then a range interpreter over 4/8/12-byte
//                instructions in 64-byte blocks (sections 4.2-4.4). kFiveTuple only.
//   *.split      address split (warpath's, for sets too large for RFC): each rule filed under
//                its source or destination prefix; a B+ tree over the intervals those
//                prefixes cut gives a short run of candidates in priority order; rules with
//                short or wild addresses go to an RFC tree of their own. kFiveTuple only.
//   *.tuplemerge TupleMerge (Daly et al., ToN 2019), for rule sets that change while traffic
//                flows: rules kept whole (port ranges checked, not expanded) in few hash
//                tables, each keyed on a mask that is a subset of its rules' masks (address
//                prefixes relaxed to multiples of 8 bits); colliding rules share a short
//                bucket. Updates are versioned (entries live in [birth, death) versions), so a
//                batch sees exactly one rule set while updates go on.
//   cpu.overlay  for rule sets that change now and then (5-tuple): the engine "auto" picks
//                without updates, over a snapshot, plus versioned TupleMerge overlays of the
//                changes since (inserted rules; a death version per snapshot rule, whose keys
//                fall back to TupleMerge over every rule), folded into a new snapshot by a
//                background thread. docs/adr/0014 compares the two.
//   "auto" builds the available engine with the highest priority for the rule set's layout,
//   and the next one where that build hits a limit (kCapacity: RFC on 100K-rule sets); with
//   ClassifyParams::updates, only engines that take updates (cpu.overlay first), else never
//   cpu.overlay;
//   "validate:<id>" runs <id> beside ref.linear on every batch and fails on the first
//   difference, naming the key and both answers.
//
// Updates
//   tuple, bloom and tuplemerge engines insert and erase single rules without a rebuild: a
//   classify call running concurrently sees the rule set before or after the update, never a
//   mix (tuple/bloom: the changed class table is rebuilt aside and published by pointer swap
//   under a ReadGuard; tuplemerge: a batch reads one published version). Other engines answer
//   kNotSupported (rte_acl too can only rebuild). One updater at a time. "auto" with
//   ClassifyParams::updates picks the best engine that takes updates (takes_updates()).
//
// Thread safety: classify() is const and may run on many threads at once.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/classify/rule.hpp"
#include "warpath/core/exec.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"

namespace warpath::classify {

struct ClassifyParams {
  uint64_t seed = 0x5eed;  ///< hash function parameters (universal hashing), deterministic
  /// Image size limit of rfc, tic and split (kCapacity beyond it); 0: their own (1 GiB), or
  /// under "auto" kAutoImageBytes.
  uint64_t max_image_bytes = 0;
  /// The caller will insert and erase rules: "auto" picks among engines that take updates.
  bool updates = false;
};

/// The image limit "auto" gives each engine it tries (ClassifyParams::max_image_bytes): an
/// engine that needs more passes to the next. On the standard ClassBench sets this picks RFC
/// where its tables stay small (acl1 10K), TIC where RFC's would not (ipc1 10K: 22 MiB
/// against 352 MiB) and the address split where neither fits (fw1 10K, the 100K sets): the
/// fastest engine within 64 MiB on each (bench/results/classify-cpu-*), 1.4-2.4x rte_acl;
/// RFC's 350-450 MiB images on ipc1/fw1 10K are at most 1.5x faster than that pick.
inline constexpr uint64_t kAutoImageBytes = uint64_t(64) << 20;

struct ClassifierStats {
  uint64_t rules        = 0;  ///< rules in the set
  uint64_t entries      = 0;  ///< rules after range expansion (tuple/bloom), else = rules
  uint32_t classes      = 0;  ///< distinct masks (tuple/bloom), 0 otherwise
  uint64_t memory_bytes = 0;  ///< the image (host + device)
  double build_ms       = 0;
  std::string detail;  ///< engine-specific, one line (e.g. "expansion 1.83x")
};

class Classifier {
 public:
  virtual ~Classifier()                        = default;
  virtual std::string_view id() const noexcept = 0;
  /// Whether classify takes device-resident keys and answers (ExecContext::resident): the
  /// CUDA engines.
  virtual bool takes_device_memory() const noexcept { return false; }

  /// out[i] = index of the best rule matching key i, or kNoMatch. keys.layout must be the
  /// rule set's layout. kInvalidArgument for a short span or a layout mismatch. (Non-virtual
  /// interface: the span is checked here, once; engines implement do_classify.)
  /// With ctx.resident, keys.words and out are device memory and keys.stride must be
  /// keys.count (the columns back to back): only engines that take_device_memory() accept it.
  Status classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const {
    if (ctx.resident && !takes_device_memory())
      return Status(Errc::kNotSupported, std::string(id()) + ": takes host memory only");
    if (ctx.resident && keys.count && keys.stride != keys.count)
      return Status(Errc::kInvalidArgument,
                    std::string(id()) + ": resident key columns must be back to back");
    if (out.size < keys.count)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": output span of " +
                                                std::to_string(out.size) + " for " +
                                                std::to_string(keys.count) + " keys");
    return do_classify(keys, out, ctx);
  }

  /// Inserts (or replaces) the rule with index `index`; kNotSupported for engines that can
  /// only rebuild.
  virtual Status insert(uint32_t index, const Rule& rule) {
    (void)index, (void)rule;
    return Status(Errc::kNotSupported, std::string(id()) + " cannot update rules in place");
  }
  /// Erases rule `index`; kNotFound when there is none.
  virtual Status erase(uint32_t index) {
    (void)index;
    return Status(Errc::kNotSupported, std::string(id()) + " cannot update rules in place");
  }

  virtual ClassifierStats stats() const = 0;

 protected:
  /// The classification, with out.size >= keys.count.
  virtual Status do_classify(const KeyBatch& keys, Span<uint32_t> out, ExecContext& ctx) const = 0;
};

/// Whether engine `id` (or validate:<id>) classifies rules of `layout` (rfc, tic and split
/// take 5-tuple rules only).
bool takes_layout(std::string_view id, KeyLayout layout);
/// Whether engine `id` (or validate:<id>) inserts and erases rules without a rebuild.
bool takes_updates(std::string_view id);
/// Every classifier engine in this build, available here or not.
std::vector<EngineInfo> classifier_engines();
/// The algorithms --algo accepts, from the table: every cpu.* engine's ("linear", "tuple", ...),
/// then "auto".
std::vector<std::string> classifier_algorithms();
/// "linear, tuple, ..., auto".
std::string classifier_algorithm_list();

/// The engine id for an algorithm and an engine choice, as `warpath classify --algo --engine`
/// and the Python package's Classifier take them: `engine` is cpu, gpu, ref, auto or a full id
/// (a full id or validate:<id> is returned as it is); `algo` one of classifier_algorithms().
/// "auto" with a device gives "auto:cpu." or "auto:cuda." (make_classifier takes them: the best
/// engine of that device that builds); an algorithm with engine "auto" takes the GPU's engine
/// where a GPU is. kNotFound for an unknown engine word.
Result<std::string> classifier_id(std::string_view algo, std::string_view engine);

/// Builds engine `id` over `rules`; "auto:<prefix>" is make_best_classifier(rules, prefix), and
/// "validate:auto:<prefix>" that engine beside ref.linear. kNotFound for an unknown id, kNotSupported when the
/// engine cannot run here or does not take this layout.
Result<std::unique_ptr<Classifier>> make_classifier(std::string_view id, const RuleSet& rules,
                                                    const ClassifyParams& params = {});

/// The engine "auto" builds: of the available engines whose id starts with `prefix` ("" any,
/// "cpu.", "cuda.") and that take the layout, the highest-priority one that builds within
/// params.max_image_bytes (kAutoImageBytes when 0); an engine that answers kCapacity or
/// kNotSupported passes to the next (the error names them all).
Result<std::unique_ptr<Classifier>> make_best_classifier(const RuleSet& rules,
                                                         std::string_view prefix,
                                                         const ClassifyParams& params = {});

}  // namespace warpath::classify
