// include/warpath/io/capture_input.hpp
//
// A capture read batch by batch and parsed, optionally with its IP fragments put back together
// first (flows, reassemble, defrag, nids): held fragments leave the batch, a fragment that
// completes a datagram is replaced by the whole datagram. Optionally only one part of the
// capture is handed out (`shard`): the packets whose flow falls into that part
// (flow::flow_shard, after defragmentation, so a datagram goes with its flow), the rest read,
// parsed and counted but left out. Every part of a capture read this way, each with the same
// options, hands out each of the capture's packets exactly once, whole flows to one part: what
// `--shard K/N` and warpath cluster (python/warpath/dist.py) cut captures with.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/parser.hpp"

namespace warpath::io {

/// Part `index` of `count` (count 1: the whole capture); `part_of` says which part a packet is
/// in (empty: flow::flow_shard of its parse, the flow tracker's flow).
struct ShardSpec {
  uint32_t index = 0, count = 1;
  flow::PartOf part_of;
  bool whole() const { return count <= 1; }
};
/// "K/N" (0 <= K < N, 1 <= N <= 65536) as a ShardSpec; kInvalidArgument otherwise.
Result<ShardSpec> parse_shard(const std::string& text);

class CaptureInput {
 public:
  static constexpr uint32_t kBatch = 1024;  ///< packets per batch unless told
  /// Opens `path` (Ethernet, or a link type the reader converts); `filter` is BPF; `defrag`
  /// names the defragmentation engine (empty: none).
  static Result<CaptureInput> open(const std::string& path, const std::string& filter,
                                   const std::string& defrag,
                                   const defrag::DefragConfig& config = {},
                                   uint32_t batch = kBatch, ShardSpec shard = {});
  /// The same over a capture held in memory (`held`, which must outlive the input), its
  /// records handed out in batches as a file of them would be read: the same boundaries,
  /// events and answers (warpath.Capture in the Python package).
  static Result<CaptureInput> over(const packet::PacketBatch& held, const std::string& defrag,
                                   const defrag::DefragConfig& config = {},
                                   uint32_t batch = kBatch, ShardSpec shard = {});
  /// The next batch and its parse results; an empty batch at the end. A damaged record (cut
  /// short, a caplen beyond the snap length) ends the input there: the packets before it are
  /// handed out, then an empty batch, and warnings() says where (as `run` and `route` do).
  Result<const packet::PacketBatch*> next(std::vector<packet::PacketInfo>& infos);
  /// None, or "PATH: record N: REASON; the input ends there ..." once a damaged record ended
  /// the input: the command's warnings.
  std::vector<std::string> warnings() const;
  const io::CaptureInfo& info() const { return reader_ ? reader_->info() : held_info_; }
  /// Defragmentation counters (zero without defragmentation).
  defrag::DefragCounters defrag_counters() const;
  std::string defrag_engine() const;
  /// The first difference a validate: defrag engine found.
  Status defrag_status() const;

  /// Records read from the file (through the filter), packets after defragmentation (records
  /// less the fragments that went into datagrams or were held or dropped) and, of those, the
  /// packets handed out (all of them unless a shard was asked for).
  uint64_t records() const { return records_; }
  uint64_t packets() const { return packets_; }
  uint64_t handed_out() const { return handed_; }
  /// The latest timestamp of the packets after defragmentation, handed out or not (what a
  /// tracker over the whole capture saw): where a part's flow tracker moves its clock before
  /// the end, so its flows end as they would in a run over the whole capture (by timeout
  /// rather than at shutdown where the capture went on past their timeout). Without a shard,
  /// the tracker's own clock already.
  uint64_t clock_ns() const { return clock_ns_; }

 private:
  Status prepare(const std::string& defrag, const defrag::DefragConfig& config, uint32_t batch,
                 ShardSpec shard);
  /// Fills in_ with the next records (from the file or the held batch).
  Status fill();
  bool at_end() const { return reader_ ? reader_->at_end() : held_next_ >= held_->size(); }
  const packet::PacketBatch* select(const packet::PacketBatch& from,
                                    std::vector<packet::PacketInfo>& infos);

  std::string path_;
  std::unique_ptr<io::PcapReader> reader_;  // or, over a capture in memory:
  const packet::PacketBatch* held_ = nullptr;
  uint32_t held_next_              = 0;
  io::CaptureInfo held_info_;
  std::unique_ptr<packet::Parser> parser_;
  std::unique_ptr<defrag::Defragmenter> defrag_;
  std::unique_ptr<packet::PacketBatch> in_, out_, part_;
  std::vector<packet::PacketInfo> in_infos_, part_infos_;
  std::vector<uint8_t> whole_;
  std::string damage_;
  ShardSpec shard_;
  uint64_t records_ = 0, packets_ = 0, handed_ = 0, clock_ns_ = 0;
};

}  // namespace warpath::io
