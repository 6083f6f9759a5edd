// tests/runtime/port_test_util.hpp: what the port tests (port_test.cpp, dpdk_port_test.cpp)
// share: batches, frames as bytes, index spans and generated traffic.
#pragma once
#include <gtest/gtest.h>

#include <cstdint>
#include <utility>
#include <vector>

#include "warpath/core/span.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::runtime::test {

using Bytes = std::vector<uint8_t>;
using packet::PacketBatch;

/// A host batch for `packets` packets (and `bytes` of cells, default one cell each).
inline PacketBatch make_batch(uint32_t packets, size_t bytes = 0) {
  auto b = PacketBatch::create(packets, PacketBatch::kDefaultCellBytes, bytes);
  EXPECT_TRUE(b.is_ok());
  return std::move(b).value();
}

inline Bytes bytes_of(const PacketBatch& b, uint32_t i) {
  return Bytes(b.data(i), b.data(i) + b.meta(i).caplen);
}

inline std::vector<uint32_t> all_indices(const PacketBatch& b) {
  std::vector<uint32_t> v(b.size());
  for (uint32_t i = 0; i < b.size(); ++i) v[i] = i;
  return v;
}

inline Span<const uint32_t> span_of(const std::vector<uint32_t>& v) {
  return {v.data(), uint32_t(v.size())};
}

/// `count` generated frames (IMIX by default; kFixed / kUniform use 1518-byte frames).
inline PacketBatch traffic(uint32_t count, uint64_t seed,
                           gen::SizeMix sizes = gen::SizeMix::kImix) {
  gen::TrafficParams params;
  params.count    = count;
  params.seed     = seed;
  params.sizes    = sizes;
  params.min_size = 1518;
  auto b          = gen::batch_for(count);
  EXPECT_TRUE(b.is_ok());
  Status s = gen::generate_traffic(params, *b);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return std::move(b).value();
}

}  // namespace warpath::runtime::test
