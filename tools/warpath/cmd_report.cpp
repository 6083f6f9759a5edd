// warpath report: one self-contained HTML page about a capture (plots and tables), drawn by the
// Python package (python/warpath/report.py, matplotlib): this command finds the package and
// its interpreter and runs `python -m warpath report`.
//
//   warpath report CAPTURE --html FILE [--rules FILE ...]
//
// The package: <directory of this program>/python (the build tree's), else an installed one.
// The interpreter: $WARPATH_PYTHON_EXE, else the one the build used (the .venv's), else
// python3.
#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <string>
#include <vector>

#include "commands.hpp"

#ifndef WARPATH_PYTHON_EXE
#define WARPATH_PYTHON_EXE "python3"
#endif

namespace warpath::cli {
namespace {

struct ReportOptions {
  std::string capture, html;
  std::vector<std::string> rules;
};

int run_report(const ReportOptions& o) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path package = ec ? fs::path() : self.parent_path() / "python";
  if (!package.empty() && fs::is_regular_file(package / "warpath" / "__init__.py")) {
    const char* old      = std::getenv("PYTHONPATH");
    const std::string pp = package.string() + (old && *old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", pp.c_str(), 1);
  }
  const char* env         = std::getenv("WARPATH_PYTHON_EXE");
  const std::string python = env && *env ? env : WARPATH_PYTHON_EXE;
  // Not `-m`: it puts the current directory first on sys.path, where a checkout's python/ holds
  // the package's sources without the extension.
  std::vector<std::string> args = {
      python, "-c",
      "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
      "from warpath.__main__ import main; sys.exit(main(sys.argv[1:]))",
      "report", o.capture, "--html", o.html};
  for (const std::string& r : o.rules) {
    args.emplace_back("--rules");
    args.push_back(r);
  }
  std::vector<char*> argv;
  for (std::string& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(argv[0], argv.data());
  return fail(fmt::format("report: cannot run {}: {} (the report is drawn by the Python package: "
                          "build it with nanobind installed, scripts/setup.sh, or set "
                          "WARPATH_PYTHON_EXE)",
                          python, std::strerror(errno)));
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
