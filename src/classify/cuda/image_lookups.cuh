// src/classify/cuda/image_lookups.cuh: the device functors that launch_image (image_cuda.cuh)
// calls per key for the image engines: each calls its core lookup body, nothing else. Shared
// by cuda/rfc_cuda.cu, cuda/tic_cuda.cu, cuda/split_cuda.cu and warpath-gpu-bench's
// kernel-only rows (only .cu files include this header).
#pragma once
#include <cstdint>

#include "classify/core/rfc_core.hpp"
#include "classify/core/split_core.hpp"
#include "classify/core/tic_core.hpp"

namespace warpath::classify::detail {

struct RfcLookup {
  __device__ uint32_t operator()(const core::RfcView& v, uint32_t w0, uint32_t w1, uint32_t w2,
                                 uint32_t w3) const {
    return core::rfc_lookup(v, w0, w1, w2, w3);
  }
};

struct TicLookup {
  __device__ uint32_t operator()(const core::TicView& v, uint32_t w0, uint32_t w1, uint32_t w2,
                                 uint32_t w3) const {
    return core::tic_lookup(v, w0, w1, w2, w3);
  }
};

struct SplitLookup {
  __device__ uint32_t operator()(const core::SplitView& v, uint32_t w0, uint32_t w1, uint32_t w2,
                                 uint32_t w3) const {
    return core::split_lookup(v, w0, w1, w2, w3);
  }
};

}  // namespace warpath::classify::detail
