// include/warpath/core/cpu_features.hpp: what the host CPU offers, probed once.
#pragma once
#include <string>
#include <vector>

namespace warpath {

struct CpuFeatures {
  std::string model;  // "AMD EPYC 9B14" from /proc/cpuinfo or cpuid
  unsigned logical_cores = 0;
  bool sse42 = false, avx2 = false, avx512f = false, avx512bw = false, avx512vl = false,
       aes = false, vaes = false, sha = false, bmi2 = false;
  /// Names of the features that are present, e.g. {"sse4.2", "avx2", ...}.
  std::vector<std::string> names() const;
};

const CpuFeatures& cpu_features();

}  // namespace warpath
