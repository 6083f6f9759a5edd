// include/warpath/core/version.hpp: version and build options, for `warpath info`.
#pragma once
#include <string>

namespace warpath {

/// "0.1.0".
const char* version() noexcept;
/// True when this binary was built with the CUDA engines.
bool built_with_cuda() noexcept;
/// Build facts: compiler, build type, CUDA architectures, git commit.
struct BuildInfo {
  std::string compiler;
  std::string build_type;
  std::string cuda_archs;
  std::string git_commit;
};
BuildInfo build_info();

}  // namespace warpath
