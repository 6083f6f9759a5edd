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
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "harness/report.hpp"
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

using bench::Row;

struct Options {
  std::string data, json;
  int repeat = 5;
  std::string only;       // --engines a,b: only these engines (and the raw anchor), ",a,b,"
  std::string only_sets;  // --sets "a,b": only these pattern sets (names as in the table)
};

const char* const kUsage =
    "usage: warpath-pattern-bench [--engines ID,ID] [--sets NAME,NAME] [--repeat N] [--data DIR] "
    "[--json FILE]\n  sets: et-open literals, snort literals, l7-filter, anmlzoo poweren, "
    "anmlzoo dotstar, et-open pcre\n";

/// The options; exits 2 (with the usage) on a bad one, 0 on --help.
Options parse_options(int argc, char** argv) {
  Options o;
  const char* env = std::getenv("WARPATH_DATA");
  o.data          = env ? env : "../shared/data";
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") {
      std::fputs(kUsage, stdout);
      std::exit(0);
    }
    if (i + 1 >= argc) {
      std::fprintf(stderr, "warpath-pattern-bench: %s needs a value\n%s", a.c_str(), kUsage);
      std::exit(2);
    }
    if (a == "--engines") o.only = "," + std::string(argv[i + 1]) + ",";
    else if (a == "--sets") o.only_sets = "," + std::string(argv[i + 1]) + ",";
    else if (a == "--data") o.data = argv[i + 1];
    else if (a == "--repeat") o.repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--json") o.json = argv[i + 1];
    else {
      std::fprintf(stderr, "warpath-pattern-bench: unknown option %s\n%s", a.c_str(), kUsage);
      std::exit(2);
    }
  }
  return o;
}

/// The corpora the sets are scanned over.
struct Corpora {
  std::string l7, dotstar, pcaps, poweren;
};

Corpora load_corpora(const std::string& data) {
  const std::string P = data + "/patterns/";
  Corpora c;
  std::string l7;
  for (const auto& e : std::filesystem::directory_iterator(P + "l7-filter/samples")) l7 += read_all(e.path());
  while (!l7.empty() && c.l7.size() < (1u << 20)) c.l7 += l7;
  c.dotstar = read_all(P + "anmlzoo/dotstar/backdoor_1MB.input");
  c.pcaps   = pcap_payloads(data + "/suricata-verify");
  std::fprintf(stderr, "warpath-pattern-bench: %zu bytes of TCP and UDP payloads from %s/suricata-verify\n",
               c.pcaps.size(), data.c_str());
  c.poweren = read_all(P + "anmlzoo/poweren/poweren_1MB.input");
  return c;
}

struct Set {
  const char *name, *file;
  std::vector<std::pair<const char*, const std::string*>> corpora;
};

std::vector<Set> pattern_sets(const Corpora& c) {
  return {
      {"et-open literals", "et-open/derived/et-open.mpm-literals.tsv", {{"dotstar trace", &c.dotstar}, {"l7 samples", &c.l7}, {"pcap payloads", &c.pcaps}}},
      {"snort literals", "snort-community/derived/snort-community.mpm-literals.tsv", {{"l7 samples", &c.l7}, {"pcap payloads", &c.pcaps}}},
      {"l7-filter", "l7-filter/l7-patterns.tsv", {{"l7 samples", &c.l7}, {"pcap payloads", &c.pcaps}}},
      {"anmlzoo poweren", "anmlzoo/poweren/complx_01000_00123.1chip.regex", {{"poweren trace", &c.poweren}}},
      {"anmlzoo dotstar", "anmlzoo/dotstar/backdoor_dotstar.1chip.regex", {{"dotstar trace", &c.dotstar}}},
      {"et-open pcre", "et-open/derived/et-open.pcre.tsv", {{"l7 samples", &c.l7}, {"pcap payloads", &c.pcaps}}},
  };
}

/// A measured row: the set on a corpus by one engine, taking `taken` of the set's `total`
/// patterns.
Row pattern_row(const Set& set, const char* corpus, const std::string& engine, bool anchor,
                size_t taken, size_t total, double bytes_per_s, double compile_s,
                size_t db_bytes, size_t matches) {
  Row r;
  r.workload = std::string(set.name) + " / " + corpus;
  r.engine   = engine;
  r.anchor   = anchor;
  r.unit     = "bytes";
  r.rate     = bytes_per_s;
  r.with("set", std::string(set.name))
      .with("corpus", std::string(corpus))
      .with("patterns", int64_t(taken))
      .with("of", int64_t(total))
      .with("compile_s", compile_s)
      .with("database_bytes", int64_t(db_bytes))
      .with("matches", int64_t(matches));
  return r;
}

int64_t int_field(const Row& r, const char* key) {
  const bench::Value* v = r.field(key);
  return v ? std::get<int64_t>(*v) : 0;
}

/// Each engine on what it takes; an engine that takes fewer than Vectorscan is also compared
/// with Vectorscan on exactly its patterns ("cpu.hs on the same").
std::vector<std::pair<std::string, std::vector<Pattern>>> engine_runs(
    const std::vector<Pattern>& ps, const std::string& only, size_t hs_taken) {
  std::vector<std::pair<std::string, std::vector<Pattern>>> runs;
  for (const EngineInfo& e : pattern_engines()) {
    // Not measured: the oracle, and cpu.pcre2 (exhaustive enumeration by backtracking, for
    // confirming short buffers: megabytes of scanning hit its match limit).
    if (!e.available() || e.id == "ref.pattern" || e.id == "cpu.pcre2") continue;
    if (!only.empty() && only.find("," + std::string(e.id) + ",") == std::string::npos) continue;
    std::vector<Pattern> taken;
    for (const Pattern& p : ps)
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
  return runs;
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
  std::vector<std::vector<std::pair<unsigned, unsigned long long>>> per_block;
  Anchor() = default;
  Anchor(const Anchor&) = delete;
  Anchor& operator=(const Anchor&) = delete;
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
    const auto scan = pattern::detail::hs_scan_entry();  // cpu.hs's entry point (hs_matcher.cpp)
    const auto t0   = std::chrono::steady_clock::now();
    for (size_t off = 0; off < corpus.size(); off += 1500) {
      sink.kept = &per_block[off / 1500];
      sink.kept->clear();
      scan(db, corpus.data() + off, unsigned(std::min<size_t>(1500, corpus.size() - off)), 0,
           scratch, store ? +keep : +counting, &sink);
    }
    count = sink.count;
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  }
};

/// Builds the anchor on Vectorscan's patterns of the set and adds its rows (counting and
/// storing, per corpus).
void anchor_rows(const Set& set, const std::vector<Pattern>& ps, int repeat, Anchor& anchor,
                 std::vector<Row>& rows) {
  std::vector<Pattern> taken;
  for (const Pattern& p : ps)
    if (engine_supports("cpu.hs", p).is_ok()) taken.push_back(p);
  auto db = detail::hs_block_database(taken);
  if (db.is_ok()) anchor.db = *db;
  if (!anchor.db || hs_alloc_scratch(anchor.db, &anchor.scratch) != HS_SUCCESS) return;
  hs_database_size(anchor.db, &anchor.db_bytes);
  for (const auto& [cname, corpus] : set.corpora)
    for (const bool store : {false, true}) {
      double best  = 1e30;
      size_t count = 0;
      for (int r = 0; r < repeat; ++r) best = std::min(best, anchor.pass(*corpus, store, count));
      rows.push_back(pattern_row(set, cname, store ? "hs_scan, storing" : "hs_scan, counting",
                                 true, taken.size(), ps.size(), double(corpus->size()) / best, 0,
                                 anchor.db_bytes, count));
    }
}
#else
struct Anchor {
  void* scratch = nullptr;
};
#endif

/// One engine on the set's corpora: scan_blocks (and, where it is cpu.hs on the anchor's own
/// patterns, also scan_any_order per block, the NIDS's prefilter call), timed alone and, where
/// paired, alternated with the anchor keeping its matches (a pass of each): the median of the
/// pairs' ratios is the 5% goal's reading, which slow phases of the machine reach on both
/// sides alike. False on a scan error.
bool engine_rows(const Set& set, const std::string& id, const std::vector<Pattern>& taken,
                 size_t total, size_t hs_taken, int repeat, Anchor& anchor,
                 std::vector<Row>& rows) {
  const auto c0 = std::chrono::steady_clock::now();
  auto m = make_matcher(id, taken);
  const double compile_s = std::chrono::duration<double>(std::chrono::steady_clock::now() - c0).count();
  if (!m.is_ok()) {
    std::fprintf(stderr, "warpath-pattern-bench: %s on %s: %s\n", id.c_str(), set.name,
                 m.status().message().c_str());
    return true;
  }
  const bool paired = id == "cpu.hs" && taken.size() == hs_taken && anchor.scratch;
  for (const auto& [cname, corpus] : set.corpora) {
    const auto* bytes = reinterpret_cast<const uint8_t*>(corpus->data());
    std::vector<Block> blocks;
    for (size_t off = 0; off < corpus->size(); off += 1500)
      blocks.push_back({bytes + off, uint32_t(std::min<size_t>(1500, corpus->size() - off))});
    std::vector<std::vector<Match>> out(blocks.size());
    for (const bool any_order : {false, true}) {
      if (any_order && !paired) break;
      double best = 1e30;
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
          return false;
        }
        const double t = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
        if (r < repeat) best = std::min(best, t);  // best of `repeat`, as the anchor's rows
        if (paired) ratios.push_back(anchor_s / t);
      }
      size_t matches = 0;
      for (const auto& o : out) matches += o.size();
      Row row = pattern_row(set, cname, id + (any_order ? ", any order" : ""), false,
                            taken.size(), total, double(corpus->size()) / best, compile_s,
                            (*m)->database_bytes(), matches);
      row.paired = bench::median(ratios);
      rows.push_back(std::move(row));
    }
  }
  return true;
}

/// Every row's ratios: to cpu.hs, to hs_scan counting and storing, each on the same patterns
/// of the same set and corpus (ratio = to storing, the anchor as a caller uses it).
void pattern_ratios(std::vector<Row>& rows) {
  for (Row& r : rows) {
    double hs = 0, raw = 0, stored = 0;
    for (const Row& a : rows) {
      if (a.workload != r.workload || int_field(a, "patterns") != int_field(r, "patterns")) continue;
      if (a.engine == "cpu.hs") hs = a.rate;
      if (a.engine == "hs_scan, counting") raw = a.rate;
      if (a.engine == "hs_scan, storing") stored = a.rate;
    }
    r.with("vs_cpu_hs", hs > 0 ? r.rate / hs : 0.0);
    r.with("vs_hs_counting", raw > 0 ? r.rate / raw : 0.0);
    r.ratio = stored > 0 ? r.rate / stored : 0;
  }
}

bench::Column times_column(const std::string& title, const std::string& key) {
  return {title, [key](const Row& r) {
            const bench::Value* v = r.field(key);
            return bench::times(v ? std::get<double>(*v) : 0.0);
          }};
}

void print_rows(const std::vector<Row>& rows) {
  auto text = [](const std::string& key) {
    return [key](const Row& r) { return std::get<std::string>(*r.field(key)); };
  };
  bench::print_table(
      stdout,
      {{"set", text("set"), true},
       {"corpus", text("corpus"), true},
       bench::engine_column(),
       {"patterns",
        [](const Row& r) {
          return std::to_string(int_field(r, "patterns")) + " of " +
                 std::to_string(int_field(r, "of"));
        }},
       bench::field_column("compile s", "compile_s"),
       {"database",
        [](const Row& r) {
          char t[32];
          std::snprintf(t, sizeof t, "%.1f MB", double(int_field(r, "database_bytes")) / 1e6);
          return std::string(t);
        }},
       bench::rate_column("Gbit/s", 8e-9, 2),
       times_column("vs cpu.hs", "vs_cpu_hs"),
       times_column("vs hs_scan counting", "vs_hs_counting"),
       bench::ratio_column("vs hs_scan storing"),
       bench::paired_column("vs storing, paired"),
       bench::field_column("matches", "matches")},
      rows);
}

}  // namespace

int main(int argc, char** argv) {
  const Options o     = parse_options(argc, argv);
  if (!bench::writable_or_say("warpath-pattern-bench", o.json))
    return 1;  // at once, not after the passes
  const Corpora c     = load_corpora(o.data);
  const auto sets     = pattern_sets(c);
  if (!o.only_sets.empty())
    for (size_t at = 1; at < o.only_sets.size();) {
      const size_t comma     = o.only_sets.find(',', at);
      const std::string name = o.only_sets.substr(at, comma - at);
      if (std::none_of(sets.begin(), sets.end(), [&](const Set& s) { return name == s.name; })) {
        std::fprintf(stderr, "warpath-pattern-bench: no pattern set '%s'\n%s", name.c_str(), kUsage);
        return 2;
      }
      at = comma + 1;
    }
  std::vector<Row> rows;
  for (const Set& set : sets) {
    if (!o.only_sets.empty() && o.only_sets.find("," + std::string(set.name) + ",") == std::string::npos)
      continue;
    auto ps = read_pattern_file(o.data + "/patterns/" + set.file);
    if (!ps.is_ok()) {
      std::fprintf(stderr, "warpath-pattern-bench: %s\n", ps.status().message().c_str());
      return 1;
    }
    std::fprintf(stderr, "warpath-pattern-bench: %s\n", set.name);
    size_t hs_taken = 0;
    for (const EngineInfo& e : pattern_engines())
      if (e.id == "cpu.hs" && e.available())
        for (const Pattern& p : *ps) hs_taken += engine_supports("cpu.hs", p).is_ok();
    Anchor anchor;
#if defined(WARPATH_HAVE_HS)
    if (hs_taken > 0) anchor_rows(set, *ps, o.repeat, anchor, rows);
#endif
    for (const auto& [id, taken] : engine_runs(*ps, o.only, hs_taken))
      if (!engine_rows(set, id, taken, ps->size(), hs_taken, o.repeat, anchor, rows)) return 1;
  }
  pattern_ratios(rows);
  print_rows(rows);
  if (!o.json.empty() &&
      !bench::write_results(o.json, bench::provenance("warpath-pattern-bench", argc, argv),
                            {{"repeat", int64_t(o.repeat)}, {"block_bytes", int64_t(1500)}}, {},
                            rows))
    return 1;
  return 0;
}
