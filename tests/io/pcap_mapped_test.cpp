// tests/io/pcap_mapped_test.cpp: PcapReader reads classic pcap files of version 2.4 from a
// mapping of the file, record by record (src/io/pcap_reader.cpp); libpcap itself, reading the
// same files with pcap_next_ex, is the oracle: every record's timestamp, lengths and bytes,
// in both byte orders and both timestamp precisions, over generated files and every capture
// of the shared data, read in batches small enough that records wait for the next call.
#include <pcap/pcap.h>

#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "support/test_support.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::io {
namespace {

namespace fs      = std::filesystem;
namespace support = warpath::testing;
using Bytes       = std::vector<uint8_t>;

struct Rec {
  uint64_t ts = 0;
  uint32_t caplen = 0, len = 0;
  Bytes bytes;
  bool operator==(const Rec&) const = default;
};

// What libpcap reads (nanosecond timestamps, as PcapReader opens files).
std::vector<Rec> libpcap_records(const std::string& path) {
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* h = pcap_open_offline_with_tstamp_precision(path.c_str(), PCAP_TSTAMP_PRECISION_NANO, err);
  EXPECT_NE(h, nullptr) << path << ": " << err;
  std::vector<Rec> out;
  if (!h) return out;
  pcap_pkthdr* hdr   = nullptr;
  const u_char* data = nullptr;
  while (pcap_next_ex(h, &hdr, &data) == 1)
    out.push_back({uint64_t(hdr->ts.tv_sec) * 1'000'000'000ull + uint64_t(hdr->ts.tv_usec),
                   hdr->caplen, hdr->len, Bytes(data, data + hdr->caplen)});
  pcap_close(h);
  return out;
}

// What PcapReader hands out, `batch` packets a call.
std::vector<Rec> reader_records(const std::string& path, uint32_t batch) {
  std::vector<Rec> out;
  auto r = PcapReader::open(path);
  EXPECT_TRUE(r.is_ok()) << r.status().to_string();
  if (!r.is_ok()) return out;
  auto b = packet::PacketBatch::create(batch);
  EXPECT_TRUE(b.is_ok());
  while (!r->at_end()) {
    b->clear();
    auto n = r->read(*b);
    EXPECT_TRUE(n.is_ok()) << n.status().to_string();
    if (!n.is_ok()) break;
    for (uint32_t i = 0; i < b->size(); ++i) {
      const auto& m = b->meta(i);
      out.push_back({m.timestamp_ns, m.caplen, m.len, Bytes(b->data(i), b->data(i) + m.caplen)});
    }
  }
  return out;
}

void put32(Bytes& b, uint32_t x, bool big) {
  for (int i = 0; i < 4; ++i) b.push_back(uint8_t(x >> (big ? 24 - 8 * i : 8 * i)));
}
void put16(Bytes& b, uint16_t x, bool big) {
  b.push_back(uint8_t(big ? x >> 8 : x));
  b.push_back(uint8_t(big ? x : x >> 8));
}

// A classic pcap in the given byte order and precision: `n` Ethernet records of varied sizes,
// fractions near the top of their range, some records cut (caplen < len).
Bytes generated(bool big, bool nano, uint32_t n) {
  Bytes b;
  put32(b, nano ? 0xa1b23c4du : 0xa1b2c3d4u, big);
  put16(b, 2, big);
  put16(b, 4, big);
  for (uint32_t x : {0u, 0u, 9000u, 1u}) put32(b, x, big);
  for (uint32_t r = 0; r < n; ++r) {
    const uint32_t len    = 60 + (r * 97) % 1400;
    const uint32_t caplen = r % 5 == 4 ? std::min(len, 100u) : len;
    const uint32_t frac   = (nano ? 999'999'000u : 999'000u) + r;
    for (uint32_t x : {1'700'000'000u + r, frac, caplen, len}) put32(b, x, big);
    for (uint32_t i = 0; i < caplen; ++i) b.push_back(uint8_t(i * 31 + r));
  }
  return b;
}

TEST(PcapMapped, BothByteOrdersAndPrecisionsReadAsLibpcapReadsThem) {
  const std::string dir = support::temp_dir();
  for (bool big : {false, true})
    for (bool nano : {false, true}) {
      const std::string path = dir + "/g" + (big ? "-be" : "-le") + (nano ? "-ns" : "-us") + ".pcap";
      support::write_bytes(path, generated(big, nano, 300));
      SCOPED_TRACE(path);
      const auto want = libpcap_records(path);
      ASSERT_EQ(want.size(), 300u);
      for (uint32_t batch : {1u, 7u, 64u, 1024u}) EXPECT_TRUE(reader_records(path, batch) == want) << "batch " << batch;
    }
}

TEST(PcapMapped, EveryDataCaptureReadsAsLibpcapReadsIt) {
  if (!fs::is_directory(support::data_path("pcap")))
    GTEST_SKIP() << "no " << support::data_path("pcap") << " (WARPATH_DATA)";
  size_t files = 0;
  for (const auto& dir : fs::directory_iterator(support::data_path("pcap")))
    if (dir.is_directory())
      for (const auto& f : fs::directory_iterator(dir.path())) {
        if (!f.is_regular_file() || f.path().extension() != ".pcap") continue;
        SCOPED_TRACE(f.path().string());
        const auto want = libpcap_records(f.path().string());
        // Captures in other link types come out as Ethernet (SLL, raw IP): compare those by
        // count, timestamp and wire length only.
        const auto got = reader_records(f.path().string(), 50);
        ASSERT_EQ(got.size(), want.size());
        auto r = PcapReader::open(f.path().string());
        ASSERT_TRUE(r.is_ok());
        const bool ethernet = r->info().file_linktype == r->info().linktype;
        for (size_t i = 0; i < got.size(); ++i) {
          ASSERT_EQ(got[i].ts, want[i].ts) << "record " << i + 1;
          if (ethernet) {
            ASSERT_TRUE(got[i] == want[i]) << "record " << i + 1;
          }
        }
        ++files;
      }
  EXPECT_GE(files, 69u);
}

// A file that ends inside a record names the record, after handing out those before it.
TEST(PcapMapped, AFileCutInsideARecordNamesIt) {
  const std::string dir = support::temp_dir();
  const Bytes whole     = generated(true, false, 10);
  size_t at             = 24;
  for (int r = 0; r < 6; ++r) at += 16 + (whole[at + 8] << 24 | whole[at + 9] << 16 | whole[at + 10] << 8 | whole[at + 11]);
  for (const auto& [cut, what] : {std::pair{at + 5, "header"}, std::pair{at + 16 + 3, "data"}}) {
    const std::string path = dir + "/cut-" + what + ".pcap";
    support::write_bytes(path, Bytes(whole.begin(), whole.begin() + long(cut)));
    auto r = PcapReader::open(path);
    ASSERT_TRUE(r.is_ok());
    auto b = packet::PacketBatch::create(1024);
    ASSERT_TRUE(b.is_ok());
    auto n = r->read(*b);
    ASSERT_TRUE(n.is_ok());
    EXPECT_EQ(*n, 6u);
    const Status s = r->read(*b).status();
    EXPECT_EQ(s.code(), Errc::kParseError);
    EXPECT_NE(s.message().find(path + ": record 7: the file ends inside the record's " + what),
              std::string::npos)
        << s.message();
  }
}

}  // namespace
}  // namespace warpath::io
