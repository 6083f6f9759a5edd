// src/ipsec/cuda/esp_launch.hpp: the raw cuda.esp launch on device-resident packets, for the
// engine and the GPU benchmark (kernel-only timing). No CUDA header: the stream is a
// cudaStream_t passed as void*.
#pragma once
#include <cstdint>

#include "ipsec/core/crypto_core.hpp"
#include "warpath/core/status.hpp"
#include "warpath/ipsec/ipsec.hpp"

namespace warpath::ipsec::detail {

/// One packet on the device: its ESP bytes at data + offset (header, text, ICV).
struct EspDeviceOp {
  uint32_t offset, text_len, sa, seq_hi;
};

/// Seals (ok == nullptr) or opens (ok[k] = ICV verified) every op with core::seal_packet /
/// core::open_packet on the SAs `sas` (device pointers). Asynchronous on `stream`.
Status launch_esp(const core::DeviceSa* sas, uint8_t* data, const EspDeviceOp* ops, uint32_t n, uint8_t* ok,
                  void* stream);
/// Prepares n SAs' device keys (AES schedules, GHASH keys, HMAC pad states) into `out`
/// (device memory), on the device.
Status prepare_device_sas(const SaKeys* keys, uint32_t n, core::DeviceSa* out);

}  // namespace warpath::ipsec::detail
