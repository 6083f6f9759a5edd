// The Python package's commands run from the CLI (python_exec.hpp).
#include "python_exec.hpp"

#include <fmt/core.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>

#include "commands.hpp"

#ifndef WARPATH_PYTHON_EXE
#define WARPATH_PYTHON_EXE "python3"
#endif

namespace warpath::cli {

int exec_python_package(const std::vector<std::string>& args, const std::string& what) {
  namespace fs = std::filesystem;
  std::error_code ec;
  const fs::path self = fs::read_symlink("/proc/self/exe", ec);
  const fs::path package = ec ? fs::path() : self.parent_path() / "python";
  if (!package.empty() && fs::is_regular_file(package / "warpath" / "__init__.py")) {
    const char* old      = std::getenv("PYTHONPATH");
    const std::string pp = package.string() + (old && *old ? ":" + std::string(old) : "");
    ::setenv("PYTHONPATH", pp.c_str(), 1);
  }
  const char* env          = std::getenv("WARPATH_PYTHON_EXE");
  const std::string python = env && *env ? env : WARPATH_PYTHON_EXE;
  // Not `-m`: it puts the current directory first on sys.path, where a checkout's python/ holds
  // the package's sources without the extension.
  std::vector<std::string> all = {
      python, "-c",
      "import sys; sys.path[:] = [p for p in sys.path if p not in ('', '.')]; "
      "from warpath.__main__ import main; sys.exit(main(sys.argv[1:]))"};
  all.insert(all.end(), args.begin(), args.end());
  std::vector<char*> argv;
  for (std::string& a : all) argv.push_back(a.data());
  argv.push_back(nullptr);
  std::fflush(stdout);
  ::execvp(argv[0], argv.data());
  return fail(fmt::format("{}: cannot run {}: {} ({} is the Python package's: build it with "
                          "nanobind installed, scripts/setup.sh, or set WARPATH_PYTHON_EXE)",
                          what, python, std::strerror(errno), what));
}

}  // namespace warpath::cli
