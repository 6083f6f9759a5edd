// src/ipsec/cuda/ctr_launch.hpp: the raw cuda.ctr launch on device-resident ranges, for the
// engine and the GPU benchmark (kernel-only timing). No CUDA header: the stream is a
// cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "ipsec/core/crypto_core.hpp"
#include "warpath/core/status.hpp"

namespace warpath::ipsec::detail {

/// One range on the device: `len` bytes at data + offset under key `key`, from `skip` bytes
/// into counter block `counter`.
struct CtrDeviceOp {
  uint32_t offset, len, key, skip;
  uint8_t counter[16];
};

/// XORs every op's range with its keystream (core::aes_ctr_range), a thread per range, with
/// the keys' schedules `keys` (device memory). Asynchronous on `stream`.
Status launch_ctr(const core::AesKey* keys, uint8_t* data, const CtrDeviceOp* ops, uint32_t n,
                  void* stream);

}  // namespace warpath::ipsec::detail
