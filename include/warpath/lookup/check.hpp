// include/warpath/lookup/check.hpp
//
// Random tables and differential checks of lookup engines against ref.lpm, shared by
// `warpath selftest`, the tests and the benchmarks.
#pragma once
#include <string>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/lookup/fib.hpp"

namespace warpath::lookup {

/// A seeded table with `routes4` IPv4 and `routes6` IPv6 routes of every length (/0, /32 and
/// /128 included), many nested around a few anchor addresses; integer next hops < 1000.
RouteTable random_route_table(uint64_t seed, uint32_t routes4, uint32_t routes6);

/// A seeded table shaped like a real full table: IPv4 prefix lengths drawn from the 2024 full
/// table's histogram (57% /24, 961 longer than /24 per 900K), IPv6 from the 2024 IPv6 one
/// (mostly /48, /32, /44, /40, /29), clustered under a few thousand /8-/16 blocks; next hops
/// 0..255. For GPU benchmarks on machines without the data directory.
RouteTable synthetic_full_table(uint64_t seed, uint32_t routes4, uint32_t routes6);

/// `count` addresses per family: half drawn under the table's prefixes, half uniform.
void random_addresses(const RouteTable& table, uint64_t seed, uint32_t count,
                      std::vector<uint32_t>& v4, std::vector<Ip6>& v6);

/// Looks up every address through `engine` in consecutive bursts of each size and compares
/// with `ref`; returns the first difference, or "" when all agree.
std::string compare_engine(Fib& engine, Fib& ref, const std::vector<uint32_t>& v4,
                           const std::vector<Ip6>& v6, const std::vector<uint32_t>& sizes);

/// `count` random adds and removes applied to both Fibs (and mirrored in `table`); returns the
/// first update they answer differently, or "".
std::string random_updates(Fib& engine, Fib& ref, RouteTable& table, uint64_t seed, uint32_t count);

/// The module's self-test entry (core/registry.hpp ModuleInfo::check).
CheckReport check_fib_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::lookup
