// bench/common/nids_config.hpp: the inspector the NIDS benchmarks time (warpath-nids-bench,
// warpath-gpu-bench's inspector rows): detection engine `engine` over cpu.flow and cpu.stream,
// midstream pickup and any IPv4 header checksum taken (generated traffic need not be exact).
#pragma once
#include <string>

#include "warpath/nids/inspector.hpp"

namespace warpath::bench {

inline nids::InspectorConfig offline_inspector_config(const std::string& engine) {
  nids::InspectorConfig cfg;
  cfg.engine           = engine;
  cfg.flow_engine      = "cpu.flow";
  cfg.stream_engine    = "cpu.stream";
  cfg.stream.midstream = true;
  cfg.any_checksum     = true;
  return cfg;
}

}  // namespace warpath::bench
