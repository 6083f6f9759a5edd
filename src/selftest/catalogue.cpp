// src/selftest/catalogue.cpp: the engine catalogue (see include/warpath/selftest/catalogue.hpp):
// the families the libraries registered (core/registry.hpp: WARPATH_REGISTER_ENGINE_FAMILY),
// and the parsers', whose check is the self-test's own (it needs the traffic generator).
#include "warpath/selftest/catalogue.hpp"

#include <cstddef>

#include "warpath/packet/parser.hpp"

namespace warpath {

WARPATH_REGISTER_ENGINE_FAMILY(packet, "packet", 10, &packet::parser_engines,
                               &packet::check_parser_engine);

/// engine_families.cpp, which CMake writes (warpath_engine_family_refs): its reference to each
/// library's registration keeps the registry files in the link.
size_t engine_family_refs();

const std::vector<EngineFamily>& engine_families() {
  static const std::vector<EngineFamily> families = [] {
    (void)engine_family_refs();
    return engine_family_list();
  }();
  return families;
}

}  // namespace warpath
