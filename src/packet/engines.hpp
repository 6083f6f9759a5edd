// src/packet/engines.hpp: factories of the parser engines, used only by parser_registry.cpp.
#pragma once
#include <memory>
#include <string>

#include "warpath/packet/parser.hpp"

namespace warpath::packet::detail {

std::unique_ptr<Parser> make_ref_parser();
std::unique_ptr<Parser> make_cpu_parser();
#if defined(WARPATH_HAVE_CUDA)
Result<std::unique_ptr<Parser>> make_cuda_parser();
#endif

/// "packet 17: status ok vs truncated, proto 6 vs 6, ..." describing where two results differ.
std::string describe_difference(uint32_t index, const PacketInfo& got, const PacketInfo& want);

}  // namespace warpath::packet::detail
