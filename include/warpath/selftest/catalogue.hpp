// include/warpath/selftest/catalogue.hpp
//
// The engine catalogue: every library of this build that has engines (an engine family: packet,
// lookup, classify, ...) with its engine table and its differential check, so `warpath info`
// and `warpath selftest` walk every engine without knowing the libraries' interfaces. (A chain
// module is another thing: runtime/module.hpp.) It lives above the modules (the selftest module depends on all of them);
// core's registry.hpp knows none of them.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"

namespace warpath {

/// An engine family's entry in the catalogue.
struct EngineFamily {
  std::string_view name;  ///< "packet"
  std::vector<EngineInfo> (*engines)();
  /// Runs engine `id` against the module's reference on fresh random data of `items` items
  /// generated from `seed`, at several batch sizes. Never throws.
  CheckReport (*check)(std::string_view id, uint64_t seed, uint64_t items);
};

/// Every engine family of this build, in dependency order.
const std::vector<EngineFamily>& engine_families();

namespace packet {
/// The parsers' check (every parser engine against ref.parse on generated traffic). It is the
/// packet module's, but lives in the selftest module: it needs the traffic generator, which
/// is built on packet batches.
CheckReport check_parser_engine(std::string_view id, uint64_t seed, uint64_t items);
}  // namespace packet

}  // namespace warpath
