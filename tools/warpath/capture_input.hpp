// tools/warpath/capture_input.hpp: a capture read batch by batch and parsed, optionally with
// its IP fragments put back together first (flows, reassemble, defrag): held fragments leave
// the batch, a fragment that completes a datagram is replaced by the whole datagram.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::cli {

class CaptureInput {
 public:
  static constexpr uint32_t kBatch = 1024;  ///< packets per batch unless told
  /// Opens `path` (Ethernet, or a link type the reader converts); `filter` is BPF; `defrag`
  /// names the defragmentation engine (empty: none).
  static Result<CaptureInput> open(const std::string& path, const std::string& filter,
                                   const std::string& defrag,
                                   const defrag::DefragConfig& config = {},
                                   uint32_t batch = kBatch);
  /// The next batch and its parse results; an empty batch at the end. A damaged record (cut
  /// short, a caplen beyond the snap length) ends the input there: the packets before it are
  /// handed out, then an empty batch, and warnings() says where (as `run` and `route` do).
  Result<const packet::PacketBatch*> next(std::vector<packet::PacketInfo>& infos);
  /// None, or "PATH: record N: REASON; the input ends there ..." once a damaged record ended
  /// the input: the command's warnings.
  std::vector<std::string> warnings() const;
  const io::CaptureInfo& info() const { return reader_->info(); }
  /// Defragmentation counters (zero without defragmentation).
  defrag::DefragCounters defrag_counters() const;
  std::string defrag_engine() const;
  /// The first difference a validate: defrag engine found.
  Status defrag_status() const;

 private:
  std::string path_;
  std::unique_ptr<io::PcapReader> reader_;
  std::unique_ptr<packet::Parser> parser_;
  std::unique_ptr<defrag::Defragmenter> defrag_;
  std::unique_ptr<packet::PacketBatch> in_, out_;
  std::vector<packet::PacketInfo> in_infos_;
  std::vector<uint8_t> whole_;
  std::string damage_;
};

}  // namespace warpath::cli
