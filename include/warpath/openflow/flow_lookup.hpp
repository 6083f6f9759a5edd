// include/warpath/openflow/flow_lookup.hpp
//
// Flow-table lookup engines: a batch of OpenFlow 1.0 12-tuples (packet::OfTuple, as
// packet::core::of_tuple extracts them) -> the id of the flow each hits under the precedence
// rules of flow_table.hpp, or kNoFlow. The switch module runs cpu.flowtable's body inline (it looks a
// frame's keys up in the image it published); the engines are what the self-test, the GPU
// benchmark and the CUDA offload see.
//
// Engines (the registry: flow_table_engines())
//   ref.flowtable   FlowTable::lookup: every flow tested, the precedence rule applied (the oracle)
//   cpu.flowtable   FlowImage::lookup: exact-match hash table, then ranked tuple-space subtables,
//              hashed and prefetched in stages
//   cuda.flowtable  the same image on the device, one thread per key running the same per-key body
//              (openflow/core/flow_hash_core.hpp)
//   validate:<id> runs <id> and ref.flowtable on every batch and reports the first difference.
#pragma once
#include <initializer_list>
#include <memory>
#include <random>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow {

class FlowLookup {
 public:
  virtual ~FlowLookup() = default;
  virtual std::string_view id() const noexcept = 0;
  /// ids[i] = the flow keys[i] hits, or kNoFlow; kInvalidArgument when the sizes differ.
  Status lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
    if (keys.size != ids.size)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": " + std::to_string(keys.size) +
                                                " keys but " + std::to_string(ids.size) + " answers");
    return do_lookup(keys, ids);
  }

 protected:
  /// The lookup, with keys.size == ids.size (checked once above for every engine).
  virtual Status do_lookup(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const = 0;
};

std::vector<EngineInfo> flow_table_engines();
/// An engine over `table` as it is now (a later change of the table needs a new engine).
Result<std::unique_ptr<FlowLookup>> make_flow_lookup(std::string_view id, const FlowTable& table);
/// The self-test's differential check against ref.flowtable: random tables over small value pools
/// (overlaps, ties and exact flows frequent) and random keys, at batch sizes 0, 1, 31-33,
/// 63-65, 255-257 and large; at most 200,000 keys.
CheckReport check_flow_table_engine(std::string_view id, uint64_t seed, uint64_t items);

namespace detail {
/// Random flows and keys over small value pools (Open vSwitch's test-classifier does the same),
/// so that hits, overlaps, ties and exact flows are frequent: the self-test's and the tests'
/// tables.
class FlowPools {
 public:
  explicit FlowPools(uint64_t seed) : rng(seed) {}
  /// A flow (every field exact when `exact`), priority 1, 2, 3 or 100, output to 1..4.
  FlowSpec flow(bool exact);
  /// A key over the same values (and some that no flow names).
  packet::OfTuple key();
  uint32_t pick(std::initializer_list<uint32_t> v);
  bool coin(unsigned percent);
  std::mt19937_64 rng;
};
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<FlowLookup>> make_cuda_flow(std::shared_ptr<const FlowImage> image);
#endif
}  // namespace detail

}  // namespace warpath::openflow
