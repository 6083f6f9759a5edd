// tools/warpath/summary_print.hpp: the readable and JSON forms of a ParseSummary.
#pragma once
#include <cstdio>
#include <nlohmann/json.hpp>
#include <string>

#include "warpath/packet/summary.hpp"

namespace warpath::cli {

void print_summary(const packet::ParseSummary& s, std::FILE* out = stdout);
nlohmann::json summary_json(const packet::ParseSummary& s);

}  // namespace warpath::cli
