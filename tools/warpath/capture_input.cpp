// A capture read batch by batch, parsed and optionally defragmented (capture_input.hpp).
#include "capture_input.hpp"

#include <fmt/core.h>

namespace warpath::cli {

Result<CaptureInput> CaptureInput::open(const std::string& path, const std::string& filter,
                                        const std::string& defrag_engine,
                                        const defrag::DefragConfig& config, uint32_t batch) {
  if (batch == 0) return Status(Errc::kInvalidArgument, "batch size must be at least 1");
  CaptureInput c;
  c.path_ = path;
  WARPATH_ASSIGN_OR_RETURN(io::PcapReader reader, io::PcapReader::open(path));
  c.reader_ = std::make_unique<io::PcapReader>(std::move(reader));
  if (c.reader_->info().linktype != 1)
    return Status(Errc::kNotSupported,
                  fmt::format("{}: link type {} is not supported (Ethernet, Linux cooked SLL/SLL2 "
                              "and raw IP captures only)",
                              path, c.reader_->info().file_linktype));
  if (!filter.empty()) WARPATH_TRY(c.reader_->set_filter(filter));
  WARPATH_ASSIGN_OR_RETURN(c.parser_, packet::make_parser("auto"));
  if (!defrag_engine.empty()) {
    WARPATH_ASSIGN_OR_RETURN(c.defrag_, defrag::make_defragmenter(defrag_engine, config));
  }
  // Reassembled datagrams may be up to 64 KiB: room for a batch of them.
  const size_t bytes = size_t(batch) * 2048 + (size_t(1) << 17);
  WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch in, packet::PacketBatch::create(batch, 2048, bytes));
  c.in_ = std::make_unique<packet::PacketBatch>(std::move(in));
  if (c.defrag_) {
    WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch out,
                             packet::PacketBatch::create(batch, 2048, bytes + (size_t(64) << 20)));
    c.out_ = std::make_unique<packet::PacketBatch>(std::move(out));
  }
  return c;
}

Result<const packet::PacketBatch*> CaptureInput::next(std::vector<packet::PacketInfo>& infos) {
  ExecContext ctx;
  for (;;) {
    in_->clear();
    if (reader_->at_end() || !damage_.empty()) {
      infos.clear();
      return in_.get();
    }
    if (auto got = reader_->read(*in_); !got.is_ok()) {
      if (got.status().code() != Errc::kParseError) return got.status();
      damage_ = got.status().message() + "; the input ends there (the packets before it were processed)";
      infos.clear();
      return in_.get();
    }
    const uint32_t n = in_->size();
    in_infos_.resize(n);
    WARPATH_TRY(parser_->parse(in_->view(), {in_infos_.data(), n}, ctx));
    if (!defrag_) {
      infos = in_infos_;
      if (n || reader_->at_end()) return in_.get();
      continue;
    }
    if (Status s = defrag::defragment_batch(*defrag_, in_->view(), in_infos_.data(), *out_, whole_);
        !s.is_ok())
      return Status(s.code(), path_ + ": " + s.message());
    const uint32_t k = out_->size();
    infos.resize(k);
    WARPATH_TRY(parser_->parse(out_->view(), {infos.data(), k}, ctx));
    if (k || reader_->at_end()) return out_.get();
  }
}

std::vector<std::string> CaptureInput::warnings() const {
  if (damage_.empty()) return {};
  return {damage_};
}

defrag::DefragCounters CaptureInput::defrag_counters() const {
  return defrag_ ? defrag_->counters() : defrag::DefragCounters{};
}
std::string CaptureInput::defrag_engine() const {
  return defrag_ ? std::string(defrag_->id()) : std::string();
}
Status CaptureInput::defrag_status() const { return defrag_ ? defrag_->status() : Status::ok(); }

}  // namespace warpath::cli
