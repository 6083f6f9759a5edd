// include/warpath/core/exec.hpp
//
// ExecContext: what a batched call runs on. CPU engines ignore the stream and complete before
// returning; CUDA engines enqueue on `stream` (a cudaStream_t kept as void* so this header
// needs no CUDA header; nullptr is the default stream) and also complete before returning
// (each waits for its stream). Per-call counters live here, not in engines, so engines stay const.
//
// Resident calls: with `resident` set, a call's inputs and outputs (keys, answers, ESP ops and
// their packets) are device memory already: the offload master uploaded a whole launch's jobs
// in one copy and downloads every answer in one copy after the last module (GASPP's point
// about redundant transfers). A CUDA engine then launches on them without copies; an engine
// whose memory is the host's (every CPU engine, the validating wrappers) answers
// kNotSupported (takes_device_memory() says which, before the call).
//
// Deferred completion: the offload master's launches complete asynchronously (master.hpp):
// it polls each launch's stream once its last copy is queued. On a resident call with `keep`
// set, a CUDA engine may therefore return as soon as its work is queued on `stream`, without
// waiting for it, appending what its kernels still use (its device scratch lease, the read
// section that keeps its tables alive under an update) to *keep; the caller holds those until
// it has seen the stream finish. Without `keep` every call completes before returning.
#pragma once
#include <cstdint>
#include <memory>
#include <vector>

namespace warpath {

struct ExecContext {
  void* stream     = nullptr;  ///< cudaStream_t for CUDA engines; nullptr = default stream.
  int device       = 0;        ///< CUDA device ordinal.
  uint32_t threads = 1;        ///< CPU worker threads an engine may use for one call.
  bool resident    = false;    ///< the call's data is device memory (see above)
  /// Deferred completion (see above): where a resident call leaves what its queued work uses.
  std::vector<std::shared_ptr<void>>* keep = nullptr;
};

}  // namespace warpath
