// include/warpath/core/cuda_device.hpp
//
// CUDA device discovery without CUDA headers. In a build without CUDA every call reports no
// device; with CUDA but no GPU (or no driver), the same. Engines whose id starts with "cuda."
// are available only when cuda_device_count() > 0.
#pragma once
#include <string>
#include <vector>

namespace warpath {

struct CudaDeviceInfo {
  int index = 0;
  std::string name;
  int cc_major = 0, cc_minor = 0;
  int sm_count               = 0;
  size_t global_memory_bytes = 0;
};

/// Number of usable CUDA devices (0 without CUDA, driver or GPU).
int cuda_device_count() noexcept;
/// Every usable device; empty without CUDA.
std::vector<CudaDeviceInfo> cuda_devices();
/// Why there is no device ("built without CUDA", "no CUDA driver", ...); empty if there is one.
std::string cuda_unavailable_reason();
/// CUDA runtime and driver versions as "13.0 / 13.0"; empty without CUDA.
std::string cuda_versions();

}  // namespace warpath
