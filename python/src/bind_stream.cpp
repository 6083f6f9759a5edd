// python/src/bind_stream.cpp: reassembled TCP streams of a capture
// (include/warpath/stream/stream.hpp), as `warpath reassemble` writes them: the flow tracker and
// the reassembler over the capture in batches of 1024 packets (the reassembler's own caps as
// the CLI's: 64 MiB buffered a stream, 1 GiB in all), each direction's delivered bytes held in
// memory up to `max_bytes` over all streams (kCapacity beyond), its gaps, and an entry per
// direction that carried bytes or gaps. Each entry is freed as its dict is made.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <map>

#include "batches.hpp"
#include "capture.hpp"
#include "common.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/packet/format.hpp"
#include "warpath/stream/stream.hpp"

namespace warpath::py {
namespace {

struct StreamData {
  std::string bytes;
  std::vector<std::pair<uint64_t, uint64_t>> gaps;  ///< (offset, length)
};

struct Reassembled {
  struct Entry {
    flow::FlowRecord record;
    uint8_t dir = 0;
    StreamData data;
  };
  std::vector<Entry> streams;  ///< in the order flows ended, initiator first
};

std::string endpoint(const flow::FlowRecord& r, bool src) {
  return packet::ip_to_string(r.ip_version, src ? r.src : r.dst) + "." +
         std::to_string(src ? r.sport : r.dport);
}

nb::tuple reassemble(nb::handle capture, const std::string& policy, const std::string& mode,
                     bool midstream, uint64_t depth, const std::string& engine,
                     const std::string& flow_engine, uint32_t capacity, bool no_checksum,
                     uint64_t max_bytes, const std::string& defrag) {
  stream::StreamConfig sc;
  sc.policy = take(stream::parse_policy(policy));
  if (mode != "ids" && mode != "inline") invalid("mode '" + mode + "': ids or inline");
  sc.mode           = mode == "inline" ? stream::Mode::kInline : stream::Mode::kIds;
  sc.midstream      = midstream;
  sc.depth          = depth;
  sc.stream_cap     = 64u << 20;
  sc.memcap         = 1ull << 30;
  sc.prealloc_flows = 0;
  auto reassembler  = take(stream::make_reassembler(engine, sc));
  flow::FlowConfig fc;
  fc.capacity             = capacity;
  fc.ignore_ipv4_checksum = no_checksum;
  fc.prefault             = false;  // as sc.prealloc_flows
  auto tracker = take(flow::make_flow_tracker(flow_engine, fc));
  Reassembled out;
  const Source source(capture);
  SourceStats stats;
  {
    nb::gil_scoped_release unlocked;
    std::map<std::pair<uint64_t, uint8_t>, StreamData> live;
    uint64_t held = 0;
    bool over     = false;  // the sink may not throw through the reassembler: a flag
    const stream::ChunkSink sink = [&](const stream::Chunk& c) {
      StreamData& s = live[{c.flow, c.dir}];
      if (c.gap) {
        s.gaps.emplace_back(c.offset, c.len);
      } else if (held + c.len > max_bytes) {
        over = true;
      } else {
        s.bytes.append(reinterpret_cast<const char*>(c.data), c.len);
        held += c.len;
      }
    };
    auto check_room = [&] {
      if (over)
        throw StatusError(Status(Errc::kCapacity,
                                 "reassemble: the streams hold more than max_bytes (" +
                                     std::to_string(max_bytes) +
                                     " bytes); cut them with depth, or use warpath reassemble, "
                                     "which writes files"));
    };
    auto finish = [&](const flow::FlowRecord& r) {
      if (r.proto != 6) return;
      check(reassembler->close(r.serial, sink));
      for (uint8_t dir = 0; dir < 2; ++dir) {
        auto it = live.find({r.serial, dir});
        if (it == live.end()) continue;
        if (!it->second.bytes.empty() || !it->second.gaps.empty())
          out.streams.push_back({r, dir, std::move(it->second)});
        live.erase(it);
      }
    };
    std::vector<flow::PacketFlow> answers;
    std::vector<flow::FlowRecord> ended;
    stats = for_each_batch(source, defrag,
                   [&](const packet::BatchView& v, const PacketInfo* infos, uint32_t n) {
                     answers.resize(n);
                     ended.clear();
                     check(tracker->track({infos, n}, {v.metas, n}, {answers.data(), n}, ended));
                     check(stream::reassemble_batch(*reassembler, v, infos, answers.data(), n, sink,
                                                    no_checksum));
                     for (const auto& r : ended) finish(r);
                     check_room();
                   });
    ended.clear();
    // A part's clock goes on to the whole capture's last packet (a no-op for the whole).
    check(tracker->advance(stats.clock_ns, ended));
    check(tracker->flush(ended));
    for (const auto& r : ended) finish(r);
    check_room();
  }
  nb::list streams;
  for (auto& e : out.streams) {  // each entry's bytes freed once its dict holds their copy
    nb::dict d;
    d["flow"]  = e.record.serial;
    d["dir"]   = e.dir ? "responder" : "initiator";
    d["src"]   = endpoint(e.record, e.dir == 0);
    d["dst"]   = endpoint(e.record, e.dir != 0);
    d["data"]  = nb::bytes(e.data.bytes.data(), e.data.bytes.size());
    nb::list gaps;
    for (const auto& [o, l] : e.data.gaps) gaps.append(nb::make_tuple(o, l));
    d["gaps"]  = gaps;
    d["end"]   = flow::flow_end_name(e.record.end);
    streams.append(d);
    std::string().swap(e.data.bytes);
  }
  const stream::StreamCounters c = reassembler->counters();
  nb::dict counters;
  stream::for_each_counter(c, [&](const char* name, uint64_t v) { counters[name] = v; });
  return nb::make_tuple(streams, counters, std::string(reassembler->id()), stats.to_dict());
}

}  // namespace

void bind_stream(nb::module_& m) {
  m.def("_reassemble", &reassemble, nb::arg("capture"), nb::arg("policy") = "bsd",
        nb::arg("mode") = "ids", nb::arg("midstream") = false, nb::arg("depth") = 0,
        nb::arg("engine") = "auto", nb::arg("flow_engine") = "auto",
        nb::arg("capacity") = 1u << 18, nb::arg("no_checksum") = false,
        nb::arg("max_bytes") = uint64_t(1) << 30, nb::arg("defrag") = "",
        "Reassembled TCP streams of a capture or capture file: (streams, counters, engine id, "
        "read stats).");
}

}  // namespace warpath::py
