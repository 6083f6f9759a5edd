// The pcap port (pcap:IN:OUT): a capture file as a source and another as a sink.
//
// RX (one queue) streams IN through io::PcapReader: when a call may fill the caller's batch to
// the brim, the reader appends straight into it; when `max` asks for fewer, the reader fills a
// small staging batch that later calls drain first, so packet order never changes. The queue
// ends (rx_done) after the last packet, or at the first damaged record, which becomes a warning
// (warnings()). Timestamps are the file's.
//
// TX writes OUT with io::PcapWriter (classic pcap, nanosecond timestamps = PacketMeta's, the
// link type and snap length of IN when there is one), under a mutex, as every worker may send.
// flush() closes the file; packets sent after it are tx_errors. Each burst is flushed to the
// file, so a full disk is counted on the burst it hit (the whole burst as tx_errors).
#include <algorithm>
#include <mutex>
#include <optional>

#include "runtime/ports/port_impl.hpp"
#include "warpath/io/pcap_file.hpp"

namespace warpath::runtime::detail {

namespace {

constexpr uint32_t kStagingPackets = 256;

class PcapPort final : public Port {
 public:
  PcapPort(std::string_view name, const PortSpec& spec, const PortOptions& options)
      : name_(name), spec_(spec), options_(options), counters_(1, options.workers) {}

  Status open() {
    io::CaptureInfo out_info;
    if (!spec_.in.empty()) {
      auto r = io::PcapReader::open(spec_.in);
      if (!r.is_ok()) return port_error(r.status().code(), name_, "pcap: " + r.status().message());
      if (r->info().linktype != 1)  // DLT_EN10MB: the pipeline parses Ethernet frames
        return port_error(Errc::kNotSupported, name_,
                          "pcap: " + spec_.in + ": link type " +
                              std::to_string(r->info().linktype) +
                              " is not supported (Ethernet captures only); every packet would "
                              "be dropped as truncated or not IP");
      reader_.emplace(std::move(r).value());
      out_info.linktype = reader_->info().linktype;
      out_info.snaplen  = reader_->info().snaplen;
      // Room for the largest record the file may hold, beside kStagingPackets cells.
      const size_t bytes =
          size_t(kStagingPackets) * packet::PacketBatch::kDefaultCellBytes + out_info.snaplen;
      auto staging = packet::PacketBatch::create(kStagingPackets,
                                                 packet::PacketBatch::kDefaultCellBytes, bytes);
      if (!staging.is_ok())
        return port_error(staging.status().code(), name_, staging.status().message());
      staging_ = std::move(staging).value();
    }
    if (!spec_.out.empty()) {
      out_info.precision = io::TimePrecision::kNano;
      out_info.format    = io::CaptureFormat::kPcap;
      auto w             = io::PcapWriter::create(spec_.out, out_info);
      if (!w.is_ok()) return port_error(w.status().code(), name_, "pcap: " + w.status().message());
      writer_.emplace(std::move(w).value());
    }
    return Status::ok();
  }

  const std::string& name() const noexcept override { return name_; }

  std::string describe() const override {
    return "pcap " + (spec_.in.empty() ? std::string("(no input)") : spec_.in) + " -> " +
           (spec_.out.empty() ? std::string("(no output)") : spec_.out);
  }

  uint32_t rx_queue_count() const noexcept override { return reader_ ? 1 : 0; }

  Result<uint32_t> rx_burst(uint32_t q, packet::PacketBatch& batch, uint32_t max) override {
    if (q != 0 || !reader_)
      return port_error(Errc::kInvalidArgument, name_, "no RX queue " + std::to_string(q));
    uint32_t n     = 0;
    uint64_t bytes = 0;
    auto take      = [&](const packet::PacketMeta& m, const uint8_t* data) {
      if (!batch.append(data, m.caplen, m.len, m.timestamp_ns, m.port)) return false;
      ++n;
      bytes += m.len;
      return true;
    };
    Status error;
    while (n < max && !done_) {
      if (next_ < staging_.size()) {  // drain what an earlier call staged
        if (!take(staging_.meta(next_), staging_.data(next_))) break;
        ++next_;
        continue;
      }
      if (reader_->at_end()) {
        done_ = true;
        break;
      }
      const uint32_t room = batch.max_packets() - batch.size();
      if (max - n >= room) {  // the reader may fill the caller's batch itself
        const uint32_t before = batch.size();
        auto r                = reader_->read(batch, options_.index);
        if (!r.is_ok()) {
          error = r.status();
          break;
        }
        for (uint32_t i = before; i < batch.size(); ++i) bytes += batch.meta(i).len;
        n += *r;
        if (*r == 0 && !reader_->at_end()) break;  // the batch is full (by bytes)
        continue;
      }
      staging_.clear();
      next_  = 0;
      auto r = reader_->read(staging_, options_.index);
      if (!r.is_ok()) {
        error = r.status();
        break;
      }
    }
    counters_.rx(0, n, bytes);
    if (!error.is_ok()) {
      // A damaged record (a capture cut mid-record by a killed tcpdump, caplen > len) ends
      // the input there: what came before it is handed out and processed, the damage is a
      // warning of the run (Port::warnings), not the loss of the whole run.
      if (error.code() != Errc::kParseError) {  // not damage of the file: fatal, as before
        if (n > 0) return n;  // the reader reports it again on the next call
        done_ = true;
        return port_error(Errc::kIoError, name_, "pcap: " + error.message());
      }
      done_ = true;
      std::lock_guard<std::mutex> lock(warn_mutex_);
      warnings_.push_back("port " + name_ + ": pcap: " + error.message() +
                          "; the input ends there (the packets before it were processed)");
    }
    return n;
  }

  bool rx_done(uint32_t) const noexcept override { return !reader_ || done_; }

  uint32_t tx_burst(uint32_t worker, packet::PacketBatch& batch,
                    Span<const uint32_t> which) override {
    std::lock_guard<std::mutex> lock(tx_mutex_);
    uint32_t sent  = 0;
    uint64_t bytes = 0;
    if (writer_ && !closed_) {
      for (uint32_t i : which) {
        const packet::PacketMeta& m = batch.meta(i);
        Status s = writer_->write_packet(batch.data(i), m.caplen, m.len, m.timestamp_ns);
        if (!s.is_ok()) {
          if (tx_error_.is_ok()) tx_error_ = s;
          break;
        }
        ++sent;
        bytes += m.len;
      }
      // Flushed per burst: a full disk then shows on the burst it hit, not later, and what
      // was counted as sent is on disk (the failed burst counts whole as tx_errors).
      if (sent > 0) {
        if (Status s = writer_->flush(); !s.is_ok()) {
          if (tx_error_.is_ok()) tx_error_ = s;
          sent  = 0;
          bytes = 0;
        }
      }
    }
    counters_.tx(worker, sent, bytes, which.size - sent);
    return sent;
  }

  Status flush() override {
    std::lock_guard<std::mutex> lock(tx_mutex_);
    if (!writer_ || closed_) return Status::ok();
    closed_  = true;
    Status s = writer_->close();
    if (!tx_error_.is_ok())
      return port_error(Errc::kIoError, name_, "pcap: " + tx_error_.message());
    if (!s.is_ok()) return port_error(Errc::kIoError, name_, "pcap: " + s.message());
    return Status::ok();
  }

  PortStats stats() const override { return counters_.sum(); }

  std::vector<std::string> warnings() const override {
    std::lock_guard<std::mutex> lock(warn_mutex_);
    return warnings_;
  }

 private:
  std::string name_;
  PortSpec spec_;
  PortOptions options_;
  PortCounters counters_;
  // RX (the queue's thread).
  std::optional<io::PcapReader> reader_;
  packet::PacketBatch staging_;
  uint32_t next_ = 0;
  std::atomic<bool> done_{false};
  // TX.
  std::mutex tx_mutex_;
  std::optional<io::PcapWriter> writer_;
  bool closed_ = false;
  Status tx_error_;
  mutable std::mutex warn_mutex_;
  std::vector<std::string> warnings_;
};

}  // namespace

Result<std::unique_ptr<Port>> open_pcap_port(std::string_view name, const PortSpec& spec,
                                             const PortOptions& options) {
  auto port = std::make_unique<PcapPort>(name, spec, options);
  WARPATH_TRY(port->open());
  return std::unique_ptr<Port>(std::move(port));
}

}  // namespace warpath::runtime::detail
