// include/warpath/packet/parser.hpp
//
// Packet parser engines.
//
// What
//   A Parser turns a batch of raw packets into PacketInfo records (info.hpp) and extracts flow
//   keys (flow_key.hpp). It is the pre-shade stage of the pipeline (PacketShader section 5).
//
// How
//   The per-packet algorithm is one function, core::parse_packet() in
//   src/packet/core/parse_core.hpp, written once for host and device. The engines differ only
//   in how they drive it:
//
//   id          priority  notes
//   ref.parse   0         the oracle: a separate, deliberately plain byte-by-byte parser
//   cpu.parse   10        core::parse_packet in a loop with a prefetch stage, optional threads
//   cuda.parse  5         one CUDA thread per packet; the batch is copied to the GPU and back.
//                         Lower priority than cpu.parse: parsing alone is memory bound, so the
//                         GPU wins only when the batch is already on the device.
//
//   "auto" picks the available engine with the highest priority; "validate:<id>" runs <id> and
//   ref.parse on each batch and fails on the first packet where they differ.
//
// Thread safety
//   Engines are immutable after creation; parse() may be called concurrently from several
//   threads with distinct outputs.
#pragma once
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/exec.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/core/span.hpp"
#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/flow_key.hpp"
#include "warpath/packet/info.hpp"

namespace warpath::packet {

class Parser {
 public:
  virtual ~Parser()                            = default;
  virtual std::string_view id() const noexcept = 0;
  /// Parses batch.count packets into out[0, batch.count). `batch` is in host memory.
  /// Fails with kInvalidArgument when out is too small, kCudaError on a GPU failure, and, for
  /// validate:<id>, kInvalidArgument naming the first packet where the engines disagree.
  /// (Non-virtual interface: the span is checked here, once; engines implement do_parse.)
  Status parse(const BatchView& batch, Span<PacketInfo> out, ExecContext& ctx) const {
    if (out.size < batch.count)
      return Status(Errc::kInvalidArgument, std::string(id()) + ": output span of " +
                                                std::to_string(out.size) + " for " +
                                                std::to_string(batch.count) + " packets");
    return do_parse(batch, out, ctx);
  }

 protected:
  /// The parse, with out.size >= batch.count.
  virtual Status do_parse(const BatchView& batch, Span<PacketInfo> out, ExecContext& ctx) const = 0;
};

/// Every parser engine in this build, available here or not.
std::vector<EngineInfo> parser_engines();

/// Creates an engine by id ("ref.parse", "cpu.parse", "cuda.parse", "auto", "validate:<id>").
/// kNotFound for an unknown id, kNotSupported when the engine is not available here.
Result<std::unique_ptr<Parser>> make_parser(std::string_view id);

/// Convenience: parse a whole PacketBatch with engine `id` into a vector.
Result<std::vector<PacketInfo>> parse_batch(const PacketBatch& batch, std::string_view id = "auto");

/// Key extraction from parse results. Packets without the needed layer get an all-zero key and
/// `present[i] = 0` (when present is non-null).
void extract_five_tuple4(Span<const PacketInfo> infos, FiveTuple4* keys, uint8_t* present);
void extract_five_tuple6(Span<const PacketInfo> infos, FiveTuple6* keys, uint8_t* present);
/// OpenFlow 1.0 12-tuples in SoA form; `soa.stride >= infos.size`.
void extract_of_tuples(const BatchView& batch, Span<const PacketInfo> infos, OfTupleSoA soa);

}  // namespace warpath::packet
