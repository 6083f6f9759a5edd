// include/warpath/selftest/catalogue.hpp
//
// The engine catalogue: every library of this program that has engines (an engine family:
// packet, lookup, classify, ...) with its engine table and its differential check, so `warpath
// info` and `warpath selftest` walk every engine without knowing the libraries' interfaces. (A
// chain module is another thing: runtime/module.hpp.) Each library registers its family from
// its registry file (core/registry.hpp: WARPATH_REGISTER_ENGINE_FAMILY); a new library needs no
// line here.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"

namespace warpath {

/// Every engine family of this program (core/registry.hpp: EngineFamily), in dependency order:
/// the libraries' registrations and the parsers'. Read after main has started.
const std::vector<EngineFamily>& engine_families();

namespace packet {
/// The parsers' check (every parser engine against ref.parse on generated traffic). It is the
/// packet module's, but lives in the selftest module: it needs the traffic generator, which
/// is built on packet batches.
CheckReport check_parser_engine(std::string_view id, uint64_t seed, uint64_t items);
}  // namespace packet

}  // namespace warpath
