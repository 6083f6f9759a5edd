// src/io/pattern_load.cpp: pattern files from disk (.gz and .xz allowed).
#include "warpath/io/text_file.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::pattern {

Result<std::vector<Pattern>> read_pattern_file(const std::string& path) {
  auto text = io::read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_pattern_text(*text, path);
}

}  // namespace warpath::pattern
