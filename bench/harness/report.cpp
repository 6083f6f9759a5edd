// bench/harness/report.cpp: rows, ratios, the markdown table and the JSON result file.
#include "harness/report.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <cstring>
#include <ctime>
#include <fstream>
#include <map>

#include "warpath/core/cpu_features.hpp"
#include "warpath/core/json_text.hpp"
#include "warpath/core/version.hpp"

namespace warpath::bench {

const Value* Row::field(const std::string& key) const {
  for (const auto& [k, v] : extra)
    if (k == key) return &v;
  return nullptr;
}

double median(std::vector<double> v) {
  if (v.empty()) return 0;
  std::sort(v.begin(), v.end());
  const size_t h = v.size() / 2;
  return v.size() % 2 ? v[h] : (v[h - 1] + v[h]) / 2;
}

double paired_median(const std::vector<double>& anchor_s, const std::vector<double>& row_s) {
  std::vector<double> r;
  for (size_t k = 0; k < anchor_s.size() && k < row_s.size(); ++k)
    if (row_s[k] > 0) r.push_back(anchor_s[k] / row_s[k]);
  return median(std::move(r));
}

void ratios_to_best_anchor(std::vector<Row>& rows) {
  std::map<std::string, double> best;
  for (const Row& r : rows)
    if (r.anchor && r.skipped.empty()) best[r.workload] = std::max(best[r.workload], r.rate);
  for (Row& r : rows) {
    const auto it = best.find(r.workload);
    r.ratio = it != best.end() && it->second > 0 && r.rate > 0 ? r.rate / it->second : 0;
  }
}

void paired_to_best_anchor(std::vector<Row>& rows) {
  std::map<std::string, const Row*> best;
  for (const Row& r : rows)
    if (r.anchor && r.skipped.empty() && (!best[r.workload] || r.rate > best[r.workload]->rate))
      best[r.workload] = &r;
  for (Row& r : rows) {
    const auto it = best.find(r.workload);
    if (it == best.end() || !it->second || !r.skipped.empty()) continue;
    r.paired = paired_median(it->second->pass_s, r.pass_s);
  }
}

namespace {

std::string fixed(double v, int decimals) {
  char text[64];
  std::snprintf(text, sizeof text, "%.*f", decimals, v);
  return text;
}

std::string cell_text(const Value& v, int decimals) {
  if (const auto* d = std::get_if<double>(&v)) return fixed(*d, decimals);
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "yes" : "no";
  if (const auto* j = std::get_if<Json>(&v)) return j->text;
  return std::get<std::string>(v);
}

std::string escaped(const std::string& s) { return "\"" + json_escape(s) + "\""; }

/// The members of an object from fields, each on its own line after `indent`, without the
/// braces; a key "a.b" goes into the object "a" (placed where "a" first comes).
std::vector<std::string> members(const Fields& fields, const std::string& indent);

/// Members (each already indented) in braces, the closing one at `indent`.
std::string braced(const std::vector<std::string>& m, const std::string& indent) {
  std::string out = "{";
  for (size_t i = 0; i < m.size(); ++i) out += (i ? ",\n" : "\n") + m[i];
  return out + (m.empty() ? "}" : "\n" + indent + "}");
}

std::string object_text(const Fields& fields, const std::string& indent) {
  return braced(members(fields, indent + "  "), indent);
}

std::vector<std::string> members(const Fields& fields, const std::string& indent) {
  std::vector<std::string> order;
  std::map<std::string, Fields> nested;
  std::map<std::string, const Value*> plain;
  for (const auto& [k, v] : fields) {
    const size_t dot       = k.find('.');
    const std::string head = dot == std::string::npos ? k : k.substr(0, dot);
    if (!plain.count(head) && !nested.count(head)) order.push_back(head);
    if (dot == std::string::npos)
      plain[head] = &v;
    else
      nested[head].emplace_back(k.substr(dot + 1), v);
  }
  std::vector<std::string> out;
  for (const std::string& k : order)
    out.push_back(indent + escaped(k) + ": " +
                  (plain.count(k) ? json_text(*plain[k]) : object_text(nested[k], indent)));
  return out;
}

std::string numbers_text(const std::vector<double>& v) {
  std::string out = "[";
  for (size_t i = 0; i < v.size(); ++i) out += (i ? ", " : "") + json_text(v[i]);
  return out + "]";
}

Fields row_fields(const Row& r) {
  Fields f = {{"workload", r.workload}, {"engine", r.engine}, {"anchor", r.anchor}};
  if (!r.skipped.empty()) {
    f.emplace_back("skipped", r.skipped);
  } else {
    f.emplace_back("unit", r.unit);
    f.emplace_back("rate", r.rate);
    f.emplace_back("ns", r.ns_per_item());
    if (r.ratio > 0) f.emplace_back("ratio", r.ratio);
    if (r.paired > 0) f.emplace_back("paired", r.paired);
  }
  for (const auto& e : r.extra) f.push_back(e);
  return f;
}

}  // namespace

std::string json_text(const Value& v) {
  if (const auto* d = std::get_if<double>(&v)) {
    if (!std::isfinite(*d)) return "null";
    char text[64];
    std::snprintf(text, sizeof text, "%.10g", *d);
    return text;
  }
  if (const auto* i = std::get_if<int64_t>(&v)) return std::to_string(*i);
  if (const auto* b = std::get_if<bool>(&v)) return *b ? "true" : "false";
  if (const auto* j = std::get_if<Json>(&v)) return j->text.empty() ? "null" : j->text;
  return escaped(std::get<std::string>(v));
}

std::string utc_now() {
  const std::time_t t = std::time(nullptr);
  std::tm tm{};
  gmtime_r(&t, &tm);
  char text[32];
  std::strftime(text, sizeof text, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return text;
}

std::string first_line(const char* path) {
  std::ifstream f(path);
  std::string line;
  std::getline(f, line);
  return line;
}

std::string times(double ratio) { return ratio > 0 ? fixed(ratio, 2) + "x" : "-"; }

Column workload_column(const std::string& title) {
  return {title, [](const Row& r) { return r.workload; }, false};
}
Column engine_column() {
  return {"engine", [](const Row& r) { return r.engine; }, true};
}
Column rate_column(const std::string& title, double scale, int decimals) {
  return {title, [scale, decimals](const Row& r) { return fixed(r.rate * scale, decimals); }};
}
Column ns_column(const std::string& title, int decimals) {
  return {title, [decimals](const Row& r) { return fixed(r.ns_per_item(), decimals); }};
}
Column ratio_column(const std::string& title) {
  return {title, [](const Row& r) { return times(r.ratio); }};
}
Column paired_column(const std::string& title) {
  return {title, [](const Row& r) { return times(r.paired); }};
}
Column field_column(const std::string& title, const std::string& key, int decimals) {
  return {title, [key, decimals](const Row& r) {
            const Value* v = r.field(key);
            return v ? cell_text(*v, decimals) : std::string("-");
          }};
}

void print_table(std::FILE* out, const std::vector<Column>& columns,
                 const std::vector<Row>& rows) {
  std::string head = "|", rule = "|";
  for (const Column& c : columns) {
    head += " " + c.title + " |";
    rule += c.left ? "---|" : "---:|";
  }
  std::fprintf(out, "%s\n%s\n", head.c_str(), rule.c_str());
  for (const Row& r : rows) {
    std::string line = "|";
    if (!r.skipped.empty()) {
      // The columns that name the row (the first and the left-aligned ones), then why it did
      // not run.
      bool said = false;
      for (const Column& c : columns) {
        const bool id = &c == &columns.front() || c.left;
        line += " " + (id ? c.cell(r) : said ? std::string("") : "skipped: " + r.skipped) + " |";
        said = said || !id;
      }
    } else {
      for (const Column& c : columns) line += " " + c.cell(r) + " |";
    }
    std::fprintf(out, "%s\n", line.c_str());
  }
  std::fflush(out);
}

Fields provenance(const std::string& tool, int argc, char** argv, int pinned_cpu) {
  std::string command;
  for (int i = 0; i < argc; ++i) command += (i ? " " : "") + std::string(argv[i]);
  return provenance(tool, command, pinned_cpu);
}

Fields provenance(const std::string& tool, const std::string& command, int pinned_cpu) {
  const BuildInfo b     = build_info();
  const CpuFeatures& cf = cpu_features();
  std::string features;
  for (const auto& n : cf.names()) features += (features.empty() ? "" : " ") + n;
  char host[256] = {};
  gethostname(host, sizeof host - 1);
  return {{"tool", tool},
          {"version", std::string(version())},
          {"commit", b.git_commit},
          {"build.compiler", b.compiler},
          {"build.type", b.build_type},
          {"build.cuda", built_with_cuda()},
          {"date", utc_now()},
          {"command", command},
          {"machine.cpu", cf.model},
          {"machine.logical_cores", int64_t(cf.logical_cores)},
          {"machine.features", features},
          {"machine.pinned_cpu", int64_t(pinned_cpu)},
          {"machine.hostname", std::string(host)},
          {"machine.loadavg", first_line("/proc/loadavg")},
          {"machine.cpufreq_governor",
           first_line("/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor")}};
}

std::string row_line(const Row& row) {
  std::vector<std::string> m = members(row_fields(row), "");
  if (!row.pass_s.empty()) m.push_back("\"pass_s\": " + numbers_text(row.pass_s));
  std::string line = "{";
  for (size_t i = 0; i < m.size(); ++i) line += (i ? ", " : "") + m[i];
  // A nested object's members are on lines of their own: one line, as JSON lines want.
  std::string out;
  for (const char c : line + "}") {
    if (c == '\n') continue;
    out += c;
  }
  return out;
}

std::string results_text(const Fields& provenance, const Fields& params,
                         const std::vector<std::string>& notes, const std::vector<Row>& rows) {
  Fields head = provenance;
  for (const auto& p : params) head.emplace_back("params." + p.first, p.second);
  std::vector<std::string> m = members(head, "  ");
  std::string list;
  for (size_t i = 0; i < notes.size(); ++i) list += (i ? ", " : "") + escaped(notes[i]);
  m.push_back("  \"notes\": [" + list + "]");
  std::string results;
  for (size_t i = 0; i < rows.size(); ++i) {
    std::vector<std::string> r = members(row_fields(rows[i]), "      ");
    if (!rows[i].pass_s.empty()) r.push_back("      \"pass_s\": " + numbers_text(rows[i].pass_s));
    results += std::string(i ? ",\n" : "\n") + "    " + braced(r, "    ");
  }
  m.push_back("  \"results\": [" + results + (rows.empty() ? "]" : "\n  ]"));
  return braced(m, "") + "\n";
}

bool write_results(const std::string& path, const Fields& provenance, const Fields& params,
                   const std::vector<std::string>& notes, const std::vector<Row>& rows,
                   std::string* why) {
  const std::string text = results_text(provenance, params, notes, rows);
  errno                  = 0;
  std::ofstream f(path);
  f << text;
  f.close();
  if (f) return true;
  const std::string message =
      path + ": cannot write" + (errno ? std::string(" (") + std::strerror(errno) + ")" : "");
  if (why)
    *why = message;
  else
    std::fprintf(stderr, "%s\n", message.c_str());
  return false;
}

std::string unwritable(const std::string& path) {
  if (path.empty()) return {};  // nothing asked for
  struct stat st {};
  if (::stat(path.c_str(), &st) == 0) {
    if (S_ISDIR(st.st_mode)) return path + ": cannot write (Is a directory)";
    return ::access(path.c_str(), W_OK) == 0
               ? std::string()
               : path + ": cannot write (" + std::strerror(errno) + ")";
  }
  const int fd = ::open(path.c_str(), O_WRONLY | O_CREAT | O_EXCL, 0644);
  if (fd < 0) return path + ": cannot write (" + std::strerror(errno) + ")";
  ::close(fd);
  ::unlink(path.c_str());
  return {};
}

bool writable_or_say(const char* tool, const std::string& path) {
  const std::string why = unwritable(path);
  if (!why.empty()) std::fprintf(stderr, "%s: %s\n", tool, why.c_str());
  return why.empty();
}

}  // namespace warpath::bench
