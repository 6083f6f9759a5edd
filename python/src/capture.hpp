// python/src/capture.hpp: a capture held in memory (warpath.Capture's compiled half): the
// whole capture in one PacketBatch, shared by the bindings that read captures (bind_capture.cpp,
// bind_flow.cpp).
#pragma once
#include <algorithm>
#include <memory>
#include <string>

#include "common.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::py {

using packet::PacketInfo;
using packet::PacketMeta;

class PyCapture {
 public:
  PyCapture(packet::PacketBatch batch, io::CaptureInfo info, std::string path)
      : batch_(std::move(batch)), info_(info), path_(std::move(path)) {}

  static std::unique_ptr<PyCapture> read(const std::string& path, const std::string& filter) {
    io::CaptureInfo info;
    if (filter.empty()) {
      packet::PacketBatch b;
      {
        nb::gil_scoped_release unlocked;
        b = take(io::read_capture(path, &info));
      }
      return std::make_unique<PyCapture>(std::move(b), info, path);
    }
    // With a BPF filter: the reader's own, batch by batch into one growing batch.
    auto reader = take(io::PcapReader::open(path));
    check(reader.set_filter(filter));
    info        = reader.info();
    auto whole  = take(packet::PacketBatch::create(1024));
    auto chunk  = take(packet::PacketBatch::create(1024));
    nb::gil_scoped_release unlocked;
    for (;;) {
      chunk.clear();
      const uint32_t got = take(reader.read(chunk));
      for (uint32_t i = 0; i < chunk.size(); ++i) {
        const PacketMeta& m = chunk.meta(i);
        if (!whole.append(chunk.data(i), m.caplen, m.len, m.timestamp_ns, m.port)) {
          auto bigger = take(packet::PacketBatch::create(whole.max_packets() * 2, 2048,
                                                         whole.buffer_bytes() * 2 + (1u << 17)));
          for (uint32_t j = 0; j < whole.size(); ++j) {
            const PacketMeta& w = whole.meta(j);
            bigger.append(whole.data(j), w.caplen, w.len, w.timestamp_ns, w.port);
          }
          whole = std::move(bigger);
          whole.append(chunk.data(i), m.caplen, m.len, m.timestamp_ns, m.port);
        }
      }
      if (got == 0 && reader.at_end()) break;
    }
    return std::make_unique<PyCapture>(std::move(whole), info, path);
  }

  size_t size() const { return batch_.size(); }
  /// The batch buffer up to the end of its last packet, a read-only view owned by this capture
  /// (packets at their meta offsets). Read-only: the offsets and lengths are what every later
  /// call trusts.
  Array<const uint8_t> buffer(nb::handle self) const {
    size_t end = 0;
    for (uint32_t i = 0; i < batch_.size(); ++i)
      end = std::max<size_t>(end, size_t(batch_.meta(i).offset) + batch_.meta(i).caplen);
    return Array<const uint8_t>(end ? batch_.base() : nullptr, {end}, self);
  }
  /// The PacketMeta records as (n, 24) bytes, a read-only view.
  Array<const uint8_t> meta(nb::handle self) const {
    const size_t n = batch_.size();
    const auto* p = n ? reinterpret_cast<const uint8_t*>(&batch_.meta(0)) : nullptr;
    return Array<const uint8_t>(p, {n, sizeof(PacketMeta)}, self);
  }
  nb::bytes packet(int64_t i) const {
    const int64_t n = int64_t(batch_.size());
    if (i < 0) i += n;
    if (i < 0 || i >= n) throw nb::index_error("packet index out of range");
    const PacketMeta& m = batch_.meta(uint32_t(i));
    return nb::bytes(batch_.data(uint32_t(i)), m.caplen);
  }
  Array<uint8_t> parse(const std::string& engine) const {
    std::vector<PacketInfo> infos;
    {
      nb::gil_scoped_release unlocked;
      infos = take(packet::parse_batch(batch_, engine));
    }
    auto v         = std::make_unique<std::vector<PacketInfo>>(std::move(infos));
    const size_t n = v->size();
    auto* data     = reinterpret_cast<uint8_t*>(v->data());
    return owned<uint8_t>(std::move(v), data, {n, sizeof(PacketInfo)});
  }
  nb::dict info() const {
    nb::dict d;
    d["path"]          = path_;
    d["linktype"]      = info_.linktype;
    d["file_linktype"] = info_.file_linktype;
    d["snaplen"]       = info_.snaplen;
    d["format"]        = info_.format == io::CaptureFormat::kPcapng ? "pcapng" : "pcap";
    d["precision"]     = info_.precision == io::TimePrecision::kNano ? "ns" : "us";
    return d;
  }
  const packet::PacketBatch& batch() const { return batch_; }

 private:
  packet::PacketBatch batch_;
  io::CaptureInfo info_;
  std::string path_;
};

}  // namespace warpath::py
