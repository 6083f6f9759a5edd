// python/src/batches.hpp: what flows, reassemble and nids read, handed out batch by batch by
// the CLI's own reader (io::CaptureInput): a capture held in memory (warpath.Capture) or a
// capture file streamed (memory bounded by the batch), optionally cut to one part of N
// (`shard`, whole flows to one part: warpath.dist). Batches as the CLI's (up to 1024 records,
// or fewer when its buffer fills), parsed, and with a defragmentation engine its IP fragments
// put back together: the same order of events as the CLI's.
#pragma once
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "capture.hpp"
#include "common.hpp"
#include "warpath/defrag/defrag.hpp"
#include "warpath/io/capture_input.hpp"

namespace warpath::py {

using BatchFn = std::function<void(const packet::BatchView&, const PacketInfo*, uint32_t)>;

/// A capture file to stream (warpath._CaptureFile): path, BPF filter, part `shard` of `shards`.
struct CaptureFile {
  std::string path, filter;
  uint32_t shard = 0, shards = 1;
};

/// What a read went through: records read, packets after defragmentation, packets handed out
/// (this part's), the clock (the latest packet time after defragmentation, handed out or not:
/// where trackers move before their end), a damaged record's warning.
struct SourceStats {
  uint64_t records = 0, packets = 0, handed_out = 0, clock_ns = 0;
  std::vector<std::string> warnings;
  nb::dict to_dict() const {
    nb::dict d;
    d["records"]    = records;
    d["packets"]    = packets;
    d["handed_out"] = handed_out;
    d["clock_ns"]   = clock_ns;
    nb::list w;
    for (const auto& s : warnings) w.append(s);
    d["warnings"] = w;
    return d;
  }
};

/// A PyCapture or a CaptureFile (TypeError otherwise).
struct Source {
  const PyCapture* capture = nullptr;
  CaptureFile file;
  explicit Source(nb::handle h) {
    if (nb::isinstance<PyCapture>(h)) {
      capture = &nb::cast<const PyCapture&>(h);
    } else if (nb::isinstance<CaptureFile>(h)) {
      file = nb::cast<CaptureFile>(h);
    } else {
      throw nb::type_error("expected a warpath.Capture or a capture file");
    }
  }
};

/// Calls `fn` for each batch of `source`, read as the CLI reads a file (io::CaptureInput: over
/// the held capture, or streaming the file); `defrag` names the engine ("": none); `part_of`:
/// which part a packet is in when the file is cut (empty: the flow tracker's flow). Throws
/// StatusError.
inline SourceStats for_each_batch(const Source& source, const std::string& defrag,
                                  const BatchFn& fn, flow::PartOf part_of = {}) {
  const CaptureFile& f = source.file;
  io::ShardSpec shard{f.shard, f.shards, std::move(part_of)};
  auto input = take(source.capture
                        ? io::CaptureInput::over(source.capture->batch(), defrag, {},
                                                 io::CaptureInput::kBatch, std::move(shard))
                        : io::CaptureInput::open(f.path, f.filter, defrag, {},
                                                 io::CaptureInput::kBatch, std::move(shard)));
  std::vector<PacketInfo> infos;
  for (;;) {
    const packet::PacketBatch* b = take(input.next(infos));
    if (b->size() == 0) break;
    fn(b->view(), infos.data(), b->size());
  }
  check(input.defrag_status());
  SourceStats st;
  st.records    = input.records();
  st.packets    = input.packets();
  st.handed_out = input.handed_out();
  st.clock_ns   = input.clock_ns();
  st.warnings   = input.warnings();
  return st;
}

}  // namespace warpath::py
