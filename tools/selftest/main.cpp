// warpath-selftest [--seed N] [--items N] [--all] [--require-gpu] [--engine TEXT [--exact]]
//                  [--json FILE] [--list]
// --list prints the ids of the engines a run would check (one a line) and checks none;
// --exact checks only the engine whose id is TEXT (scripts/gpu-check.sh runs each CUDA engine
// in its own process, so that one engine's crash or sticky CUDA error cannot hide the others).
// The same check as `warpath selftest`, with a hand-rolled argument parser so it needs no
// CLI library (see tools/selftest/CMakeLists.txt).
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "warpath/selftest/selftest.hpp"
#include "warpath/tools/selftest_main.hpp"

int main(int argc, char** argv) {
  warpath::SelftestOptions o;
  std::string json;
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value          = [&](const char* name) -> const char* {
      if (i + 1 >= argc) {
        std::fprintf(stderr, "warpath-selftest: %s needs a value\n", name);
        std::exit(2);
      }
      return argv[++i];
    };
    if (a == "--seed")
      o.seed = std::strtoull(value("--seed"), nullptr, 10);
    else if (a == "--items")
      o.items = std::strtoull(value("--items"), nullptr, 10);
    else if (a == "--engine")
      o.filter = value("--engine");
    else if (a == "--json")
      json = value("--json");
    else if (a == "--all")
      o.all = true;
    else if (a == "--require-gpu")
      o.require_gpu = true;
    else if (a == "--exact")
      o.exact = true;
    else if (a == "--list")
      list = true;
    else {
      std::fprintf(stderr,
                   "usage: warpath-selftest [--seed N] [--items N] [--all] "
                   "[--require-gpu] [--engine TEXT [--exact]] [--json FILE] [--list]\n");
      return a == "--help" || a == "-h" ? 0 : 2;
    }
  }
  if (o.items == 0) o.items = 1;
  if (o.exact && o.filter.empty()) {
    std::fprintf(stderr, "warpath-selftest: --exact needs --engine\n");
    return 2;
  }
  if (list) return warpath::selftest_list(o);
  return warpath::selftest_main(o, json);
}
