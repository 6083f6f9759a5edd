// bench/harness/report.hpp: what every warpath benchmark reports, and how.
//
// A benchmark measures engines on workloads: warpath's engines and, beside them on the same core
// in the same run, the field's tool (the anchor: rte_hash, Vectorscan, rte_acl, ...). Each
// measurement is a `Row`: the workload, the engine, whether it is an anchor, its rate at the
// best pass (items per second), its passes, and the bench's own fields. From the rows the
// harness makes
//   - the ratios: each row against the fastest anchor of its workload, best pass against best
//     pass (`ratio`), and, where the bench alternated passes of the two, the median of the
//     per-round ratios (`paired`, which cancels a shared machine's drift: paired_median);
//   - the table a person reads (markdown, `print_table` with the bench's columns);
//   - the JSON a script reads (`write_results`): the provenance (tool, version, commit, build,
//     date, command line, machine, pinned core) and then {"results": [row, ...]} with every
//     row's fields, the same keys in every bench (workload, engine, anchor, rate, unit, ns,
//     ratio, paired, skipped) plus its own.
// Dependency-free (the C++ library and warpath_framework), so that every bench, the CUDA ones
// too, can use it. Hyperscan's hsbench is the model: one reporting path, engines as rows.
#pragma once
#include <cstdint>
#include <cstdio>
#include <functional>
#include <string>
#include <utility>
#include <variant>
#include <vector>

namespace warpath::bench {

/// JSON a bench made itself (an array of objects, a nested document), written verbatim; empty
/// text is null.
struct Json {
  std::string text;
};

/// A field of a row or of the provenance: a number, a count, a flag, text or JSON.
using Value  = std::variant<double, int64_t, bool, std::string, Json>;
using Fields = std::vector<std::pair<std::string, Value>>;

struct Row {
  std::string workload;  ///< what was measured (a table size, a pattern set on a corpus, ...)
  std::string engine;    ///< warpath's engine id or the anchor's name
  bool anchor = false;   ///< the field's tool, the yardstick of its workload
  std::string unit;      ///< what one item is: "lookups", "packets", "bytes", ...
  double rate = 0;       ///< items per second at the best pass; 0 when skipped
  std::vector<double> pass_s;  ///< every timed pass, when the bench keeps them
  double ratio  = 0;     ///< rate / the fastest anchor's of the workload; 0: no anchor
  double paired = 0;     ///< median of per-round ratios to the anchor; 0: not paired
  std::string skipped;   ///< why it did not run (then no rate)
  Fields extra;          ///< the bench's own fields, in order

  double ns_per_item() const { return rate > 0 ? 1e9 / rate : 0; }
  Row& with(std::string key, Value v) {
    extra.emplace_back(std::move(key), std::move(v));
    return *this;
  }
  /// The bench's field `key`, or nullptr.
  const Value* field(const std::string& key) const;
};

/// The median of `v` (0 when empty).
double median(std::vector<double> v);
/// The median over rounds k of anchor[k] / row[k] (pass times): each round's passes of the two
/// ran back to back, so drift that moves best-of ratios by 20-40% on a shared VM mostly cancels.
double paired_median(const std::vector<double>& anchor_s, const std::vector<double>& row_s);

/// Sets every row's `ratio` to its rate over the fastest anchor row of the same workload (0
/// where the workload has none that ran).
void ratios_to_best_anchor(std::vector<Row>& rows);
/// Sets every row's `paired` to paired_median(the fastest anchor's passes, its passes) where
/// both kept their passes (the anchor's own is then 1).
void paired_to_best_anchor(std::vector<Row>& rows);

/// One column of the table: its title, right-aligned unless `left`, and its cell. The first
/// column and the left-aligned ones name a row (a skipped row shows them, then why).
struct Column {
  std::string title;
  std::function<std::string(const Row&)> cell;
  bool left = false;
};
/// The usual columns: workload, engine, rate in millions of `unit`/s, ns per item, ratio.
Column workload_column(const std::string& title);
Column engine_column();
Column rate_column(const std::string& title, double scale = 1e-6, int decimals = 1);
Column ns_column(const std::string& title = "ns/item", int decimals = 2);
Column ratio_column(const std::string& title);
Column paired_column(const std::string& title);
/// A bench field as a cell ("-" where absent); numbers with `decimals`.
Column field_column(const std::string& title, const std::string& key, int decimals = 2);

/// Markdown: a header row, the alignment row, a row per Row (skipped rows say why).
void print_table(std::FILE* out, const std::vector<Column>& columns, const std::vector<Row>& rows);

/// "1.23x", or "-" for 0.
std::string times(double ratio);

/// What a result file says of where it came from. `argv` gives the command line; pinned_cpu <
/// 0: not pinned. Call it when the run starts: machine.loadavg is the load average then (a
/// bench adds machine.loadavg_end when it writes).
Fields provenance(const std::string& tool, int argc, char** argv, int pinned_cpu = -1);
/// The same with the command line as one text (the CLI's, quoted as a shell would need).
Fields provenance(const std::string& tool, const std::string& command, int pinned_cpu = -1);

/// Writes {provenance..., params..., "notes": [...], "results": [rows]} to `path`; false when
/// it cannot, with "PATH: cannot write (reason)" in `*why`, or on stderr without `why`.
bool write_results(const std::string& path, const Fields& provenance, const Fields& params,
                   const std::vector<std::string>& notes, const std::vector<Row>& rows,
                   std::string* why = nullptr);
/// "PATH: cannot write (reason)" when a results file could not be made at `path` (its folder
/// missing or not writable, the file not writable), else empty: what a bench checks before it
/// runs, so that it fails at once rather than after its passes (empty `path`: nothing to
/// check). Leaves no file behind.
std::string unwritable(const std::string& path);
/// unwritable() for a bench's main: false, with "TOOL: PATH: cannot write (reason)" on stderr,
/// when `path` cannot be written (a bench then exits 1 before its passes).
bool writable_or_say(const char* tool, const std::string& path);
/// The same document as text (a bench that prints its report on stdout).
std::string results_text(const Fields& provenance, const Fields& params,
                         const std::vector<std::string>& notes, const std::vector<Row>& rows);

/// One row as one line of JSON, with the same keys as in a result file's `results`: the form
/// of a bench that measures one engine per process and leaves the rounds to a script
/// (warpath-stream-bench; bench/stream/stream_ratios.py pairs the lines of a round).
std::string row_line(const Row& row);

/// The time now, "2026-11-27T23:45:00Z".
std::string utc_now();
/// The first line of a file ("" when it cannot be read): /proc facts.
std::string first_line(const char* path);

/// JSON text of one value (strings escaped).
std::string json_text(const Value& v);

}  // namespace warpath::bench
