// include/warpath/runtime/chain_check.hpp
//
// The differential check of chains, for the self-test (selftest/selftest.hpp) and the tests: a
// chain of three modules with a context key splitting the batch (acl with goto:inspect rules
// -> ttl-filter(when=inspect) -> router) shaded on the offload place's engines, frame by frame
// at several batch sizes, against the same chain on the reference engines (ref.linear,
// ref.lpm) run one packet per frame, and again through the offload master, three frames a
// launch. Pseudo engines of the "runtime" module:
//   cpu.chain    the offload place on cpu.* engines (offload_device=cpu)
//   cuda.chain   the offload place on cuda.* engines: what a GPU machine checks
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
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

std::vector<EngineInfo> chain_engines();
CheckReport check_chain_engine(std::string_view id, uint64_t seed, uint64_t items);

}  // namespace warpath::runtime
