// warpath patterns: pattern sets and matching.
//   patterns check FILE...   how many patterns of each file every engine takes, and why not the rest
//   patterns scan            every match of a pattern set in a file (or a capture's payloads), one
//                            "ID END_OFFSET" line each, sorted by offset then id
#include <fmt/core.h>

#include <algorithm>
#include <chrono>
#include <fstream>
#include <map>
#include <memory>
#include <nlohmann/json.hpp>
#include <regex>

#include "commands.hpp"
#include "output_file.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::cli {
using pattern::Match;
using pattern::Pattern;

namespace {

struct CheckOptions {
  std::vector<std::string> files;
  std::vector<std::string> engines;
  bool list = false;
  std::string json;
};

struct ScanOptions {
  std::vector<std::string> pattern_files, expressions;
  std::string in, out, engine = "auto";
  uint64_t chunk = 0;  ///< stream mode: write the input in pieces of this many bytes
};

// "pattern 12 (f:3): a back-reference at offset 4" -> "a back-reference"
std::string reason_kind(const std::string& message) {
  std::string m = message;
  const size_t colon = m.find("): ");
  if (m.rfind("pattern ", 0) == 0 && colon != std::string::npos) m = m.substr(colon + 3);
  else if (m.rfind("pattern ", 0) == 0 && m.find(": ") != std::string::npos) m = m.substr(m.find(": ") + 2);
  static const std::regex offset(" at offset [0-9]+$| at index [0-9]+\\.?$");
  return std::regex_replace(m, offset, "");
}

Result<std::vector<Pattern>> load_patterns(const std::vector<std::string>& files,
                                           const std::vector<std::string>& expressions) {
  std::vector<Pattern> all;
  for (const auto& f : files) {
    auto ps = pattern::read_pattern_file(f);
    if (!ps.is_ok()) return ps.status();
    all.insert(all.end(), ps->begin(), ps->end());
  }
  for (size_t i = 0; i < expressions.size(); ++i) {
    auto p = pattern::parse_pattern_line(expressions[i], "-e " + std::to_string(i + 1));
    if (!p.is_ok()) return Status(p.status().code(), "-e '" + expressions[i] + "': " + p.status().message());
    all.push_back(std::move(*p));
  }
  if (all.empty()) return Status(Errc::kInvalidArgument, "no patterns (give --patterns FILE or -e ID:/REGEX/FLAGS)");
  return all;
}

int run_check(const CheckOptions& o) {
  std::vector<std::string> engines = o.engines;
  if (engines.empty())
    for (const EngineInfo& e : pattern::pattern_engines())
      if (e.available()) engines.emplace_back(e.id);
  nlohmann::json report = nlohmann::json::array();
  for (const std::string& file : o.files) {
    auto ps = pattern::read_pattern_file(file);
    if (!ps.is_ok()) return fail(ps.status());
    fmt::print("{}: {} patterns\n", file, ps->size());
    for (const std::string& engine : engines) {
      const auto t0 = std::chrono::steady_clock::now();
      std::map<std::string, uint64_t> reasons;
      std::vector<std::pair<uint32_t, std::string>> rejected;
      uint64_t ok = 0;
      for (const Pattern& p : *ps) {
        Status s = pattern::engine_supports(engine, p);
        if (s.code() == Errc::kNotFound) return fail(s);
        if (s.is_ok()) {
          ++ok;
          continue;
        }
        reasons[reason_kind(s.message())] += 1;
        rejected.emplace_back(p.id, s.message());
      }
      const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
      fmt::print("  {:<12} {:>7} of {} compile ({:.1f}%), {:.2f} s\n", engine, ok, ps->size(),
                 ps->empty() ? 100.0 : 100.0 * double(ok) / double(ps->size()), secs);
      std::vector<std::pair<uint64_t, std::string>> by_count;
      for (const auto& [why, n] : reasons) by_count.emplace_back(n, why);
      std::sort(by_count.rbegin(), by_count.rend());
      for (const auto& [n, why] : by_count) fmt::print("  {:>20} {}\n", n, printable(why));
      if (o.list)
        for (const auto& [id, why] : rejected) fmt::print("    {}\n", printable(why));
      nlohmann::json r = {{"file", file}, {"engine", engine}, {"patterns", ps->size()},
                          {"compile", ok}, {"seconds", secs}, {"reasons", nlohmann::json::object()}};
      for (const auto& [why, n] : reasons) r["reasons"][why] = n;
      report.push_back(std::move(r));
    }
  }
  if (!o.json.empty()) {
    OutputFile out(o.json);
    if (Status s = out.open(o.files); !s.is_ok()) return fail(s);
    if (Status s = out.guarded([&](std::FILE* f) { fmt::print(f, "{}\n", report.dump(2)); }); !s.is_ok())
      return fail(s);
    if (Status s = out.commit(); !s.is_ok()) return fail(s);
  }
  return 0;
}

Result<std::string> read_input(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return Status(Errc::kIoError, path + ": cannot open");
  std::string data((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  if (in.bad()) return Status(Errc::kIoError, path + ": read failed");
  return data;
}

int run_scan(const ScanOptions& o) {
  auto ps = load_patterns(o.pattern_files, o.expressions);
  if (!ps.is_ok()) return fail(ps.status());
  auto m = pattern::make_matcher(o.engine, *ps);
  if (!m.is_ok()) return fail(m.status());
  auto data = read_input(o.in);
  if (!data.is_ok()) return fail(data.status());
  const auto* bytes = reinterpret_cast<const uint8_t*>(data->data());
  std::vector<Match> matches;
  const auto t0 = std::chrono::steady_clock::now();
  if (o.chunk == 0) {
    if (Status s = (*m)->scan(bytes, data->size(), matches); !s.is_ok()) return fail(s);
  } else {
    auto st = (*m)->open_stream();
    if (!st.is_ok()) return fail(st.status());
    for (size_t off = 0; off < data->size(); off += o.chunk)
      if (Status s = (*st)->write(bytes + off, std::min<size_t>(o.chunk, data->size() - off), matches); !s.is_ok())
        return fail(s);
    if (Status s = (*st)->close(matches); !s.is_ok()) return fail(s);
    // Sorted over the whole stream, and a match reported twice (Vectorscan may report a
    // multi-line $ match again at close) listed once.
    std::sort(matches.begin(), matches.end());
    matches.erase(std::unique(matches.begin(), matches.end()), matches.end());
  }
  const double secs = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  OutputFile out(o.out);
  std::vector<std::string> inputs = o.pattern_files;
  inputs.push_back(o.in);
  if (Status s = out.open(inputs); !s.is_ok()) return fail(s);
  if (Status s = out.guarded([&](std::FILE* f) {
        for (const Match& x : matches) fmt::print(f, "{} {}\n", x.id, x.end);
      });
      !s.is_ok())
    return fail(s);
  if (Status s = out.commit(); !s.is_ok()) return fail(s);
  fmt::print(stderr, "{}: {} patterns, {} bytes, {} matches by {} in {:.3f} s ({:.2f} Gbit/s)\n", o.in,
             ps->size(), data->size(), matches.size(), (*m)->id(), secs,
             secs > 0 ? double(data->size()) * 8 / secs / 1e9 : 0.0);
  return 0;
}

}  // namespace

void add_patterns(CLI::App& app, Runner& run) {
  auto* cmd = app.add_subcommand("patterns", "Pattern sets: check what engines take, scan data");
  cmd->require_subcommand(1);

  auto c      = std::make_shared<CheckOptions>();
  auto* check = cmd->add_subcommand("check", "How many patterns of each file every engine compiles, and why not the rest");
  check->add_option("files", c->files, "Pattern files (ID:/REGEX/FLAGS, one regex per line, or the shared data's tables)")
      ->required();
  check->add_option("--engine", c->engines, "Only this engine (repeatable; default: every available one)")
      ->allow_extra_args(false);
  check->add_flag("--list", c->list, "Print every rejected pattern with its reason");
  check->add_option("--json", c->json, "Write the counts as JSON to this file");
  check->callback([c, &run] { run = [c] { return run_check(*c); }; });

  auto s     = std::make_shared<ScanOptions>();
  auto* scan = cmd->add_subcommand("scan", "Every match of a pattern set in a file: one 'ID END_OFFSET' line per match");
  scan->add_option("--patterns", s->pattern_files, "Pattern file (repeatable)")
      ->allow_extra_args(false);
  scan->add_option("-e,--expression", s->expressions, "A pattern as ID:/REGEX/FLAGS (repeatable)")
      ->allow_extra_args(false);
  scan->add_option("--in", s->in, "The data to scan (any file, read as bytes)")->required();
  scan->add_option("--out", s->out, "Where the matches go (default: standard output)");
  scan->add_option("--engine", s->engine, "Engine: auto, cpu, gpu, ref, or an id of warpath info (ref.pattern, cpu.hs, cpu.ac, cpu.dfa, cpu.pcre2, cuda.ac, cuda.dfa, ...), validate:<engine>");
  scan->add_option("--stream", s->chunk, "Scan as a stream written in pieces of this many bytes (0: one block)");
  scan->footer("END_OFFSET is the offset just past the match's last byte (Hyperscan's 'to'); every "
               "match is listed, overlapping ones too, sorted by offset, then id.");
  scan->callback([s, &run] { run = [s] { return run_scan(*s); }; });
}

}  // namespace warpath::cli
