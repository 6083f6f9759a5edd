// tests/core/registry_test.cpp: resolve_engine, the one resolution of engine ids every module's
// factory uses (validate:, auto, the cpu/gpu/ref aliases, and the errors), on a made-up table.
#include "warpath/core/registry.hpp"

#include <gtest/gtest.h>

namespace warpath {
namespace {

bool yes() { return true; }
bool no() { return false; }

const std::vector<EngineInfo>& table() {
  static const std::vector<EngineInfo> t = {
      {"ref.x", "oracle", 0, &yes},     {"cpu.x.slow", "", 5, &yes}, {"cpu.x", "", 10, &yes},
      {"cuda.x", "", 20, &no},  // listed (built with CUDA) but no device here
  };
  return t;
}

std::string resolved(std::string_view id, bool* validating = nullptr, bool expand = true) {
  bool v   = false;
  auto r   = resolve_engine(table(), "widget", id, v, expand);
  if (validating) *validating = v;
  EXPECT_TRUE(r.is_ok()) << id << ": " << r.status().message();
  return r.is_ok() ? *r : std::string();
}

TEST(Registry, ResolvesIdsAutoAliasesAndValidate) {
  EXPECT_EQ(resolved("cpu.x.slow"), "cpu.x.slow");
  EXPECT_EQ(resolved("auto"), "cpu.x");  // cuda.x has the priority but is not available
  EXPECT_EQ(resolved("auto", nullptr, false), "auto");
  EXPECT_EQ(resolved("cpu"), "cpu.x");
  EXPECT_EQ(resolved("ref"), "ref.x");
  bool validating = false;
  EXPECT_EQ(resolved("validate:cpu", &validating), "cpu.x");
  EXPECT_TRUE(validating);
  EXPECT_EQ(resolved("cpu.x", &validating), "cpu.x");
  EXPECT_FALSE(validating);
}

TEST(Registry, ErrorsNameTheEngineAndWhy) {
  bool v = false;
  auto unknown = resolve_engine(table(), "widget", "cpu.y", v);
  ASSERT_FALSE(unknown.is_ok());
  EXPECT_EQ(unknown.status().code(), Errc::kNotFound);
  EXPECT_EQ(unknown.status().message(),
            "unknown widget engine 'cpu.y' (engines: ref.x, cpu.x.slow, cpu.x, cuda.x, auto, cpu, "
            "gpu, ref, validate:<engine>)");
  auto no_device = resolve_engine(table(), "widget", "gpu", v);
  ASSERT_FALSE(no_device.is_ok());
  EXPECT_EQ(no_device.status().code(), Errc::kNotSupported);
  EXPECT_EQ(no_device.status().message().rfind("cuda.x needs a CUDA device: ", 0), 0u)
      << no_device.status().message();
  auto not_built = resolve_engine(table(), "widget", "cuda.z", v);
  ASSERT_FALSE(not_built.is_ok());
  EXPECT_EQ(not_built.status().message(), "cuda.z is not available: built without CUDA");
  const std::vector<EngineInfo> cpu_only = {{"cpu.x", "", 1, &yes}};
  auto no_gpu = resolve_engine(cpu_only, "widget", "gpu", v);
  ASSERT_FALSE(no_gpu.is_ok());
  EXPECT_EQ(no_gpu.status().message(), "gpu: no CUDA widget engine: built without CUDA");
  auto none = resolve_engine({{"cpu.x", "", 1, &no}}, "widget", "auto", v);
  ASSERT_FALSE(none.is_ok());
  EXPECT_EQ(none.status().message(), "no widget engine is available");
}

TEST(Registry, AlgorithmsComeFromTheTable) {
  EXPECT_EQ(engine_algorithms(table()), (std::vector<std::string>{"x.slow", "x"}));
  EXPECT_EQ(engine_algorithms(table(), "cuda"), (std::vector<std::string>{"x"}));
}

}  // namespace
}  // namespace warpath
