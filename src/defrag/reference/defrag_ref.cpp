// ref.defrag: the deliberately naive engine, the oracle of the others: the defragmentation
// rules over a byte map (one entry per buffered byte; core/ranges/byte_store.hpp).
#include "core/ranges/byte_store.hpp"
#include "defrag/engines.hpp"
#include "defrag/store_defragmenter.hpp"

namespace warpath::defrag::detail {

std::unique_ptr<Defragmenter> make_ref_defragmenter(const DefragConfig& config) {
  return std::make_unique<StoreDefragmenter<ranges::ByteStore>>("ref.defrag", config);
}

}  // namespace warpath::defrag::detail
