// src/flow/engines.hpp: factories of the flow engines, used only by flow_registry.cpp.
#pragma once
#include <memory>

#include "warpath/flow/flow.hpp"

namespace warpath::flow::detail {

std::unique_ptr<FlowTracker> make_ref_tracker(const FlowConfig& config);
std::unique_ptr<FlowTracker> make_cpu_tracker(const FlowConfig& config);
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<FlowTracker>> make_cuda_tracker(const FlowConfig& config);
#endif

}  // namespace warpath::flow::detail
