#include "warpath/core/cpu_features.hpp"

#include <fstream>
#include <thread>

namespace warpath {

namespace {
CpuFeatures probe() {
  CpuFeatures f;
  f.logical_cores = std::thread::hardware_concurrency();
#if defined(__x86_64__) || defined(__i386__)
  __builtin_cpu_init();
  f.sse42    = __builtin_cpu_supports("sse4.2");
  f.avx2     = __builtin_cpu_supports("avx2");
  f.avx512f  = __builtin_cpu_supports("avx512f");
  f.avx512bw = __builtin_cpu_supports("avx512bw");
  f.avx512vl = __builtin_cpu_supports("avx512vl");
  f.aes      = __builtin_cpu_supports("aes");
  f.bmi2     = __builtin_cpu_supports("bmi2");
#endif
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line)) {
    if (f.model.empty() && line.rfind("model name", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos) f.model = line.substr(colon + 2);
    }
    if (line.rfind("flags", 0) == 0) {
      f.vaes = line.find(" vaes") != std::string::npos;
      f.sha  = line.find(" sha_ni") != std::string::npos;
      break;
    }
  }
  return f;
}
}  // namespace

std::vector<std::string> CpuFeatures::names() const {
  std::vector<std::string> out;
  const std::pair<bool, const char*> all[] = {
      {sse42, "sse4.2"},      {avx2, "avx2"},         {avx512f, "avx512f"},
      {avx512bw, "avx512bw"}, {avx512vl, "avx512vl"}, {aes, "aes"},
      {vaes, "vaes"},         {sha, "sha"},           {bmi2, "bmi2"}};
  for (auto [have, name] : all)
    if (have) out.emplace_back(name);
  return out;
}

const CpuFeatures& cpu_features() {
  static const CpuFeatures features = probe();
  return features;
}

}  // namespace warpath
