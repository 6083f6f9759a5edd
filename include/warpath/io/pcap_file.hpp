// include/warpath/io/pcap_file.hpp
//
// pcap and pcapng files through libpcap.
//
// Reading
//   PcapReader opens pcap (microsecond or nanosecond magic) and pcapng files with libpcap and
//   keeps nanosecond timestamps. It fills PacketBatches; packets keep their capture and wire
//   lengths exactly as stored. A packet whose caplen exceeds the file's snaplen, a file cut in
//   the middle of a record, and a file that is not a capture are errors naming the file and the
//   record number.
//
// Writing
//   PcapWriter writes classic pcap through libpcap (pcap_dump), with the nanosecond magic unless
//   microseconds are asked for, so a pcap read and written back with the same link type, snap
//   length and precision is byte-identical (for files in host byte order with thiszone 0, and
//   except for the FCS-length bits of the link-type field, which libpcap does not expose).
//   libpcap 1.10 cannot write pcapng; with Format::kPcapng the writer emits a minimal pcapng (one
//   section, one interface with if_tsresol = 9, enhanced packet blocks) itself.
#pragma once
#include <cstdint>
#include <memory>
#include <string>

#include "warpath/core/status.hpp"
#include "warpath/packet/batch.hpp"

namespace warpath::io {

enum class TimePrecision : uint8_t { kMicro, kNano };
enum class CaptureFormat : uint8_t { kPcap, kPcapng };

struct CaptureInfo {
  int linktype            = 1;  ///< DLT_EN10MB (also what PcapReader hands out for the link
                                ///< types it converts: see file_linktype)
  uint32_t snaplen        = 262144;
  TimePrecision precision = TimePrecision::kNano;
  CaptureFormat format    = CaptureFormat::kPcap;
  int file_linktype       = 1;  ///< the file's own: 1, or 113 (Linux SLL), 276 (SLL2), 12/14/
                                ///< 101/228/229 (raw IP), whose records the reader rewrites
                                ///< as Ethernet frames
};

class PcapReader {
 public:
  static Result<PcapReader> open(const std::string& path);
  PcapReader(PcapReader&&) noexcept;
  PcapReader& operator=(PcapReader&&) noexcept;
  ~PcapReader();

  const CaptureInfo& info() const noexcept { return info_; }
  /// Appends packets to `batch` until it is full or the file ends, and returns how many it
  /// appended (0 at the end of the file). A bad record (cut short, caplen above the snap length
  /// or the wire length) is reported as an error naming the file and record, but only after the
  /// packets before it were handed out: the call that meets it returns those, and that call's
  /// successor and every later one return the error.
  Result<uint32_t> read(packet::PacketBatch& batch, uint16_t port = 0);
  /// Keeps only the records a BPF filter expression accepts (libpcap's compiler, on the file's
  /// own link type, as tcpdump reads it). kInvalidArgument with libpcap's reason.
  Status set_filter(const std::string& expression);
  uint64_t records_read() const noexcept { return records_; }
  /// True once the end of the file was reached and every record was handed out.
  bool at_end() const noexcept { return at_end_; }

 private:
  PcapReader() = default;
  struct Impl;
  std::unique_ptr<Impl> impl_;
  CaptureInfo info_;
  uint64_t records_ = 0;
  bool at_end_      = false;
  std::string path_;
};

class PcapWriter {
 public:
  static Result<PcapWriter> create(const std::string& path, const CaptureInfo& info = {});
  PcapWriter(PcapWriter&&) noexcept;
  PcapWriter& operator=(PcapWriter&&) noexcept;
  ~PcapWriter();

  /// kIoError "PATH: write failed: REASON" once a write fails (a full disk, an I/O error); the
  /// packets before it are in the file.
  Status write(const packet::PacketBatch& batch);
  Status write_packet(const uint8_t* bytes, uint32_t caplen, uint32_t len, uint64_t ts_ns);
  /// Pushes what is buffered to the file: kIoError when the write fails (a full disk), so a
  /// caller that flushes after each burst knows which burst was lost.
  Status flush();
  /// Flushes and closes; also done by the destructor (which cannot report errors).
  Status close();

 private:
  PcapWriter() = default;
  Status write_error() const;
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

/// Reads a whole capture into one batch sized to fit it; `filter`, when given, is a BPF
/// expression (PcapReader::set_filter) the records must pass.
Result<packet::PacketBatch> read_capture(const std::string& path, CaptureInfo* info = nullptr,
                                         const std::string& filter = {});

}  // namespace warpath::io
