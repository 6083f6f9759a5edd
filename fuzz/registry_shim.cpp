// The fuzz build of the readers links the parsers, not the engines: the one thing the run
// configuration's validation asks of the classifier registry is its algorithm list, given here
// from fuzz/classifier_algorithms.inc (kept equal to the registry's by a unit test).
#include <string>
#include <vector>

#include "warpath/classify/classifier.hpp"

namespace warpath::classify {

std::vector<std::string> classifier_algorithms() {
  return {
#include "classifier_algorithms.inc"
  };
}

std::string classifier_algorithm_list() {
  std::string s;
  for (const std::string& a : classifier_algorithms()) s += (s.empty() ? "" : ", ") + a;
  return s;
}

}  // namespace warpath::classify
