#include "warpath/selftest/selftest.hpp"

#include <chrono>
#include <cstdio>

#include "warpath/core/cuda_device.hpp"
#include "warpath/core/json_text.hpp"
#include "warpath/core/version.hpp"

namespace warpath {

bool selftest_selects(const SelftestOptions& options, std::string_view id) {
  if (id.rfind("ref.", 0) == 0) return false;
  if (!options.all && id.rfind("cuda.", 0) != 0) return false;
  if (options.exact) return id == options.filter;
  return options.filter.empty() || id.find(options.filter) != std::string_view::npos;
}

SelftestResult run_selftest(const SelftestOptions& options,
                            const std::function<void(const SelftestResult&)>& progress) {
  SelftestResult result;
  result.seed = options.seed
                    ? options.seed
                    : uint64_t(std::chrono::steady_clock::now().time_since_epoch().count());
  for (const EngineFamily& module : engine_families()) {
    for (const EngineInfo& engine : module.engines()) {
      const std::string id(engine.id);
      if (!selftest_selects(options, id)) continue;
      const auto t0 = std::chrono::steady_clock::now();
      CheckReport r = module.check(id, result.seed, options.items);
      result.seconds.push_back(
          std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
      if (r.skipped && options.require_gpu && id.rfind("cuda.", 0) == 0) {
        r.skipped = false;
        r.detail  = "required but unavailable: " + r.detail;
      }
      if (r.skipped)
        ++result.skipped;
      else if (r.passed())
        ++result.passed;
      else
        ++result.failed;
      result.reports.push_back(std::move(r));
      if (progress) progress(result);
    }
  }
  return result;
}

std::string selftest_json(const SelftestResult& result) {
  std::string j = "{\n  \"version\": \"" + std::string(version()) + "\",\n";
  j += "  \"commit\": \"" + json_escape(build_info().git_commit) + "\",\n";
  j += "  \"seed\": " + std::to_string(result.seed) + ",\n";
  j += "  \"cuda\": \"" + json_escape(cuda_versions()) + "\",\n  \"devices\": [";
  bool first = true;
  for (const auto& d : cuda_devices()) {
    j += std::string(first ? "" : ", ") + "{\"name\": \"" + json_escape(d.name) + "\", \"cc\": \"" +
         std::to_string(d.cc_major) + "." + std::to_string(d.cc_minor) +
         "\", \"sms\": " + std::to_string(d.sm_count) + "}";
    first = false;
  }
  j += "],\n  \"passed\": " + std::to_string(result.passed) +
       ", \"failed\": " + std::to_string(result.failed) +
       ", \"skipped\": " + std::to_string(result.skipped) + ",\n  \"engines\": [\n";
  for (size_t i = 0; i < result.reports.size(); ++i) {
    const auto& r       = result.reports[i];
    const char* verdict = r.skipped ? "skipped" : r.passed() ? "passed" : "failed";
    j += "    {\"module\": \"" + r.module + "\", \"engine\": \"" + r.engine + "\", \"result\": \"" +
         verdict + "\", \"items\": " + std::to_string(r.items) + ", \"seconds\": " +
         (i < result.seconds.size() ? std::to_string(result.seconds[i]) : std::string("null")) +
         ", \"detail\": \"" + json_escape(r.detail) + "\"}" +
         (i + 1 < result.reports.size() ? ",\n" : "\n");
  }
  j += "  ]\n}\n";
  return j;
}

}  // namespace warpath
