// python/src/bind_capture.cpp: captures (include/warpath/io/pcap_file.hpp) and the packet
// parser (include/warpath/packet/parser.hpp).
//
// A Capture holds a whole capture in one PacketBatch: its buffer and its PacketMeta records
// are handed to Python as views (no copy), and parse() answers with the PacketInfo records
// themselves (64 bytes each) in an array that owns them. The field tables give the Python side
// each struct's layout (names, types, offsets) from the structs, so its dtypes cannot drift.
#include <nanobind/stl/string.h>
#include <nanobind/stl/tuple.h>
#include <nanobind/stl/unique_ptr.h>
#include <nanobind/stl/vector.h>

#include <cstddef>
#include <mutex>

#include "batches.hpp"
#include "capture.hpp"
#include "common.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::py {
namespace {

using Field = std::tuple<std::string, std::string, size_t, size_t>;  // name, type, offset, count

#define WARPATH_FIELD(T, f, type, count) Field{#f, type, offsetof(T, f), count}

std::vector<Field> meta_fields() {
  return {WARPATH_FIELD(PacketMeta, offset, "<u4", 1), WARPATH_FIELD(PacketMeta, caplen, "<u4", 1),
          WARPATH_FIELD(PacketMeta, len, "<u4", 1),    WARPATH_FIELD(PacketMeta, port, "<u2", 1),
          WARPATH_FIELD(PacketMeta, flags, "<u2", 1),
          WARPATH_FIELD(PacketMeta, timestamp_ns, "<u8", 1)};
}

std::vector<Field> info_fields() {
  return {WARPATH_FIELD(PacketInfo, status, "u1", 1),     WARPATH_FIELD(PacketInfo, l3, "u1", 1),
          WARPATH_FIELD(PacketInfo, ip_version, "u1", 1), WARPATH_FIELD(PacketInfo, proto, "u1", 1),
          WARPATH_FIELD(PacketInfo, vlan_count, "u1", 1), WARPATH_FIELD(PacketInfo, flags, "u1", 1),
          WARPATH_FIELD(PacketInfo, tunnel, "u1", 1),     WARPATH_FIELD(PacketInfo, tcp_flags, "u1", 1),
          WARPATH_FIELD(PacketInfo, vlan_tci, "<u2", 2),  WARPATH_FIELD(PacketInfo, ethertype, "<u2", 1),
          WARPATH_FIELD(PacketInfo, l3_offset, "<u2", 1), WARPATH_FIELD(PacketInfo, l4_offset, "<u2", 1),
          WARPATH_FIELD(PacketInfo, sport, "<u2", 1),     WARPATH_FIELD(PacketInfo, dport, "<u2", 1),
          WARPATH_FIELD(PacketInfo, icmp_type, "u1", 1),  WARPATH_FIELD(PacketInfo, icmp_code, "u1", 1),
          WARPATH_FIELD(PacketInfo, tos, "u1", 1),        WARPATH_FIELD(PacketInfo, ttl, "u1", 1),
          WARPATH_FIELD(PacketInfo, fields, "u1", 1),     WARPATH_FIELD(PacketInfo, tcp_seq, "<u4", 1),
          WARPATH_FIELD(PacketInfo, src, "u1", 16),
          WARPATH_FIELD(PacketInfo, dst, "u1", 16)};
}
#undef WARPATH_FIELD

/// The addresses of parse records as the CLI prints them (packet::ip_to_string): `versions`
/// (n,) and `addrs` (n, 16) in network order; None where the version is neither 4 nor 6.
nb::list ip_strings(const nb::ndarray<const uint8_t, nb::ndim<1>, nb::device::cpu>& versions,
                    const nb::ndarray<const uint8_t, nb::shape<-1, 16>, nb::device::cpu>& addrs) {
  const size_t n = versions.shape(0);
  if (addrs.shape(0) != n) invalid("versions and addresses differ in length");
  nb::list out;
  uint8_t a[16];
  for (size_t i = 0; i < n; ++i) {
    const uint8_t v = versions.data()[i * versions.stride(0)];
    if (v != 4 && v != 6) {
      out.append(nb::none());
      continue;
    }
    for (size_t k = 0; k < 16; ++k) a[k] = addrs.data()[i * addrs.stride(0) + k * addrs.stride(1)];
    out.append(packet::ip_to_string(v, a));
  }
  return out;
}

std::vector<std::string> parse_status_names() {
  std::vector<std::string> v;
  for (int s = 0; s < int(packet::ParseStatus::kCount); ++s)
    v.emplace_back(packet::parse_status_name(packet::ParseStatus(s)));
  return v;
}

class PyWriter {
 public:
  PyWriter(const std::string& path, int linktype, uint32_t snaplen, bool nano,
           const std::string& format) {
    io::CaptureInfo info;
    info.linktype  = linktype;
    info.snaplen   = snaplen;
    info.precision = nano ? io::TimePrecision::kNano : io::TimePrecision::kMicro;
    if (format == "pcapng") {
      info.format = io::CaptureFormat::kPcapng;
    } else if (format != "pcap") {
      invalid("format '" + format + "': pcap or pcapng");
    }
    writer_ = std::make_unique<io::PcapWriter>(take(io::PcapWriter::create(path, info)));
  }
  void write(const nb::bytes& data, uint64_t ts_ns, int64_t wire_len) {
    std::lock_guard lock(mutex_);  // with the GIL: write_capture takes it without
    live();
    const auto caplen = uint32_t(data.size());
    const uint32_t len = wire_len < 0 ? caplen : uint32_t(wire_len);
    if (wire_len >= 0 && len < caplen)
      invalid("wire_len " + std::to_string(len) + " is below the " + std::to_string(caplen) +
              " bytes given");
    check(writer_->write_packet(reinterpret_cast<const uint8_t*>(data.c_str()), caplen, len, ts_ns));
  }
  void write_capture(const PyCapture& c) {
    nb::gil_scoped_release unlocked;  // before the lock
    std::lock_guard lock(mutex_);
    live();
    check(writer_->write(c.batch()));
  }
  void close() {
    nb::gil_scoped_release unlocked;
    std::lock_guard lock(mutex_);
    if (!writer_) return;
    auto w = std::move(writer_);
    check(w->close());
  }

 private:
  void live() const {
    if (!writer_) invalid("the writer is closed");
  }
  std::unique_ptr<io::PcapWriter> writer_;
  std::mutex mutex_;
};

}  // namespace

void bind_capture(nb::module_& m) {
  m.def("_meta_fields", &meta_fields, "PacketMeta's fields: (name, type, offset, count).");
  m.def("_info_fields", &info_fields, "PacketInfo's fields: (name, type, offset, count).");
  m.def("_parse_status_names", &parse_status_names, "Parse status names by value.");
  m.def("_ip_strings", &ip_strings, nb::arg("versions"), nb::arg("addrs"),
        "Parse records' addresses as text (None where not IP).");
  m.def("_parser_engines", [] { return engine_list(packet::parser_engines()); },
        "The parser engines.");

  nb::class_<PyCapture>(m, "_Capture", "A capture held in memory (see ``warpath.Capture``).")
      .def_static("read", &PyCapture::read, nb::arg("path"), nb::arg("filter") = "",
                  "Reads a whole pcap or pcapng file (or a FIFO), optionally through a BPF "
                  "filter.")
      .def("__len__", &PyCapture::size)
      .def("buffer", [](nb::handle self) { return nb::cast<const PyCapture&>(self).buffer(self); },
           "The packets' bytes: one buffer, each packet at its meta offset (a view).")
      .def("meta", [](nb::handle self) { return nb::cast<const PyCapture&>(self).meta(self); },
           "The packet records as (n, 24) bytes (a view).")
      .def("packet", &PyCapture::packet, nb::arg("index"), "Packet ``index``'s captured bytes.")
      .def("parse", &PyCapture::parse, nb::arg("engine") = "auto",
           "Parses every packet: (n, 64) bytes of PacketInfo records.")
      .def("info", &PyCapture::info, "The file's link type, snap length, format and precision.");

  nb::class_<CaptureFile>(m, "_CaptureFile",
                          "A capture file streamed batch by batch (optionally one part of N: "
                          "whole flows to one part), for flows, reassemble and nids.")
      .def(nb::init<>())
      .def_rw("path", &CaptureFile::path)
      .def_rw("filter", &CaptureFile::filter)
      .def_rw("shard", &CaptureFile::shard)
      .def_rw("shards", &CaptureFile::shards);

  nb::class_<PyWriter>(m, "_PcapWriter", "A pcap or pcapng file being written.")
      .def(nb::init<const std::string&, int, uint32_t, bool, const std::string&>(),
           nb::arg("path"), nb::arg("linktype") = 1, nb::arg("snaplen") = 262144,
           nb::arg("nano") = true, nb::arg("format") = "pcap")
      .def("write", &PyWriter::write, nb::arg("data"), nb::arg("timestamp_ns") = 0,
           nb::arg("wire_len") = -1, "Appends one packet.")
      .def("write_capture", &PyWriter::write_capture, nb::arg("capture"),
           "Appends every packet of a capture.")
      .def("close", &PyWriter::close, "Flushes and closes (errors raised here).");
}

}  // namespace warpath::py
