// tests/gen/trace_frames_test.cpp: frames_from_trace() puts each trace 5-tuple where a parser
// looks for it, with valid checksums.
#include <gtest/gtest.h>

#include <vector>

#include "gen/frame_check.hpp"
#include "warpath/gen/traffic.hpp"

namespace warpath::gen {
namespace {

using check::be16;
using check::be32;
using check::parse;
using check::verify_frame;

io::TraceEntry entry(uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint8_t proto) {
  io::TraceEntry e;
  e.key = {src, dst, sport, dport, proto, {0, 0, 0}};
  return e;
}

TEST(FramesFromTrace, FieldsLandAtTheirOffsets) {
  const std::vector<io::TraceEntry> trace = {
      entry(0xc0a80001, 0x0a000002, 1234, 80, 6), entry(0x01020304, 0x05060708, 5353, 53, 17),
      entry(0xac100001, 0xac100002, 0x0102, 0x0304, 1), entry(0x0b0c0d0e, 0x0f101112, 0, 0, 47)};
  auto batch = batch_for(4);
  ASSERT_TRUE(batch.is_ok());
  TraceFrameParams params;
  params.start_ns = 500;
  params.gap_ns   = 10;
  ASSERT_TRUE(frames_from_trace(trace, params, *batch).is_ok());
  ASSERT_EQ(batch->size(), 4u);
  for (uint32_t i = 0; i < 4; ++i) {
    const auto& key  = trace[i].key;
    const uint8_t* p = batch->data(i);
    EXPECT_EQ(batch->meta(i).caplen, 60u);
    EXPECT_EQ(batch->meta(i).timestamp_ns, 500u + 10u * i);
    EXPECT_EQ(be16(p + 12), 0x0800u);
    EXPECT_EQ(p[23], key.proto);
    EXPECT_EQ(be32(p + 26), key.src);
    EXPECT_EQ(be32(p + 30), key.dst);
    EXPECT_EQ(be32(p + 2), key.dst);  // MACs 02:00:<address>.
    EXPECT_EQ(be32(p + 8), key.src);
    EXPECT_EQ(internet_checksum(p + 14, 20), 0);
    EXPECT_EQ(be16(p + 16), 46u);  // IP total length.
    if (key.proto == 6 || key.proto == 17) {
      EXPECT_EQ(be16(p + 34), key.sport);
      EXPECT_EQ(be16(p + 36), key.dport);
    }
    if (key.proto != 47) verify_frame(parse(*batch, i));
  }
  const uint8_t* icmp = batch->data(2) + 34;
  EXPECT_EQ(icmp[0], 8);  // Echo request; identifier and sequence from the ports.
  EXPECT_EQ(be16(icmp + 4), 0x0102u);
  EXPECT_EQ(be16(icmp + 6), 0x0304u);
  const uint8_t* raw = batch->data(3);
  for (uint32_t j = 34; j < 60; ++j) EXPECT_EQ(raw[j], 0) << j;  // Zero payload.
}

TEST(FramesFromTrace, SizeValidationAndCapacity) {
  const std::vector<io::TraceEntry> trace(3, entry(1, 2, 3, 4, 6));
  auto batch = batch_for(3);
  ASSERT_TRUE(batch.is_ok());
  TraceFrameParams params;
  params.size = 63;
  Status s    = frames_from_trace(trace, params, *batch);
  EXPECT_EQ(s.code(), Errc::kInvalidArgument);
  EXPECT_NE(s.message().find("size"), std::string::npos);
  params.size = 1000;
  ASSERT_TRUE(frames_from_trace(trace, params, *batch).is_ok());
  EXPECT_EQ(batch->meta(2).caplen, 996u);
  verify_frame(parse(*batch, 2));
  EXPECT_EQ(frames_from_trace(trace, params, *batch).code(), Errc::kCapacity);
  EXPECT_EQ(batch->size(), 3u);
}

}  // namespace
}  // namespace warpath::gen
