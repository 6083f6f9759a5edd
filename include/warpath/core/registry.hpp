// include/warpath/core/registry.hpp
//
// Engine registries.
//
// What
//   Every module (packet parsing, classification, lookup, ...) keeps one table of its engines:
//   id, priority, an availability probe and a factory (EngineTable, src/core/engine_table.hpp:
//   an id is written once, with how it is built). The table is the only place that knows
//   which engines exist, so the CLI, the tests, the self-test and the benchmarks all enumerate
//   it and a new engine is tested and measured without further wiring (OVS
//   dpcls_subtable_lookup_info_t, STYLE.md 8.6).
//
// Ids
//   "<device>.<algorithm>[.<variant>]": ref.* are the deliberately naive oracles, cpu.* CPU
//   engines, cuda.* CUDA engines. Two pseudo ids are resolved by the module factories:
//     auto            the available engine with the highest priority;
//     validate:<id>   <id> and the module's reference engine run side by side on every batch;
//                     the first mismatch is reported as an error naming the item and both answers.
//
// Engine families
//   A library with engines registers its family from its registry file (its table and its
//   differential check: WARPATH_REGISTER_ENGINE_FAMILY), so that `warpath info` and `warpath
//   selftest` (selftest/catalogue.hpp) walk every engine without knowing the libraries'
//   interfaces, and a new library is listed with no line elsewhere. This header (core) knows
//   none of them.
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"

namespace warpath {

/// What the module-independent tools need to know about one engine.
struct EngineInfo {
  std::string_view id;           ///< "cpu.parse"
  std::string_view description;  ///< one line
  int priority        = 0;       ///< "auto" picks the highest available
  bool (*available)() = nullptr;
};

/// Availability probes for EngineInfo::available: always (CPU engines), and a CUDA device
/// present (cuda.* engines; false in builds without CUDA).
bool engine_always();
bool cuda_engine_available();

/// Outcome of one differential check of an engine against its module's reference.
struct CheckReport {
  std::string module, engine;
  uint64_t seed  = 0;
  uint64_t items = 0;      ///< items compared
  bool skipped   = false;  ///< engine not available here
  std::string detail;      ///< first mismatch or skip reason
  bool passed() const { return !skipped && detail.empty(); }
};

/// How many of a differential check's `n` items a burst size covers: all of them for bursts of
/// 4,096 and up, else a prefix of 64 bursts (at least 16,384 items): every size meets its lane
/// edges without a million tiny calls (on a GPU each is a synchronous launch), and the full
/// size still sees every item.
constexpr uint32_t check_cover(uint32_t n, uint32_t burst) {
  if (burst >= 4096) return n;
  const uint64_t prefix = uint64_t(burst) * 64 > 16384 ? uint64_t(burst) * 64 : 16384;
  return prefix < n ? uint32_t(prefix) : n;
}

/// Shared resolution of "auto": the id of the available engine with the highest priority,
/// or an error listing the engines when none is available.
Result<std::string> resolve_auto(const std::vector<EngineInfo>& engines, std::string_view module);

/// "validate:cpu.x" -> "cpu.x"; other ids unchanged. `validating` says which case it was.
std::string_view strip_validate(std::string_view id, bool& validating);

/// Resolves a requested engine id the same way in every module (its make_* factory then only
/// dispatches on the resolved id):
///   validate:<id>  sets `validating`, then resolves <id>
///   auto           the available engine with the highest priority (when `expand_auto`; a
///                  module with its own fallback order, like classification's, passes false and
///                  gets "auto" back)
///   cpu, gpu       the cpu.* / cuda.* engine with the highest priority (aliases, so users need
///                  not know engine ids)
///   ref            the module's ref.* engine (its oracle)
/// Errors name the engine and the reason: kNotFound "unknown <noun> engine 'x' (engines: ...,
/// auto, cpu, gpu, ref, validate:<engine>)"; kNotSupported "cuda.x is not available: built
/// without CUDA" or "cuda.x needs a CUDA device: <why>".
Result<std::string> resolve_engine(const std::vector<EngineInfo>& engines, std::string_view noun,
                                   std::string_view requested, bool& validating,
                                   bool expand_auto = true);

/// The algorithms of a module's engines on one device: "cpu." ids with the prefix stripped
/// ({"linear", "tuple", ...}), in table order; what the CLI and the config accept as --algo.
std::vector<std::string> engine_algorithms(const std::vector<EngineInfo>& engines,
                                           std::string_view device = "cpu");

/// A library's engines as the tools see them (an engine family: packet, lookup, classify, ...).
struct EngineFamily {
  std::string_view name;  ///< "lookup"
  std::vector<EngineInfo> (*engines)() = nullptr;
  /// Runs engine `id` against the library's reference on fresh random data of `items` items
  /// generated from `seed`, at several batch sizes. Never throws.
  CheckReport (*check)(std::string_view id, uint64_t seed, uint64_t items) = nullptr;
  /// Where it is listed (lower first): the libraries' dependency order, by convention 10 for
  /// packet up to 130 for the chain modules; a tie goes by name.
  int rank = 0;
};

/// Every family this program registered, by rank, then name.
std::vector<EngineFamily> engine_family_list();

/// Keeps `family` (what WARPATH_REGISTER_ENGINE_FAMILY calls); a name registered twice stops
/// the program when the list is first read, naming it.
bool add_engine_family(const EngineFamily& family) noexcept;

/// Registers an engine family from the library's registry file:
/// `WARPATH_REGISTER_ENGINE_FAMILY(lookup, "lookup", 20, &fib_engines, &check_fib_engine);`.
/// The library's CMake line names the tag (`warpath_module(lookup ... FAMILIES lookup)`): the
/// self-test library then refers to the registration's symbol (`warpath_engine_family_<tag>`,
/// C linkage, from a file CMake writes), so that the linker keeps it in every program that
/// lists the engines although nothing else may call that file.
#define WARPATH_REGISTER_ENGINE_FAMILY(tag, name, rank, engines, check)                  \
  extern "C" {                                                                           \
  extern const bool warpath_engine_family_##tag;                                         \
  const bool warpath_engine_family_##tag =                                               \
      ::warpath::add_engine_family(::warpath::EngineFamily{name, engines, check, rank}); \
  }                                                                                      \
  static_assert(true, "")

}  // namespace warpath
