// tools/warpath/python_exec.hpp: the commands the Python package carries out (report, cluster)
// run as `python -m warpath ARGS...` with the package this program was built with.
#pragma once
#include <string>
#include <vector>

namespace warpath::cli {

/// Replaces this process with the package's interpreter running warpath.__main__ on `args`.
/// The package: <directory of this program>/python (the build tree's), else an installed one.
/// The interpreter: $WARPATH_PYTHON_EXE, else the one the build used (the .venv's), else
/// python3. Returns (1, with a message naming `what`) only when it could not be started.
int exec_python_package(const std::vector<std::string>& args, const std::string& what);

}  // namespace warpath::cli
