#include "warpath/tools/selftest_main.hpp"

#include <cstdio>
#include <fstream>

#include "warpath/core/cuda_device.hpp"

namespace warpath {

int selftest_main(const SelftestOptions& options, const std::string& json_path) {
  const SelftestResult r = run_selftest(options);
  if (r.reports.empty() && !options.filter.empty()) {
    std::fprintf(stderr, "warpath: no engine matches '%s'\n", options.filter.c_str());
    return 2;
  }
  std::printf("selftest: seed %llu, %llu items per engine, %s\n",
              static_cast<unsigned long long>(r.seed),
              static_cast<unsigned long long>(options.items),
              cuda_device_count() ? "CUDA device present" : cuda_unavailable_reason().c_str());
  for (const auto& rep : r.reports) {
    const char* verdict = rep.skipped ? "SKIP" : rep.passed() ? "PASS" : "FAIL";
    std::printf("  %-4s %-8s %-14s %10llu items  %s\n", verdict, rep.module.c_str(),
                rep.engine.c_str(), static_cast<unsigned long long>(rep.items), rep.detail.c_str());
  }
  std::printf("%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
  if (!json_path.empty()) {
    std::ofstream out(json_path);
    out << selftest_json(r);
    if (!out) {
      std::fprintf(stderr, "warpath: %s: cannot write\n", json_path.c_str());
      return 1;
    }
  }
  return r.ok() ? 0 : 1;
}

}  // namespace warpath
