/*
 * src/ipsec/cuda/esp_kernel.cu: cuda.esp, ESP crypto on the GPU (PacketShader's IPsec shade).
 *
 * Computes   each packet's seal (AES-CTR + HMAC-SHA1/SHA256, or AES-GCM) or open (ICV check in
 *            constant time, then decryption), in place: the EspCrypto contract (ipsec.hpp).
 * Algorithm  src/ipsec/core/crypto_core.hpp (seal_packet, open_packet, sa_prepare), checked on
 *            the host against OpenSSL by tests/ipsec. Do not fork.
 * Launch     one thread per packet, kBlockSize threads per block; each block first builds the
 *            AES table in shared memory (AesTable, 1 KiB). The SAs' keys are prepared on the
 *            device when the engine is built (a kernel of one thread per SA).
 * Memory     the packets' ESP bytes (header, text, ICV) are gathered into one pinned staging
 *            buffer, copied up, processed, copied down and scattered back; offsets per packet.
 *            Resident calls (seal_resident / open_resident: the offload master uploaded the
 *            ops and their packets) run on the ops where they are, each op's esp a device
 *            pointer.
 * Next       a thread per 16-byte block for CTR (GHASH already uses per-SA 4-bit tables).
 * Tested by  warpath selftest (check_esp_engine: every suite, lengths 0-1500, batches of 0, 1,
 *            lane edges and 300, tampering), on a GPU.
 */
#include <cstring>
#include <memory>
#include <mutex>
#include <vector>

#include "core/cuda/cuda_check.cuh"
#include "core/cuda/device_array.cuh"
#include "core/cuda/grid_stride.cuh"
#include "core/cuda_host.hpp"
#include "core/pinned_buffer.hpp"
#include "ipsec/core/crypto_core.hpp"
#include "ipsec/cuda/esp_launch.hpp"
#include "ipsec/engines.hpp"

namespace warpath::ipsec::detail {
namespace {

constexpr int kBlockSize = 128;

__global__ void prepare_kernel(const SaKeys* keys, uint32_t n, core::DeviceSa* out) {
  __shared__ core::AesTable table;
  core::aes_table_build_block(table);
  const uint32_t s = blockIdx.x * blockDim.x + threadIdx.x;
  if (s >= n) return;
  const SaKeys& k = keys[s];
  core::sa_prepare(k.key.data(), k.key_bytes, k.nonce.data(), k.cipher == Cipher::kAesGcm,
                   k.integrity == Integrity::kHmacSha256, k.auth_key.data(), k.auth_key_bytes,
                   k.icv_bytes, k.esn, table, out[s]);
}

__global__ void __launch_bounds__(kBlockSize)
    esp_kernel(const core::DeviceSa* __restrict__ sas, uint8_t* data, const EspDeviceOp* __restrict__ ops,
               uint32_t n, uint8_t* ok) {
  __shared__ core::AesTable table;
  core::aes_table_build_block(table);
  for (const uint32_t t : grid_stride(n)) {
    const EspDeviceOp op = ops[t];
    uint8_t* esp         = data + op.offset;
    if (ok)
      ok[t] = core::open_packet(sas[op.sa], table, esp, op.text_len, op.seq_hi);
    else
      core::seal_packet(sas[op.sa], table, esp, op.text_len, op.seq_hi);
  }
}

// Resident ops (EspCrypto::seal_resident / open_resident): each op names its packet by a
// device pointer; an op without one or with an SA past `sa_count` is left alone (open: not ok).
__global__ void __launch_bounds__(kBlockSize)
    esp_resident_kernel(const core::DeviceSa* __restrict__ sas, uint32_t sa_count,
                        const CryptoOp* __restrict__ ops, uint32_t n, uint8_t* ok) {
  __shared__ core::AesTable table;
  core::aes_table_build_block(table);
  for (const uint32_t t : grid_stride(n)) {
    const CryptoOp op = ops[t];
    if (!op.esp || op.sa >= sa_count) {
      if (ok) ok[t] = 0;
      continue;
    }
    if (ok)
      ok[t] = core::open_packet(sas[op.sa], table, op.esp, op.text_len, op.seq_hi);
    else
      core::seal_packet(sas[op.sa], table, op.esp, op.text_len, op.seq_hi);
  }
}

int blocks_for(uint32_t n) { return grid_blocks(n, kBlockSize); }

class CudaEsp final : public EspCrypto {
 public:
  explicit CudaEsp(Span<const SaKeys> keys) : keys_(keys.begin(), keys.end()) {}
  std::string_view id() const noexcept override { return "cuda.esp"; }
  uint32_t sa_count() const noexcept override { return uint32_t(keys_.size()); }

  Status init() {
    const uint32_t n = uint32_t(keys_.size());
    WARPATH_TRY(d_keys_.reserve(sizeof(SaKeys) * (n ? n : 1)));
    WARPATH_TRY(d_sas_.reserve(sizeof(core::DeviceSa) * (n ? n : 1)));
    if (!n) return Status::ok();
    WARPATH_CUDA_TRY(cudaMemcpy(d_keys_.ptr, keys_.data(), sizeof(SaKeys) * n, cudaMemcpyHostToDevice));
    prepare_kernel<<<(n + 127) / 128, 128>>>(d_keys_.as<SaKeys>(), n, d_sas_.as<core::DeviceSa>());
    WARPATH_CUDA_TRY(cudaGetLastError());
    WARPATH_CUDA_TRY(cudaDeviceSynchronize());
    return Status::ok();
  }

  Status do_seal(Span<const CryptoOp> ops) const override { return run(ops, nullptr); }
  Status do_open(Span<const CryptoOp> ops, uint8_t* ok) const override { return run(ops, ok); }
  bool takes_device_memory() const noexcept override { return true; }
  Status do_resident(Span<const CryptoOp> ops, uint8_t* ok, ExecContext& ctx) const override {
    if (ops.size == 0) return Status::ok();
    auto stream = static_cast<cudaStream_t>(ctx.stream);
    esp_resident_kernel<<<blocks_for(ops.size), kBlockSize, 0, stream>>>(
        d_sas_.as<core::DeviceSa>(), uint32_t(keys_.size()), ops.data, ops.size, ok);
    WARPATH_CUDA_TRY(cudaGetLastError());
    // Deferred (exec.hpp, ExecContext::keep): queued only; the esp module's hold of its tables
    // (esp_module.cpp: run_job) keeps this engine and its SAs until the launch ended.
    if (!ctx.keep) WARPATH_CUDA_TRY(cudaStreamSynchronize(stream));
    return Status::ok();
  }

 private:
  Status run(Span<const CryptoOp> ops, uint8_t* ok) const {
    if (ops.size == 0) return Status::ok();
    std::lock_guard<std::mutex> g(lock_);  // one staging area per engine
    std::vector<EspDeviceOp>& dops = dops_;
    dops.resize(ops.size);
    size_t total = 0;
    for (uint32_t k = 0; k < ops.size; ++k) {
      const uint32_t bytes = core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes;
      dops[k]              = {uint32_t(total), ops[k].text_len, ops[k].sa, ops[k].seq_hi};
      total += (bytes + 15) / 16 * 16;
    }
    WARPATH_TRY(staging_.reserve(total, "cuda.esp"));
    for (uint32_t k = 0; k < ops.size; ++k)
      std::memcpy(staging_.get() + dops[k].offset, ops[k].esp,
                  core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes);
    WARPATH_TRY(d_data_.reserve(total));
    WARPATH_TRY(d_ops_.reserve(sizeof(EspDeviceOp) * ops.size));
    WARPATH_TRY(d_ok_.reserve(ops.size));
    WARPATH_CUDA_TRY(cudaMemcpy(d_data_.ptr, staging_.get(), total, cudaMemcpyHostToDevice));
    WARPATH_CUDA_TRY(cudaMemcpy(d_ops_.ptr, dops.data(), sizeof(EspDeviceOp) * ops.size, cudaMemcpyHostToDevice));
    WARPATH_TRY(launch_esp(d_sas_.as<core::DeviceSa>(), d_data_.as<uint8_t>(), d_ops_.as<EspDeviceOp>(), ops.size,
                           ok ? d_ok_.as<uint8_t>() : nullptr, nullptr));
    WARPATH_CUDA_TRY(cudaMemcpy(staging_.get(), d_data_.ptr, total, cudaMemcpyDeviceToHost));
    if (ok) WARPATH_CUDA_TRY(cudaMemcpy(ok, d_ok_.ptr, ops.size, cudaMemcpyDeviceToHost));
    for (uint32_t k = 0; k < ops.size; ++k) {
      if (ok && !ok[k]) continue;  // a failed open keeps the packet's bytes: not copied back
      std::memcpy(ops[k].esp, staging_.get() + dops[k].offset,
                  core::kEspHead + ops[k].text_len + keys_[ops[k].sa].icv_bytes);
    }
    return Status::ok();
  }

  std::vector<SaKeys> keys_;
  DeviceArray d_keys_, d_sas_;
  mutable DeviceArray d_data_, d_ops_, d_ok_;
  mutable warpath::detail::PinnedBuffer staging_;
  mutable std::vector<EspDeviceOp> dops_;
  mutable std::mutex lock_;
};

}  // namespace

Status launch_esp(const core::DeviceSa* sas, uint8_t* data, const EspDeviceOp* ops, uint32_t n, uint8_t* ok,
                  void* stream) {
  if (n == 0) return Status::ok();
  esp_kernel<<<blocks_for(n), kBlockSize, 0, static_cast<cudaStream_t>(stream)>>>(sas, data, ops, n, ok);
  WARPATH_CUDA_TRY(cudaGetLastError());
  return Status::ok();
}

Result<std::unique_ptr<EspCrypto>> make_cuda_esp(Span<const SaKeys> keys) {
  auto e = std::make_unique<CudaEsp>(keys);
  WARPATH_TRY(e->init());
  return std::unique_ptr<EspCrypto>(std::move(e));
}

Status prepare_device_sas(const SaKeys* keys, uint32_t n, core::DeviceSa* out) {
  DeviceArray d_keys;
  WARPATH_TRY(d_keys.reserve(sizeof(SaKeys) * (n ? n : 1)));
  if (!n) return Status::ok();
  WARPATH_CUDA_TRY(cudaMemcpy(d_keys.ptr, keys, sizeof(SaKeys) * n, cudaMemcpyHostToDevice));
  prepare_kernel<<<(n + 127) / 128, 128>>>(d_keys.as<SaKeys>(), n, out);
  WARPATH_CUDA_TRY(cudaGetLastError());
  WARPATH_CUDA_TRY(cudaDeviceSynchronize());
  return Status::ok();
}

}  // namespace warpath::ipsec::detail
