// tests/packet/engines_test.cpp: differential tests of every parser engine against ref.parse.
//
//   generated traffic at every burst size of warpath::testing::burst_sizes() (bursts are
//   consecutive BatchView slices of one batch); every capture under $WARPATH_DATA/pcap;
//   check_parser_engine() (the selftest's check); make_parser() errors; threads.
#include "packet/engines.hpp"

#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "packet/frame_builder.hpp"
#include "support/test_support.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/selftest/catalogue.hpp"

namespace warpath::packet {

namespace {

// Every engine, its validating wrapper, and the pseudo ids.
std::vector<std::string> differential_ids() {
  std::vector<std::string> ids;
  for (const std::string& id : testing::parser_engine_ids()) {
    ids.push_back(id);
    ids.push_back("validate:" + id);
  }
  ids.push_back("auto");
  ids.push_back("validate:auto");
  return ids;
}

std::vector<PacketInfo> reference(const BatchView& view) {
  auto ref = make_parser("ref.parse");
  EXPECT_TRUE(ref.is_ok());
  std::vector<PacketInfo> want(view.count);
  ExecContext ctx;
  Status s = (*ref)->parse(view, {want.data(), view.count}, ctx);
  EXPECT_TRUE(s.is_ok()) << s.to_string();
  return want;
}

// First index where two result vectors differ, with a description, or "" when equal.
std::string first_difference(const std::vector<PacketInfo>& got,
                             const std::vector<PacketInfo>& want) {
  if (got.size() != want.size()) return "sizes differ";
  for (size_t i = 0; i < got.size(); ++i)
    if (!(got[i] == want[i])) return detail::describe_difference(uint32_t(i), got[i], want[i]);
  return "";
}

// Parses `all` in consecutive slices of `burst` packets. Entries past each slice are left alone
// (checked with a guard element after every slice).
std::vector<PacketInfo> parse_in_bursts(const Parser& parser, const BatchView& all, uint32_t burst,
                                        ExecContext& ctx) {
  std::vector<PacketInfo> out(all.count + 1);
  PacketInfo guard;
  std::memset(&guard, 0x5c, sizeof guard);
  if (burst == 0) {  // an empty burst is valid and writes nothing
    out[0]   = guard;
    Status s = parser.parse(BatchView{all.buffer, all.metas, 0}, {out.data(), 0}, ctx);
    EXPECT_TRUE(s.is_ok()) << s.to_string();
    EXPECT_TRUE(out[0] == guard);
    return {};
  }
  for (uint32_t i = 0; i < all.count; i += burst) {
    const uint32_t n = std::min(burst, all.count - i);
    out[i + n]       = guard;
    Status s = parser.parse(BatchView{all.buffer, all.metas + i, n}, {out.data() + i, n}, ctx);
    EXPECT_TRUE(s.is_ok()) << parser.id() << " burst " << burst << " at " << i << ": "
                           << s.to_string();
    EXPECT_TRUE(out[i + n] == guard) << "wrote past its slice at " << i + n;
  }
  out.pop_back();
  return out;
}

struct TrafficCase {
  uint64_t seed;
  double ipv6_share, vlan_share;
  gen::SizeMix sizes;
};

class EngineDifferential : public ::testing::TestWithParam<std::string> {};

TEST_P(EngineDifferential, GeneratedTrafficAllBursts) {
  auto parser = make_parser(GetParam());
  if (!parser.is_ok()) GTEST_SKIP() << GetParam() << ": " << parser.status().message();
  const TrafficCase cases[] = {{1, 0.25, 0.1, gen::SizeMix::kImix},
                               {2, 1.0, 0.0, gen::SizeMix::kUniform},
                               {3, 0.0, 1.0, gen::SizeMix::kUniform},
                               {4, 0.5, 0.5, gen::SizeMix::kImix}};
  for (const TrafficCase& tc : cases) {
    gen::TrafficParams params;
    params.seed       = tc.seed;
    params.count      = 4096 + 257 + 3;  // the largest burst plus a ragged tail
    params.ipv6_share = tc.ipv6_share;
    params.vlan_share = tc.vlan_share;
    params.sizes      = tc.sizes;
    auto batch        = gen::batch_for(params.count);
    ASSERT_TRUE(batch.is_ok());
    ASSERT_TRUE(gen::generate_traffic(params, *batch).is_ok());
    const BatchView all                = batch->view();
    const std::vector<PacketInfo> want = reference(all);
    // The generator makes valid frames: the reference must accept every one, and the shares
    // must show up in the results.
    uint32_t v6 = 0, tagged = 0;
    for (const PacketInfo& info : want) {
      ASSERT_EQ(info.status, ParseStatus::kOk) << parse_status_name(info.status);
      ASSERT_TRUE(info.flags & (kHasPorts | kHasIcmp));
      v6 += info.ip_version == 6;
      tagged += info.vlan_count == 1;
    }
    if (tc.ipv6_share == 1.0) {
      EXPECT_EQ(v6, all.count);
    }
    if (tc.ipv6_share == 0.0) {
      EXPECT_EQ(v6, 0u);
    }
    if (tc.vlan_share == 1.0) {
      EXPECT_EQ(tagged, all.count);
    }
    if (tc.vlan_share == 0.0) {
      EXPECT_EQ(tagged, 0u);
    }
    ExecContext ctx;
    for (uint32_t burst : testing::burst_sizes()) {
      SCOPED_TRACE("seed " + std::to_string(tc.seed) + ", burst " + std::to_string(burst));
      const std::vector<PacketInfo> got = parse_in_bursts(**parser, all, burst, ctx);
      if (burst) {
        EXPECT_EQ(first_difference(got, want), "");
      }
    }
  }
}

TEST_P(EngineDifferential, RealCaptures) {
  auto parser = make_parser(GetParam());
  if (!parser.is_ok()) GTEST_SKIP() << GetParam() << ": " << parser.status().message();
  namespace fs        = std::filesystem;
  const fs::path root = fs::path(testing::data_dir()) / "pcap";
  if (!fs::is_directory(root)) GTEST_SKIP() << "no captures at " << root;
  std::vector<fs::path> files;
  for (const auto& dir : fs::directory_iterator(root))
    if (dir.is_directory())
      for (const auto& file : fs::directory_iterator(dir.path()))
        if (file.path().extension() == ".pcap" || file.path().extension() == ".pcapng")
          files.push_back(file.path());
  std::sort(files.begin(), files.end());
  ASSERT_FALSE(files.empty());
  uint64_t packets = 0;
  ExecContext ctx;
  for (const fs::path& path : files) {
    SCOPED_TRACE(path.string());
    auto batch = io::read_capture(path.string());
    ASSERT_TRUE(batch.is_ok()) << batch.status().to_string();
    const BatchView all                = batch->view();
    const std::vector<PacketInfo> want = reference(all);
    std::vector<PacketInfo> got(all.count);
    Status s = (*parser)->parse(all, {got.data(), all.count}, ctx);
    ASSERT_TRUE(s.is_ok()) << s.to_string();
    EXPECT_EQ(first_difference(got, want), "");
    EXPECT_EQ(first_difference(parse_in_bursts(**parser, all, 33, ctx), want), "");
    packets += all.count;
  }
  EXPECT_GT(packets, 1000u);
}

INSTANTIATE_TEST_SUITE_P(Ids, EngineDifferential, ::testing::ValuesIn(differential_ids()),
                         [](const auto& p) { return testing::param_name(p.param); });

// A few facts about the real captures, independent of the engines agreeing.
TEST(RealCaptureFacts, SnaplenCutHeadersStillParse) {
  const std::string path = testing::data_path("pcap/nba/ipsec_1514.pcap");
  if (!std::filesystem::exists(path)) GTEST_SKIP() << "no " << path;
  auto batch = io::read_capture(path);
  ASSERT_TRUE(batch.is_ok()) << batch.status().to_string();
  auto infos = parse_batch(*batch, "ref.parse");
  ASSERT_TRUE(infos.is_ok());
  ASSERT_EQ(infos->size(), 1024u);
  for (uint32_t i = 0; i < batch->size(); ++i) {
    ASSERT_EQ(batch->meta(i).caplen, 42u);
    ASSERT_EQ(batch->meta(i).len, 1514u);
    const PacketInfo& info = (*infos)[i];
    EXPECT_EQ(info.status, ParseStatus::kOk) << i;  // Ethernet + IPv4 + UDP = 42 bytes
    EXPECT_EQ(info.proto, 17);
    EXPECT_TRUE(info.flags & kHasPorts);
    EXPECT_EQ(info.l4_offset, 34);
  }
}

// --- check_parser_engine (the selftest) -------------------------------------------------------

TEST(CheckParserEngine, PassesForCpuAndRef) {
  for (const char* id : {"cpu.parse", "ref.parse", "validate:cpu.parse", "auto"}) {
    for (uint64_t seed : {1ull, 99ull, 0xfeedull}) {
      const CheckReport r = check_parser_engine(id, seed, 3000);
      EXPECT_TRUE(r.passed()) << id << " seed " << seed << ": " << r.detail;
      EXPECT_FALSE(r.skipped);
      EXPECT_EQ(r.module, "packet");
      EXPECT_EQ(r.engine, id);
      EXPECT_EQ(r.seed, seed);
      // Batch sizes 0, 1, 31, 32, 33, 255, 256, 257 and all 3000.
      EXPECT_EQ(r.items, 0u + 1 + 31 + 32 + 33 + 255 + 256 + 257 + 3000);
    }
  }
  const CheckReport one = check_parser_engine("cpu.parse", 5, 1);  // every size clamps to 1
  EXPECT_TRUE(one.passed()) << one.detail;
  EXPECT_EQ(one.items, 8u);
}

TEST(CheckParserEngine, UnknownAndUnavailable) {
  const CheckReport unknown = check_parser_engine("gpu.magic", 1, 10);
  EXPECT_FALSE(unknown.passed());
  EXPECT_FALSE(unknown.skipped);
  EXPECT_NE(unknown.detail.find("gpu.magic"), std::string::npos) << unknown.detail;
  if (cuda_device_count() == 0) {
    const CheckReport cuda = check_parser_engine("cuda.parse", 1, 10);
    EXPECT_TRUE(cuda.skipped);
    EXPECT_FALSE(cuda.passed());
    EXPECT_FALSE(cuda.detail.empty());
  }
}

// --- make_parser --------------------------------------------------------------------------------

TEST(MakeParser, Ids) {
  for (const std::string& id : testing::parser_engine_ids()) {
    auto p = make_parser(id);
    if (!p.is_ok()) continue;
    EXPECT_EQ((*p)->id(), id);
    auto v = make_parser("validate:" + id);
    ASSERT_TRUE(v.is_ok());
    EXPECT_EQ((*v)->id(), "validate:" + id);
  }
  // "auto" is the available engine with the highest priority.
  std::string best;
  int best_priority = -1;
  for (const auto& e : parser_engines())
    if (e.available() && e.priority > best_priority) best = e.id, best_priority = e.priority;
  auto a = make_parser("auto");
  ASSERT_TRUE(a.is_ok());
  EXPECT_EQ((*a)->id(), best);
  auto va = make_parser("validate:auto");
  ASSERT_TRUE(va.is_ok());
  EXPECT_EQ((*va)->id(), "validate:" + best);
  if (cuda_device_count() == 0) {
    EXPECT_EQ(best, "cpu.parse");
  }
}

TEST(MakeParser, Errors) {
  auto unknown = make_parser("cpu.parse2");
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Errc::kNotFound);
  const std::string& msg = unknown.status().message();
  EXPECT_NE(msg.find("cpu.parse2"), std::string::npos) << msg;
  for (const auto& e : parser_engines())
    EXPECT_NE(msg.find(std::string(e.id)), std::string::npos) << e.id << " missing from: " << msg;
  EXPECT_NE(msg.find("auto"), std::string::npos) << msg;
  EXPECT_EQ(make_parser("").status().code(), Errc::kNotFound);
  EXPECT_EQ(make_parser("validate:nope").status().code(), Errc::kNotFound);
  EXPECT_EQ(make_parser("validate:validate:cpu.parse").status().code(), Errc::kNotFound);
  EXPECT_EQ(make_parser("CPU.PARSE").status().code(), Errc::kNotFound);
  if (cuda_device_count() == 0) {
    auto cuda = make_parser("cuda.parse");
    ASSERT_FALSE(cuda.is_ok());
    EXPECT_EQ(cuda.status().code(), Errc::kNotSupported) << cuda.status().to_string();
    EXPECT_EQ(make_parser("validate:cuda.parse").status().code(), Errc::kNotSupported);
  }
}

TEST(MakeParser, OutputSpanTooSmall) {
  auto batch = gen::batch_for(10);
  ASSERT_TRUE(batch.is_ok());
  gen::TrafficParams params;
  params.count = 10;
  ASSERT_TRUE(gen::generate_traffic(params, *batch).is_ok());
  std::vector<PacketInfo> out(10);
  ExecContext ctx;
  for (const std::string& id : differential_ids()) {
    auto p = make_parser(id);
    if (!p.is_ok()) continue;
    Status s = (*p)->parse(batch->view(), {out.data(), 9}, ctx);
    EXPECT_EQ(s.code(), Errc::kInvalidArgument) << id << ": " << s.to_string();
    EXPECT_TRUE((*p)->parse(batch->view(), {out.data(), 10}, ctx).is_ok()) << id;
  }
  auto none = parse_batch(*batch, "nope");
  EXPECT_EQ(none.status().code(), Errc::kNotFound);
}

// The validating wrapper cannot be given a wrong engine through the factory, so its mismatch
// report is tested through the function that writes it.
TEST(MakeParser, DescribeDifference) {
  PacketInfo got{}, want{};
  got.status    = ParseStatus::kOk;
  got.proto     = 6;
  got.sport     = 1234;
  got.dport     = 80;
  got.flags     = kHasPorts;
  got.l4_offset = 34;
  want          = got;
  want.status   = ParseStatus::kTruncated;
  want.flags    = 0;
  want.sport = want.dport = 0;
  EXPECT_EQ(detail::describe_difference(7, got, want),
            "packet 7 (first difference at PacketInfo byte 0): got status=ok proto=6 "
            "ports=1234/80 flags=0x04 fields=0x00 l4=34, reference status=truncated proto=6 "
            "ports=0/0 flags=0x00 fields=0x00 l4=34");
  // A difference in a field the text does not name is still located.
  want        = got;
  want.dst[3] = 9;
  EXPECT_NE(detail::describe_difference(7, got, want).find("byte 51"), std::string::npos);
}

TEST(CpuParse, TwoThreadsOnManyPackets) {
  constexpr uint32_t kCount = 100000;
  auto batch                = PacketBatch::create(kCount, 128);
  ASSERT_TRUE(batch.is_ok()) << batch.status().to_string();
  gen::TrafficParams params;
  params.seed       = 77;
  params.count      = kCount;
  params.sizes      = gen::SizeMix::kUniform;
  params.min_size   = 64;
  params.max_size   = 128;  // caplen <= 124: one 128-byte cell each
  params.ipv6_share = 0.4;
  params.vlan_share = 0.3;
  ASSERT_TRUE(gen::generate_traffic(params, *batch).is_ok());
  ASSERT_EQ(batch->size(), kCount);
  const std::vector<PacketInfo> want = reference(batch->view());
  auto cpu                           = make_parser("cpu.parse");
  ASSERT_TRUE(cpu.is_ok());
  for (uint32_t threads : {2u, 3u, 16u}) {
    ExecContext ctx;
    ctx.threads = threads;
    std::vector<PacketInfo> got(kCount);
    std::memset(got.data(), 0xee, got.size() * sizeof(PacketInfo));
    ASSERT_TRUE((*cpu)->parse(batch->view(), {got.data(), kCount}, ctx).is_ok());
    EXPECT_EQ(first_difference(got, want), "") << threads << " threads";
  }
}

}  // namespace
}  // namespace warpath::packet
