#include "packet/core/key_core.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::packet {

void extract_five_tuple4(Span<const PacketInfo> infos, FiveTuple4* keys, uint8_t* present) {
  for (uint32_t i = 0; i < infos.size; ++i) {
    const bool ok = core::five_tuple4(infos[i], keys[i]);
    if (present) present[i] = ok;
  }
}

void extract_five_tuple6(Span<const PacketInfo> infos, FiveTuple6* keys, uint8_t* present) {
  for (uint32_t i = 0; i < infos.size; ++i) {
    const bool ok = core::five_tuple6(infos[i], keys[i]);
    if (present) present[i] = ok;
  }
}

void extract_of_tuples(const BatchView& batch, Span<const PacketInfo> infos, OfTupleSoA soa) {
  for (uint32_t i = 0; i < infos.size; ++i)
    soa.write(i,
              core::of_tuple(batch.data(i), batch.metas[i].caplen, batch.metas[i].port, infos[i]));
}

}  // namespace warpath::packet
