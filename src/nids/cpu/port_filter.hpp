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
  /// kMaxWords. The last few (source class, destination class) pairs' sets are kept (a
  /// direct-mapped cache of at most 1 MiB, or of one set): a link's units mostly repeat a few
  /// pairs, and the AND over every rule's word cost as much as the rest of a unit's candidate
  /// selection.
  const uint64_t* allowed(uint16_t sport, uint16_t dport) {
    if (words_ == 0) return nullptr;
    const uint64_t key = uint64_t(class_of_[dport]) * reps_.size() + class_of_[sport];
    const uint32_t slot =
        cache_bits_ ? uint32_t((key * 0x9E3779B97F4A7C15ull) >> (64 - cache_bits_)) : 0;
    if (keys_[slot] != key) fill(slot, key);
    last_key_  = key;
    last_slot_ = slot;
    return &cache_[size_t(slot) * words_];
  }
  /// The (class pair, cache slot) of the last allowed() that returned a set: a caller may keep
  /// what it derives from a set per slot, valid while the slot's key stays the same.
  uint64_t last_key() const noexcept { return last_key_; }
  uint32_t last_slot() const noexcept { return last_slot_; }
  uint32_t cache_slots() const noexcept { return uint32_t(1) << cache_bits_; }
  /// Port groups (Suricata's signature grouping by port): a port below 1024, or one of the
  /// well-known high ports of Suricata's default grouping whitelists, is in a group of its own,
  /// its class; the other ports form two groups, the registered ports (to 32767) and the
  /// dynamic ones, where clients take their ephemeral ports. Classes are cut at the groups'
  /// edges, so a class pair decides the group pair. Writes to `out` (words() words) the rules
  /// a unit whose ports are in the groups of `sport` and `dport` may match: a superset of
  /// allowed(sport, dport), the same for every pair of ports of those groups.
  void group_allowed(uint16_t sport, uint16_t dport, uint64_t* out) const;
  /// The group of a port: -1 for one of its own, else 0 (registered) or 1 (dynamic).
  static int group_of(uint16_t port) {
    switch (port) {
      case 1433:
      case 3306:
      case 3389:
      case 5060:
      case 6666:
      case 6667:
      case 8080:
        return -1;
      default:
        return port < 1024 ? -1 : port < 32768 ? 0 : 1;
    }
  }
  static constexpr size_t kMaxWords = size_t(1) << 21;  ///< 16 MiB per direction
  static bool test(const uint64_t* set, uint32_t rule) { return set[rule / 64] >> (rule % 64) & 1; }
  size_t classes() const noexcept { return reps_.size(); }
  size_t words() const noexcept { return words_; }

 private:
  std::vector<uint16_t> class_of_;  ///< port -> class
  std::vector<uint16_t> reps_;      ///< class -> its first port
  size_t words_ = 0;
  std::vector<uint64_t> by_dport_, by_sport_;  ///< class * words_ + word
  /// The shared groups' sets (registered, dynamic): the union of their classes' sets.
  std::vector<uint64_t> shared_dport_[2], shared_sport_[2];
  void fill(uint32_t slot, uint64_t key);
  uint32_t cache_bits_ = 0;
  std::vector<uint64_t> keys_;   ///< per slot: its class pair, ~0 when empty
  std::vector<uint64_t> cache_;  ///< per slot: its words_ words
  uint64_t last_key_  = ~uint64_t(0);
  uint32_t last_slot_ = 0;
};

}  // namespace warpath::nids::detail
