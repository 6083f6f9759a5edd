// src/stream/engines.hpp: factories of the reassembly engines, used only by
// stream_registry.cpp.
#pragma once
#include <memory>

#include "warpath/stream/stream.hpp"

namespace warpath::stream::detail {

std::unique_ptr<Reassembler> make_ref_reassembler(const StreamConfig& config);
std::unique_ptr<Reassembler> make_cpu_reassembler(const StreamConfig& config);
std::unique_ptr<Reassembler> make_emu_reassembler(const StreamConfig& config);
Result<std::unique_ptr<Reassembler>> make_cuda_reassembler(const StreamConfig& config);

}  // namespace warpath::stream::detail
