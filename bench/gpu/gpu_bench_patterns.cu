// bench/gpu/gpu_bench_patterns.cu: warpath-gpu-bench's pattern matching and NIDS rows (gpu_bench.cuh).
#include "gpu/gpu_bench.cuh"

namespace warpath::gpu_bench {

// Literal matching (cuda.ac) on ET Open's 23,609 fast-pattern literals over 1,500-byte blocks of
// the ANMLZoo dotstar trace (repeated): kernel-only on device-resident blocks (the issue's goal:
// >= 100 Gbit/s on an H100), and end to end (cuda.ac's scan_blocks: copy in, scan, copy out,
// sort), checked against cpu.ac on the largest batch. batch = blocks; mpps = M blocks/s
// (Gbit/s = mpps x 12).
Status run_pattern(const std::string& data, int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kBlock = 1500;
  // The literal table read here (warpath_io, with its .gz/.xz readers, is not in minimal builds).
  const std::string lit_path = data + "/patterns/et-open/derived/et-open.mpm-literals.tsv";
  std::string text;
  if (std::FILE* t = std::fopen(lit_path.c_str(), "rb")) {
    char buf[1 << 16];
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, t)) > 0;) text.append(buf, k);
    std::fclose(t);
  } else {
    return Status(Errc::kIoError, lit_path + ": cannot open");
  }
  WARPATH_ASSIGN_OR_RETURN(auto lits, pattern::parse_pattern_text(text, lit_path));
  // The automaton is cpu.ac's (the reference for the check below), built once.
  WARPATH_ASSIGN_OR_RETURN(auto cpu, pattern::make_matcher("cpu.ac", lits));
  const pattern::detail::AcImage& img = pattern::detail::ac_image_of(*cpu);
  std::FILE* f = std::fopen((data + "/patterns/anmlzoo/dotstar/backdoor_1MB.input").c_str(), "rb");
  if (!f) return Status(Errc::kIoError, "the ANMLZoo dotstar trace is missing under " + data);
  std::vector<uint8_t> trace(1 << 20);
  trace.resize(std::fread(trace.data(), 1, trace.size(), f));
  std::fclose(f);
  const uint32_t max_blocks = 1u << 16;  // 98 MB
  std::vector<uint8_t> bytes(size_t(max_blocks) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = trace[i % trace.size()];
  std::vector<pattern::detail::AcSlice> slices;
  for (uint32_t b = 0; b < max_blocks; ++b)
    for (uint32_t o = 0; o < kBlock; o += pattern::detail::kAcSlice)
      slices.push_back({b, uint64_t(b) * kBlock, uint64_t(b) * kBlock + o,
                        uint64_t(b) * kBlock + std::min(o + pattern::detail::kAcSlice, kBlock)});
  auto up = [](const void* src, size_t n, auto** dst) -> Status {
    WARPATH_CUDA_TRY(cudaMalloc(reinterpret_cast<void**>(dst), std::max<size_t>(n, 1)));
    if (n) WARPATH_CUDA_TRY(cudaMemcpy(*dst, src, n, cudaMemcpyHostToDevice));
    return Status::ok();
  };
  pattern::core::AcView v = img.view();
  uint8_t *d_classes = nullptr, *d_lits = nullptr, *d_bytes = nullptr;
  uint32_t *d_next = nullptr, *d_begin = nullptr, *d_link = nullptr;
  unsigned long long* d_count = nullptr;
  pattern::core::AcOutput* d_outputs        = nullptr;
  pattern::detail::AcSlice* d_slices        = nullptr;
  pattern::detail::DeviceMatch* d_matches   = nullptr;
  const uint32_t capacity                   = 1u << 24;
  WARPATH_TRY(up(img.classes, 256, &d_classes));
  WARPATH_TRY(up(img.next.data(), img.next.size() * 4, &d_next));
  WARPATH_TRY(up(img.out_begin.data(), img.out_begin.size() * 4, &d_begin));
  WARPATH_TRY(up(img.out_link.data(), img.out_link.size() * 4, &d_link));
  WARPATH_TRY(up(img.outputs.data(), img.outputs.size() * sizeof(pattern::core::AcOutput), &d_outputs));
  WARPATH_TRY(up(img.literals.data(), img.literals.size(), &d_lits));
  uint32_t *d_sbegin = nullptr, *d_snext = nullptr, *d_fail = nullptr;
  uint8_t* d_sclass  = nullptr;
  WARPATH_TRY(up(img.sparse_begin.data(), img.sparse_begin.size() * 4, &d_sbegin));
  WARPATH_TRY(up(img.sparse_class.data(), img.sparse_class.size(), &d_sclass));
  WARPATH_TRY(up(img.sparse_next.data(), img.sparse_next.size() * 4, &d_snext));
  WARPATH_TRY(up(img.fail.data(), img.fail.size() * 4, &d_fail));
  WARPATH_TRY(up(bytes.data(), bytes.size(), &d_bytes));
  WARPATH_TRY(up(slices.data(), slices.size() * sizeof(pattern::detail::AcSlice), &d_slices));
  WARPATH_CUDA_TRY(cudaMalloc(&d_matches, size_t(capacity) * sizeof(pattern::detail::DeviceMatch)));
  WARPATH_CUDA_TRY(cudaMalloc(&d_count, sizeof(unsigned long long)));
  v.classes = d_classes, v.next = d_next, v.out_begin = d_begin, v.out_link = d_link;
  v.outputs = d_outputs, v.literals = d_lits;
  v.sparse_begin = d_sbegin, v.sparse_class = d_sclass, v.sparse_next = d_snext, v.fail = d_fail;
  WARPATH_ASSIGN_OR_RETURN(auto gpu, pattern::make_matcher("cuda.ac", lits));
  std::vector<pattern::Block> blocks(max_blocks);
  for (uint32_t b = 0; b < max_blocks; ++b) blocks[b] = {bytes.data() + size_t(b) * kBlock, kBlock};
  std::vector<std::vector<pattern::Match>> out(max_blocks), want(max_blocks);
  const uint32_t per_block = (kBlock + pattern::detail::kAcSlice - 1) / pattern::detail::kAcSlice;
  for (uint32_t n = 64; n <= max_blocks; n *= 4) {
    WARPATH_ASSIGN_OR_RETURN(
        const float kernel_ms,
        time_kernel(
            repeat,
            [&]() -> Status {
              WARPATH_CUDA_TRY(cudaMemsetAsync(d_count, 0, sizeof(unsigned long long)));
              return pattern::detail::launch_ac_scan(v, d_bytes, d_slices, n * per_block, d_matches,
                                                     capacity, d_count, nullptr);
            },
            launches_for(n)));
    double best_e2e = 1e30;
    for (int r = 0; r < repeat; ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(gpu->scan_blocks(blocks.data(), n, out.data()));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"pattern.ac", n, kernel_ms * 1e3, n / (kernel_ms * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    if (n * 4 > max_blocks) {
      WARPATH_TRY(cpu->scan_blocks(blocks.data(), n, want.data()));
      for (uint32_t b = 0; b < n; ++b)
        if (out[b] != want[b])
          return Status(Errc::kInvalidArgument, "cuda.ac differs from cpu.ac on block " + std::to_string(b));
    }
  }
  for (void* p : {(void*)d_classes, (void*)d_lits, (void*)d_bytes, (void*)d_next, (void*)d_begin,
                  (void*)d_link, (void*)d_count, (void*)d_outputs, (void*)d_slices, (void*)d_matches,
                  (void*)d_sbegin, (void*)d_sclass, (void*)d_snext, (void*)d_fail})
    cudaFree(p);
  return Status::ok();
}

#if defined(WARPATH_HAVE_NIDS)
// A whole file (warpath_io, with its readers, is not in minimal builds).
Result<std::string> read_whole(const std::string& path) {
  std::FILE* f = std::fopen(path.c_str(), "rb");
  if (!f) return Status(Errc::kIoError, path + ": cannot open");
  std::string text;
  char buf[1 << 16];
  for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) text.append(buf, k);
  std::fclose(f);
  return text;
}

// cuda.nids's opportunistic offload threshold (WARPATH_NIDS_OFFLOAD_MIN_BYTES) for a scope:
// "0" gives the device's own rows (every scan on the GPU); null restores what the process was
// started with (the default threshold when unset).
class OffloadThreshold {
 public:
  explicit OffloadThreshold(const char* value) {
    if (const char* v = std::getenv(kVar)) had_ = true, saved_ = v;
    if (value) ::setenv(kVar, value, 1);
  }
  ~OffloadThreshold() {
    if (had_)
      ::setenv(kVar, saved_.c_str(), 1);
    else
      ::unsetenv(kVar);
  }
  OffloadThreshold(const OffloadThreshold&)            = delete;
  OffloadThreshold& operator=(const OffloadThreshold&) = delete;

 private:
  static constexpr const char* kVar = "WARPATH_NIDS_OFFLOAD_MIN_BYTES";
  bool had_                         = false;
  std::string saved_;
};

// Detection (cuda.nids beside cpu.nids) with ET Open's rules on units of the ANMLZoo dotstar
// trace to port 80 of established flows: 1,500-byte packet payloads, one flow each, and
// (".stream" rows) 256-byte stream chunks of 1,024 flows after their lookback: cpu.nids
// inspects unit by unit (its prefilter: cpu.ac in this minimal build, Vectorscan in full ones),
// cuda.nids a batch per inspect_batch call (a cuda.ac launch per rule group, candidates
// evaluated on the CPU). End to end only: batch = units; mpps = M units/s (Gbit/s = mpps x 12
// for packets, x 2.048 for stream chunks' new bytes).
// Checked first: both give the same hits on the largest batch (ET Open and 256 rules cut from
// the trace, so that something matches).
Status run_nids(const std::string& data, int repeat, std::vector<Row>& rows) {
  const OffloadThreshold all_on_gpu("0");  // the device's rows: no CPU fallback
  constexpr uint32_t kBlock = 1500;
  const std::string dir     = data + "/patterns/et-open/rules";
  WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules({dir}, nids::Vars{}, read_whole));
  WARPATH_ASSIGN_OR_RETURN(const std::string trace,
                           read_whole(data + "/patterns/anmlzoo/dotstar/backdoor_1MB.input"));
  if (trace.size() < (1u << 19))
    return Status(Errc::kIoError, "the ANMLZoo dotstar trace is too short");
  // ET Open's rules rarely match these bytes: 256 rules with 8-byte contents cut from the trace
  // make the check below compare hits, not only empty answers.
  std::string cut;
  for (uint32_t r = 0; r < 256; ++r) {
    char hex[4];
    cut += "alert tcp any any -> any any (msg:\"cut\"; content:\"|";
    for (uint32_t k = 0; k < 8; ++k) {
      std::snprintf(hex, sizeof hex, "%02x ", uint8_t(trace[size_t(r) * 2039 + 100 + k]));
      cut += hex;
    }
    cut += "|\"; sid:" + std::to_string(9200000 + r) + ";)\n";
  }
  nids::add_rules_text(set, cut, "cut.rules", nids::Vars{});
  WARPATH_ASSIGN_OR_RETURN(auto image, nids::compile_rules(set));
  const uint32_t max_units = 1u << 14;  // 24 MB
  std::vector<uint8_t> bytes(size_t(max_units) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(trace[i % trace.size()]);
  static const uint8_t kClient[4] = {10, 0, 0, 1}, kServer[4] = {192, 0, 2, 80};
  // Packet units: 1,500-byte payloads, one flow each. Stream units: 1,024 flows' streams in
  // 256-byte chunks, the flows interleaved (unit i is flow i % 1,024's chunk i / 1,024), each
  // buffer its chunk after up to 4 KiB of the stream before it, as the inspector gives them.
  constexpr uint32_t kFlows = 1024, kChunk = 256;
  std::vector<nids::Unit> packets(max_units), streams(max_units);
  for (uint32_t i = 0; i < max_units; ++i) {
    for (nids::Unit* u : {&packets[i], &streams[i]}) {
      u->pkt.proto       = 6;
      u->pkt.src         = kClient;
      u->pkt.dst         = kServer;
      u->pkt.dport       = 80;
      u->pkt.tcp_flags   = 0x18;
      u->pkt.has_flow    = true;
      u->pkt.established = true;
      u->packet          = i + 1;
    }
    nids::Unit& p         = packets[i];
    p.pkt.sport           = uint16_t(1024 + i % 60000);
    p.pkt.dsize           = kBlock;
    p.data                = bytes.data() + size_t(i) * kBlock;
    p.len                 = kBlock;
    p.flow                = i + 1;
    nids::Unit& s         = streams[i];
    const uint32_t flow   = i % kFlows;
    const uint64_t end    = uint64_t(i / kFlows + 1) * kChunk;  // in the flow's stream
    const uint64_t start  = end - kChunk - std::min<uint64_t>(end - kChunk, nids::kStreamLookback);
    const uint8_t* stream = bytes.data() + size_t(flow) * (bytes.size() / kFlows);
    s.pkt.sport           = uint16_t(1024 + flow);
    s.pkt.dsize           = kChunk;
    s.buffer              = nids::Buffer::kStream;
    s.data                = stream + start;
    s.len                 = uint32_t(end - start);
    s.new_from            = uint32_t(end - kChunk - start);
    s.at_stream_start     = start == 0;
    s.flow                = flow + 1;
  }
  for (const std::vector<nids::Unit>* units : {&packets, &streams}) {
    const std::string suffix = units == &streams ? ".stream" : "";
    auto hits_of             = [&](nids::Detector& d, uint32_t n, bool batch,
                       std::vector<std::vector<nids::Hit>>& hits) -> Status {
      for (uint32_t i = 0; i < n; ++i) hits[i].clear();
      if (batch) return d.inspect_batch(units->data(), n, hits.data());
      for (uint32_t i = 0; i < n; ++i) WARPATH_TRY(d.inspect((*units)[i], hits[i]));
      return Status::ok();
    };
    std::vector<std::vector<nids::Hit>> got(max_units), want(max_units);
    {
      WARPATH_ASSIGN_OR_RETURN(auto cpu, nids::make_detector("cpu.nids", image));
      WARPATH_ASSIGN_OR_RETURN(auto gpu, nids::make_detector("cuda.nids", image));
      WARPATH_TRY(hits_of(*cpu, max_units, false, want));
      WARPATH_TRY(hits_of(*gpu, max_units, true, got));
      size_t hits = 0;
      for (const auto& w : want) hits += w.size();
      if (hits == 0)
        return Status(Errc::kInvalidArgument,
                      "no rule matched the " + (suffix.empty() ? std::string("packet") : "stream") +
                          " units: the check proves nothing");
      for (uint32_t i = 0; i < max_units; ++i)
        if (got[i] != want[i])
          return Status(Errc::kInvalidArgument,
                        "cuda.nids differs from cpu.nids on " +
                            (suffix.empty() ? std::string("packet") : "stream") + " unit " +
                            std::to_string(i));
    }
    for (const char* engine : {"cpu.nids", "cuda.nids"}) {
      const bool batch = std::string_view(engine) == "cuda.nids";
      for (uint32_t n = 64; n <= max_units; n *= 4) {
        double best = 1e30;
        for (int r = 0; r < std::min(repeat, 5); ++r) {
          // A fresh detector each run: flowbits and stream state from the one before do not count.
          WARPATH_ASSIGN_OR_RETURN(auto d, nids::make_detector(engine, image));
          const auto t0 = std::chrono::steady_clock::now();
          WARPATH_TRY(hits_of(*d, n, batch, got));
          best = std::min(
              best, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0)
                        .count());
        }
        rows.push_back({std::string("nids.") + (batch ? "cuda" : "cpu") + suffix, n, 0, 0,
                        best * 1e3, n / (best * 1e3)});
      }
    }
  }
  return Status::ok();
}

// The whole NIDS (`warpath nids`'s data path: parse, flows, reassembly, detection) with ET
// Open's rules and four that the traffic matches, on generated HTTP-like connections
// (bench/common/http_traffic.hpp: 1,448-byte and 200-byte response segments), cuda.nids
// (buffers gathered per call, one inspect_batch) beside cpu.nids, the frames handed to the
// inspector `batch` at a time. The alerts (packet, rule) of every row are checked against
// cpu.nids's at 256 first. End to end only: batch = frames per call; mpps = M frames/s.
Status run_nids_inspector(const std::string& data, std::vector<Row>& rows) {
  WARPATH_ASSIGN_OR_RETURN(nids::RuleSet set, nids::load_rules({data + "/patterns/et-open/rules"},
                                                               nids::Vars{}, read_whole));
  nids::add_rules_text(set,
                       "alert tcp any any -> any 80 (msg:\"pw\"; flow:to_server; "
                       "content:\"password \"; sid:9300001;)\n"
                       "alert tcp any 80 -> any any (msg:\"exe\"; flow:to_client; "
                       "content:\"file.exe \"; content:\"download \"; distance:0; sid:9300002;)\n"
                       "alert tcp any any -> any any (msg:\"sql\"; content:\"SELECT \"; "
                       "content:\"admin \"; within:40; sid:9300003;)\n"
                       "alert tcp any any -> any any (msg:\"js\"; content:\"function(a,b)\"; "
                       "pcre:\"/return a\\+b/\"; sid:9300004;)\n",
                       "matching.rules", nids::Vars{});
  WARPATH_ASSIGN_OR_RETURN(auto image, nids::compile_rules(set));
  const std::pair<const char*, bench::TrafficShape> workloads[] = {{"http", {400, 100, 20, 1448}},
                                                                   {"small", {800, 200, 10, 200}}};
  for (const auto& [name, shape] : workloads) {
    const bench::Frames frames = bench::build_http_traffic(shape, 1);
    auto run                   = [&](const std::string& engine, uint32_t batch_size,
                   std::vector<std::pair<uint64_t, uint32_t>>& alerts,
                   nids::DetectCounters* counters = nullptr) -> Result<double> {
      WARPATH_ASSIGN_OR_RETURN(
                            auto ins, nids::Inspector::make(image, bench::offline_inspector_config(engine)));
      WARPATH_ASSIGN_OR_RETURN(auto parser, packet::make_parser("cpu.parse"));
      WARPATH_ASSIGN_OR_RETURN(packet::PacketBatch b,
                                                 packet::PacketBatch::create(batch_size, 2048));
      std::vector<packet::PacketInfo> infos(batch_size);
      std::vector<nids::Alert> out;
      std::vector<nids::FlowEvent> ended;
      ExecContext ctx;
      alerts.clear();
      double seconds = 0;
      for (size_t next = 0; next < frames.size();) {
        b.clear();
        for (uint32_t k = 0; k < batch_size && next < frames.size(); ++k, ++next)
          b.append(frames.bytes.data() + frames.off[next], frames.len[next], frames.len[next],
                                     frames.ts[next], 0);
        const auto t0 = std::chrono::steady_clock::now();
        WARPATH_TRY(parser->parse(b.view(), {infos.data(), b.size()}, ctx));
        WARPATH_TRY(ins->process(b.view(), infos.data(), b.size(), out, ended));
        seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      const auto t0 = std::chrono::steady_clock::now();
      WARPATH_TRY(ins->finish(out, ended));
      seconds += std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      for (const nids::Alert& a : out) alerts.push_back({a.packet, a.rule});
      if (counters) *counters = ins->detect_counters();
      return seconds;
    };
    std::vector<std::pair<uint64_t, uint32_t>> want, got;
    WARPATH_TRY(run("cpu.nids", 256, want).status());
    if (want.empty())
      return Status(Errc::kInvalidArgument,
                    std::string(name) + ": no alert: the check proves nothing");
    // cuda.nids twice: every scan on the GPU, and opportunistic (a rule group's batch under
    // the threshold scanned on the CPU: the process's WARPATH_NIDS_OFFLOAD_MIN_BYTES, else
    // the default; threshold null); the share of scans each side took goes to stderr.
    struct Variant {
      const char* row;
      const char* engine;
      const char* threshold;
    };
    for (const Variant& x : {Variant{"cpu.", "cpu.nids", "0"}, Variant{"cuda.", "cuda.nids", "0"},
                             Variant{"cuda+cpu.", "cuda.nids", nullptr}})
      for (uint32_t batch : {64u, 256u, 1024u}) {
        const OffloadThreshold threshold(x.threshold);
        nids::DetectCounters split;
        WARPATH_ASSIGN_OR_RETURN(const double seconds, run(x.engine, batch, got, &split));
        if (!x.threshold)
          std::fprintf(
              stderr,
              "nids.inspect.%s%s at %u frames per call: %llu scans on the GPU, %llu on the CPU\n",
              x.row, name, batch, (unsigned long long)split.scans_offloaded,
              (unsigned long long)split.scans_on_cpu);
        if (got != want)
          return Status(Errc::kInvalidArgument,
                        std::string("nids.inspect.") + x.row + name + " at batch " +
                            std::to_string(batch) + ": " + std::to_string(got.size()) +
                            " alerts, cpu.nids " + std::to_string(want.size()));
        const double calls = double((frames.size() + batch - 1) / batch);
        rows.push_back({std::string("nids.inspect.") + x.row + name, batch, 0, 0,
                        seconds * 1e6 / calls, double(frames.size()) / seconds / 1e6});
      }
  }
  return Status::ok();
}
#endif

// Regex matching (cuda.dfa) on ANMLZoo PowerEN's 2,858 regexes (4,096-state DFA groups) over
// 1,500-byte blocks of its trace: kernel-only (a thread per block and group) and end to end
// (cuda.dfa's scan_blocks), checked against cpu.dfa at 1,024 blocks.
Status run_pattern_dfa(const std::string& data, int repeat, std::vector<Row>& rows) {
  constexpr uint32_t kBlock = 1500;
  const std::string set_path = data + "/patterns/anmlzoo/poweren/complx_01000_00123.1chip.regex";
  std::string text, trace;
  for (auto [path, into] : {std::pair{set_path, &text},
                            std::pair{data + "/patterns/anmlzoo/poweren/poweren_1MB.input", &trace}}) {
    std::FILE* f = std::fopen(path.c_str(), "rb");
    if (!f) return Status(Errc::kIoError, path + ": cannot open");
    char buf[1 << 16];
    for (size_t k; (k = std::fread(buf, 1, sizeof buf, f)) > 0;) into->append(buf, k);
    std::fclose(f);
  }
  WARPATH_ASSIGN_OR_RETURN(auto ps, pattern::parse_pattern_text(text, set_path));
  // The groups are cpu.dfa's (the reference for the check below), built once.
  WARPATH_ASSIGN_OR_RETURN(auto cpu, pattern::make_matcher("cpu.dfa", ps));
  const pattern::detail::DfaSet& set = pattern::detail::dfa_set_of(*cpu);
  const uint32_t groups = uint32_t(set.groups.size());
  const uint32_t max_blocks = 1u << 14;
  std::vector<uint8_t> bytes(size_t(max_blocks) * kBlock);
  for (size_t i = 0; i < bytes.size(); ++i) bytes[i] = uint8_t(trace[i % trace.size()]);
  std::vector<uint64_t> starts(max_blocks + 1);
  for (uint32_t b = 0; b <= max_blocks; ++b) starts[b] = uint64_t(b) * kBlock;
  std::vector<void*> owned;
  auto up = [&owned](const void* src, size_t n) -> Result<void*> {
    void* d = nullptr;
    WARPATH_CUDA_TRY(cudaMalloc(&d, std::max<size_t>(n, 4)));
    owned.push_back(d);
    // src null: an output buffer, allocated only (a copy from null fails: cudaErrorInvalidValue,
    // seen on the H200 run of 2026-11-26).
    if (n && src) WARPATH_CUDA_TRY(cudaMemcpy(d, src, n, cudaMemcpyHostToDevice));
    return d;
  };
  std::vector<pattern::core::DfaView> views;
  for (const auto& g : set.groups) {
    pattern::core::DfaView v = g.view();
    WARPATH_ASSIGN_OR_RETURN(void* c, up(g.classes, 256));
    WARPATH_ASSIGN_OR_RETURN(void* nx, up(g.next.data(), g.next.size() * 4));
    WARPATH_ASSIGN_OR_RETURN(void* ab, up(g.accept_begin.data(), g.accept_begin.size() * 4));
    WARPATH_ASSIGN_OR_RETURN(void* ac, up(g.accepts.data(), g.accepts.size() * 4));
    v.classes = static_cast<uint8_t*>(c), v.next = static_cast<uint32_t*>(nx);
    v.accept_begin = static_cast<uint32_t*>(ab), v.accepts = static_cast<uint32_t*>(ac);
    views.push_back(v);
  }
  WARPATH_ASSIGN_OR_RETURN(void* d_views, up(views.data(), views.size() * sizeof(pattern::core::DfaView)));
  WARPATH_ASSIGN_OR_RETURN(void* d_bytes, up(bytes.data(), bytes.size()));
  WARPATH_ASSIGN_OR_RETURN(void* d_starts, up(starts.data(), starts.size() * 8));
  const uint32_t capacity = 1u << 24;
  WARPATH_ASSIGN_OR_RETURN(void* d_matches, up(nullptr, size_t(capacity) * sizeof(pattern::detail::DeviceMatch)));
  WARPATH_ASSIGN_OR_RETURN(void* d_count, up(nullptr, 8));
  WARPATH_ASSIGN_OR_RETURN(auto gpu, pattern::make_matcher("cuda.dfa", ps));
  std::vector<pattern::Block> blocks(max_blocks);
  for (uint32_t b = 0; b < max_blocks; ++b) blocks[b] = {bytes.data() + size_t(b) * kBlock, kBlock};
  std::vector<std::vector<pattern::Match>> out(max_blocks), want(max_blocks);
  Status status;
  for (uint32_t n = 64; n <= max_blocks && status.is_ok(); n *= 4) {
    auto kernel = time_kernel(
        repeat,
        [&]() -> Status {
          WARPATH_CUDA_TRY(cudaMemsetAsync(d_count, 0, 8));
          return pattern::detail::launch_dfa_scan(
              static_cast<pattern::core::DfaView*>(d_views), groups, static_cast<uint8_t*>(d_bytes),
              static_cast<uint64_t*>(d_starts), n,
              static_cast<pattern::detail::DeviceMatch*>(d_matches), capacity,
              static_cast<unsigned long long*>(d_count), nullptr);
        },
        launches_for(n));
    if (!kernel.is_ok()) {
      (void)(status = kernel.status());
      break;
    }
    double best_e2e = 1e30;
    for (int r = 0; r < repeat && status.is_ok(); ++r) {
      const auto t0 = std::chrono::steady_clock::now();
      (void)(status = gpu->scan_blocks(blocks.data(), n, out.data()));
      best_e2e = std::min(best_e2e, std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    rows.push_back({"pattern.dfa", n, *kernel * 1e3, n / (*kernel * 1e3), best_e2e * 1e3, n / (best_e2e * 1e3)});
    // Checked at 1,024 blocks (1.5 MB): cpu.dfa runs every group over every byte, so the
    // largest batch's check alone took longer than the part's time on the GPU machine.
    if (status.is_ok() && n == 1024) {
      (void)(status = cpu->scan_blocks(blocks.data(), n, want.data()));
      for (uint32_t b = 0; b < n && status.is_ok(); ++b)
        if (out[b] != want[b])
          (void)(status = Status(Errc::kInvalidArgument, "cuda.dfa differs from cpu.dfa on block " + std::to_string(b)));
    }
  }
  for (void* p : owned) cudaFree(p);
  return status;
}

}  // namespace warpath::gpu_bench
