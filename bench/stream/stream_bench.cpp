// warpath-stream-bench: TCP flow tracking + reassembly per core, warpath beside libnids on the
// same frames in memory.
//
//   warpath-stream-bench --workload inorder|small|short|reorder --engine warpath|flowstream|libnids|floor
//                        [--repeat N] [--json]   (--json: the result as one line of JSON, the
//                        harness's row: bench/harness/report.hpp)
//   warpath-stream-bench --workload W --write-pcap FILE   the workload as a capture, untimed,
//                        for the commands a user runs (`warpath reassemble --in FILE`)
//
// Workloads (the shapes of ../shared/notes/stream-reassembly.md's libnids measurements):
//   inorder  200 concurrent connections x 200 segments of 1,448 bytes, in order
//   small    2,000 concurrent connections x 200 segments of 100 bytes
//   short    100,000 connections (1,000 at a time): handshake, one 200-byte request, close
//   reorder  `small` with 1% of the data segments swapped with the next one of their flow
//   reverse  20 connections x 4,000 segments of 10 bytes, each connection's segments sent last
//            first (a hostile order: every one lands before everything held), then one ACK
//   acksteps 20 connections x 4,000 segments of 10 bytes in order with no ACK between them,
//            then 4,000 ACKs a segment apart (each delivers one segment of a long held run)
//   small20, small200  `small`'s segments over 20 or 200 connections (the same packet count):
//            what the per-packet work costs with the flows' state in L1 or L2 instead of farther
// Every connection has a handshake, an ACK from the receiver every second segment and FINs.
// Frames are built before timing. Every engine gets them 256 at a time, copied into a reused
// buffer (a receive's work, timed apart and left out: each engine reads frames just written,
// as from a port's RX or a capture ring). The time is the per-packet work only: for warpath,
// parsing (cpu.parse), flow tracking (cpu.flow) and reassembly (cpu.stream, IDS mode, BSD
// policy, no depth limit) of each batch; for flowstream, the same parse, then cpu.flowstream (the
// two in one pass, the same configuration); for libnids, nids_pcap_handler on each frame (its IP
// and TCP processing, checksums off, port-scan detection off), with a callback collecting both
// directions; for floor, stream_floor.hpp's least work (a yardstick, not an engine). Each
// counts the stream bytes it delivers, which must equal the payload. The end of the input (every
// flow ended in the tracker and its stream closed, as `warpath reassemble` ends: cpu.flow's
// flush and cpu.stream's close of each, cpu.flowstream's flush) is timed apart and reported as
// end_ns_per_packet, outside the per-packet figure, for both warpath rows alike: libnids does
// nothing there. (Until the commit after b322167 the warpath row's time included its close_all,
// up to 9 ns a packet in order, and no flush of the tracker.)
// Run one engine and workload per process, pinned (taskset -c N), alternating; the script
// bench/stream/run_stream_bench.sh does this and writes bench/results/.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "common/stage.hpp"
#include "common/tcp_frames.hpp"
#include "gen/packet_builder.hpp"
#include "harness/report.hpp"
#include "stream/stream_floor.hpp"
#include "warpath/flow/flow.hpp"
#include "warpath/gen/traffic.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/packet/batch.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/flowstream.hpp"
#include "warpath/stream/stream.hpp"

#if defined(WARPATH_HAVE_LIBNIDS)
extern "C" {
#include <nids.h>
#include <pcap/pcap.h>
}
#endif

namespace {

using namespace warpath;

using bench::Frames;

// One Ethernet + IPv4 + TCP frame of `payload` zero bytes.
void frame(Frames& out, uint32_t src, uint32_t dst, uint16_t sport, uint16_t dport, uint32_t seq,
           uint32_t ack, uint8_t flags, uint32_t payload) {
  bench::add_tcp_frame(out, src, dst, sport, dport, seq, ack, flags, payload);
}

struct Shape {
  uint32_t flows, concurrent, segments, size, reorder_permille;
  bool reverse = false;  ///< each connection's data segments last first, then one ACK
  bool steps   = false;  ///< in order, then one ACK per segment after all of them
};

Frames build(const Shape& s, uint64_t seed) {
  gen::detail::Rng rng(seed, 7);
  Frames out;
  out.bytes.reserve(size_t(s.flows) * (s.segments * (s.size + 60) + 600));
  for (uint32_t first = 0; first < s.flows; first += s.concurrent) {
    const uint32_t n = std::min(s.concurrent, s.flows - first);
    struct Conn {
      uint32_t c, srv;
      uint16_t cp;
      uint32_t cseq, sseq, sent;
    };
    std::vector<Conn> conns(n);
    for (uint32_t k = 0; k < n; ++k) {
      const uint32_t id = first + k;
      conns[k] = {0x0a000000u + (id >> 8), 0xc0a80000u + (id & 0xff), uint16_t(1024 + id % 60000),
                  rng.next32(), rng.next32(), 0};
    }
    for (Conn& c : conns) frame(out, c.c, c.srv, c.cp, 80, c.cseq, 0, 0x02, 0);
    for (Conn& c : conns) frame(out, c.srv, c.c, 80, c.cp, c.sseq, c.cseq + 1, 0x12, 0);
    for (Conn& c : conns) frame(out, c.c, c.srv, c.cp, 80, c.cseq + 1, c.sseq + 1, 0x10, 0);
    if (s.reverse || s.steps) {
      for (Conn& c : conns) {
        for (uint32_t k = 0; k < s.segments; ++k) {
          const uint32_t seg = s.reverse ? s.segments - 1 - k : k;
          frame(out, c.c, c.srv, c.cp, 80, c.cseq + 1 + seg * s.size, c.sseq + 1, 0x18, s.size);
        }
        c.sent = s.segments * s.size;
        for (uint32_t k = s.steps ? 1 : s.segments; k <= s.segments; ++k)
          frame(out, c.srv, c.c, 80, c.cp, c.sseq + 1, c.cseq + 1 + k * s.size, 0x10, 0);
      }
    }
    for (uint32_t seg = 0; !s.reverse && !s.steps && seg < s.segments; seg += 2) {
      const uint32_t count = std::min(2u, s.segments - seg);
      for (Conn& c : conns) {
        const uint32_t base = c.cseq + 1 + c.sent;
        // A pair swapped with probability 2 x permille: that share of segments out of order.
        const bool swap = count == 2 && s.reorder_permille &&
                          rng.below(1000) < 2 * s.reorder_permille;
        if (swap)
          frame(out, c.c, c.srv, c.cp, 80, base + s.size, c.sseq + 1, 0x18, s.size);
        frame(out, c.c, c.srv, c.cp, 80, base, c.sseq + 1, 0x18, s.size);
        if (count == 2 && !swap)
          frame(out, c.c, c.srv, c.cp, 80, base + s.size, c.sseq + 1, 0x18, s.size);
        c.sent += count * s.size;
        frame(out, c.srv, c.c, 80, c.cp, c.sseq + 1, c.cseq + 1 + c.sent, 0x10, 0);  // the ACK
      }
    }
    for (Conn& c : conns) {
      const uint32_t fin = c.cseq + 1 + c.sent;
      frame(out, c.c, c.srv, c.cp, 80, fin, c.sseq + 1, 0x11, 0);
      frame(out, c.srv, c.c, 80, c.cp, c.sseq + 1, fin + 1, 0x11, 0);
      frame(out, c.c, c.srv, c.cp, 80, fin + 1, c.sseq + 2, 0x10, 0);
    }
  }
  return out;
}

Shape shape_of(const std::string& w) {
  if (w == "inorder") return {200, 200, 200, 1448, 0};
  if (w == "small") return {2000, 2000, 200, 100, 0};
  if (w == "short") return {100000, 1000, 1, 200, 0};
  if (w == "small20") return {20, 20, 20000, 100, 0};
  if (w == "small200") return {200, 200, 2000, 100, 0};
  if (w == "reorder") return {2000, 2000, 200, 100, 10};
  if (w == "reverse") return {20, 20, 4000, 10, 0, true};
  if (w == "acksteps") return {20, 20, 4000, 10, 0, false, true};
  return {0, 0, 0, 0, 0};
}

bool g_breakdown = false;  // --breakdown: time per stage (adds clock reads)
double g_end_s   = 0;      // the last run's end of input (timed apart: see the top)

double now_s() {
  return std::chrono::duration<double>(std::chrono::steady_clock::now().time_since_epoch()).count();
}

// warpath: frames copied into one reused batch of 256 (what a port's RX does; the copy is
// timed apart and left out, as it is for libnids and floor: Stage), then parse -> track
// -> reassemble.
// What both warpath rows share: the configuration (IDS mode, BSD policy, no depth limit; room
// for as many finished connections as the tracker holds, made at the start, as libnids makes
// its streams for n_tcp_streams below and the stream module does by default), the parse's and
// the tracker's output, and a sink counting the stream bytes.
struct WarpathRun {
  flow::FlowConfig fc;
  stream::StreamConfig sc;
  std::vector<packet::PacketInfo> infos = std::vector<packet::PacketInfo>(256);
  std::vector<flow::PacketFlow> answers = std::vector<flow::PacketFlow>(256);
  std::vector<flow::FlowRecord> ended;
  uint64_t bytes = 0;
  stream::ChunkSink sink = [this](const stream::Chunk& c) {
    if (!c.gap) bytes += c.len;
  };
  WarpathRun() {
    fc.capacity       = 1u << 18;
    sc.depth          = 0;
    sc.stream_cap     = 16u << 20;
    sc.memcap         = 4ull << 30;
    sc.prealloc_flows = sc.prealloc_for(fc.capacity);
  }
  WarpathRun(const WarpathRun&) = delete;  // the sink refers to this run
};

double run_warpath(const Frames& f, uint64_t& delivered) {
  auto batch = packet::PacketBatch::create(256, 2048);
  if (!batch.is_ok()) return -1;
  packet::PacketBatch& b = *batch;
  auto parser = packet::make_parser("cpu.parse");
  WarpathRun run;
  auto tracker = flow::make_flow_tracker("cpu.flow", run.fc);
  auto r       = stream::make_reassembler("cpu.stream", run.sc);
  if (!parser.is_ok() || !tracker.is_ok() || !r.is_ok()) {
    std::fprintf(stderr, "warpath-stream-bench: cannot build the engines\n");
    return -1;
  }
  auto& [fc, sc, infos, answers, ended, bytes, sink] = run;
  ExecContext ctx;
  double t_parse = 0, t_track = 0, t_fill = 0;
  const double t0 = now_s();
  for (size_t next = 0; next < f.size();) {
    const double fill0 = now_s();
    b.clear();
    for (uint32_t k = 0; k < 256 && next < f.size(); ++k, ++next)
      b.append(f.bytes.data() + f.off[next], f.len[next], f.len[next],
               1700000000000000000ull + next * 1000, 0);
    t_fill += now_s() - fill0;
    const uint32_t n = b.size();
    const double a = g_breakdown ? now_s() : 0;
    (void)(*parser)->parse(b.view(), {infos.data(), n}, ctx);
    const double m = g_breakdown ? now_s() : 0;
    ended.clear();
    const packet::BatchView v = b.view();
    (void)(*tracker)->track({infos.data(), n}, {v.metas, n}, {answers.data(), n}, ended);
    if (g_breakdown) {
      const double z = now_s();
      t_parse += m - a;
      t_track += z - m;
    }
    (void)stream::reassemble_batch(**r, v, infos.data(), answers.data(), n, sink);
    for (const flow::FlowRecord& e : ended) (void)(*r)->close(e.serial, sink);
  }
  const double t = now_s() - t0 - t_fill;
  ended.clear();  // the end of input as `warpath reassemble` does it, timed apart
  (void)(*tracker)->flush(ended);
  for (const flow::FlowRecord& e : ended) (void)(*r)->close(e.serial, sink);
  (void)(*r)->close_all(sink);
  g_end_s   = now_s() - t0 - t_fill - t;
  delivered = bytes;
  if (g_breakdown)
    std::fprintf(stderr, "  parse %.1f ns/pkt, track %.1f ns/pkt, reassemble %.1f ns/pkt\n",
                 t_parse * 1e9 / double(f.size()), t_track * 1e9 / double(f.size()),
                 (t - t_parse - t_track) * 1e9 / double(f.size()));
  return t;
}

// flowstream: the same parse, then tracking and reassembly in one engine (cpu.flowstream,
// include/warpath/stream/flowstream.hpp) with warpath's configuration.
double run_flowstream(const Frames& f, uint64_t& delivered) {
  auto batch = packet::PacketBatch::create(256, 2048);
  if (!batch.is_ok()) return -1;
  packet::PacketBatch& b = *batch;
  auto parser = packet::make_parser("cpu.parse");
  WarpathRun run;
  auto e = stream::make_flowstream("cpu.flowstream", run.fc, run.sc);
  if (!parser.is_ok() || !e.is_ok()) {
    std::fprintf(stderr, "warpath-stream-bench: cannot build the engines\n");
    return -1;
  }
  auto& [fc, sc, infos, answers, ended, bytes, sink] = run;
  ExecContext ctx;
  double t_fill = 0;
  const double t0 = now_s();
  for (size_t next = 0; next < f.size();) {
    const double fill0 = now_s();
    b.clear();
    for (uint32_t k = 0; k < 256 && next < f.size(); ++k, ++next)
      b.append(f.bytes.data() + f.off[next], f.len[next], f.len[next],
               1700000000000000000ull + next * 1000, 0);
    t_fill += now_s() - fill0;
    const uint32_t n = b.size();
    (void)(*parser)->parse(b.view(), {infos.data(), n}, ctx);
    ended.clear();
    (void)(*e)->process(b.view(), infos.data(), {answers.data(), n}, ended, sink);
  }
  const double t = now_s() - t0 - t_fill;
  ended.clear();
  (void)(*e)->flush(ended, sink);
  g_end_s   = now_s() - t0 - t_fill - t;
  delivered = bytes;
  return t;
}

using bench::Stage;  // libnids' and floor's frames, 256 at a time as warpath's (stage.hpp)

// Frame i for Stage::fill.
auto frame_at(const Frames& f) {
  return [&f](size_t i) { return f.frame(i); };
}

// floor (stream_floor.hpp): the least work the job allows, a yardstick and not an engine, in
// batches of 256 as warpath's parse and track take theirs.
double run_floor(const Frames& f, uint64_t& delivered) {
  bench::floor_engine::Floor fl(18);
  uint64_t bytes = 0;
  auto sink      = [&bytes](const uint8_t*, uint32_t n) { bytes += n; };
  Stage stage(f.largest());
  bool read_all        = true;
  const double t0 = now_s();
  const double filling = stage.each_fill(f.size(), frame_at(f), [&](uint32_t n, size_t) {
    return read_all = fl.batch(stage.ptr, stage.len, n, sink);
  });
  const double t       = now_s() - t0 - filling;
  if (!read_all) {
    std::fprintf(stderr, "warpath-stream-bench: floor reads only Ethernet + IPv4 + TCP frames\n");
    return -1;
  }
  delivered = bytes;
  return t;
}

#if defined(WARPATH_HAVE_LIBNIDS)
uint64_t g_nids_bytes = 0;
void nids_callback(struct tcp_stream* s, void**) {
  if (s->nids_state == NIDS_JUST_EST) {
    s->client.collect++;
    s->server.collect++;
  } else if (s->nids_state == NIDS_DATA) {
    g_nids_bytes += uint64_t(s->client.count_new) + uint64_t(s->server.count_new);
  }
}

// One run from a fresh state: nids_init frees what an earlier run left (nids_exit: the stream
// table and pool, the fragment state) and allocates them again, and clears the callbacks, so each
// run of a process starts as the first did and the best of --repeat runs is libnids' as it is
// warpath's.
double run_libnids(const Frames& f, uint64_t& delivered) {
  static pcap_t* dead         = pcap_open_dead(DLT_EN10MB, 65535);  // kept: nids_exit reads it
  g_nids_bytes                = 0;
  nids_params.pcap_desc       = dead;
  nids_params.scan_num_hosts  = 0;
  nids_params.n_tcp_streams   = 1 << 18;
  nids_params.n_hosts         = 1 << 12;
  nids_params.tcp_workarounds = 0;
  static struct nids_chksum_ctl off = {0, 0, NIDS_DONT_CHKSUM, 0};
  nids_register_chksum_ctl(&off, 1);
  if (!nids_init()) {
    std::fprintf(stderr, "warpath-stream-bench: nids_init: %s\n", nids_errbuf);
    return -1;
  }
  nids_register_tcp(reinterpret_cast<void*>(nids_callback));
  Stage stage(f.largest());  // libnids takes non-const pointers: the stage is writable
  struct pcap_pkthdr h {};
  const double t0      = now_s();
  const double filling = stage.each_fill(f.size(), frame_at(f), [&](uint32_t n, size_t first) {
    for (uint32_t k = 0; k < n; ++k) {
      const size_t i = first + k;
      h.ts.tv_sec    = 1700000000 + long(i / 1000000);
      h.ts.tv_usec   = long(i % 1000000);
      h.caplen = h.len = f.len[i];  // == stage.len[k]: the stage holds the largest frame
      nids_pcap_handler(nullptr, &h, stage.ptr[k]);
    }
    return true;
  });
  const double t       = now_s() - t0 - filling;
  delivered      = g_nids_bytes;
  return t;
}
#endif

}  // namespace

int main(int argc, char** argv) {
  std::string workload = "small", engine = "warpath", pcap_out;
  int repeat = 1;
  bool json  = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--workload" && i + 1 < argc) workload = argv[++i];
    else if (a == "--engine" && i + 1 < argc) engine = argv[++i];
    else if (a == "--repeat" && i + 1 < argc) repeat = std::max(1, std::atoi(argv[++i]));
    else if (a == "--json") json = true;
    else if (a == "--breakdown") g_breakdown = true;
    else if (a == "--write-pcap" && i + 1 < argc)
      pcap_out = argv[++i];
    else {
      std::fprintf(
          stderr,
          "usage: warpath-stream-bench --workload inorder|small|short|reorder|reverse|acksteps|"
          "small20|small200 "
          "--engine warpath|flowstream|libnids|floor [--repeat N] [--json] [--write-pcap FILE]\n");
      return 2;
    }
  }
  const Shape shape = shape_of(workload);
  if (!shape.flows) {
    std::fprintf(stderr, "warpath-stream-bench: unknown workload '%s'\n", workload.c_str());
    return 2;
  }
#if !defined(WARPATH_HAVE_LIBNIDS)
  if (engine == "libnids") {
    std::fprintf(stderr, "warpath-stream-bench: built without libnids (apt-get install libnids-dev)\n");
    return 1;
  }
#endif
  if (engine != "warpath" && engine != "flowstream" && engine != "libnids" && engine != "floor") {
    std::fprintf(stderr, "warpath-stream-bench: unknown engine '%s'\n", engine.c_str());
    return 2;
  }
  const Frames f = build(shape, 1);
  // The workload as a capture, for the commands a user runs on it (`warpath reassemble`,
  // `warpath run` with a flow -> stream chain), then nothing is timed.
  if (!pcap_out.empty()) {
    auto w    = io::PcapWriter::create(pcap_out);
    Status st = w.is_ok() ? Status::ok() : w.status();
    for (size_t i = 0; i < f.size() && st.is_ok(); ++i)
      st = w->write_packet(f.frame(i).first, f.len[i], f.len[i], f.ts[i]);
    if (st.is_ok()) st = w->close();
    if (!st.is_ok()) {
      std::fprintf(stderr, "warpath-stream-bench: %s\n", st.message().c_str());
      return 1;
    }
    std::printf("%s: %zu packets of workload %s\n", pcap_out.c_str(), f.size(), workload.c_str());
    return 0;
  }
  double best        = 1e30;
  double best_end    = 0;  // the end of input of the best run
  uint64_t delivered = 0;
  bool complete      = true;  // every run delivered the whole payload
  std::vector<double> pass_s;
  for (int k = 0; k < repeat; ++k) {
    uint64_t d = 0;
#if defined(WARPATH_HAVE_LIBNIDS)
    const double t = engine == "libnids" ? run_libnids(f, d)
                     : engine == "floor"     ? run_floor(f, d)
                     : engine == "flowstream" ? run_flowstream(f, d)
                                              : run_warpath(f, d);
#else
    const double t = engine == "floor"        ? run_floor(f, d)
                     : engine == "flowstream" ? run_flowstream(f, d)
                                              : run_warpath(f, d);
#endif
    if (t < 0) return 1;
    if (t < best) best_end = g_end_s;
    best      = std::min(best, t);
    delivered = d;
    complete  = complete && d == f.payload;
    pass_s.push_back(t);
  }
  // The harness's row (bench/harness/report.hpp): libnids is the anchor; the rounds and their
  // pairing are run_stream_bench.sh's and stream_ratios.py's (one engine per process).
  bench::Row row;
  row.workload = workload;
  row.engine   = engine;
  row.anchor   = engine == "libnids";
  row.unit     = "packets";
  row.rate     = double(f.size()) / best;
  row.pass_s   = pass_s;
  row.with("packets", int64_t(f.size()))
      .with("payload_bytes", int64_t(f.payload))
      .with("delivered_bytes", int64_t(delivered))
      .with("seconds", best)
      .with("payload_gbps", double(f.payload) * 8 / best / 1e9)
      .with("end_ns_per_packet", best_end * 1e9 / double(f.size()));
  if (json)
    std::printf("%s\n", bench::row_line(row).c_str());
  else
    std::printf(
        "%-8s %-8s %9zu packets %7.3f s  %7.3f Mpps  %7.2f Gbit/s payload  %7.1f ns/pkt%s\n",
        engine.c_str(), workload.c_str(), f.size(), best, row.rate / 1e6,
        double(f.payload) * 8 / best / 1e9, row.ns_per_item(),
        complete ? "" : "  (INCOMPLETE: bytes differ)");
  return complete ? 0 : 1;
}
