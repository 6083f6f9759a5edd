// include/warpath/core/exec.hpp
//
// ExecContext: what a batched call runs on. CPU engines ignore the stream and complete before
// returning; CUDA engines enqueue on `stream` (a cudaStream_t kept as void* so this header
// needs no CUDA header; nullptr is the default stream) and also complete before returning
// (each waits for its stream). Per-call counters live here, not in engines, so engines stay const.
#pragma once
#include <cstdint>

namespace warpath {

struct ExecContext {
  void* stream     = nullptr;  ///< cudaStream_t for CUDA engines; nullptr = default stream.
  int device       = 0;        ///< CUDA device ordinal.
  uint32_t threads = 1;        ///< CPU worker threads an engine may use for one call.
};

}  // namespace warpath
