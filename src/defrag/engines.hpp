// src/defrag/engines.hpp: factories of the defragmentation engines, used only by
// defrag_registry.cpp.
#pragma once
#include <memory>

#include "warpath/defrag/defrag.hpp"

namespace warpath::defrag::detail {

std::unique_ptr<Defragmenter> make_ref_defragmenter(const DefragConfig& config);
std::unique_ptr<Defragmenter> make_cpu_defragmenter(const DefragConfig& config);

}  // namespace warpath::defrag::detail
