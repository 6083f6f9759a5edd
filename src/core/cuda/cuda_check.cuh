// src/core/cuda/cuda_check.cuh: CUDA errors as Status, with the expression and file:line.
// Only .cu files include this header.
#pragma once
#include <cuda_runtime.h>

#include <string>

#include "warpath/core/status.hpp"

namespace warpath {

inline Status cuda_status(cudaError_t e, const char* expr, const char* file, int line) {
  return Status(Errc::kCudaError, std::string(expr) + " failed at " + file + ":" +
                                      std::to_string(line) + ": " + cudaGetErrorName(e) + " (" +
                                      cudaGetErrorString(e) + ")");
}

}  // namespace warpath

#define WARPATH_CUDA_TRY(expr)                                      \
  do {                                                              \
    if (cudaError_t e_ = (expr); e_ != cudaSuccess)                 \
      return ::warpath::cuda_status(e_, #expr, __FILE__, __LINE__); \
  } while (0)

/// Waits until every copy and kernel issued on the legacy default stream (cudaMemcpy, the
/// update kernels) has landed. cudaMemcpy from pageable memory returns once the bytes are
/// staged, not when they are on the device, and the pipeline's lanes run their lookups on
/// non-blocking streams that do not wait for the legacy stream: an engine calls this after
/// uploading or changing an image and before publishing it (or answering from it).
#define WARPATH_CUDA_UPLOADS_LANDED() WARPATH_CUDA_TRY(cudaStreamSynchronize(cudaStreamLegacy))

/// Checks a kernel launch right after it is made (STYLE.md 8.5).
#define WARPATH_CUDA_CHECK_LAUNCH() WARPATH_CUDA_TRY(cudaGetLastError())
