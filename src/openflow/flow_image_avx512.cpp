// src/openflow/flow_image_avx512.cpp: FlowImage's batched lookup with AVX-512VL per-key steps
// (core/flow_hash_avx512.hpp). Everything this file includes from elsewhere is included before
// the target pragma, so no function shared with other files is compiled for AVX-512: only the
// lookup body and the steps, which FlowImage::lookup calls where the CPU has them.
#include <algorithm>
#include <cstdint>
#include <vector>

#include "openflow/core/flow_hash_core.hpp"
#include "openflow/flow_image_table.hpp"
#include "warpath/openflow/flow_table.hpp"

#if WARPATH_AVX512_LOOKUP
#include <immintrin.h>

#pragma GCC push_options
#pragma GCC target("avx2,avx512f,avx512vl")
#include "openflow/core/flow_hash_avx512.hpp"
#include "openflow/flow_lookup_body.hpp"

namespace warpath::openflow {
void FlowImage::lookup_avx512(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  lookup_with<core::avx512::Ops>(keys, ids);
}
}  // namespace warpath::openflow
#pragma GCC pop_options

#else

namespace warpath::openflow {
void FlowImage::lookup_avx512(Span<const packet::OfTuple> keys, Span<uint32_t> ids) const {
  lookup(keys, ids, LookupIsa::kSse2);  // not built here: has_isa(kAvx512) is false
}
}  // namespace warpath::openflow

#endif
