// src/nids/threshold_table.hpp: threshold and detection_filter state for the inspector
// (internal): a window per rule and tracked address, Suricata's semantics.
#pragma once
#include <cstdint>
#include <string>
#include <unordered_map>

#include "warpath/nids/detect.hpp"

namespace warpath::nids::detail {

class ThresholdTable {
 public:
  static constexpr size_t kMaxEntries = 1u << 16;  ///< tracked (rule, address) windows
  /// Whether this match of rule `rule` (its threshold `t`, the packet view it matched, the
  /// packet time) alerts: limit alerts on the first count matches of a window, threshold on
  /// every count-th, both once a window after count, detection_filter after count. A window
  /// starts at a tracked address's first match and lasts t.seconds. With the table full (swept
  /// of expired windows at most once a second of packet time) the match alerts and `full` is set.
  bool allows(uint32_t rule, const Threshold& t, const PacketView& p, uint64_t ts, bool& full);

 private:
  struct Window {
    uint64_t first, length;
    uint32_t count;
    bool alerted;
  };
  std::unordered_map<std::string, Window> windows_;
  uint64_t last_sweep_ = 0;
};

}  // namespace warpath::nids::detail
