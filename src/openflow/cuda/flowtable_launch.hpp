// src/openflow/cuda/flowtable_launch.hpp: the raw cuda.flowtable launch on device-resident
// keys, for the engine and the GPU benchmark (kernel-only timing). No CUDA header: the stream
// is a cudaStream_t passed as void*.
#pragma once
#include <cstdint>
#include <memory>

#include "openflow/core/flow_hash_core.hpp"
#include "warpath/core/status.hpp"
#include "warpath/openflow/flow_table.hpp"

namespace warpath::openflow::detail {

/// One image table on the device.
struct DeviceTable {
  core::HashView view;  ///< device pointers
  uint64_t max_rank;
};

/// An image copied to the device: its tables (exact first) and the ranks by flow id.
class DeviceImage {
 public:
  static Result<std::unique_ptr<DeviceImage>> upload(const FlowImage& image);
  virtual ~DeviceImage() = default;
  virtual const DeviceTable* tables() const noexcept = 0;  ///< device memory
  virtual uint32_t table_count() const noexcept       = 0;
  virtual bool has_exact() const noexcept             = 0;
  virtual const uint64_t* ranks() const noexcept      = 0;  ///< device memory
};

/// ids[i] for keys[i] (device pointers), asynchronous on `stream`.
Status launch_flowtable(const DeviceImage& image, const packet::OfTuple* keys, uint32_t n,
                        uint32_t* ids, void* stream);

}  // namespace warpath::openflow::detail
