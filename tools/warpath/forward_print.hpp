// tools/warpath/forward_print.hpp: router counters as a table and as JSON (warpath route,
// warpath demo).
#pragma once
#include <nlohmann/json.hpp>

#include "warpath/forward/router.hpp"

namespace warpath::cli {

nlohmann::ordered_json counters_json(const forward::ForwardCounters& c);
void print_counters(const forward::ForwardCounters& c);

}  // namespace warpath::cli
