// warpath report: one self-contained HTML page about a capture (plots and tables), drawn by the
// Python package (python/warpath/report.py, matplotlib): this command finds the package and
// its interpreter and runs `python -m warpath report`.
//
//   warpath report CAPTURE --html FILE [--rules FILE ...]
//
// The package and its interpreter: exec_python_package (python_exec.hpp).
#include <string>
#include <vector>

#include "commands.hpp"
#include "python_exec.hpp"

namespace warpath::cli {
namespace {

struct ReportOptions {
  std::string capture, html;
  std::vector<std::string> rules;
};

int run_report(const ReportOptions& o) {
  std::vector<std::string> args = {"report", o.capture, "--html", o.html};
  for (const std::string& r : o.rules) {
    args.emplace_back("--rules");
    args.push_back(r);
  }
  return exec_python_package(args, "report");
}

}  // namespace

void add_report(CLI::App& app, Runner& run) {
  auto o    = std::make_shared<ReportOptions>();
  auto* cmd = app.add_subcommand(
      "report", "A capture's plots and tables (protocol mix, sizes, talkers, flows, alerts) as one "
                "HTML page, drawn by the Python package");
  cmd->add_option("capture", o->capture, "Capture file (pcap or pcapng; .gz/.xz too)")->required();
  cmd->add_option("--html", o->html, "The page to write")->required();
  cmd->add_option("--rules", o->rules, "NIDS rules: add their alerts (repeatable)");
  cmd->callback([o, &run] { run = [o] { return run_report(*o); }; });
}

}  // namespace warpath::cli
