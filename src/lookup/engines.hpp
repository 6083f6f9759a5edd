// src/lookup/engines.hpp: factories of the lookup engines, used only by fib_registry.cpp.
#pragma once
#include <memory>

#include "warpath/lookup/fib.hpp"

namespace warpath::lookup::detail {

Result<std::unique_ptr<Fib>> make_ref_fib(const RouteTable& table);
/// The CPU engines' IPv4 loops; IPv6 is batched in all but kScalar.
enum class CpuLpm {
  kScalar,      ///< cpu.lpm.scalar: DIR-24-8, one address at a time
  kBatched,     ///< cpu.lpm: DIR-24-8, G-Opt batched prefetch
  kCompressed,  ///< cpu.lpm.compressed: DIR-24-8 with tbl24 compressed by /16, staged prefetch
};
Result<std::unique_ptr<Fib>> make_cpu_fib(const RouteTable& table, const FibParams& params,
                                          CpuLpm kind);
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<Fib>> make_cuda_fib(const RouteTable& table, const FibParams& params);
#endif

/// Checks a route before it reaches an engine: length within the family, host bits zero,
/// next hop <= kMaxNextHop.
Status check_route(const Route4& r);
Status check_route(const Route6& r);

}  // namespace warpath::lookup::detail
