// python/src/bind_flow.cpp: flow records of a capture (held or a file's part; include/warpath/flow/flow.hpp), as
// `warpath flows --format json` writes them: the capture in the CLI's batches (batches.hpp,
// defragmented with --defrag's engine when asked), every record as its JSON line (the Python side makes them
// dicts and a pandas frame), and the tracker's counters.
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include "batches.hpp"
#include "capture.hpp"
#include "common.hpp"
#include "warpath/flow/flow.hpp"

namespace warpath::py {
namespace {

nb::dict counters_dict(const flow::FlowCounters& c) {
  nb::dict d;
  flow::for_each_counter(
      c, [&](const char* name, uint64_t v) { d[name] = v; },
      [&](const char* name, auto names, const uint64_t* v, unsigned n) {
        nb::dict g;
        for (unsigned i = 0; i < n; ++i) g[names(i)] = v[i];
        d[name] = g;
      });
  return d;
}

// A record's JSON line, its flow number offset by `base` (warpath.dist: unique per shard).
std::string record(flow::FlowRecord& r, uint64_t base) {
  r.serial += base;
  return flow::flow_record_json(r);
}

nb::tuple flows(nb::handle capture, const std::string& engine, uint32_t capacity,
                const std::string& on_full, bool no_checksum, const std::string& defrag,
                uint64_t flow_base) {
  flow::FlowConfig config;
  config.capacity             = capacity;
  config.on_full              = take(flow::parse_on_full(on_full));
  config.ignore_ipv4_checksum = no_checksum;
  config.prefault             = false;  // a capture, read once: pages as flows arrive
  auto tracker = take(flow::make_flow_tracker(engine, config));
  std::vector<std::string> lines;
  const Source source(capture);
  SourceStats stats;
  {
    nb::gil_scoped_release unlocked;
    std::vector<flow::PacketFlow> answers;
    std::vector<flow::FlowRecord> ended;
    stats = for_each_batch(source, defrag,
                   [&](const packet::BatchView& v, const PacketInfo* infos, uint32_t n) {
                     answers.resize(n);
                     check(tracker->track({infos, n}, {v.metas, n}, {answers.data(), n}, ended));
                     for (auto& r : ended) lines.push_back(record(r, flow_base));
                     ended.clear();
                   });
    // A part's clock goes on to the whole capture's last packet (a no-op for the whole).
    check(tracker->advance(stats.clock_ns, ended));
    check(tracker->flush(ended));
    for (auto& r : ended) lines.push_back(record(r, flow_base));
  }
  return nb::make_tuple(lines, counters_dict(tracker->counters()), std::string(tracker->id()),
                        stats.to_dict());
}

}  // namespace

void bind_flow(nb::module_& m) {
  m.def("_flows", &flows, nb::arg("capture"), nb::arg("engine") = "auto",
        nb::arg("capacity") = 1u << 18, nb::arg("on_full") = "evict",
        nb::arg("no_checksum") = false, nb::arg("defrag") = "", nb::arg("flow_base") = 0,
        "Flow records of a capture or capture file: (JSON lines, counters, engine id, "
        "read stats).");
  m.def("_flow_engines", [] { return engine_list(flow::flow_engines()); }, "The flow engines.");
}

}  // namespace warpath::py
