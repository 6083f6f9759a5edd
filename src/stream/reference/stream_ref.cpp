// ref.stream: the deliberately naive engine, the oracle of the other engines: the reassembly
// rules over a byte map (one entry per buffered byte; core/ranges/byte_store.hpp).
#include "core/ranges/byte_store.hpp"
#include "stream/engines.hpp"
#include "stream/store_reassembler.hpp"

namespace warpath::stream::detail {

std::unique_ptr<Reassembler> make_ref_reassembler(const StreamConfig& config) {
  return std::make_unique<StoreReassembler<ranges::ByteStore, NodeMap>>("ref.stream", config);
}

}  // namespace warpath::stream::detail
