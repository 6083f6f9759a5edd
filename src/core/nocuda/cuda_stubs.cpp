// CPU-only builds: no CUDA device, ever.
#include "core/cuda_host.hpp"
#include "warpath/core/cuda_device.hpp"

namespace warpath {

int cuda_device_count() noexcept { return 0; }
std::vector<CudaDeviceInfo> cuda_devices() { return {}; }
std::string cuda_unavailable_reason() { return "built without CUDA"; }
std::string cuda_versions() { return {}; }
bool built_with_cuda() noexcept { return false; }

namespace detail {
void* cuda_host_alloc(size_t) noexcept { return nullptr; }
void cuda_host_free(void*) noexcept {}
bool cuda_host_register(void*, size_t) noexcept { return false; }
void cuda_host_unregister(void*) noexcept {}
void* cuda_stream_create() noexcept { return nullptr; }
void cuda_stream_destroy(void*) noexcept {}
void* cuda_device_alloc(size_t) noexcept { return nullptr; }
void cuda_device_free(void*) noexcept {}
bool cuda_copy_async(void*, const void*, size_t, bool, void*, const char** why) noexcept {
  if (why) *why = "built without CUDA";
  return false;
}
bool cuda_stream_sync(void*, const char** why) noexcept {
  if (why) *why = "built without CUDA";
  return false;
}
int cuda_stream_query(void*, const char** why) noexcept {
  if (why) *why = "built without CUDA";
  return -1;
}
}  // namespace detail

}  // namespace warpath
