// warpath-pattern-bench: every available pattern engine (but the oracle) on the shared pattern
// sets, block mode over 1,500-byte blocks (a full-size payload) of a corpus, beside Vectorscan
// (cpu.hs) in the same run on the same core: Gbit/s (best of --repeat passes), matches (which
// must agree between engines), compile seconds and database bytes. Markdown on stdout, JSON
// with --json FILE.
//
//   warpath-pattern-bench [--data DIR] [--repeat N] [--json FILE]
//
// Sets: ET Open's fast-pattern literals (23,609 enabled), Snort community's (3,884), l7-filter
// (146 regexes, caseless), ANMLZoo PowerEN and dotstar (those the engine compiles), ET Open's
// pcre options (the enabled ones an engine compiles). Corpora: the ANMLZoo trace of each
// ANMLZoo set; for the others the dotstar trace (random-looking text) and the l7-filter
// samples (real protocol payloads, repeated to 1 MB). A pattern an engine rejects is left out
// of that engine's database (the row says how many it took), and Vectorscan is then measured on
// exactly those patterns too: the ratio is always on the same patterns.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>
#include <vector>

#include "warpath/pattern/pattern.hpp"

using namespace warpath;
using namespace warpath::pattern;

namespace {

std::string read_all(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
}

struct Row {
  std::string set, corpus, engine;
  size_t taken = 0, total = 0;
  double compile_s = 0, gbps = 0;
  size_t db_bytes = 0, matches = 0;
};

}  // namespace

int main(int argc, char** argv) {
  const char* env = std::getenv("WARPATH_DATA");
  std::string data = env ? env : "../shared/data", json;
  int repeat = 5;
  for (int i = 1; i + 1 < argc; i += 2) {
    const std::string a = argv[i];
    if (a == "--data") data = argv[i + 1];
    else if (a == "--repeat") repeat = std::max(1, std::atoi(argv[i + 1]));
    else if (a == "--json") json = argv[i + 1];
  }
  const std::string P = data + "/patterns/";
  std::string l7;
  for (const auto& e : std::filesystem::directory_iterator(P + "l7-filter/samples")) l7 += read_all(e.path());
  std::string l7_corpus;
  while (!l7.empty() && l7_corpus.size() < (1u << 20)) l7_corpus += l7;
  const std::string dotstar = read_all(P + "anmlzoo/dotstar/backdoor_1MB.input");
  const std::string poweren = read_all(P + "anmlzoo/poweren/poweren_1MB.input");
  struct Set {
    const char *name, *file;
    std::vector<std::pair<const char*, const std::string*>> corpora;
  };
  const Set sets[] = {
      {"et-open literals", "et-open/derived/et-open.mpm-literals.tsv", {{"dotstar trace", &dotstar}, {"l7 samples", &l7_corpus}}},
      {"snort literals", "snort-community/derived/snort-community.mpm-literals.tsv", {{"dotstar trace", &dotstar}, {"l7 samples", &l7_corpus}}},
      {"l7-filter", "l7-filter/l7-patterns.tsv", {{"l7 samples", &l7_corpus}}},
      {"anmlzoo poweren", "anmlzoo/poweren/complx_01000_00123.1chip.regex", {{"poweren trace", &poweren}}},
      {"anmlzoo dotstar", "anmlzoo/dotstar/backdoor_dotstar.1chip.regex", {{"dotstar trace", &dotstar}}},
      {"et-open pcre", "et-open/derived/et-open.pcre.tsv", {{"l7 samples", &l7_corpus}}},
  };
  std::vector<Row> rows;
  for (const Set& set : sets) {
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
      std::vector<Pattern> taken;
      for (const Pattern& p : *ps)
        if (engine_supports(e.id, p).is_ok()) taken.push_back(p);
      if (taken.empty()) continue;
      if (e.id != "cpu.hs" && hs_taken > 0 && taken.size() != hs_taken) {
        std::vector<Pattern> both;
        for (const Pattern& p : taken)
          if (engine_supports("cpu.hs", p).is_ok()) both.push_back(p);
        runs.emplace_back(std::string(e.id), both);
        runs.emplace_back("cpu.hs", std::move(both));
      } else {
        runs.emplace_back(std::string(e.id), std::move(taken));
      }
    }
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
        double best = 1e30;
        size_t matches = 0;
        for (int r = 0; r < repeat; ++r) {
          const auto t0 = std::chrono::steady_clock::now();
          if (Status s = (*m)->scan_blocks(blocks.data(), uint32_t(blocks.size()), out.data()); !s.is_ok()) {
            std::fprintf(stderr, "warpath-pattern-bench: %s\n", s.message().c_str());
            return 1;
          }
          best = std::min(best, std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
        }
        for (const auto& o : out) matches += o.size();
        rows.push_back({set.name, cname, std::string(e.id), taken.size(), ps->size(), compile_s,
                        double(corpus->size()) * 8 / best / 1e9, (*m)->database_bytes(), matches});
      }
    }
  }
  std::printf("| set | corpus | engine | patterns | compile s | database | Gbit/s | vs cpu.hs | matches |\n");
  std::printf("|---|---|---|---:|---:|---:|---:|---:|---:|\n");
  for (const Row& r : rows) {
    double anchor = 0;  // Vectorscan on the same patterns
    for (const Row& a : rows)
      if (a.set == r.set && a.corpus == r.corpus && a.engine == "cpu.hs" && a.taken == r.taken) anchor = a.gbps;
    std::printf("| %s | %s | %s | %zu of %zu | %.2f | %.1f MB | %.2f | %s | %zu |\n", r.set.c_str(),
                r.corpus.c_str(), r.engine.c_str(), r.taken, r.total, r.compile_s, r.db_bytes / 1e6,
                r.gbps, anchor > 0 ? (std::to_string(r.gbps / anchor).substr(0, 4) + "x").c_str() : "-",
                r.matches);
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
                   "\"matches\": %zu}%s\n",
                   r.set.c_str(), r.corpus.c_str(), r.engine.c_str(), r.taken, r.total, r.compile_s,
                   r.db_bytes, r.gbps, r.matches, i + 1 < rows.size() ? "," : "");
    }
    std::fprintf(f, "]\n");
    std::fclose(f);
  }
  return 0;
}
