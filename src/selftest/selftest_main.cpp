#include "warpath/tools/selftest_main.hpp"

#include <cstdio>
#include <fstream>

#include "warpath/core/cuda_device.hpp"
#include "warpath/selftest/catalogue.hpp"

namespace warpath {

namespace {

// Writes the JSON beside the path and renames it over the path: a reader never sees half.
bool save_json(const std::string& path, const SelftestResult& r) {
  const std::string tmp = path + ".tmp";
  {
    std::ofstream out(tmp);
    out << selftest_json(r);
    if (!out) return false;
  }
  return std::rename(tmp.c_str(), path.c_str()) == 0;
}

}  // namespace

int selftest_list(const SelftestOptions& options) {
  for (const EngineFamily& module : engine_families())
    for (const EngineInfo& engine : module.engines())
      if (selftest_selects(options, engine.id))
        std::printf("%.*s\n", int(engine.id.size()), engine.id.data());
  return 0;
}

int selftest_main(const SelftestOptions& options, const std::string& json_path) {
  std::printf("selftest: %llu items per engine, %s\n",
              static_cast<unsigned long long>(options.items),
              cuda_device_count() ? "CUDA device present" : cuda_unavailable_reason().c_str());
  std::fflush(stdout);
  bool saved = true;
  // Each engine's line (and the JSON so far) as its check completes, so that a run stopped by
  // a time limit still tells what it checked.
  const SelftestResult r = run_selftest(options, [&](const SelftestResult& so_far) {
    const CheckReport& rep = so_far.reports.back();
    if (so_far.reports.size() == 1)
      std::printf("selftest: seed %llu\n", static_cast<unsigned long long>(so_far.seed));
    const char* verdict = rep.skipped ? "SKIP" : rep.passed() ? "PASS" : "FAIL";
    std::printf("  %-4s %-8s %-14s %10llu items %7.1f s  %s\n", verdict, rep.module.c_str(),
                rep.engine.c_str(), static_cast<unsigned long long>(rep.items),
                so_far.seconds.back(), rep.detail.c_str());
    std::fflush(stdout);
    if (!json_path.empty()) saved = save_json(json_path, so_far) && saved;
  });
  if (r.reports.empty() && !options.filter.empty()) {
    std::fprintf(stderr, "warpath: no engine matches '%s'\n", options.filter.c_str());
    return 2;
  }
  std::printf("%d passed, %d failed, %d skipped\n", r.passed, r.failed, r.skipped);
  if (!json_path.empty() && !(save_json(json_path, r) && saved)) {
    std::fprintf(stderr, "warpath: %s: cannot write\n", json_path.c_str());
    return 1;
  }
  return r.ok() ? 0 : 1;
}

}  // namespace warpath
