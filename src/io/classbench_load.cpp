// src/io/classbench_load.cpp: ClassBench rule and trace files from disk (.gz and .xz allowed).
#include "warpath/io/classbench.hpp"
#include "warpath/io/text_file.hpp"

namespace warpath::io {

Result<std::vector<ClassBenchRule>> load_classbench_rules(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_classbench_rules(text.value(), path);
}

Result<std::vector<TraceEntry>> load_trace(const std::string& path) {
  auto text = read_text_file(path);
  if (!text.is_ok()) return text.status();
  return parse_trace(text.value(), path);
}

}  // namespace warpath::io
