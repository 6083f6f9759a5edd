// Reading pcap and pcapng through libpcap, keeping nanosecond timestamps.
#include <fcntl.h>
#include <pcap/pcap.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <vector>

#include "warpath/io/pcap_file.hpp"

namespace warpath::io {

namespace {
int link_header_bytes(int linktype);
}  // namespace

struct PcapReader::Impl {
  pcap_t* handle = nullptr;
  std::vector<uint8_t> pending;  // a packet read while the batch was full
  pcap_pkthdr pending_hdr{};
  bool has_pending = false;
  // Classic pcap only: the file offset after the last record. libpcap silently cuts a record
  // whose caplen exceeds the snap length down to the snap length (and skips the rest), so the
  // stored caplen is recovered from how far the file advanced: 16-byte header plus the data. A
  // record libpcap hands out shorter than the snap length was not cut (libpcap cuts to exactly
  // the snap length), so its end is counted, not asked of the file: ftell is a system call
  // (lseek), one per record otherwise, a third of `warpath reassemble`'s time on 612,000 small
  // records.
  long record_end = -1;
  Status error;  // the first bad record, reported on every read from then on
  std::vector<uint8_t> converted;  // a record rewritten as an Ethernet frame (SLL, raw IP)
  bpf_program filter{};            // set_filter(); applied per record (pcap_offline_filter)
  bool has_filter = false;
  uint32_t file_snaplen = 0;  // the file's own (CaptureInfo::snaplen may be raised by 14)
  std::unique_ptr<char[]> read_buffer;  // the FILE's buffer (freed after pcap_close)
  // A classic pcap file (version 2.4, a regular file, a link type the reader hands out: Ethernet,
  // Linux cooked, raw IP) is read by the reader itself: read(2) into a 1 MiB buffer of its own
  // and the records parsed there, instead of libpcap's two freads a record through the FILE's
  // buffer (a sixth of `warpath reassemble`'s time on 100-byte segments); libpcap still opens
  // it (the header's checks, the link type, the snap length, the filter's compiler). read(2),
  // not a mapping: a capture truncated or rotated while it is read ends the input or is an
  // error, not a SIGBUS, and one that grows is read as far as it has grown, as with libpcap.
  // Other link types stay with libpcap, which fixes some up per record (USB, NFLOG).
  static constexpr size_t kDirectBuffer = size_t(1) << 20;  // more than any record
  int fd                                = -1;
  std::unique_ptr<uint8_t[]> buf;
  size_t have = 0, pos = 0;  // buf[pos, have): read, not yet handed out
  bool eof = false, swapped = false, nano = false;
  int read_errno = 0;
  ~Impl() {
    if (has_filter) pcap_freecode(&filter);
    if (handle) pcap_close(handle);
    if (fd >= 0) ::close(fd);
  }
  uint32_t u32(const uint8_t* p) const noexcept {
    uint32_t v;
    std::memcpy(&v, p, 4);
    return swapped ? __builtin_bswap32(v) : v;
  }
  // At least `n` bytes from pos (fewer only at the end of the file, or after a read error:
  // read_errno).
  size_t fill(size_t n) {
    if (have - pos >= n) return have - pos;
    std::memmove(buf.get(), buf.get() + pos, have - pos);
    have -= pos;
    pos = 0;
    while (have < n && !eof) {
      const ssize_t r = ::read(fd, buf.get() + have, kDirectBuffer - have);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        if (r < 0) read_errno = errno;
        eof = true;
        break;
      }
      have += size_t(r);
    }
    return have - pos;
  }
  // Reads `path` itself from its first record on when it is such a file (otherwise libpcap
  // reads it).
  void try_direct(const std::string& path, int linktype) {
    if (linktype != 1 && link_header_bytes(linktype) < 0) return;
    if (size_t(file_snaplen) + 16 > kDirectBuffer) return;
    const int f = ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
    if (f < 0) return;
    struct stat st {};
    uint8_t h[24];
    if (::fstat(f, &st) != 0 || !S_ISREG(st.st_mode) || ::pread(f, h, 24, 0) != 24 ||
        ::lseek(f, 24, SEEK_SET) != 24) {
      ::close(f);
      return;
    }
    uint32_t magic;
    std::memcpy(&magic, h, 4);
    swapped                = magic == 0xd4c3b2a1u || magic == 0x4d3cb2a1u;
    nano                   = magic == 0xa1b23c4du || magic == 0x4d3cb2a1u;
    const uint32_t version = u32(h + 4);  // major in the first 16 bits, in the file's order
    const uint16_t major   = uint16_t(swapped ? version >> 16 : version & 0xffff);
    const uint16_t minor   = uint16_t(swapped ? version & 0xffff : version >> 16);
    if (major != 2 || minor != 4) {
      ::close(f);
      return;
    }
    ::posix_fadvise(f, 0, 0, POSIX_FADV_SEQUENTIAL);
    fd  = f;
    buf = std::make_unique<uint8_t[]>(kDirectBuffer);
  }
};

namespace {

// The file's own timestamp precision and format, from its magic number.
Result<CaptureInfo> sniff(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(Errc::kIoError, path + ": cannot open: " + std::strerror(errno));
  uint8_t magic[4] = {};
  const size_t got = std::fread(magic, 1, 4, f);
  std::fclose(f);
  if (got == 0) return Status(Errc::kParseError, path + ": empty file, not a capture");
  if (got < 4) return Status(Errc::kParseError, path + ": file too short to be a capture");
  uint32_t le = 0, be = 0;
  for (int i = 0; i < 4; ++i) {
    le |= uint32_t(magic[i]) << (8 * i);
    be = be << 8 | magic[i];
  }
  CaptureInfo info;
  if (le == 0xa1b2c3d4u || be == 0xa1b2c3d4u) {
    info.precision = TimePrecision::kMicro;
  } else if (le == 0xa1b23c4du || be == 0xa1b23c4du) {
    info.precision = TimePrecision::kNano;
  } else if (le == 0x0a0d0d0au) {
    info.format = CaptureFormat::kPcapng;
  } else {
    return Status(Errc::kParseError, path + ": not a pcap or pcapng file (unknown magic number)");
  }
  return info;
}

/// Link types the reader rewrites as Ethernet, and the bytes of their own header: Linux cooked
/// captures (tcpdump -i any) and raw IP. -1 for the others (Ethernet is handed out as it is).
int link_header_bytes(int linktype) {
  switch (linktype) {
    case 113:  // DLT_LINUX_SLL
      return 16;
    case 276:  // DLT_LINUX_SLL2
      return 20;
    case 12:   // DLT_RAW (Linux)
    case 14:   // DLT_RAW (OpenBSD)
    case 101:  // LINKTYPE_RAW
    case 228:  // DLT_IPV4
    case 229:  // DLT_IPV6
      return 0;
    default:
      return -1;
  }
}

/// The record as an Ethernet frame: the cooked header's protocol (or the IP version) as the
/// ethertype, its source address as the source MAC when it has six bytes. A record shorter
/// than its link header becomes a bare Ethernet header (the parser says truncated / not IP).
void to_ethernet(int linktype, const uint8_t* data, uint32_t caplen, std::vector<uint8_t>& out) {
  const int hdr    = link_header_bytes(linktype);
  uint16_t type    = 0;
  const uint8_t* src = nullptr;
  if (linktype == 113 && caplen >= 16) {
    type = uint16_t(data[14] << 8 | data[15]);
    if ((data[4] << 8 | data[5]) == 6) src = data + 6;
  } else if (linktype == 276 && caplen >= 20) {
    type = uint16_t(data[0] << 8 | data[1]);
    if (data[11] == 6) src = data + 12;
  } else if (hdr == 0 && caplen >= 1) {
    type = (data[0] >> 4) == 6 ? 0x86DD : (data[0] >> 4) == 4 ? 0x0800 : 0;
  }
  const uint32_t payload = caplen >= uint32_t(hdr) ? caplen - uint32_t(hdr) : 0;
  out.assign(14 + payload, 0);
  if (src) std::memcpy(out.data() + 6, src, 6);
  out[12] = uint8_t(type >> 8);
  out[13] = uint8_t(type);
  if (payload) std::memcpy(out.data() + 14, data + hdr, payload);
}

uint64_t to_ns(const timeval& ts) {
  // Opened with PCAP_TSTAMP_PRECISION_NANO, libpcap stores nanoseconds in tv_usec.
  return uint64_t(ts.tv_sec) * 1'000'000'000ull + uint64_t(ts.tv_usec);
}

}  // namespace

PcapReader::PcapReader(PcapReader&&) noexcept            = default;
PcapReader& PcapReader::operator=(PcapReader&&) noexcept = default;
PcapReader::~PcapReader()                                = default;

Result<PcapReader> PcapReader::open(const std::string& path) {
  // "-" is standard input; a FIFO or a device (a pipe from tcpdump -w -) cannot be read twice,
  // so libpcap reads it from the start and the format comes from libpcap (pcapng reports
  // major version 1); the time precision of such a stream is not known (nanoseconds assumed).
  struct stat st {};
  const bool stream = path == "-" || (::stat(path.c_str(), &st) == 0 && !S_ISREG(st.st_mode));
  CaptureInfo info;
  if (!stream) {
    WARPATH_ASSIGN_OR_RETURN(info, sniff(path));
  }
  std::FILE* f = path == "-" ? stdin : std::fopen(path.c_str(), "rb");
  if (!f) return Status(Errc::kIoError, path + ": cannot open: " + std::strerror(errno));
  // Read in 1 MiB blocks (libpcap's own open reads by the file's block size, 4 KiB: a system
  // call every few packets of a large capture; a pipe's read returns what it holds). glibc
  // takes a size only with a buffer, so the reader owns it (not standard input's: a failed
  // open leaves stdin open, and it would keep a freed buffer).
  constexpr size_t kReadBuffer = size_t(1) << 20;
  std::unique_ptr<char[]> buffer;
  if (f != stdin) {
    buffer.reset(new char[kReadBuffer]);
    std::setvbuf(f, buffer.get(), _IOFBF, kReadBuffer);
  }
  char err[PCAP_ERRBUF_SIZE] = {};
  pcap_t* h = pcap_fopen_offline_with_tstamp_precision(f, PCAP_TSTAMP_PRECISION_NANO, err);
  if (!h) {
    if (f != stdin) std::fclose(f);
    return Status(Errc::kParseError,
                  (path == "-" ? std::string("standard input") : path) + ": " + err);
  }
  if (stream) {
    info.format    = pcap_major_version(h) == 1 ? CaptureFormat::kPcapng : CaptureFormat::kPcap;
    info.precision = TimePrecision::kNano;
  }
  PcapReader r;
  r.impl_         = std::make_unique<Impl>();
  r.impl_->handle = h;
  r.impl_->read_buffer = std::move(buffer);
  r.path_         = path;
  info.linktype      = pcap_datalink(h);
  info.file_linktype = info.linktype;
  info.snaplen       = static_cast<uint32_t>(pcap_snapshot(h));
  r.impl_->file_snaplen = info.snaplen;
  if (const int hdr = link_header_bytes(info.linktype); hdr >= 0) {
    info.linktype = 1;  // handed out as Ethernet: 14 bytes in place of the link header, so
    if (hdr < 14) info.snaplen += uint32_t(14 - hdr);  // a copy's records fit its snap length
  }
  r.info_ = info;
  if (info.format == CaptureFormat::kPcap && !stream) {
    r.impl_->record_end = std::ftell(f);  // the FILE libpcap reads
    r.impl_->try_direct(path, pcap_datalink(h));
  }
  return r;
}

Result<uint32_t> PcapReader::read(packet::PacketBatch& batch, uint16_t port) {
  // A bad record is reported once the packets before it have been handed out, and again on
  // every later call.
  if (!impl_->error.is_ok()) return impl_->error;
  uint32_t n = 0;
  auto fail  = [&](Status s) -> Result<uint32_t> {
    impl_->error = std::move(s);
    if (n > 0) return n;
    return impl_->error;
  };
  if (impl_->has_pending) {
    const pcap_pkthdr& h = impl_->pending_hdr;
    if (!batch.append(impl_->pending.data(), h.caplen, h.len, to_ns(h.ts), port)) {
      if (batch.size() == 0)
        return Status(Errc::kCapacity, path_ + ": record " + std::to_string(records_) + " of " +
                                           std::to_string(h.caplen) +
                                           " bytes does not fit in an empty batch");
      return 0u;
    }
    impl_->has_pending = false;
    ++n;
  }
  for (;;) {
    // A batch full by count takes nothing more: stop before reading the next record.
    if (batch.size() > 0 && batch.size() >= batch.max_packets()) return n;
    pcap_pkthdr* hdr   = nullptr;
    const u_char* data = nullptr;
    pcap_pkthdr direct{};  // the record's header, read by the reader itself
    // Where a bad record is, for its message (made only then: building it for every record was
    // a string and an allocation a packet).
    const uint64_t record = records_ + 1;
    auto where            = [&] { return path_ + ": record " + std::to_string(record); };
    uint64_t stored_caplen = 0;
    if (Impl& m = *impl_; m.fd >= 0) {
      const size_t left = m.fill(16);
      if (m.read_errno)
        return fail(
            Status(Errc::kIoError, where() + ": read failed: " + std::strerror(m.read_errno)));
      if (left == 0) {
        at_end_ = true;
        return n;
      }
      if (left < 16)
        return fail(Status(Errc::kParseError, where() +
                                                  ": the file ends inside the record's "
                                                  "header (" +
                                                  std::to_string(left) + " of 16 bytes)"));
      const uint8_t* h    = m.buf.get() + m.pos;
      const uint32_t frac = m.u32(h + 4);
      direct.ts.tv_sec    = time_t(m.u32(h));
      direct.ts.tv_usec   = suseconds_t(m.nano ? frac : uint64_t(frac) * 1000);  // as libpcap's
      direct.caplen       = m.u32(h + 8);
      direct.len          = m.u32(h + 12);
      stored_caplen       = direct.caplen;
      hdr                 = &direct;
      if (stored_caplen <= m.file_snaplen) {  // (a larger one is reported below)
        const size_t got = m.fill(16 + stored_caplen);
        if (m.read_errno)
          return fail(
              Status(Errc::kIoError, where() + ": read failed: " + std::strerror(m.read_errno)));
        if (got < 16 + stored_caplen)
          return fail(Status(Errc::kParseError, where() +
                                                    ": the file ends inside the record's "
                                                    "data (" +
                                                    std::to_string(got - 16) + " of " +
                                                    std::to_string(stored_caplen) + " bytes)"));
        data = m.buf.get() + m.pos + 16;
        m.pos += 16 + stored_caplen;
      }
    } else {
      const int rc = pcap_next_ex(impl_->handle, &hdr, &data);
      if (rc == PCAP_ERROR_BREAK) {  // end of file
        at_end_ = true;
        return n;
      }
      if (rc != 1)
        return fail(Status(Errc::kParseError, where() + ": " + pcap_geterr(impl_->handle)));
      stored_caplen = hdr->caplen;
    }
    if (impl_->record_end >= 0 && impl_->fd < 0) {
      if (hdr->caplen < impl_->file_snaplen) {
        impl_->record_end += 16 + long(hdr->caplen);
      } else {
        const long end = std::ftell(pcap_file(impl_->handle));
        if (end >= impl_->record_end + 16) stored_caplen = uint64_t(end - impl_->record_end - 16);
        impl_->record_end = end;
      }
    }
    if (stored_caplen > impl_->file_snaplen)
      return fail(Status(Errc::kParseError, where() + ": captured length " +
                                                std::to_string(stored_caplen) +
                                                " exceeds the file's snap length " +
                                                std::to_string(impl_->file_snaplen)));
    if (hdr->caplen > hdr->len)
      return fail(
          Status(Errc::kParseError, where() + ": captured length " + std::to_string(hdr->caplen) +
                                        " exceeds the wire length " + std::to_string(hdr->len)));
    ++records_;
    // The filter runs here, per record, not inside libpcap (pcap_setfilter): libpcap would
    // skip records within one call and the file-position check above would see them as one.
    if (impl_->has_filter && !pcap_offline_filter(&impl_->filter, hdr, data)) continue;
    pcap_pkthdr h = *hdr;
    if (info_.file_linktype != info_.linktype) {  // SLL / raw IP: handed out as Ethernet
      const auto link = uint32_t(link_header_bytes(info_.file_linktype));
      to_ethernet(info_.file_linktype, data, h.caplen, impl_->converted);
      data     = impl_->converted.data();
      h.caplen = uint32_t(impl_->converted.size());
      h.len    = std::max(h.len >= link ? h.len - link + 14 : 14, h.caplen);
    }
    if (!batch.append(data, h.caplen, h.len, to_ns(h.ts), port)) {
      impl_->pending.assign(data, data + h.caplen);
      impl_->pending_hdr = h;
      impl_->has_pending = true;
      if (batch.size() == 0)
        return Status(Errc::kCapacity, where() + " of " + std::to_string(h.caplen) +
                                           " bytes does not fit in an empty batch");
      return n;
    }
    ++n;
  }
}

Status PcapReader::set_filter(const std::string& expression) {
  bpf_program prog{};
  if (pcap_compile(impl_->handle, &prog, expression.c_str(), 1, PCAP_NETMASK_UNKNOWN) != 0)
    return Status(Errc::kInvalidArgument,
                  "filter '" + expression + "': " + pcap_geterr(impl_->handle));
  if (impl_->has_filter) pcap_freecode(&impl_->filter);
  impl_->filter     = prog;
  impl_->has_filter = true;
  return Status::ok();
}

Result<packet::PacketBatch> read_capture(const std::string& path, CaptureInfo* info,
                                         const std::string& filter) {
  WARPATH_ASSIGN_OR_RETURN(PcapReader reader, PcapReader::open(path));
  if (!filter.empty()) WARPATH_TRY(reader.set_filter(filter));
  if (info) *info = reader.info();
  // Read into a batch that doubles whenever it fills, so any capture ends up in one batch.
  WARPATH_ASSIGN_OR_RETURN(auto batch, packet::PacketBatch::create(1024));
  for (;;) {
    WARPATH_TRY(reader.read(batch).status());
    if (reader.at_end()) return batch;
    const uint32_t packets = batch.max_packets() * 2;
    const size_t bytes     = batch.buffer_bytes() * 2 + (1u << 17);
    WARPATH_ASSIGN_OR_RETURN(auto bigger, packet::PacketBatch::create(packets, 2048, bytes));
    for (uint32_t i = 0; i < batch.size(); ++i) {
      const auto& m = batch.meta(i);
      bigger.append(batch.data(i), m.caplen, m.len, m.timestamp_ns, m.port);
    }
    batch = std::move(bigger);
  }
}

}  // namespace warpath::io
