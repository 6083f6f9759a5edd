// src/nids/cpu/port_filter.hpp: cpu.nids's cheap first test of a candidate rule's ports
// (Suricata groups its rules by port for the same reason). Every rule's port sets cut the
// 65,536 ports into classes within which no set changes; per class two bitsets over the rules
// say which could take a unit with that destination port and which with that source port
// (either way round for a `<>` rule). A TCP or UDP unit's candidates are the prefilter's and
// the always-candidates that both bitsets keep: a necessary condition of header_matches, which
// still decides, so the answers are the same; only the rules that cannot match are skipped.
#pragma once
#include <cstdint>
#include <vector>

#include "warpath/nids/rule.hpp"

namespace warpath::nids::detail {

class PortFilter {
 public:
  explicit PortFilter(const std::vector<Rule>& rules);

  /// The rules a unit with these ports may match, as a bitset over rule indexes (words()
  /// words); valid until the next call. nullptr (every rule) when the filter is off: rules
  /// whose ports cut the port space into so many classes that the bitsets would pass
  /// kMaxWords.
  const uint64_t* allowed(uint16_t sport, uint16_t dport);
  static constexpr size_t kMaxWords = size_t(1) << 21;  ///< 16 MiB per direction
  static bool test(const uint64_t* set, uint32_t rule) { return set[rule / 64] >> (rule % 64) & 1; }
  size_t classes() const noexcept { return reps_.size(); }
  size_t words() const noexcept { return words_; }

 private:
  std::vector<uint16_t> class_of_;  ///< port -> class
  std::vector<uint16_t> reps_;      ///< class -> its first port
  size_t words_ = 0;
  std::vector<uint64_t> by_dport_, by_sport_;  ///< class * words_ + word
  std::vector<uint64_t> allowed_;
};

}  // namespace warpath::nids::detail
