// include/warpath/nids/l7.hpp
//
// L7 classification (l7-filter's method, GASPP's L7 traffic classifier): each flow's first
// application bytes, both directions in arrival order with NUL bytes removed (as l7-filter
// strips them), are matched against a set of protocol patterns; the flow's label is the first
// pattern (in file order) that matches. Classification stops at a match or after
// kL7MaxBytes bytes or kL7MaxPackets packets with payload (l7-filter's defaults: 2,048 bytes,
// 10 packets); a flow that ends unlabelled is "unknown". The label is in the flow's EVE record
// (`app_proto`) and rules test it with `app-layer-protocol:NAME` (or `!NAME`).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/status.hpp"
#include "warpath/pattern/pattern.hpp"

namespace warpath::nids {

inline constexpr uint32_t kL7MaxBytes   = 2048;
inline constexpr uint32_t kL7MaxPackets = 10;

/// A protocol set: names[i] is the protocol of patterns[i] (pattern ids are indexes).
struct L7Set {
  std::vector<std::string> names;
  std::vector<pattern::Pattern> patterns;
  std::vector<std::string> skipped;  ///< "name: reason" of patterns no engine here takes
};

/// One flow's classification: its first bytes so far (freed when done) and the label.
struct L7Flow {
  std::string bytes;
  uint8_t packets = 0;  ///< packets with payload taken
  bool done       = false;
  int32_t label   = -1;  ///< index in L7Set::names; -1: none (yet)
};

/// Adds a packet's payload (either direction, arrival order) to `f` and matches the first
/// bytes with `m` (compiled from L7Set::patterns); nothing once `f` is done. True when this
/// packet ended the classification (a label, or the limits). The one body of the NIDS's and
/// the `l7` chain module's classification. `scratch`: the matches, reused.
bool l7_classify(L7Flow& f, const uint8_t* data, uint32_t len, pattern::Matcher& m,
                 std::vector<pattern::Match>& scratch);

/// l7-filter's patterns: the shared data's table (`dir name attributes regex`, # comments;
/// patterns its attributes mark `overmatch` are skipped, as l7-filter advises) or l7-filter .pat
/// files (`protocol name` line, then the regex line). Matched caseless, `.` matching any byte.
/// kParseError naming file and line.
Result<L7Set> parse_l7(std::string_view text, std::string_view name);

}  // namespace warpath::nids
