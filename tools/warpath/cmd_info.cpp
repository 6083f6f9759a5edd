// warpath info: version, build options, CPU features, CUDA devices, every engine.
#include <fmt/core.h>

#include <algorithm>
#include <nlohmann/json.hpp>
#include <string_view>

#include "commands.hpp"
#include "warpath/core/cpu_features.hpp"
#include "warpath/core/cuda_device.hpp"
#include "warpath/core/registry.hpp"
#include "warpath/core/version.hpp"
#include "warpath/pattern/pattern.hpp"
#include "warpath/selftest/catalogue.hpp"

namespace warpath::cli {

namespace {
struct InfoOptions {
  bool json = false;
};

int run_info(const InfoOptions& o) {
  const BuildInfo b      = build_info();
  const CpuFeatures& cpu = cpu_features();
  nlohmann::json j;
  j["version"] = version();
  j["build"]   = {{"commit", b.git_commit},
                  {"compiler", b.compiler},
                  {"type", b.build_type},
                  {"cuda", built_with_cuda()},
                  {"cuda_archs", b.cuda_archs}};
  j["cpu"]     = {
          {"model", cpu.model}, {"logical_cores", cpu.logical_cores}, {"features", cpu.names()}};
  j["cuda"] = {{"versions", cuda_versions()},
               {"devices", nlohmann::json::array()},
               {"unavailable", cuda_unavailable_reason()}};
  for (const auto& d : cuda_devices())
    j["cuda"]["devices"].push_back({{"index", d.index},
                                    {"name", d.name},
                                    {"cc", fmt::format("{}.{}", d.cc_major, d.cc_minor)},
                                    {"sms", d.sm_count},
                                    {"memory_bytes", d.global_memory_bytes}});
  const pattern::VectorscanInfo vs = pattern::vectorscan_info();
  j["vectorscan"]                  = {{"version", vs.version}, {"entry_points", vs.entry_points}};
  for (const auto& m : engine_families())
    for (const auto& e : m.engines())
      j["engines"].push_back({{"module", m.name},
                              {"id", e.id},
                              {"priority", e.priority},
                              {"available", e.available()},
                              {"description", e.description}});
  if (o.json) {
    fmt::print("{}\n", j.dump(2));
    return 0;
  }
  fmt::print("warpath {} (commit {})\n", version(),
             b.git_commit.empty() ? "unknown" : b.git_commit);
  fmt::print("build     {}, {}, CUDA {}\n", b.build_type, b.compiler,
             built_with_cuda() ? "on (sm " + b.cuda_archs + ")" : std::string("off"));
  fmt::print("cpu       {} ({} logical cores)\n", cpu.model, cpu.logical_cores);
  std::string feats;
  for (const auto& f : cpu.names()) feats += f + " ";
  fmt::print("features  {}\n", feats);
  const auto devices = cuda_devices();
  if (devices.empty()) fmt::print("cuda      none: {}\n", cuda_unavailable_reason());
  for (const auto& d : devices)
    fmt::print("cuda      [{}] {} (sm_{}{}, {} SMs, {:.1f} GiB), {}\n", d.index, d.name, d.cc_major,
               d.cc_minor, d.sm_count, double(d.global_memory_bytes) / (1 << 30), cuda_versions());
  if (!vs.version.empty())
    fmt::print("vectorscan {}, {}\n", vs.version,
               vs.entry_points == "dispatched" ? std::string("its dispatched entry points")
               : vs.entry_points == "avx2"
                   ? std::string("its AVX2 entry points (its AVX-512 ones miss literal matches: "
                                 "docs/adr/0010-pattern-matching.md)")
                   : std::string("not used: it misses literal matches (cpu.hs not available)"));
  size_t width = 6;  // the engine column fits the longest id
  for (const auto& m : engine_families())
    for (const auto& e : m.engines()) width = std::max(width, std::string_view(e.id).size());
  fmt::print("\n{:<10} {:<{}} {:>8}  {:<10} {}\n", "module", "engine", width, "priority",
             "available", "description");
  for (const auto& m : engine_families())
    for (const auto& e : m.engines())
      fmt::print("{:<10} {:<{}} {:>8}  {:<10} {}\n", m.name, e.id, width, e.priority,
                 e.available() ? "yes" : "no", e.description);
  return 0;
}
}  // namespace

void add_info(CLI::App& app, Runner& run) {
  auto o = std::make_shared<InfoOptions>();
  auto* cmd =
      app.add_subcommand("info", "Version, build options, CPU features, CUDA devices, engines");
  cmd->add_flag("--json", o->json, "Print JSON");
  cmd->callback([o, &run] { run = [o] { return run_info(*o); }; });
}

}  // namespace warpath::cli
