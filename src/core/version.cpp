#include "warpath/core/version.hpp"

#include "version_config.hpp"

#ifndef WARPATH_VERSION
#define WARPATH_VERSION "0.0.0"
#endif
#ifndef WARPATH_GIT_COMMIT
#define WARPATH_GIT_COMMIT ""
#endif
#ifndef WARPATH_BUILD_TYPE
#define WARPATH_BUILD_TYPE ""
#endif
#ifndef WARPATH_CUDA_ARCHS_STR
#define WARPATH_CUDA_ARCHS_STR ""
#endif

namespace warpath {

const char* version() noexcept { return WARPATH_VERSION; }

BuildInfo build_info() {
  BuildInfo info;
#if defined(__clang__)
  info.compiler = "clang " __clang_version__;
#elif defined(__GNUC__)
  info.compiler = "g++ " __VERSION__;
#endif
  info.build_type = WARPATH_BUILD_TYPE;
  info.cuda_archs = built_with_cuda() ? WARPATH_CUDA_ARCHS_STR : "";
  info.git_commit = WARPATH_GIT_COMMIT;
  return info;
}

}  // namespace warpath
