// include/warpath/core/json_text.hpp: text for JSON written by hand (the self-test's report,
// the NIDS's EVE lines), where a JSON library is not a dependency.
#pragma once
#include <string>
#include <string_view>

namespace warpath {

/// `s` as the inside of a JSON string: quote and backslash escaped, \n \r \t by name, other
/// control bytes and every byte above 0x7e as \u00XX (bytes, not UTF-8: the output is always
/// valid JSON).
std::string json_escape(std::string_view s);

}  // namespace warpath
