// CUDA builds: device discovery and pinned memory through the CUDA runtime. A build with CUDA
// on a machine without a driver or GPU reports no device and never fails.
#include <cuda_runtime.h>

#include "core/cuda_host.hpp"
#include "warpath/core/cuda_device.hpp"

namespace warpath {

namespace {
int probe_count(cudaError_t* error) {
  int n         = 0;
  cudaError_t e = cudaGetDeviceCount(&n);
  if (error) *error = e;
  if (e != cudaSuccess) {
    cudaGetLastError();  // clear the sticky "no device" error
    return 0;
  }
  return n;
}
}  // namespace

int cuda_device_count() noexcept {
  static const int count = probe_count(nullptr);
  return count;
}

std::vector<CudaDeviceInfo> cuda_devices() {
  std::vector<CudaDeviceInfo> out;
  for (int i = 0; i < cuda_device_count(); ++i) {
    cudaDeviceProp prop{};
    if (cudaGetDeviceProperties(&prop, i) != cudaSuccess) continue;
    out.push_back(
        {i, prop.name, prop.major, prop.minor, prop.multiProcessorCount, prop.totalGlobalMem});
  }
  return out;
}

std::string cuda_unavailable_reason() {
  cudaError_t e = cudaSuccess;
  if (probe_count(&e) > 0) return {};
  if (e == cudaSuccess) return "no CUDA device";
  return std::string("no usable CUDA device: ") + cudaGetErrorString(e);
}

std::string cuda_versions() {
  int runtime = 0, driver = 0;
  cudaRuntimeGetVersion(&runtime);
  cudaDriverGetVersion(&driver);
  auto fmt = [](int v) {
    return v ? std::to_string(v / 1000) + "." + std::to_string(v % 1000 / 10) : std::string("none");
  };
  return "runtime " + fmt(runtime) + ", driver " + fmt(driver);
}

bool built_with_cuda() noexcept { return true; }

namespace detail {
void* cuda_host_alloc(size_t bytes) noexcept {
  if (cuda_device_count() == 0) return nullptr;
  void* p = nullptr;
  if (cudaMallocHost(&p, bytes) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}
void cuda_host_free(void* ptr) noexcept { cudaFreeHost(ptr); }
bool cuda_host_register(void* ptr, size_t bytes) noexcept {
  if (cuda_device_count() == 0) return false;
  if (cudaHostRegister(ptr, bytes, cudaHostRegisterDefault) != cudaSuccess) {
    cudaGetLastError();
    return false;
  }
  return true;
}
void cuda_host_unregister(void* ptr) noexcept {
  if (cudaHostUnregister(ptr) != cudaSuccess) cudaGetLastError();
}
void* cuda_stream_create() noexcept {
  if (cuda_device_count() == 0) return nullptr;
  cudaStream_t s = nullptr;
  if (cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return s;
}
void cuda_stream_destroy(void* stream) noexcept {
  if (stream) cudaStreamDestroy(static_cast<cudaStream_t>(stream));
}
void* cuda_device_alloc(size_t bytes) noexcept {
  if (cuda_device_count() == 0) return nullptr;
  void* p = nullptr;
  if (cudaMalloc(&p, bytes ? bytes : 1) != cudaSuccess) {
    cudaGetLastError();
    return nullptr;
  }
  return p;
}
void cuda_device_free(void* ptr) noexcept {
  if (ptr) cudaFree(ptr);
}
bool cuda_copy_async(void* dst, const void* src, size_t bytes, bool to_device, void* stream,
                     const char** why) noexcept {
  const cudaError_t e =
      cudaMemcpyAsync(dst, src, bytes, to_device ? cudaMemcpyHostToDevice : cudaMemcpyDeviceToHost,
                      static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) return true;
  cudaGetLastError();
  if (why) *why = cudaGetErrorString(e);
  return false;
}
bool cuda_stream_sync(void* stream, const char** why) noexcept {
  const cudaError_t e = cudaStreamSynchronize(static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) return true;
  if (why) *why = cudaGetErrorString(e);
  return false;
}
int cuda_stream_query(void* stream, const char** why) noexcept {
  const cudaError_t e = cudaStreamQuery(static_cast<cudaStream_t>(stream));
  if (e == cudaSuccess) return 1;
  if (e == cudaErrorNotReady) return 0;
  cudaGetLastError();
  if (why) *why = cudaGetErrorString(e);
  return -1;
}
}  // namespace detail

}  // namespace warpath
