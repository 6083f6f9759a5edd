// A capture read batch by batch, parsed, optionally defragmented and cut to one part
// (include/warpath/io/capture_input.hpp).
#include "warpath/io/capture_input.hpp"

#include <algorithm>
#include <charconv>

#include "warpath/flow/flow.hpp"

namespace warpath::io {

Result<ShardSpec> parse_shard(const std::string& text) {
  const auto slash = text.find('/');
  ShardSpec s;
  auto number = [](const char* b, const char* e, uint32_t& v) {
    auto [p, ec] = std::from_chars(b, e, v);
    return ec == std::errc() && p == e && b != e;
  };
  const char* b = text.data();
  if (slash == std::string::npos || !number(b, b + slash, s.index) ||
      !number(b + slash + 1, b + text.size(), s.count) || s.count == 0 || s.count > 65536 ||
      s.index >= s.count)
    return Status(Errc::kInvalidArgument,
                  "shard '" + text + "': K/N with 0 <= K < N <= 65536 (part K of N)");
  return s;
}

Result<CaptureInput> CaptureInput::open(const std::string& path, const std::string& filter,
                                        const std::string& defrag_engine,
                                        const defrag::DefragConfig& config, uint32_t batch,
                                        ShardSpec shard) {
  CaptureInput c;
  c.path_ = path;
  WARPATH_ASSIGN_OR_RETURN(io::PcapReader reader, io::PcapReader::open(path));
  c.reader_ = std::make_unique<io::PcapReader>(std::move(reader));
  if (c.reader_->info().linktype != 1)
    return Status(Errc::kNotSupported,
                  path + ": link type " + std::to_string(c.reader_->info().file_linktype) +
                      " is not supported (Ethernet, Linux cooked SLL/SLL2 and raw IP captures "
                      "only)");
  if (!filter.empty()) WARPATH_TRY(c.reader_->set_filter(filter));
  WARPATH_TRY(c.prepare(defrag_engine, config, batch, std::move(shard)));
  return c;
}

Result<CaptureInput> CaptureInput::over(const packet::PacketBatch& held,
                                        const std::string& defrag_engine,
                                        const defrag::DefragConfig& config, uint32_t batch,
                                        ShardSpec shard) {
  CaptureInput c;
  c.path_ = "capture";
  c.held_ = &held;
  WARPATH_TRY(c.prepare(defrag_engine, config, batch, std::move(shard)));
  return c;
}

Status CaptureInput::prepare(const std::string& defrag_engine, const defrag::DefragConfig& config,
                             uint32_t batch, ShardSpec shard) {
  if (batch == 0) return Status(Errc::kInvalidArgument, "batch size must be at least 1");
  if (shard.count == 0 || shard.index >= shard.count)
    return Status(Errc::kInvalidArgument, "shard: the part must be below the number of parts");
  shard_ = std::move(shard);
  WARPATH_ASSIGN_OR_RETURN(parser_, packet::make_parser("auto"));
  if (!defrag_engine.empty()) {
    WARPATH_ASSIGN_OR_RETURN(defrag_, defrag::make_defragmenter(defrag_engine, config));
  }
  // Reassembled datagrams may be up to 64 KiB: room for a batch of them.
  const size_t bytes = size_t(batch) * 2048 + (size_t(1) << 17);
  const size_t whole = bytes + (defrag_ ? size_t(64) << 20 : 0);
  WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch in, packet::PacketBatch::create(batch, 2048, bytes));
  in_ = std::make_unique<packet::PacketBatch>(std::move(in));
  if (defrag_) {
    WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch out, packet::PacketBatch::create(batch, 2048, whole));
    out_ = std::make_unique<packet::PacketBatch>(std::move(out));
  }
  if (!shard_.whole()) {
    WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch part, packet::PacketBatch::create(batch, 2048, whole));
    part_ = std::make_unique<packet::PacketBatch>(std::move(part));
  }
  return Status::ok();
}

Status CaptureInput::fill() {
  if (reader_) return reader_->read(*in_).status();
  // As PcapReader::read fills a batch: until it is full by count or by bytes.
  while (held_next_ < held_->size() && in_->size() < in_->max_packets()) {
    const packet::PacketMeta& m = held_->meta(held_next_);
    if (!in_->append(held_->data(held_next_), m.caplen, m.len, m.timestamp_ns, m.port)) {
      if (in_->size() == 0)
        return Status(Errc::kCapacity, "record " + std::to_string(held_next_ + 1) + " of " +
                                           std::to_string(m.caplen) +
                                           " bytes does not fit in an empty batch");
      break;
    }
    ++held_next_;
  }
  return Status::ok();
}

// The packets of `from` in this input's part, into part_ (infos replaced by theirs).
const packet::PacketBatch* CaptureInput::select(const packet::PacketBatch& from,
                                                std::vector<packet::PacketInfo>& infos) {
  packets_ += from.size();
  for (uint32_t i = 0; i < from.size(); ++i)
    clock_ns_ = std::max(clock_ns_, from.meta(i).timestamp_ns);
  if (shard_.whole()) {
    handed_ += from.size();
    return &from;
  }
  part_->clear();
  part_infos_.clear();
  for (uint32_t i = 0; i < from.size(); ++i) {
    const packet::PacketMeta& m = from.meta(i);
    const uint32_t part = shard_.part_of
                              ? shard_.part_of(infos[i], from.data(i), m.caplen, m.timestamp_ns)
                              : flow::flow_shard(infos[i], shard_.count);
    if (part != shard_.index) continue;
    part_->append(from.data(i), m.caplen, m.len, m.timestamp_ns, m.port);  // fits: same sizes
    part_infos_.push_back(infos[i]);
  }
  infos.swap(part_infos_);
  handed_ += part_->size();
  return part_.get();
}

Result<const packet::PacketBatch*> CaptureInput::next(std::vector<packet::PacketInfo>& infos) {
  ExecContext ctx;
  for (;;) {
    in_->clear();
    if (at_end() || !damage_.empty()) {
      infos.clear();
      return in_.get();
    }
    if (Status got = fill(); !got.is_ok()) {
      if (got.code() != Errc::kParseError) return got;
      damage_ = got.message() + "; the input ends there (the packets before it were processed)";
      infos.clear();
      in_->clear();
      return in_.get();
    }
    const uint32_t n = in_->size();
    records_ += n;
    const packet::PacketBatch* got = in_.get();
    if (!defrag_) {
      // Straight into the caller's vector (a copy from a vector of our own was 64 KB a batch).
      infos.resize(n);
      WARPATH_TRY(parser_->parse(in_->view(), {infos.data(), n}, ctx));
    } else {
      in_infos_.resize(n);
      WARPATH_TRY(parser_->parse(in_->view(), {in_infos_.data(), n}, ctx));
      if (Status s = defrag::defragment_batch(*defrag_, in_->view(), in_infos_.data(), *out_, whole_);
          !s.is_ok())
        return Status(s.code(), path_ + ": " + s.message());
      const uint32_t k = out_->size();
      infos.resize(k);
      WARPATH_TRY(parser_->parse(out_->view(), {infos.data(), k}, ctx));
      got = out_.get();
    }
    got = select(*got, infos);
    if (got->size() || at_end()) return got;
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

}  // namespace warpath::io
