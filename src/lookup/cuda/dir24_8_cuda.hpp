// src/lookup/cuda/dir24_8_cuda.hpp: DIR-24-8 images in device memory and the lookup launch.
// A plain C++ header (no CUDA includes) so engine code and benchmarks can use it.
#pragma once
#include <memory>
#include <vector>

#include "lookup/core/dir24_8_core.hpp"
#include "lookup/dir24_8_image.hpp"

namespace warpath::lookup::detail {

/// A device copy of a Dir24_8Image, kept equal to it by apply() after each host update.
class Dir24_8Device {
 public:
  static Result<std::unique_ptr<Dir24_8Device>> upload(const Dir24_8Image& img);
  ~Dir24_8Device();
  /// Copies the entries named by `dirty` (drained from `img`) in order: a new tbl8 group
  /// reaches the device before the tbl24 entry that publishes it.
  Status apply(const Dir24_8Image& img, const std::vector<DirtyRange>& dirty);
  unsigned entry_bits() const { return bits_; }
  core::Dir24_8View<uint16_t> view16() const;
  core::Dir24_8View<uint32_t> view32() const;
  uint64_t memory_bytes() const { return bytes24_ + bytes8_ + bytes_nh_; }

 private:
  Dir24_8Device() = default;
  unsigned bits_ = 0;
  void *tbl24_ = nullptr, *tbl8_ = nullptr, *nh_ = nullptr;
  size_t bytes24_ = 0, bytes8_ = 0, bytes_nh_ = 0;
};

/// out[i] = core::dir24_8_lookup(view, addrs[i]) for i < n; device pointers; `stream` is a
/// cudaStream_t. One thread per address, grid-stride.
Status launch_dir24_8_lookup(const Dir24_8Device& dev, const uint32_t* d_addrs, NextHop* d_out,
                             uint32_t n, void* stream);

}  // namespace warpath::lookup::detail
