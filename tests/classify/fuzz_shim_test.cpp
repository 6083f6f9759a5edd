// The fuzz build's algorithm list (fuzz/classifier_algorithms.inc, used by
// fuzz/registry_shim.cpp instead of the engine registry) is the registry's.
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "warpath/classify/classifier.hpp"

namespace warpath::classify {
namespace {

TEST(FuzzShim, AlgorithmListIsTheRegistrys) {
  const std::vector<std::string> shim = {
#include "../../fuzz/classifier_algorithms.inc"
  };
  EXPECT_EQ(shim, classifier_algorithms());
}

}  // namespace
}  // namespace warpath::classify
