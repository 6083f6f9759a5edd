#include "warpath/core/registry.hpp"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "warpath/core/cuda_device.hpp"

namespace warpath {

namespace {

/// The registered families, kept from before main (construct-on-first-use: registrations in
/// other files' static initialisers may come first).
struct Families {
  std::mutex mutex;
  std::vector<EngineFamily> list;
};
Families& families() {
  static Families f;
  return f;
}

}  // namespace

bool add_engine_family(const EngineFamily& family) noexcept {
  Families& f = families();
  std::lock_guard<std::mutex> lock(f.mutex);
  f.list.push_back(family);
  return true;
}

std::vector<EngineFamily> engine_family_list() {
  Families& f = families();
  std::lock_guard<std::mutex> lock(f.mutex);
  std::vector<EngineFamily> out = f.list;
  std::sort(out.begin(), out.end(), [](const EngineFamily& a, const EngineFamily& b) {
    return a.rank != b.rank ? a.rank < b.rank : a.name < b.name;
  });
  for (size_t i = 1; i < out.size(); ++i)
    if (out[i].name == out[i - 1].name) {
      std::fprintf(stderr, "warpath: engine family '%.*s' registered twice\n",
                   int(out[i].name.size()), out[i].name.data());
      std::abort();
    }
  return out;
}

bool engine_always() { return true; }
bool cuda_engine_available() { return cuda_device_count() > 0; }

Result<std::string> resolve_auto(const std::vector<EngineInfo>& engines, std::string_view module) {
  const EngineInfo* best = nullptr;
  for (const auto& e : engines)
    if (e.available() && (!best || e.priority > best->priority)) best = &e;
  if (!best)
    return Status(Errc::kNotSupported, "no " + std::string(module) + " engine is available");
  return std::string(best->id);
}

std::string_view strip_validate(std::string_view id, bool& validating) {
  constexpr std::string_view kPrefix = "validate:";
  validating                         = id.substr(0, kPrefix.size()) == kPrefix;
  return validating ? id.substr(kPrefix.size()) : id;
}

Result<std::string> resolve_engine(const std::vector<EngineInfo>& engines, std::string_view noun,
                                   std::string_view requested, bool& validating,
                                   bool expand_auto) {
  std::string id(strip_validate(requested, validating));
  if (id == "auto") {
    if (!expand_auto) return id;
    return resolve_auto(engines, noun);
  }
  auto best_of = [&](std::string_view prefix) -> const EngineInfo* {
    const EngineInfo* best = nullptr;
    for (const auto& e : engines)
      if (e.id.substr(0, prefix.size()) == prefix && (!best || e.priority > best->priority))
        best = &e;
    return best;
  };
  if (id == "cpu" || id == "ref" || id == "gpu") {
    const EngineInfo* e = best_of(id == "gpu" ? "cuda." : id + ".");
    if (!e) {
      if (id == "gpu")
        return Status(Errc::kNotSupported,
                      "gpu: no CUDA " + std::string(noun) + " engine: built without CUDA");
      return Status(Errc::kNotFound, id + ": no " + std::string(noun) + " engine of that kind");
    }
    id = std::string(e->id);
  }
  for (const auto& e : engines) {
    if (e.id != id) continue;
    if (e.available && !e.available())
      return Status(Errc::kNotSupported, id.rfind("cuda.", 0) == 0
                                             ? id + " needs a CUDA device: " +
                                                   cuda_unavailable_reason()
                                             : id + " is not available on this machine");
    return id;
  }
  if (id.rfind("cuda.", 0) == 0)
    return Status(Errc::kNotSupported, id + " is not available: built without CUDA");
  std::string known;
  for (const auto& e : engines) known += std::string(e.id) + ", ";
  return Status(Errc::kNotFound, "unknown " + std::string(noun) + " engine '" + id +
                                     "' (engines: " + known +
                                     "auto, cpu, gpu, ref, validate:<engine>)");
}

std::vector<std::string> engine_algorithms(const std::vector<EngineInfo>& engines,
                                           std::string_view device) {
  const std::string prefix = std::string(device) + ".";
  std::vector<std::string> out;
  for (const auto& e : engines)
    if (e.id.substr(0, prefix.size()) == prefix) out.emplace_back(e.id.substr(prefix.size()));
  return out;
}

}  // namespace warpath
