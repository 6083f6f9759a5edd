// python/src/batches.hpp: what flows, reassemble and nids read, handed out batch by batch as
// the CLI reads a file: either a capture held in memory (warpath.Capture) or a capture file
// streamed through io::CaptureInput (the CLI's own reader; memory bounded by the batch) and
// optionally cut to one part of N (`shard`, whole flows to one part: warpath.dist). Up to 1024
// records a batch, parsed, and with a defragmentation engine its IP fragments put back
// together (a held fragment leaves the batch, the one that completes a datagram is replaced by
// the whole datagram). The same batch boundaries give the same order of events as the CLI's
// (the CLI's reader also ends a batch early when its 2 MiB buffer fills: captures of packets
// over 2 KiB held in memory may be cut elsewhere).
#pragma once
#include <algorithm>
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

/// Calls `fn` for each batch of a capture in memory; `defrag` names the engine ("": none).
/// Throws StatusError.
inline SourceStats for_each_batch(const packet::PacketBatch& all, const std::string& defrag,
                                  const BatchFn& fn, uint32_t batch = 1024) {
  auto parser = take(packet::make_parser("auto"));
  ExecContext ctx;
  SourceStats st;
  std::vector<PacketInfo> in_infos, infos;
  const packet::BatchView v = all.view();
  std::unique_ptr<defrag::Defragmenter> dfr;
  packet::PacketBatch out;
  std::vector<uint8_t> whole;
  if (!defrag.empty()) {
    dfr = take(defrag::make_defragmenter(defrag, {}));
    // As the CLI's: whole datagrams may be up to 64 KiB.
    out = take(packet::PacketBatch::create(
        batch, 2048, size_t(batch) * 2048 + (size_t(1) << 17) + (size_t(64) << 20)));
  }
  auto hand_out = [&](const packet::BatchView& b, const PacketInfo* in, uint32_t n) {
    for (uint32_t i = 0; i < n; ++i) st.clock_ns = std::max(st.clock_ns, b.metas[i].timestamp_ns);
    st.packets += n;
    st.handed_out += n;
    if (n) fn(b, in, n);
  };
  for (uint32_t off = 0; off < all.size(); off += batch) {
    const uint32_t n = std::min(batch, all.size() - off);
    st.records += n;
    const packet::BatchView part{v.buffer, v.metas + off, n};
    in_infos.resize(n);
    check(parser->parse(part, {in_infos.data(), n}, ctx));
    if (!dfr) {
      hand_out(part, in_infos.data(), n);
      continue;
    }
    check(defrag::defragment_batch(*dfr, part, in_infos.data(), out, whole));
    const uint32_t k = out.size();
    infos.resize(k);
    check(parser->parse(out.view(), {infos.data(), k}, ctx));
    hand_out(out.view(), infos.data(), k);
  }
  if (dfr) check(dfr->status());
  return st;
}

/// Calls `fn` for each batch of `source` (a file through io::CaptureInput, as the CLI reads it).
/// `part_of`: which part a packet is in when the file is cut (empty: the flow tracker's flow).
inline SourceStats for_each_batch(const Source& source, const std::string& defrag,
                                  const BatchFn& fn, flow::PartOf part_of = {}) {
  if (source.capture) return for_each_batch(source.capture->batch(), defrag, fn);
  const CaptureFile& f = source.file;
  auto input = take(io::CaptureInput::open(f.path, f.filter, defrag, {}, io::CaptureInput::kBatch,
                                           io::ShardSpec{f.shard, f.shards, std::move(part_of)}));
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
