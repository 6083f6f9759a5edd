// cpu.stream: the reassembly rules over sorted byte ranges with an append fast path and
// pooled buffers (core/ranges/range_store.hpp).
#include "core/ranges/range_store.hpp"
#include "stream/engines.hpp"
#include "stream/store_reassembler.hpp"

namespace warpath::stream::detail {

std::unique_ptr<Reassembler> make_cpu_reassembler(const StreamConfig& config) {
  return std::make_unique<StoreReassembler<ranges::RangeStore, warpath::detail::SerialMap>>(
      "cpu.stream", config);
}

}  // namespace warpath::stream::detail
