// include/warpath/core/hd.hpp
//
// Portable function qualifiers for code shared by CPU and CUDA engines.
//
// What
//   WARPATH_HD marks a function that must compile for the host (g++/clang++) and, when the
//   translation unit is compiled by nvcc, for the device as well. Every per-packet algorithm
//   body in a src/<module>/core/ header is written once with it and called from a thin CPU
//   loop and a thin CUDA kernel (STYLE.md 8.6). This header includes no CUDA header.
#pragma once

#if defined(__CUDACC__)
#define WARPATH_HD __host__ __device__ __forceinline__
#define WARPATH_HD_NOINLINE __host__ __device__
#define WARPATH_HD_HOT __host__ __device__ __forceinline__
#else
#define WARPATH_HD inline
#define WARPATH_HD_NOINLINE inline
// WARPATH_HD_HOT: a per-packet body the host compiler must inline into its batch loop as well
// (g++ at -O2 kept some out of line: a call per packet, with its spills and reloads).
#define WARPATH_HD_HOT inline __attribute__((always_inline))
#endif

#if defined(__CUDA_ARCH__)
#define WARPATH_DEVICE_PASS 1
#else
#define WARPATH_DEVICE_PASS 0
#endif

/// Prefetch a cache line for reading on the host; a no-op in device code.
#if defined(__CUDA_ARCH__)
#define WARPATH_PREFETCH(addr) ((void)(addr))
#else
#define WARPATH_PREFETCH(addr) __builtin_prefetch((addr), 0, 3)
#endif
