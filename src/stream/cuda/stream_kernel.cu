/*
 * src/stream/cuda/stream_kernel.cu: cuda.stream, TCP stream reassembly with flows in GPU slots.
 *
 * Computes   for each chain j of a batch (one flow's segments, in arrival order, linked by
 *            SlotSegment::next: GASPP's next-packet chains), core::run_chain over the flow's slot
 *            in device memory: the rules of stream_rules.hpp, chunks and their bytes into the
 *            chain's part of the output, the counters summed with atomics. A chain stops at a
 *            segment its slot cannot hold; the host moves that flow to its own stores and runs
 *            the rest there (slot_reassembler.cpp), so the answers are ref.stream's.
 * Algorithm  src/stream/core/stream_rules.hpp and slot_chain.hpp, shared with every engine (emu.stream
 *            runs this schedule on the host). Do not fork.
 * Launch     one thread per chain; kBlockSize threads per block.
 * Memory     kSlots slots (FlowState over a fixed store: about 17 KiB each) allocated once;
 *            segments, payload and chains copied in from page-locked memory; each chain
 *            writes into bounded regions, then copies what it delivered to a compact output
 *            (offsets by atomics), and only that, the results and the counters come back.
 * Sync       two waits per batch: for the totals, then for the compact output.
 * Errors     none on device; CUDA API and launch errors become Status (WARPATH_CUDA_TRY).
 * Tested by  warpath selftest (check_stream_engine: against ref.stream); without a GPU,
 *            emu.stream in tests/stream (every test, every engine).
 */
#include <memory>

#include "stream/cuda/chain_buffers.cuh"
#include "stream/engines.hpp"

namespace warpath::stream::detail {
namespace {

constexpr int kBlockSize   = 64;
constexpr uint32_t kSlots  = 16384;  ///< flows on the GPU at once; the rest on the host
constexpr size_t kCounters = sizeof(StreamCounters) / sizeof(uint64_t);

// Each chain writes into its own bounded regions, then copies what it wrote to the compact
// output at offsets it takes with atomics, so only what was delivered crosses back to the host.
__global__ void __launch_bounds__(kBlockSize)
    chain_kernel(core::Limits lim, core::SlotFlow* slots, const core::SlotChain* chains, uint32_t n,
                 const core::SlotSegment* segs, const uint8_t* payload, core::SlotChunk* chunks,
                 uint8_t* bytes, core::ChainResult* results, unsigned long long* counters,
                 core::SlotChunk* out_chunks, uint8_t* out_bytes, unsigned long long* totals) {
  const uint64_t j = uint64_t(blockIdx.x) * blockDim.x + threadIdx.x;
  if (j >= n) return;
  const core::SlotChain ch = chains[j];
  StreamCounters c;
  core::ChainResult r   = core::run_chain(lim, slots[ch.slot], ch, segs, payload,
                                          chunks + ch.chunk_at, bytes + ch.byte_at, c);
  const uint64_t* words = reinterpret_cast<const uint64_t*>(&c);
  for (size_t i = 0; i < kCounters; ++i)
    if (words[i]) atomicAdd(counters + i, static_cast<unsigned long long>(words[i]));
  r.chunk_first     = r.chunks ? atomicAdd(totals, static_cast<unsigned long long>(r.chunks)) : 0;
  const uint64_t at = r.bytes ? atomicAdd(totals + 1, static_cast<unsigned long long>(r.bytes)) : 0;
  for (uint32_t k = 0; k < r.chunks; ++k) {
    core::SlotChunk o = chunks[ch.chunk_at + k];
    o.bytes += at;
    out_chunks[r.chunk_first + k] = o;
  }
  for (uint64_t k = 0; k < r.bytes; ++k) out_bytes[at + k] = bytes[ch.byte_at + k];
  results[j] = r;
}

// Copies slots[ids[i]] to out[i] (16-byte words; a block per slot): the flows being closed,
// gathered for one copy back.
__global__ void __launch_bounds__(256)
    gather_kernel(const core::SlotFlow* slots, const uint32_t* ids, uint32_t n,
                  core::SlotFlow* out) {
  static_assert(sizeof(core::SlotFlow) % sizeof(uint4) == 0);
  constexpr uint32_t kWords = sizeof(core::SlotFlow) / sizeof(uint4);
  if (blockIdx.x >= n) return;
  const uint4* from = reinterpret_cast<const uint4*>(slots + ids[blockIdx.x]);
  uint4* to         = reinterpret_cast<uint4*>(out + blockIdx.x);
  for (uint32_t w = threadIdx.x; w < kWords; w += blockDim.x) to[w] = from[w];
}

class GpuSlots final : public SlotBackend {
 public:
  Status init() {
    WARPATH_TRY(slots_.reserve(size_t(kSlots) * sizeof(core::SlotFlow)));
    WARPATH_CUDA_TRY(cudaStreamCreateWithFlags(&stream_, cudaStreamNonBlocking));
    return Status::ok();
  }
  ~GpuSlots() override {
    if (stream_) cudaStreamDestroy(stream_);
  }
  uint32_t slots() const override { return kSlots; }

  Status run(const core::Limits& lim, const SlotBatch& b, SlotBatchOut& out) override {
    const uint32_t n = uint32_t(b.chains.size());
    out.results.resize(n);
    WARPATH_TRY(buf_.upload(b, stream_));
    WARPATH_CUDA_TRY(cudaMemsetAsync(buf_.counters.ptr, 0, sizeof(StreamCounters), stream_));
    WARPATH_TRY(buf_.launch(lim, slots_.as<core::SlotFlow>(), n, stream_));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(out.results.data(), buf_.results.ptr,
                                     n * sizeof(core::ChainResult), cudaMemcpyDeviceToHost,
                                     stream_));
    WARPATH_CUDA_TRY(cudaMemcpyAsync(&out.c, buf_.counters.ptr, sizeof(StreamCounters),
                                     cudaMemcpyDeviceToHost, stream_));
    unsigned long long totals[2] = {0, 0};
    WARPATH_CUDA_TRY(
        cudaMemcpyAsync(totals, buf_.totals.ptr, sizeof totals, cudaMemcpyDeviceToHost, stream_));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream_));
    // Only what was delivered comes back.
    out.chunks.resize(totals[0]);
    out.bytes.resize(totals[1]);
    if (totals[0])
      WARPATH_CUDA_TRY(cudaMemcpyAsync(out.chunks.data(), buf_.out_chunks.ptr,
                                       totals[0] * sizeof(core::SlotChunk), cudaMemcpyDeviceToHost,
                                       stream_));
    if (totals[1])
      WARPATH_CUDA_TRY(cudaMemcpyAsync(out.bytes.data(), buf_.out_bytes.ptr, totals[1],
                                       cudaMemcpyDeviceToHost, stream_));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream_));
    return Status::ok();
  }

  Status read_many(const uint32_t* ids, uint32_t n, core::SlotFlow* out) override {
    if (n == 0) return Status::ok();
    if (n == 1) return read(ids[0], out[0]);
    WARPATH_TRY(ids_.reserve(n * sizeof(uint32_t)));
    WARPATH_TRY(gathered_.reserve(size_t(n) * sizeof(core::SlotFlow)));
    WARPATH_CUDA_TRY(
        cudaMemcpyAsync(ids_.ptr, ids, n * sizeof(uint32_t), cudaMemcpyHostToDevice, stream_));
    gather_kernel<<<n, 256, 0, stream_>>>(slots_.as<core::SlotFlow>(), ids_.as<uint32_t>(), n,
                                          gathered_.as<core::SlotFlow>());
    WARPATH_CUDA_TRY(cudaGetLastError());
    WARPATH_CUDA_TRY(cudaMemcpyAsync(out, gathered_.ptr, size_t(n) * sizeof(core::SlotFlow),
                                     cudaMemcpyDeviceToHost, stream_));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream_));
    return Status::ok();
  }

  Status read(uint32_t slot, core::SlotFlow& out) override {
    WARPATH_CUDA_TRY(cudaMemcpyAsync(&out, slots_.as<core::SlotFlow>() + slot,
                                     sizeof(core::SlotFlow), cudaMemcpyDeviceToHost, stream_));
    WARPATH_CUDA_TRY(cudaStreamSynchronize(stream_));
    return Status::ok();
  }

 private:
  DeviceArray slots_;
  ChainBuffers buf_;
  DeviceArray ids_, gathered_;  // read_many
  cudaStream_t stream_ = nullptr;
};

}  // namespace

Status launch_stream_chains(const core::Limits& lim, core::SlotFlow* slots,
                            const core::SlotChain* chains, uint32_t n,
                            const core::SlotSegment* segs, const uint8_t* payload,
                            core::SlotChunk* chunks, uint8_t* bytes, core::ChainResult* results,
                            unsigned long long* counters, core::SlotChunk* out_chunks,
                            uint8_t* out_bytes, unsigned long long* totals, void* stream) {
  if (n == 0) return Status::ok();
  const uint32_t blocks = (n + kBlockSize - 1) / kBlockSize;
  chain_kernel<<<blocks, kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(
      lim, slots, chains, n, segs, payload, chunks, bytes, results, counters, out_chunks, out_bytes,
      totals);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<Reassembler>> make_cuda_reassembler(const StreamConfig& config) {
  auto backend = std::make_unique<GpuSlots>();
  WARPATH_TRY(backend->init());
  return std::unique_ptr<Reassembler>(
      std::make_unique<SlotReassembler>("cuda.stream", config, std::move(backend)));
}

}  // namespace warpath::stream::detail
