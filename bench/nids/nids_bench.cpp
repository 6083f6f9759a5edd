// warpath-nids-bench: the NIDS offline per core, by stage, beside Vectorscan alone and
// libnids + Vectorscan on the same frames in memory.
//
//   warpath-nids-bench [--rules PATH]... [--workload http|http1|app|small|long] [--in PCAP] [--repeat N]
//                      [--engine ID] [--only track+stream|nids] [--json FILE]
//
// Rules: ET Open's rules/ from the shared data by default (the rules warpath loads; the rest are
// skipped as `warpath nids --check-rules` reports). Traffic: a generated mix (--workload; TCP
// connections from clients in 198.18.0.0/15 ($EXTERNAL_NET) to servers in 192.168.0.0/16
// ($HOME_NET) port 80, with handshakes, HTTP-like text requests and responses, an ACK per
// segment, FINs; http1: real HTTP/1.1 messages the app layer parses; app: a third each of
// HTTP/1.1, TLS 1.2 with a certificate and DNS over UDP, common/app_traffic.hpp) or a capture
// (--in), copied into memory before timing.
// Rows, each the best of --repeat runs, one core (pin it: taskset -c N):
//   decode          parsing alone (cpu.parse)
//   track+stream    + flow tracking and TCP reassembly (the inspector with no rules)
//   nids            + detection with the rules (the whole `warpath nids` data path); its
//                   port-group prefilter databases compiled in the first run, and cloned
//                   from the image's after, as a long run or a second worker finds them
//   nids.first      the first nids run alone: compiling those databases included
//   hs.block        anchor: Vectorscan's hs_scan of every packet payload with the rules' fast
//                   patterns (one block-mode database, the literals the prefilter uses): the
//                   raw scan of the same bytes
//   libnids+hs      anchor: libnids reassembly, hs_scan_stream of each delivered direction (the
//                   classic CPU pipeline), where libnids is built here
// Derived: reassembly = track+stream - decode; detection = nids - track+stream; ratio =
// nids / hs.block (the goal: within 1.6x, issue 66's; 3x on the app-layer workloads).
#include <hs/hs.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/app_traffic.hpp"
#include "harness/report.hpp"
#include "common/http_traffic.hpp"
#include "common/nids_config.hpp"
#include "common/stage.hpp"
#include "common/tcp_frames.hpp"
#include "gen/packet_builder.hpp"
#include "pattern/engines.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/nids/detect.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/nids/rule.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/stream.hpp"

#if defined(WARPATH_HAVE_LIBNIDS)
extern "C" {
#include <nids.h>
#include <pcap/pcap.h>
}
#endif

namespace {

using namespace warpath;

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

using bench::Frames;
using bench::Row;

Result<Frames> read_capture(const std::string& path) {
  WARPATH_ASSIGN_OR_RETURN(io::PcapReader reader, io::PcapReader::open(path));
  Frames out;
  auto batch = packet::PacketBatch::create(1024, 2048, size_t(1024) * 2048 + (1u << 17));
  if (!batch.is_ok()) return batch.status();
  while (!reader.at_end()) {
    batch->clear();
    WARPATH_TRY(reader.read(*batch).status());
    for (uint32_t i = 0; i < batch->size(); ++i)
      out.add(batch->data(i), batch->meta(i).caplen, batch->meta(i).timestamp_ns);
  }
  return out;
}

constexpr uint32_t kBatch = 256;

// Frames into a reused batch of 256 (the copy timed apart and left out), then `work`.
template <class Work>
double over_batches(const Frames& f, Work&& work) {
  static auto batch = packet::PacketBatch::create(kBatch, 2048);
  packet::PacketBatch& b = *batch;
  double fill = 0;
  const double t0 = now_s();
  for (size_t next = 0; next < f.size();) {
    const double a = now_s();
    b.clear();
    for (uint32_t k = 0; k < kBatch && next < f.size(); ++k, ++next)
      b.append(f.bytes.data() + f.off[next], f.len[next], f.len[next], f.ts[next], 0);
    fill += now_s() - a;
    work(b);
  }
  return now_s() - t0 - fill;
}

double run_decode(const Frames& f) {
  auto parser = packet::make_parser("cpu.parse");
  std::vector<packet::PacketInfo> infos(kBatch);
  ExecContext ctx;
  return over_batches(f, [&](packet::PacketBatch& b) {
    (void)(*parser)->parse(b.view(), {infos.data(), b.size()}, ctx);
  });
}

uint32_t g_stream_chunk = 0;  // --stream-chunk: InspectorConfig::stream_chunk
// --stream-chunk-jitter: 0 unless given (warpath nids draws within 10 %), so that the alerts
// of two runs are the same; the time does not depend on it.
uint32_t g_stream_chunk_jitter = 0;
// The last run_nids's port-group prefilter databases, and the time it spent getting them
// (compiling in a process's first run over an image, cloning the image's after).
uint64_t g_port_group_dbs      = 0;
double g_port_group_compile_ms = 0;

double run_nids(const Frames& f, std::shared_ptr<const nids::DetectImage> image,
                const std::string& engine, uint64_t& alerts) {
  auto parser               = packet::make_parser("cpu.parse");
  nids::InspectorConfig cfg = bench::offline_inspector_config(engine);
  cfg.stream_chunk          = g_stream_chunk;
  cfg.stream_chunk_jitter   = g_stream_chunk_jitter;
  auto ins                  = nids::Inspector::make(std::move(image), cfg);
  if (!ins.is_ok()) {
    std::fprintf(stderr, "warpath-nids-bench: %s\n", ins.status().message().c_str());
    std::exit(1);
  }
  std::vector<packet::PacketInfo> infos(kBatch);
  std::vector<nids::Alert> out;
  std::vector<nids::FlowEvent> ended;
  ExecContext ctx;
  alerts = 0;
  const double t = over_batches(f, [&](packet::PacketBatch& b) {
    const uint32_t n = b.size();
    (void)(*parser)->parse(b.view(), {infos.data(), n}, ctx);
    (void)(*ins)->process(b.view(), infos.data(), n, out, ended);
    alerts += out.size();
    out.clear();
    ended.clear();
  });
  const double t0 = now_s();
  (void)(*ins)->finish(out, ended);
  alerts += out.size();
  const double total = t + now_s() - t0;
  const nids::DetectCounters d = (*ins)->detect_counters();
  g_port_group_dbs             = d.port_group_dbs;
  g_port_group_compile_ms      = double(d.port_group_compile_ns) / 1e6;
  if (getenv("WARPATH_BENCH_VERBOSE"))
    std::fprintf(stderr,
                 "  units %llu (stream %llu, transactions %llu), candidates %llu, matches %llu, "
                 "port-group databases %llu (compiled in %.1f ms); payloads scanned once %llu, "
                 "directions that left the single scan %llu; flows http %llu, tls %llu, dns %llu\n",
                 (unsigned long long)d.units, (unsigned long long)d.stream_units,
                 (unsigned long long)d.app_units, (unsigned long long)d.candidates,
                 (unsigned long long)d.matches, (unsigned long long)d.port_group_dbs,
                 double(d.port_group_compile_ns) / 1e6, (unsigned long long)d.single_scans,
                 (unsigned long long)d.single_scan_left,
                 (unsigned long long)(*ins)->counters().app.http_flows,
                 (unsigned long long)(*ins)->counters().app.tls_flows,
                 (unsigned long long)(*ins)->counters().app.dns_flows);
  return total;
}

int on_match(unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
  ++*static_cast<uint64_t*>(ctx);
  return 0;
}

// The payloads of the frames (as the parser finds them), gathered before timing.
std::vector<std::pair<uint32_t, uint32_t>> payloads(const Frames& f) {
  std::vector<std::pair<uint32_t, uint32_t>> out;  // (offset in f.bytes, length)
  auto parser = packet::make_parser("cpu.parse");
  std::vector<packet::PacketInfo> infos(kBatch);
  ExecContext ctx;
  size_t base = 0;
  over_batches(f, [&](packet::PacketBatch& b) {
    const uint32_t n = b.size();
    (void)(*parser)->parse(b.view(), {infos.data(), n}, ctx);
    for (uint32_t i = 0; i < n; ++i) {
      const uint8_t* data = nullptr;
      uint32_t len        = 0;
      if (stream::payload_of(infos[i], b.data(i), b.meta(i).caplen, data, len))
        out.push_back({uint32_t(f.off[base + i] + (data - b.data(i))), len});
    }
    base += n;
  });
  return out;
}

// The literals the prefilter matches: each rule's fast pattern, as cpu.nids compiles it.
std::vector<pattern::Pattern> fast_patterns(const nids::DetectImage& image) {
  std::vector<pattern::Pattern> out;
  for (uint32_t i = 0; i < image.rules().size(); ++i) {
    const nids::Content* fp = image.fast_pattern(i);
    if (!fp) continue;
    pattern::Pattern p;
    p.id         = uint32_t(out.size());
    p.literal    = true;
    p.expression = fp->bytes;
    p.flags      = fp->nocase ? uint32_t(pattern::kCaseless) : 0u;
    out.push_back(std::move(p));
  }
  return out;
}

double run_hs_block(const Frames& f, const std::vector<std::pair<uint32_t, uint32_t>>& pl,
                    hs_database_t* db, uint64_t& matches) {
  hs_scratch_t* scratch = nullptr;
  hs_alloc_scratch(db, &scratch);
  matches = 0;
  // The entry point cpu.hs calls (the dispatched hs_scan, or its AVX2 variant where the
  // dispatched one misses matches: pattern/cpu/hs_matcher.cpp)
  const auto scan = pattern::detail::hs_scan_entry();
  // Payloads 256 at a time, as warpath's rows get their frames.
  bench::Stage stage(bench::Stage::largest(pl.size(), [&](size_t i) { return pl[i].second; }));
  const double t0      = now_s();
  const double filling = stage.each_fill(
      pl.size(),
      [&](size_t i) {
        return std::pair<const uint8_t*, uint32_t>(f.bytes.data() + pl[i].first, pl[i].second);
      },
      [&](uint32_t n, size_t) {
        for (uint32_t k = 0; k < n; ++k)
          scan(db, reinterpret_cast<const char*>(stage.ptr[k]), stage.len[k], 0, scratch, on_match,
               &matches);
        return true;
      });
  const double t = now_s() - t0 - filling;
  hs_free_scratch(scratch);
  return t;
}

#if defined(WARPATH_HAVE_LIBNIDS)
hs_database_t* g_stream_db  = nullptr;
hs_scratch_t* g_scratch     = nullptr;
uint64_t g_matches          = 0;
// A connection's two Vectorscan streams, kept in libnids' own per-stream slot (the callback's
// void**: what a libnids application is given for its state, no lookup of its own).
struct HsPair {
  hs_stream_t* client = nullptr;
  hs_stream_t* server = nullptr;
};

void nids_callback(tcp_stream* s, void** slot) {
  if (s->nids_state == NIDS_JUST_EST) {  // *slot is not initialised yet (libnids' tcp.c)
    s->client.collect++;
    s->server.collect++;
    auto* st = new HsPair;
    hs_open_stream(g_stream_db, 0, &st->client);
    hs_open_stream(g_stream_db, 0, &st->server);
    *slot = st;
  } else if (s->nids_state == NIDS_DATA) {
    auto* st = static_cast<HsPair*>(*slot);
    if (s->client.count_new)
      hs_scan_stream(st->client, s->client.data, unsigned(s->client.count_new), 0, g_scratch,
                     on_match, &g_matches);
    if (s->server.count_new)
      hs_scan_stream(st->server, s->server.data, unsigned(s->server.count_new), 0, g_scratch,
                     on_match, &g_matches);
  } else if (auto* st = static_cast<HsPair*>(*slot)) {
    hs_close_stream(st->client, g_scratch, on_match, &g_matches);
    hs_close_stream(st->server, g_scratch, on_match, &g_matches);
    delete st;
    *slot = nullptr;
  }
}

double run_libnids(const Frames& f, const std::vector<pattern::Pattern>& ps, uint64_t& matches) {
  std::vector<std::string> exprs;
  std::vector<const char*> cexprs;
  std::vector<unsigned> ids, flags;
  for (const pattern::Pattern& p : ps) {
    exprs.push_back(pattern::regex_of(p));
    ids.push_back(p.id);
    flags.push_back(p.flags & pattern::kCaseless ? HS_FLAG_CASELESS : 0u);
  }
  for (const std::string& e : exprs) cexprs.push_back(e.c_str());
  hs_compile_error_t* err = nullptr;
  if (!g_stream_db) {  // compiled once per process, for every run
    if (hs_compile_multi(cexprs.data(), flags.data(), ids.data(), unsigned(cexprs.size()),
                         HS_MODE_STREAM, nullptr, &g_stream_db, &err) != HS_SUCCESS) {
      std::fprintf(stderr, "warpath-nids-bench: streaming database: %s\n", err ? err->message : "?");
      return -1;
    }
    hs_alloc_scratch(g_stream_db, &g_scratch);
  }
  // Each run from a fresh state: nids_init frees what the last run left (nids_exit, below, has
  // already) and allocates again, so the best of --repeat runs is libnids' as for the others.
  static pcap_t* dead         = pcap_open_dead(DLT_EN10MB, 65535);  // kept: nids_exit reads it
  nids_params.pcap_desc       = dead;
  nids_params.scan_num_hosts  = 0;
  nids_params.n_tcp_streams   = 1 << 18;
  nids_params.n_hosts         = 1 << 12;
  nids_params.tcp_workarounds = 0;
  static nids_chksum_ctl off = {0, 0, NIDS_DONT_CHKSUM, 0};
  nids_register_chksum_ctl(&off, 1);
  if (!nids_init()) return -1;
  nids_register_tcp(reinterpret_cast<void*>(nids_callback));
  g_matches = 0;
  // Frames 256 at a time, as warpath's rows get theirs (writable: libnids takes non-const).
  bench::Stage stage(f.largest());
  const double t0      = now_s();
  const double filling = stage.each_fill(
      f.size(), [&](size_t i) { return f.frame(i); },
      [&](uint32_t n, size_t first) {
        for (uint32_t k = 0; k < n; ++k) {
          const size_t i = first + k;
          pcap_pkthdr h{};
          h.caplen = h.len = f.len[i];  // == stage.len[k]: the stage holds the largest frame
          h.ts.tv_sec      = long(f.ts[i] / 1000000000u);
          h.ts.tv_usec     = long(f.ts[i] % 1000000000u / 1000u);
          nids_pcap_handler(nullptr, &h, stage.ptr[k]);
        }
        return true;
      });
  const double t = now_s() - t0 - filling;
  nids_exit();
  matches = g_matches;
  return t;
}
#endif

struct Options {
  std::vector<std::string> rule_paths;
  std::string workload = "http", in, json, engine = "cpu.nids", only;
  int repeat = 3;
};

/// The options; exits 2 (with the usage) on a bad one.
Options parse_options(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&]() -> std::string {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "warpath-nids-bench: %s needs a value\n", a.c_str());
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--rules") o.rule_paths.push_back(value());
    else if (a == "--workload") o.workload = value();
    else if (a == "--in") o.in = value();
    else if (a == "--json") o.json = value();
    else if (a == "--engine") o.engine = value();
    else if (a == "--repeat") o.repeat = std::max(1, std::atoi(value().c_str()));
    else if (a == "--only")
      o.only = value();
    else if (a == "--stream-chunk")
      g_stream_chunk = uint32_t(std::strtoul(value().c_str(), nullptr, 10));
    else if (a == "--stream-chunk-jitter")
      g_stream_chunk_jitter = uint32_t(std::strtoul(value().c_str(), nullptr, 10));
    else {
      std::fprintf(
          stderr,
          "usage: warpath-nids-bench [--rules PATH]... [--workload http|http1|app|small|long] [--in PCAP] "
          "[--repeat N] [--engine ID] [--stream-chunk N] [--stream-chunk-jitter P] "
          "[--only track+stream|nids] [--json "
          "FILE]\n");
      std::exit(2);
    }
  }
  if (!o.only.empty() && o.only != "track+stream" && o.only != "nids") {
    std::fprintf(stderr, "warpath-nids-bench: --only takes track+stream or nids\n");
    std::exit(2);
  }
  if (o.rule_paths.empty()) {
    const char* data = std::getenv("WARPATH_DATA");
    o.rule_paths.push_back(std::string(data ? data : "../shared/data") + "/patterns/et-open/rules");
  }
  return o;
}

/// The frames: the capture of --in, or the generated --workload. Exits 2 on an unknown workload.
Result<Frames> workload_frames(const Options& o) {
  if (!o.in.empty()) return read_capture(o.in);
  if (o.workload == "http") return bench::build_http_traffic({2000, 200, 20, 1448}, 1);
  if (o.workload == "http1") {  // real HTTP/1.1: what the app layer parses
    bench::TrafficShape shape{2000, 200, 20, 1448};
    shape.http1 = true;
    return bench::build_http_traffic(shape, 1);
  }
  if (o.workload == "app")  // HTTP/1.1, TLS 1.2 and DNS, a third each
    return bench::build_app_traffic(3000, 20, 1448, 1);
  if (o.workload == "small") return bench::build_http_traffic({4000, 400, 10, 200}, 1);
  if (o.workload == "long")  // streams far past the 4 KiB lookback, in small segments
    return bench::build_http_traffic({64, 64, 2000, 100}, 1);
  std::fprintf(stderr, "warpath-nids-bench: unknown workload '%s'\n", o.workload.c_str());
  std::exit(2);
}

/// A stage's row: its best time over the frames, packets per second, and what it counted.
Row stage_row(const std::string& name, double best_s, uint64_t count, const Frames& frames) {
  Row r;
  r.workload = "stages";
  r.engine   = name;
  r.anchor   = name == "hs.block" || name == "libnids+hs";
  r.unit     = "packets";
  r.rate     = best_s > 0 ? double(frames.size()) / best_s : 0;
  r.with("seconds", best_s)
      .with("gbps", best_s > 0 ? double(frames.wire) * 8 / best_s / 1e9 : 0.0)
      .with("count", int64_t(count));
  return r;
}

/// The stages by --repeat runs (the best of each): decoding alone, tracking and reassembly (an
/// empty rule set), the NIDS, Vectorscan's scan of the payloads (hs.block), the NIDS's first
/// run (which compiles the port-group databases: its time goes in *first_compile_ms), and
/// libnids + Vectorscan where built with it.
std::vector<Row> stage_rows(const Options& o, const Frames& frames,
                            const std::vector<std::pair<uint32_t, uint32_t>>& pl,
                            const std::vector<pattern::Pattern>& fps, hs_database_t* db,
                            const std::shared_ptr<const nids::DetectImage>& image,
                            const std::shared_ptr<const nids::DetectImage>& empty,
                            double& first_compile_ms) {
  double best[4] = {1e30, 1e30, 1e30, 1e30}, first = 0;
  uint64_t count[4] = {}, first_count = 0;
  for (int r = 0; r < o.repeat; ++r) {
    best[0]        = std::min(best[0], run_decode(frames));
    best[1]        = std::min(best[1], run_nids(frames, empty, o.engine, count[1]));
    const double t = run_nids(frames, image, o.engine, count[2]);
    best[2]        = std::min(best[2], t);
    best[3]        = std::min(best[3], run_hs_block(frames, pl, db, count[3]));
    if (r == 0) {  // the run that compiled the port-group databases
      first            = t;
      first_count      = count[2];
      first_compile_ms = g_port_group_compile_ms;
    }
  }
  std::vector<Row> rows = {stage_row("decode", best[0], count[0], frames),
                           stage_row("track+stream", best[1], count[1], frames),
                           stage_row("nids", best[2], count[2], frames),
                           stage_row("hs.block", best[3], count[3], frames),
                           stage_row("nids.first", first, first_count, frames)};
#if defined(WARPATH_HAVE_LIBNIDS)
  {  // the best of --repeat runs, each from a fresh nids_init
    double lib     = 1e30;
    uint64_t n     = 0;
    for (int r = 0; r < o.repeat && lib > 0; ++r) lib = std::min(lib, run_libnids(frames, fps, n));
    if (lib > 0 && lib < 1e30) rows.push_back(stage_row("libnids+hs", lib, n, frames));
  }
#else
  (void)fps;
#endif
  return rows;
}

double seconds_of(const Row& r) { return std::get<double>(*r.field("seconds")); }

}  // namespace

int main(int argc, char** argv) {
  const Options o = parse_options(argc, argv);
  if (!bench::writable_or_say("warpath-nids-bench", o.json))
    return 1;  // at once, not after the passes
  auto set        = nids::load_rules(o.rule_paths, nids::Vars{});
  if (!set.is_ok()) {
    std::fprintf(stderr, "warpath-nids-bench: %s\n", set.status().message().c_str());
    return 1;
  }
  auto image = nids::compile_rules(*set);
  auto empty = nids::compile_rules(nids::RuleSet{});
  if (!image.is_ok() || !empty.is_ok()) {
    std::fprintf(stderr, "warpath-nids-bench: cannot compile the rules\n");
    return 1;
  }
  auto frames_or = workload_frames(o);
  if (!frames_or.is_ok()) {
    std::fprintf(stderr, "warpath-nids-bench: %s\n", frames_or.status().message().c_str());
    return 1;
  }
  const Frames& frames = *frames_or;
  if (!o.only.empty()) {  // one row alone, for a profiler
    double best    = 1e30;
    uint64_t count = 0;
    for (int r = 0; r < o.repeat; ++r)
      best = std::min(best, run_nids(frames, o.only == "nids" ? *image : *empty, o.engine, count));
    std::printf("%s: %.2f ms, %.1f ns/packet\n", o.only.c_str(), best * 1e3,
                best * 1e9 / double(frames.size()));
    return 0;
  }
  const auto pl = payloads(frames);
  uint64_t payload_bytes = 0;
  for (const auto& p : pl) payload_bytes += p.second;
  const std::vector<pattern::Pattern> fps = fast_patterns(**image);
  auto db = pattern::detail::hs_block_database(fps);
  if (!db.is_ok()) {
    std::fprintf(stderr, "warpath-nids-bench: %s\n", db.status().message().c_str());
    return 1;
  }
  double first_compile_ms = 0;
  std::vector<Row> rows = stage_rows(o, frames, pl, fps, *db, *image, *empty, first_compile_ms);
  hs_free_database(*db);

  const std::string name = o.in.empty() ? o.workload : o.in;
  const double pkts      = double(frames.size());
  std::printf("workload %s: %zu packets, %.1f MB on the wire, %.1f MB of payload; %zu rules (%zu fast "
              "patterns), engine %s\n",
              name.c_str(), frames.size(), double(frames.wire) / 1e6, double(payload_bytes) / 1e6,
              (*image)->rules().size(), fps.size(), o.engine.c_str());
  bench::print_table(stdout,
                     {bench::engine_column(),
                      {"ms",
                       [](const Row& r) {
                         char t[32];
                         std::snprintf(t, sizeof t, "%.2f", seconds_of(r) * 1e3);
                         return std::string(t);
                       }},
                      bench::rate_column("Mpps", 1e-6, 2), bench::ns_column("ns/packet", 1),
                      bench::field_column("Gbit/s", "gbps"),
                      bench::field_column("alerts/hits", "count")},
                     rows);
  const double decode = seconds_of(rows[0]), stream = seconds_of(rows[1]);
  const double nids = seconds_of(rows[2]), hs = seconds_of(rows[3]);
  std::printf("stages (ns/packet): decode %.1f, tracking+reassembly %.1f, detection %.1f "
              "(prefilter scan alone, hs.block: %.1f)\n",
              decode * 1e9 / pkts, (stream - decode) * 1e9 / pkts, (nids - stream) * 1e9 / pkts,
              hs * 1e9 / pkts);
  // The app-layer workloads' goal is issue 61's (all of ET Open over HTTP, TLS and DNS: 3x);
  // the others issue 66's (1.6x; the stream NIDS's first goal was 2x).
  const bool app_layer = o.in.empty() && (o.workload == "app" || o.workload == "http1");
  std::printf("nids / hs.block = %.2fx (goal: <= %s)\n", nids / hs, app_layer ? "3x" : "1.6x");
  std::printf(
      "port-group prefilter databases: %llu, compiled in %.1f ms in the first nids run "
      "(nids.first); later runs clone the image's\n",
      static_cast<unsigned long long>(g_port_group_dbs), first_compile_ms);
  if (!o.json.empty() &&
      !bench::write_results(o.json, bench::provenance("warpath-nids-bench", argc, argv),
                            {{"workload", name},
                             {"engine", o.engine},
                             {"repeat", int64_t(o.repeat)},
                             {"packets", int64_t(frames.size())},
                             {"wire_bytes", int64_t(frames.wire)},
                             {"payload_bytes", int64_t(payload_bytes)},
                             {"rules", int64_t((*image)->rules().size())},
                             {"fast_patterns", int64_t(fps.size())},
                             {"ratio_nids_to_hs_block", nids / hs},
                             {"port_group_dbs", int64_t(g_port_group_dbs)},
                             {"port_group_compile_ms_first_run", first_compile_ms}},
                            {}, rows))
    return 1;
  return 0;
}
