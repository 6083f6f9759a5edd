// warpath-pattern-bench: every available pattern engine (but the oracle) on the shared pattern
// sets, block mode over 1,500-byte blocks (a full-size payload) of a corpus, beside Vectorscan
// (cpu.hs) in the same run on the same core: Gbit/s (best of --repeat passes), matches (which
// must agree between engines), compile seconds and database bytes. Markdown on stdout, JSON
// with --json FILE.
//
//   warpath-pattern-bench [--data DIR] [--repeat N] [--engines ID,ID] [--json FILE]
//
// Sets: ET Open's fast-pattern literals (23,609 enabled), Snort community's (3,884), l7-filter
// (146 regexes, caseless), ANMLZoo PowerEN and dotstar (those the engine compiles), ET Open's
// pcre options (the enabled ones an engine compiles). Corpora: the ANMLZoo trace of each
// ANMLZoo set; for the others the dotstar trace (random-looking text), the l7-filter samples
// (real protocol payloads, repeated to 1 MB) and every TCP and UDP payload of Suricata's test
// captures (../shared/data/suricata-verify). A pattern an engine rejects is left out
// of that engine's database (the row says how many it took), and Vectorscan is then measured on
// exactly those patterns too: the ratio is always on the same patterns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "pattern/engines.hpp"
#include "warpath/io/pcap_file.hpp"
#include "warpath/core/exec.hpp"
#include "warpath/packet/parser.hpp"
#include "warpath/stream/stream.hpp"
#include "warpath/pattern/pattern.hpp"
#if defined(WARPATH_HAVE_HS)
#include <hs/hs.h>
#endif

using namespace warpath;
using namespace warpath::pattern;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

// Every TCP and UDP payload of the captures under `dir` (Suricata's test captures: HTTP, TLS,
// DNS, SMB, FTP, ... as real stacks sent them), in file order.
std::string pcap_payloads(const std::string& dir) {
  std::vector<std::string> files;
  for (const auto& e : std::filesystem::recursive_directory_iterator(dir))
    if (e.path().extension() == ".pcap") files.push_back(e.path());
  std::sort(files.begin(), files.end());
  auto parser = packet::make_parser("cpu.parse");
  auto batch  = packet::PacketBatch::create(256);
  if (!parser.is_ok() || !batch.is_ok()) return {};
  std::string out;
  std::vector<packet::PacketInfo> infos(256);
  ExecContext ctx;
  for (const std::string& f : files) {
    auto reader = io::PcapReader::open(f);
    if (!reader.is_ok()) continue;
    for (;;) {
      batch->clear();
      auto n = reader->read(*batch);
      if (!n.is_ok() || *n == 0) break;
      const packet::BatchView v = batch->view();
      if (!(*parser)->parse(v, {infos.data(), *n}, ctx).is_ok()) break;
      for (uint32_t i = 0; i < *n; ++i) {
        const uint8_t* data = nullptr;
        uint32_t len        = 0;
        if (stream::payload_of(infos[i], v.data(i), v.metas[i].caplen, data, len))
          out.append(reinterpret_cast<const char*>(data), len);
      }
    }
  }
  return out;
}

struct Row {
  std::string set, corpus, engine;
  size_t taken = 0, total = 0;
  double compile_s = 0, gbps = 0;
  size_t db_bytes = 0, matches = 0;
  double paired = 0;  ///< cpu.hs: median of (anchor storing / cpu.hs) over alternated passes
};

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("WARPATH_DATA");
  std::string data = env ? env : "../shared/data", json;
  int repeat = 5;
  std::string only;       // --engines a,b: only these engines (and the raw anchor)
  std::string only_sets;  // --sets "a,b": only these pattern sets (names as in the table)
  const char* usage =
      "usage: warpath-pattern-bench [--engines ID,ID] [--sets NAME,NAME] [--repeat N] [--data DIR] "
      "[--json FILE]\n  sets: et-open literals, snort literals, l7-filter, anmlzoo poweren, "
      "anmlzoo dotstar, et-open pcre\n";
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(usage, stdout);
      return 0;
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "warpath-pattern-bench: %s needs a value\n%s", a.c_str(), usage);
      return 2;
    }
    if (a == "--engines") only = "," + std::string(argv[i + 1]) + ",";
    else if (a == "--sets") only_sets = "," + std::string(argv[i + 1]) + ",";
    else if (a == "--data") data = argv[i + 1];
    else if (a == "--repeat") repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--json") json = argv[i + 1];
    else {
      std::fprintf(stderr, "warpath-pattern-bench: unknown option %s\n%s", a.c_str(), usage);
      return 2;
    }
  }
  const std::string P = data + "/patterns/";
  std::string l7;
  for (const auto& e : std::filesystem::directory_iterator(P + "l7-filter/samples")) l7 += read_all(e.path());
  std::string l7_corpus;
  while (!l7.empty() && l7_corpus.size() < (1u << 20)) l7_corpus += l7;
  const std::string dotstar = read_all(P + "anmlzoo/dotstar/backdoor_1MB.input");
  const std::string pcaps   = pcap_payloads(data + "/suricata-verify");
  std::fprintf(stderr, "warpath-pattern-bench: %zu bytes of TCP and UDP payloads from %s/suricata-verify\n",
               pcaps.size(), data.c_str());
  const std::string poweren = read_all(P + "anmlzoo/poweren/poweren_1MB.input");
  struct Set {
    const char *name, *file;
    std::vector<std::pair<const char*, const std::string*>> corpora;
  };
  const Set sets[] = {
      {"et-open literals", "et-open/derived/et-open.mpm-literals.tsv", {{"dotstar trace", &dotstar}, {"l7 samples", &l7_corpus}, {"pcap payloads", &pcaps}}},
      {"snort literals", "snort-community/derived/snort-community.mpm-literals.tsv", {{"l7 samples", &l7_corpus}, {"pcap payloads", &pcaps}}},
      {"l7-filter", "l7-filter/l7-patterns.tsv", {{"l7 samples", &l7_corpus}, {"pcap payloads", &pcaps}}},
      {"anmlzoo poweren", "anmlzoo/poweren/complx_01000_00123.1chip.regex", {{"poweren trace", &poweren}}},
      {"anmlzoo dotstar", "anmlzoo/dotstar/backdoor_dotstar.1chip.regex", {{"dotstar trace", &dotstar}}},
      {"et-open pcre", "et-open/derived/et-open.pcre.tsv", {{"l7 samples", &l7_corpus}, {"pcap payloads", &pcaps}}},
  };
  if (!only_sets.empty())
    for (size_t at = 1; at < only_sets.size();) {
      const size_t comma = only_sets.find(',', at);
      const std::string name = only_sets.substr(at, comma - at);
      bool known = false;
      for (const Set& set : sets) known |= name == set.name;
      if (!known) {
        std::fprintf(stderr, "warpath-pattern-bench: no pattern set '%s'\n%s", name.c_str(), usage);
        return 2;
      }
      at = comma + 1;
    }
  std::vector<Row> rows;
  for (const Set& set : sets) {
    if (!only_sets.empty() && only_sets.find("," + std::string(set.name) + ",") == std::string::npos)
      continue;
    auto ps = read_pattern_file(P + set.file);
    if (!ps.is_ok()) {
      std::fprintf(stderr, "warpath-pattern-bench: %s\n", ps.status().message().c_str());
      return 1;
    }
    // Each engine on what it takes; an engine that takes fewer than Vectorscan is also
    // compared with Vectorscan on exactly its patterns ("cpu.hs on the same").
    std::vector<std::pair<std::string, std::vector<Pattern>>> runs;
    size_t hs_taken = 0;
    for (const EngineInfo& e : pattern_engines())
      if (e.id == "cpu.hs" && e.available())
        for (const Pattern& p : *ps) hs_taken += engine_supports("cpu.hs", p).is_ok();
    for (const EngineInfo& e : pattern_engines()) {
      // Not measured: the oracle, and cpu.pcre2 (exhaustive enumeration by backtracking, for
      // confirming short buffers: megabytes of scanning hit its match limit).
      if (!e.available() || e.id == "ref.pattern" || e.id == "cpu.pcre2") continue;
      if (!only.empty() && only.find("," + std::string(e.id) + ",") == std::string::npos) continue;
      std::vector<Pattern> taken;
      for (const Pattern& p : *ps)
        if (engine_supports(e.id, p).is_ok()) taken.push_back(p);
      if (taken.empty()) continue;
      if (e.id != "cpu.hs" && hs_taken > 0 && taken.size() != hs_taken) {
        std::vector<Pattern> both;
        for (const Pattern& p : taken)
          if (engine_supports("cpu.hs", p).is_ok()) both.push_back(p);
        const bool new_subset = both.size() != hs_taken;
        runs.emplace_back(std::string(e.id), both);
        if (new_subset) runs.emplace_back("cpu.hs", std::move(both));
      } else {
        runs.emplace_back(std::string(e.id), std::move(taken));
      }
    }
#if defined(WARPATH_HAVE_HS)
    // The anchor itself: Vectorscan's hs_scan on the database cpu.hs builds, no warpath code
    // between (cpu.hs must stay within 5% of it). Two ways to use Vectorscan alone: count
    // matches (the least a caller can do), or keep each block's (id, to) pairs, as a batch's
    // caller needs them (what scan_blocks returns), in vectors reused from pass to pass.
    struct Anchor {
      hs_database_t* db     = nullptr;
      hs_scratch_t* scratch = nullptr;
      size_t db_bytes       = 0;
      ~Anchor() {
        if (scratch) hs_free_scratch(scratch);
        if (db) hs_free_database(db);
      }
      // One pass over the corpus in 1,500-byte blocks: seconds; `count` gets the matches.
      double pass(const std::string& corpus, bool store, size_t& count) {
        struct Sink {
          size_t count = 0;
          std::vector<std::pair<unsigned, unsigned long long>>* kept = nullptr;
        } sink;
        auto counting = [](unsigned, unsigned long long, unsigned long long, unsigned, void* ctx) {
          ++static_cast<Sink*>(ctx)->count;
          return 0;
        };
        auto keep = [](unsigned id, unsigned long long, unsigned long long to, unsigned, void* ctx) {
          auto* s = static_cast<Sink*>(ctx);
          s->kept->emplace_back(id, to);
          ++s->count;
          return 0;
        };
        per_block.resize(corpus.size() / 1500 + 1);
        const auto t0 = std::chrono::steady_clock::now();
        for (size_t off = 0; off < corpus.size(); off += 1500) {
          sink.kept = &per_block[off / 1500];
          sink.kept->clear();
          hs_scan(db, corpus.data() + off, unsigned(std::min<size_t>(1500, corpus.size() - off)), 0, scratch,
                  store ? +keep : +counting, &sink);
        }
        count = sink.count;
        return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      }
      std::vector<std::vector<std::pair<unsigned, unsigned long long>>> per_block;
    };
    Anchor anchor;
    if (hs_taken > 0) {
      std::vector<Pattern> taken;
      for (const Pattern& p : *ps)
        if (engine_supports("cpu.hs", p).is_ok()) taken.push_back(p);
      auto db = detail::hs_block_database(taken);
      if (db.is_ok()) anchor.db = *db;
      if (anchor.db && hs_alloc_scratch(anchor.db, &anchor.scratch) == HS_SUCCESS) {
        hs_database_size(anchor.db, &anchor.db_bytes);
        for (const auto& [cname, corpus] : set.corpora)
          for (const bool store : {false, true}) {
            double best = 1e30;
            size_t count = 0;
            for (int r = 0; r < repeat; ++r) best = std::min(best, anchor.pass(*corpus, store, count));
            rows.push_back({set.name, cname, store ? "hs_scan, storing" : "hs_scan, counting", taken.size(),
                            ps->size(), 0, double(corpus->size()) * 8 / best / 1e9, anchor.db_bytes, count});
          }
      }
    }
#endif
    for (auto& [engine_id, taken] : runs) {
      const EngineInfo e{engine_id, "", 0, nullptr};
      const auto c0 = std::chrono::steady_clock::now();
      auto m = make_matcher(e.id, taken);
      const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
      if (!m.is_ok()) {
        std::fprintf(stderr, "warpath-pattern-bench: %s on %s: %s\n", std::string(e.id).c_str(), set.name,
                     m.status().message().c_str());
        continue;
      }
      for (const auto& [cname, corpus] : set.corpora) {
        const auto* bytes = reinterpret_cast<const uint8_t*>(corpus->data());
        std::vector<Block> blocks;
        for (size_t off = 0; off < corpus->size(); off += 1500)
          blocks.push_back({bytes + off, uint32_t(std::min<size_t>(1500, corpus->size() - off))});
        std::vector<std::vector<Match>> out(blocks.size());
        // cpu.hs on the anchor's own patterns is also timed in pairs with the anchor keeping its
        // matches (a pass of each, alternated): the median of the pairs' ratios is the 5% goal's
        // reading, which slow phases of the machine reach on both sides alike. It is timed as
        // scan_blocks (matches in (end, id) order) and as scan_any_order per block (the NIDS's
        // prefilter call: Vectorscan's order).
        bool paired = false;
#if defined(WARPATH_HAVE_HS)
        paired = e.id == "cpu.hs" && taken.size() == hs_taken && anchor.scratch;
#endif
        for (const bool any_order : {false, true}) {
          if (any_order && !paired) break;
          double best = 1e30;
          size_t matches = 0;
          std::vector<double> ratios;
          for (int r = 0; r < (paired ? 3 * repeat : repeat); ++r) {
            double anchor_s = 0;
#if defined(WARPATH_HAVE_HS)
            size_t anchor_count = 0;
            if (paired) anchor_s = anchor.pass(*corpus, true, anchor_count);
#endif
            const auto t0 = std::chrono::steady_clock::now();
            Status s;
            if (!any_order) {
              s = (*m)->scan_blocks(blocks.data(), uint32_t(blocks.size()), out.data());
            } else {
              for (size_t i = 0; i < blocks.size() && s.is_ok(); ++i) {
                out[i].clear();
                s = (*m)->scan_any_order(blocks[i].data, blocks[i].len, out[i]);
              }
            }
            if (!s.is_ok()) {
              std::fprintf(stderr, "warpath-pattern-bench: %s\n", s.message().c_str());
              return 1;
            }
            const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
            if (r < repeat) best = std::min(best, t);  // best of `repeat`, as the anchor's rows
            if (paired) ratios.push_back(anchor_s / t);
          }
          for (const auto& o : out) matches += o.size();
          double paired_ratio = 0;
          if (!ratios.empty()) {
            std::sort(ratios.begin(), ratios.end());
            paired_ratio = ratios[ratios.size() / 2];
          }
          rows.push_back({set.name, cname, std::string(e.id) + (any_order ? ", any order" : ""), taken.size(),
                          ps->size(), compile_s, double(corpus->size()) * 8 / best / 1e9, (*m)->database_bytes(),
                          matches, paired_ratio});
        }
      }
    }
  }
  std::printf("| set | corpus | engine | patterns | compile s | database | Gbit/s | vs cpu.hs | vs hs_scan counting | vs hs_scan storing | vs storing, paired | matches |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    double anchor = 0;  // Vectorscan on the same patterns
    for (const Row& a : rows)
      if (a.set == r.set && a.corpus == r.corpus && a.engine == "cpu.hs" && a.taken == r.taken) anchor = a.gbps;
    double raw = 0, stored = 0;  // Vectorscan alone, where this row's patterns are its patterns
    for (const Row& a : rows)
      if (a.set == r.set && a.corpus == r.corpus && a.taken == r.taken) {
        if (a.engine == "hs_scan, counting") raw = a.gbps;
        if (a.engine == "hs_scan, storing") stored = a.gbps;
      }
    auto ratio = [](double x, double y) {
      if (!(y > 0)) return std::string("-");
      char text[32];
      std::snprintf(text, sizeof text, "%.2fx", x / y);
      return std::string(text);
    };
    std::printf("| %s | %s | %s | %zu of %zu | %.2f | %.1f MB | %.2f | %s | %s | %s | %s | %zu |\n", r.set.c_str(),
                r.corpus.c_str(), r.engine.c_str(), r.taken, r.total, r.compile_s, r.db_bytes / 1e6,
                r.gbps, ratio(r.gbps, anchor).c_str(), ratio(r.gbps, raw).c_str(),
                ratio(r.gbps, stored).c_str(), ratio(r.paired, r.paired > 0 ? 1.0 : 0.0).c_str(), r.matches);
  }
  if (!json.empty()) {
    std::FILE* f = std::fopen(json.c_str(), "w");
    if (!f) return 1;
    std::fprintf(f, "[\n");
    for (size_t i = 0; i < rows.size(); ++i) {
      const Row& r = rows[i];
      std::fprintf(f,
                   "  {\"set\": \"%s\", \"corpus\": \"%s\", \"engine\": \"%s\", \"patterns\": %zu, "
                   "\"of\": %zu, \"compile_s\": %.3f, \"database_bytes\": %zu, \"gbps\": %.3f, "
                   "\"matches\": %zu, \"vs_storing_paired\": %.4f}%s\n",
                   r.set.c_str(), r.corpus.c_str(), r.engine.c_str(), r.taken, r.total, r.compile_s,
                   r.db_bytes, r.gbps, r.matches, r.paired, i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
