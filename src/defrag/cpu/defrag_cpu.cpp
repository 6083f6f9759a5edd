// cpu.defrag: the defragmentation rules over sorted byte ranges with pooled buffers
// (core/ranges/range_store.hpp).
#include "core/ranges/range_store.hpp"
#include "defrag/engines.hpp"
#include "defrag/store_defragmenter.hpp"

namespace warpath::defrag::detail {

std::unique_ptr<Defragmenter> make_cpu_defragmenter(const DefragConfig& config) {
  return std::make_unique<StoreDefragmenter<ranges::RangeStore>>("cpu.defrag", config);
}

}  // namespace warpath::defrag::detail
