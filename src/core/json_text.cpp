// JSON string text (include/warpath/core/json_text.hpp).
#include "warpath/core/json_text.hpp"

#include <cstdio>

namespace warpath {

std::string json_escape(std::string_view s) {
  std::string out;
  out.reserve(s.size());
  for (unsigned char c : s) {
    switch (c) {
      case '"': out += "\\\""; break;
      case '\\': out += "\\\\"; break;
      case '\n': out += "\\n"; break;
      case '\r': out += "\\r"; break;
      case '\t': out += "\\t"; break;
      default:
        if (c < 0x20 || c >= 0x7f) {
          char t[8];
          std::snprintf(t, sizeof t, "\\u%04x", c);
          out += t;
        } else {
          out.push_back(char(c));
        }
    }
  }
  return out;
}

}  // namespace warpath
