// include/warpath/runtime/chain_run.hpp
//
// A chain run over a batch of packets frame by frame, on one offload place or through an
// offload master, with one outcome per packet: what the tests and the self-test's chain check
// (modules/chain_check.hpp) compare.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "warpath/packet/batch.hpp"
#include "warpath/runtime/chain.hpp"

namespace warpath::runtime {

/// What a chain made of one packet.
struct ChainOutcome {
  std::string reason;   ///< the reason's name ("forwarded", "acl_deny", ...)
  uint16_t out = 0;       ///< output port when forwarded, else 0 (kOutMany: see out_mask)
  uint64_t out_mask = 0;  ///< the ports of a kOutMany packet (frame.hpp), else 0
  std::string context;    ///< context name
  std::vector<uint8_t> bytes;
  bool operator==(const ChainOutcome& o) const {
    return reason == o.reason && out == o.out && out_mask == o.out_mask && context == o.context &&
           bytes == o.bytes;
  }
};

/// Runs every packet of `in` through `chain` in frames of `batch` (0: one empty frame),
/// shading on `place`; one outcome per packet, in order. `counters` (one per module) may be
/// nullptr. With `launch_frames` > 0 the frames are shaded by an offload master (the offload
/// place), that many frames gathered into each launch, as `warpath run` does.
Result<std::vector<ChainOutcome>> run_chain_frames(const Chain& chain,
                                                   const packet::PacketBatch& in, uint32_t batch,
                                                   Place place, ModuleCounters* counters = nullptr,
                                                   uint32_t launch_frames = 0);

}  // namespace warpath::runtime
