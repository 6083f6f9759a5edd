// Writing captures: classic pcap through libpcap's pcap_dump; pcapng with a small writer of
// our own, because libpcap 1.10 cannot write pcapng (see include/warpath/io/pcap_file.hpp).
#include <pcap/pcap.h>

#include <cerrno>
#include <cstdio>
#include <cstring>
#include <vector>

#include "warpath/io/pcap_file.hpp"

namespace warpath::io {

namespace {

// Minimal pcapng: a section header, one interface description (with if_tsresol = 9, so
// timestamps are nanoseconds) and one enhanced packet block per packet. Little-endian, as the
// format allows either byte order and names it in the byte-order magic.
class PcapngFile {
 public:
  Status open(const std::string& path, int linktype, uint32_t snaplen) {
    file_ = std::fopen(path.c_str(), "wb");
    if (!file_) return Status(Errc::kIoError, path + ": cannot create: " + std::strerror(errno));
    path_ = path;
    std::vector<uint8_t> shb;
    put32(shb, 0x0a0d0d0a);
    put32(shb, 28);
    put32(shb, 0x1a2b3c4d);
    put16(shb, 1);
    put16(shb, 0);
    put32(shb, 0xffffffff);  // section length unknown
    put32(shb, 0xffffffff);
    put32(shb, 28);
    std::vector<uint8_t> idb;
    put32(idb, 1);
    put32(idb, 32);
    put16(idb, static_cast<uint16_t>(linktype));
    put16(idb, 0);
    put32(idb, snaplen);
    put16(idb, 9);  // if_tsresol
    put16(idb, 1);
    idb.push_back(9);
    idb.insert(idb.end(), 3, 0);
    put32(idb, 0);  // opt_endofopt
    put32(idb, 32);
    WARPATH_TRY(emit(shb));
    return emit(idb);
  }
  Status packet(const uint8_t* bytes, uint32_t caplen, uint32_t len, uint64_t ts_ns) {
    const uint32_t padded = (caplen + 3) & ~3u;
    const uint32_t total  = 32 + padded;
    std::vector<uint8_t> epb;
    epb.reserve(total);
    put32(epb, 6);
    put32(epb, total);
    put32(epb, 0);  // interface 0
    put32(epb, static_cast<uint32_t>(ts_ns >> 32));
    put32(epb, static_cast<uint32_t>(ts_ns));
    put32(epb, caplen);
    put32(epb, len);
    epb.insert(epb.end(), bytes, bytes + caplen);
    epb.insert(epb.end(), padded - caplen, 0);
    put32(epb, total);
    return emit(epb);
  }
  Status close() {
    if (!file_) return Status::ok();
    const bool ok = std::fclose(file_) == 0;
    file_         = nullptr;
    return ok ? Status::ok() : Status(Errc::kIoError, path_ + ": close failed");
  }
  ~PcapngFile() {
    if (file_) std::fclose(file_);
  }

 private:
  static void put16(std::vector<uint8_t>& v, uint16_t x) {
    v.push_back(uint8_t(x));
    v.push_back(uint8_t(x >> 8));
  }
  static void put32(std::vector<uint8_t>& v, uint32_t x) {
    for (int i = 0; i < 4; ++i) v.push_back(uint8_t(x >> (8 * i)));
  }
  Status emit(const std::vector<uint8_t>& v) {
    if (!file_) return Status(Errc::kInvalidArgument, path_ + ": writer is closed");
    if (std::fwrite(v.data(), 1, v.size(), file_) != v.size())
      return Status(Errc::kIoError, path_ + ": write failed: " + std::strerror(errno));
    return Status::ok();
  }
  std::FILE* file_ = nullptr;
  std::string path_;
};

}  // namespace

struct PcapWriter::Impl {
  CaptureInfo info;
  std::string path;
  pcap_t* dead          = nullptr;
  pcap_dumper_t* dumper = nullptr;
  PcapngFile ng;
  ~Impl() {
    if (dumper) pcap_dump_close(dumper);
    if (dead) pcap_close(dead);
  }
};

PcapWriter::PcapWriter(PcapWriter&&) noexcept            = default;
PcapWriter& PcapWriter::operator=(PcapWriter&&) noexcept = default;
PcapWriter::~PcapWriter()                                = default;

Result<PcapWriter> PcapWriter::create(const std::string& path, const CaptureInfo& info) {
  PcapWriter w;
  w.impl_       = std::make_unique<Impl>();
  w.impl_->info = info;
  w.impl_->path = path;
  if (info.format == CaptureFormat::kPcapng) {
    WARPATH_TRY(w.impl_->ng.open(path, info.linktype, info.snaplen));
    return w;
  }
  const unsigned precision = info.precision == TimePrecision::kNano ? PCAP_TSTAMP_PRECISION_NANO
                                                                    : PCAP_TSTAMP_PRECISION_MICRO;
  w.impl_->dead = pcap_open_dead_with_tstamp_precision(info.linktype, int(info.snaplen), precision);
  if (!w.impl_->dead) return Status(Errc::kOutOfMemory, path + ": pcap_open_dead failed");
  w.impl_->dumper = pcap_dump_open(w.impl_->dead, path.c_str());
  if (!w.impl_->dumper) {
    // libpcap's message already starts with the path ("out.pcap: No such file or directory").
    std::string why = pcap_geterr(w.impl_->dead);
    if (why.rfind(path + ": ", 0) == 0) why.erase(0, path.size() + 2);
    return Status(Errc::kIoError, path + ": cannot create: " + why);
  }
  return w;
}

Status PcapWriter::write_packet(const uint8_t* bytes, uint32_t caplen, uint32_t len,
                                uint64_t ts_ns) {
  if (!impl_) return Status(Errc::kInvalidArgument, "writer is closed");
  if (impl_->info.format == CaptureFormat::kPcapng)
    return impl_->ng.packet(bytes, caplen, len, ts_ns);
  if (!impl_->dumper) return Status(Errc::kInvalidArgument, impl_->path + ": writer is closed");
  pcap_pkthdr h{};
  h.ts.tv_sec         = static_cast<time_t>(ts_ns / 1'000'000'000ull);
  const uint64_t frac = ts_ns % 1'000'000'000ull;
  h.ts.tv_usec =
      static_cast<suseconds_t>(impl_->info.precision == TimePrecision::kNano ? frac : frac / 1000);
  h.caplen = caplen;
  h.len    = len;
  pcap_dump(reinterpret_cast<u_char*>(impl_->dumper), &h, bytes);
  // pcap_dump() reports nothing: a full disk shows only in the stream's error flag.
  if (std::ferror(pcap_dump_file(impl_->dumper))) return write_error();
  return Status::ok();
}

Status PcapWriter::write_error() const {
  const int e = errno;
  return Status(Errc::kIoError,
                impl_->path + ": write failed" + (e ? std::string(": ") + std::strerror(e) : ""));
}

Status PcapWriter::write(const packet::PacketBatch& batch) {
  for (uint32_t i = 0; i < batch.size(); ++i) {
    const auto& m = batch.meta(i);
    WARPATH_TRY(write_packet(batch.data(i), m.caplen, m.len, m.timestamp_ns));
  }
  return Status::ok();
}

Status PcapWriter::flush() {
  if (!impl_ || !impl_->dumper) return Status::ok();  // pcapng writes through its own buffer
  if (pcap_dump_flush(impl_->dumper) != 0 || std::ferror(pcap_dump_file(impl_->dumper)))
    return write_error();
  return Status::ok();
}

Status PcapWriter::close() {
  if (!impl_) return Status::ok();
  Status result;
  if (impl_->info.format == CaptureFormat::kPcapng) result = impl_->ng.close();
  if (impl_->dumper) {
    if (pcap_dump_flush(impl_->dumper) != 0 || std::ferror(pcap_dump_file(impl_->dumper)))
      result = write_error();
    pcap_dump_close(impl_->dumper);
    impl_->dumper = nullptr;
  }
  return result;
}

}  // namespace warpath::io
