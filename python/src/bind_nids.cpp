// python/src/bind_nids.cpp: the NIDS over a capture (include/warpath/nids/inspector.hpp), as
// `warpath nids --eve` runs it: the rules loaded and compiled (a syntax error fails the load
// unless skipped, as the CLI's), the inspector over the capture in batches of 1024 packets,
// and after each batch its alerts, then its application-layer transactions, then its ended
// flows as EVE JSON lines, in the CLI's order. Built where the NIDS is (PCRE2, libhtp, ldns).
#include <nanobind/stl/map.h>
#include <nanobind/stl/string.h>
#include <nanobind/stl/vector.h>

#include <algorithm>
#include <filesystem>
#include <mutex>

#include "batches.hpp"
#include "capture.hpp"
#include "common.hpp"

#if defined(WARPATH_HAVE_NIDS)
#include "warpath/nids/detect.hpp"
#include "warpath/nids/inspector.hpp"
#include "warpath/nids/rule.hpp"

namespace warpath::py {
namespace {

struct NidsArgs {
  std::vector<std::string> rules;
  std::map<std::string, std::string> vars;
  std::string engine, policy;
  std::string defrag = "auto";  ///< the defragmentation engine, "" for none (the CLI's --no-defrag)
  bool ips = false, midstream = false, flows = true, skip_bad_rules = false, no_checksum = false;
  uint32_t capacity = 1u << 18;
  uint64_t flow_base = 0;  ///< added to every flow number written (warpath.dist: unique per shard)
};

// What the compiled rules depend on: the paths, each rule file's size and time (a directory's
// *.rules and *.rules.gz files, as load_rules reads it), the variables and skip_bad_rules. Empty when a path cannot be read (no cache).
std::string rules_key(const NidsArgs& a) {
  namespace fs = std::filesystem;
  std::string key = a.skip_bad_rules ? "skip\n" : "strict\n";
  for (const auto& [k, v] : a.vars) key += k + "=" + v + "\n";
  auto add = [&](const fs::path& p) {
    std::error_code ec;
    const auto size = fs::file_size(p, ec);
    if (ec) return false;
    const auto time = fs::last_write_time(p, ec);
    if (ec) return false;
    key += p.string() + " " + std::to_string(size) + " " +
           std::to_string(time.time_since_epoch().count()) + "\n";
    return true;
  };
  for (const std::string& r : a.rules) {
    std::error_code ec;
    if (fs::is_directory(r, ec)) {
      std::vector<fs::path> files;
      for (const auto& e : fs::directory_iterator(r, ec))
        if (const std::string n = e.path().filename().string();
            n.ends_with(".rules") || n.ends_with(".rules.gz"))
          files.push_back(e.path());
      if (ec) return {};
      std::sort(files.begin(), files.end());
      key += r + "/\n";
      for (const auto& f : files)
        if (!add(f)) return {};
    } else if (!add(r)) {
      return {};
    }
  }
  return key;
}

std::shared_ptr<const nids::DetectImage> compile_rules(const NidsArgs& a);

// The last rule set compiled, kept for the next call with the same rules (unchanged files):
// a corpus's shards run one after another in a worker process and compile ET Open once
// (about a second each time otherwise). The image is immutable and shared.
std::shared_ptr<const nids::DetectImage> compile(const NidsArgs& a) {
  static std::mutex mutex;
  static std::string last_key;
  static std::shared_ptr<const nids::DetectImage> last;
  const std::string key = rules_key(a);
  {
    std::lock_guard lock(mutex);
    if (!key.empty() && key == last_key) return last;
  }
  auto image = compile_rules(a);
  std::lock_guard lock(mutex);
  if (!key.empty()) last_key = key, last = image;
  return image;
}

std::shared_ptr<const nids::DetectImage> compile_rules(const NidsArgs& a) {
  nids::Vars vars;
  for (const auto& [k, v] : a.vars) check(vars.set_from(k + "=" + v));  // as --set-var
  nids::RuleSet set = take(nids::load_rules(a.rules, vars));
  if (set.syntax_errors() && !a.skip_bad_rules) {
    std::string first;
    for (const nids::FileReport& f : set.files)
      for (const nids::RuleProblem& p : f.problems)
        if (p.syntax && first.empty()) first = p.where + ": " + p.reason;
    throw StatusError(Status(Errc::kParseError,
                             first + " (" + std::to_string(set.syntax_errors()) +
                                 " rule(s) with syntax errors; skip_bad_rules=True runs without "
                                 "them)"));
  }
  return take(nids::compile_rules(set));
}

nids::InspectorConfig config(const NidsArgs& a) {
  nids::InspectorConfig cfg;  // the CLI's defaults, with EVE's transactions kept
  cfg.engine           = a.engine;
  cfg.ips              = a.ips;
  cfg.any_checksum     = a.no_checksum;
  cfg.app_events       = true;
  cfg.flow.capacity    = a.capacity;
  cfg.stream.midstream = a.midstream;
  cfg.stream.policy    = take(stream::parse_policy(a.policy));
  cfg.unit_batches     = take(nids::parse_unit_batches("auto"));
  cfg.midstream_policy = take(nids::parse_midstream_policy("ignore", a.ips));
  return cfg;
}

nb::tuple run_nids(nb::handle capture, const NidsArgs& a) {
  auto image = compile(a);
  auto ins   = take(nids::Inspector::make(image, config(a)));
  std::vector<std::string> lines;
  const Source source(capture);
  SourceStats stats;
  {
    nb::gil_scoped_release unlocked;
    std::vector<nids::Alert> alerts;
    std::vector<nids::FlowEvent> ended;
    std::vector<nids::AppEvent> app;
    auto emit = [&] {
      for (nids::Alert& x : alerts) {
        if (x.flow) x.flow += a.flow_base;
        lines.push_back(nids::alert_eve(x, ins->image(), a.ips));
      }
      app.clear();
      ins->take_app_events(app);
      for (nids::AppEvent& e : app) {
        if (e.flow) e.flow += a.flow_base;
        lines.push_back(nids::app_eve(e));
      }
      if (a.flows)
        for (nids::FlowEvent& f : ended) {
          f.record.serial += a.flow_base;
          lines.push_back(nids::flow_eve(f));
        }
      alerts.clear();
      ended.clear();
    };
    stats = for_each_batch(source, a.defrag,
                   [&](const packet::BatchView& v, const PacketInfo* infos, uint32_t n) {
                     check(ins->process(v, infos, n, alerts, ended));
                     emit();
                   },
                   // A file cut into parts by the flows the inspector tracks (tunnels' inner).
                   source.file.shards > 1 ? nids::inspected_part_of(source.file.shards)
                                          : flow::PartOf());
    // A part's clock goes on to the whole capture's last packet (a no-op for the whole).
    check(ins->advance(stats.clock_ns, alerts, ended));
    emit();
    check(ins->finish(alerts, ended));
    emit();
  }
  const nids::InspectorCounters c = ins->counters();
  nb::dict counters;
  counters["packets"]       = c.packets;
  counters["bytes"]         = c.bytes;
  counters["alerts"]        = c.alerts;
  counters["dropped"]       = c.dropped;
  counters["flows_dropped"] = c.flows_dropped;
  counters["rules"]         = ins->image().rules().size();
  return nb::make_tuple(lines, counters, ins->engines(), stats.to_dict());
}

// The sids of rules whose state spans flows (threshold and detection_filter counting by
// source, destination, both or rule; xbits kept on hosts and address pairs): a capture cut by
// flow would count them per part.
std::vector<uint32_t> cross_flow_rules(const NidsArgs& a) {
  auto image = compile(a);
  std::vector<uint32_t> sids;
  for (const nids::Rule& r : image->rules())
    if (r.threshold.type != nids::Threshold::kNone || !r.xbits.empty()) sids.push_back(r.sid);
  return sids;
}

}  // namespace

void bind_nids(nb::module_& m) {
  nb::class_<NidsArgs>(m, "_NidsArgs", "The NIDS's options (see warpath.nids).")
      .def(nb::init<>())
      .def_rw("rules", &NidsArgs::rules)
      .def_rw("vars", &NidsArgs::vars)
      .def_rw("engine", &NidsArgs::engine)
      .def_rw("policy", &NidsArgs::policy)
      .def_rw("ips", &NidsArgs::ips)
      .def_rw("midstream", &NidsArgs::midstream)
      .def_rw("flows", &NidsArgs::flows)
      .def_rw("skip_bad_rules", &NidsArgs::skip_bad_rules)
      .def_rw("no_checksum", &NidsArgs::no_checksum)
      .def_rw("capacity", &NidsArgs::capacity)
      .def_rw("defrag", &NidsArgs::defrag)
      .def_rw("flow_base", &NidsArgs::flow_base);
  m.def("_nids", &run_nids, nb::arg("capture"), nb::arg("args"),
        "The NIDS over a capture or capture file: (EVE lines, counters, engines, read stats).");
  m.def("_nids_cross_flow_rules", &cross_flow_rules, nb::arg("args"),
        "The sids of rules with state across flows (thresholds, xbits), which a cut by flow "
        "would count per part.");
  m.attr("_HAVE_NIDS") = true;
}

}  // namespace warpath::py
#else
namespace warpath::py {
void bind_nids(nb::module_& m) { m.attr("_HAVE_NIDS") = false; }
}  // namespace warpath::py
#endif
