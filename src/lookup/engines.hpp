// src/lookup/engines.hpp: factories of the lookup engines, used only by fib_registry.cpp.
#pragma once
#include <memory>

#include "warpath/lookup/fib.hpp"

namespace warpath::lookup::detail {

Result<std::unique_ptr<Fib>> make_ref_fib(const RouteTable& table);
/// cpu.lpm (batched = true) and cpu.lpm.scalar.
Result<std::unique_ptr<Fib>> make_cpu_fib(const RouteTable& table, const FibParams& params,
                                          bool batched);
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<Fib>> make_cuda_fib(const RouteTable& table, const FibParams& params);
#endif

/// Checks a route before it reaches an engine: length within the family, host bits zero,
/// next hop <= kMaxNextHop.
Status check_route(const Route4& r);
Status check_route(const Route6& r);

}  // namespace warpath::lookup::detail
