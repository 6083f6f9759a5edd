// cpu.flow: the per-packet policy over the chained-hash table with timeout lists
// (cpu_table.hpp), keys computed on the CPU chunk by chunk.
#include "flow/cpu/cpu_table.hpp"
#include "flow/engines.hpp"
#include "flow/table_tracker.hpp"

namespace warpath::flow::detail {

std::unique_ptr<FlowTracker> make_cpu_tracker(const FlowConfig& config) {
  return std::make_unique<TableTracker<CpuTable>>("cpu.flow", config);
}

}  // namespace warpath::flow::detail
