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

  /// A whole capture, through a BPF filter when one is given.
  static std::unique_ptr<PyCapture> read(const std::string& path, const std::string& filter) {
    io::CaptureInfo info;
    packet::PacketBatch b;
    {
      nb::gil_scoped_release unlocked;
      b = take(io::read_capture(path, &info, filter));
    }
    return std::make_unique<PyCapture>(std::move(b), info, path);
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
