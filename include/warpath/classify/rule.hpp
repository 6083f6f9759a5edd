// include/warpath/classify/rule.hpp
//
// Classification rules and keys: one representation for ClassBench 5-tuple rules and
// OpenFlow 1.0 12-field rules (GSwitch's 288-bit tuples).
//
// Keys
//   A key is a few 32-bit words (GSwitch's tuple), in one of two layouts:
//     KeyLayout::kFiveTuple  4 words: [0] source IPv4, [1] destination IPv4,
//                            [2] sport << 16 | dport, [3] protocol (low 8 bits)
//     KeyLayout::kOpenFlow   9 words: packet::OfTuple (flow_key.hpp): in_port|dl_vlan, dl_src,
//                            dl_dst, dl_type|pcp|tos, nw_proto, nw_src, nw_dst, tp_src|tp_dst
//   Both put the two transport ports in one word, source port in the high half
//   (ports_word(): 2 or 8). Batches of keys are structure-of-arrays (GSwitch Algorithm 3
//   READSOA): word w of key i is at words[w * stride + i], so a GPU warp reads 32 keys' word w
//   in one coalesced load and a burst is a pointer offset.
//
// Rules
//   value/mask per word (a key matches word w when (key[w] & mask[w]) == value[w]; value has
//   no bits outside mask), plus inclusive ranges on the two ports of ports_word() (ClassBench
//   port ranges; full 0..65535 ranges for OpenFlow rules, whose ports are value/mask).
//   A key matches a rule when every word and both ranges match.
//
// Priorities
//   The answer for a key is the index of the matching rule with the highest priority; among
//   equal priorities the lowest index (earliest in the file) wins; kNoMatch when none matches.
//   ClassBench files: priority = rules - 1 - index (the first line is the highest). OpenFlow
//   files: the explicit priority= (default 32768, as ovs-ofctl). Priorities are 32-bit and
//   indices 32-bit, so any number of rules is ordered exactly (GSwitch packed 8 bits of
//   priority with a 24-bit index into one atomicMax; warpath's GPU engines use a 64-bit one).
//
// Rule files (errors: kParseError "file:line: reason"; nothing half-loaded is returned)
//   classbench  see io/classbench.hpp (both dialects; flags are ignored for classification)
//   openflow    one flow per line in ovs-ofctl syntax:
//                 [priority=N,]field=value[/mask],...[,actions=...]
//               fields: in_port, dl_src, dl_dst (MAC[/mask]), dl_vlan, dl_vlan_pcp, dl_type,
//               nw_tos, nw_proto, nw_src, nw_dst (a.b.c.d[/len or /mask]), tp_src, tp_dst
//               (value[/mask]); shorthands ip, tcp, udp, icmp, arp set dl_type/nw_proto.
//               Whitespace and a trailing comment after '#' are ignored; blank lines skipped.
//               actions= is kept as text (the firewall maps it to permit/deny/output).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "warpath/core/hd.hpp"
#include "warpath/core/memory.hpp"
#include "warpath/core/status.hpp"
#include "warpath/io/classbench.hpp"

namespace warpath::classify {

inline constexpr uint32_t kNoMatch     = 0xFFFF'FFFFu;
inline constexpr unsigned kMaxKeyWords = 9;

enum class KeyLayout : uint8_t { kFiveTuple = 0, kOpenFlow = 1 };

/// Words per key, and which word holds the two ports.
WARPATH_HD constexpr unsigned key_words(KeyLayout l) { return l == KeyLayout::kFiveTuple ? 4 : 9; }
WARPATH_HD constexpr unsigned ports_word(KeyLayout l) { return l == KeyLayout::kFiveTuple ? 2 : 8; }

struct Rule {
  uint32_t value[kMaxKeyWords] = {};
  uint32_t mask[kMaxKeyWords]  = {};
  uint16_t sport_lo = 0, sport_hi = 0xFFFF;  ///< inclusive, on the high half of ports_word()
  uint16_t dport_lo = 0, dport_hi = 0xFFFF;  ///< inclusive, on the low half
  uint32_t priority = 0;                     ///< higher wins; ties: lower index wins
  uint32_t line     = 0;                     ///< 1-based line in the rule file (0: generated)
  std::string action;                        ///< OpenFlow actions= text; empty for ClassBench
};

struct RuleSet {
  KeyLayout layout = KeyLayout::kFiveTuple;
  std::vector<Rule> rules;  ///< the answer to a lookup is an index into this vector
  std::string name;         ///< file name or generator description
};

/// "a beats b": higher priority, or equal priority and lower index.
WARPATH_HD constexpr bool better(uint32_t prio_a, uint32_t index_a, uint32_t prio_b,
                                 uint32_t index_b) {
  return prio_a > prio_b || (prio_a == prio_b && index_a < index_b);
}

/// The 64-bit order key GPU engines atomicMax: larger is better, kNoMatch maps to 0.
WARPATH_HD constexpr uint64_t order_key(uint32_t priority, uint32_t index) {
  return uint64_t(priority) << 32 | (0xFFFF'FFFFu - index);  // index < kNoMatch, so never 0
}

/// A batch of keys in SoA form (see the header comment). Does not own memory.
struct KeyBatch {
  const uint32_t* words = nullptr;
  uint32_t count        = 0;
  uint32_t stride       = 0;  ///< >= count
  KeyLayout layout      = KeyLayout::kFiveTuple;
  WARPATH_HD uint32_t word(unsigned w, uint32_t i) const { return words[size_t(w) * stride + i]; }
  /// Keys [offset, offset + n) as a batch of their own.
  KeyBatch slice(uint32_t offset, uint32_t n) const { return {words + offset, n, stride, layout}; }
};

/// Owns keys in SoA form.
class KeyBuffer {
 public:
  KeyBuffer() = default;
  KeyBuffer(KeyLayout layout, uint32_t count);
  KeyLayout layout() const { return layout_; }
  uint32_t size() const { return count_; }
  void set(uint32_t i, const uint32_t* key);  ///< key_words(layout) words
  void get(uint32_t i, uint32_t* key) const;
  KeyBatch view() const { return {words_.data(), count_, count_, layout_}; }

 private:
  KeyLayout layout_ = KeyLayout::kFiveTuple;
  uint32_t count_   = 0;
  std::vector<uint32_t> words_;
};

/// 5-tuple key words from a trace entry / flow key.
inline void five_tuple_words(const packet::FiveTuple4& t, uint32_t* key) {
  key[0] = t.src;
  key[1] = t.dst;
  key[2] = uint32_t(t.sport) << 16 | t.dport;
  key[3] = t.proto;
}

/// ClassBench rules (file order = priority order) as a RuleSet.
RuleSet from_classbench(const std::vector<io::ClassBenchRule>& rules, std::string name);
/// Keys of a ClassBench trace.
KeyBuffer keys_from_trace(const std::vector<io::TraceEntry>& trace);
/// `keys` copied into `words` (page-locked where a GPU is, so a CUDA engine copies them
/// straight: warpath/core/memory.hpp), as a batch over that copy with the same stride.
KeyBatch pinned_copy(const KeyBatch& keys, PinnedVector<uint32_t>& words);

/// OpenFlow rules in ovs-ofctl syntax (see the header comment).
Result<RuleSet> parse_openflow_rules(std::string_view text, std::string_view name);
/// Reads a rule file (.gz/.xz allowed): format "classbench" or "openflow".
Result<RuleSet> load_rules(const std::string& path, std::string_view format);
/// One rule as ovs-ofctl text (inverse of parse_openflow_rules for kOpenFlow sets).
std::string format_openflow_rule(const Rule& r);

/// OpenFlow traces: one tuple per line, the 12 fields in OpenFlow 1.0 order
///   in_port dl_src dl_dst dl_vlan dl_vlan_pcp dl_type nw_tos nw_proto nw_src nw_dst tp_src tp_dst
/// (MACs as xx:xx:xx:xx:xx:xx, addresses dotted, dl_type hex or decimal, the rest decimal).
Result<KeyBuffer> parse_openflow_trace(std::string_view text, std::string_view name);
std::string format_openflow_key(const uint32_t* key);
/// Keys of a trace file: ClassBench trace (kFiveTuple) or OpenFlow trace (kOpenFlow).
Result<KeyBuffer> load_keys(const std::string& path, KeyLayout layout);
/// A 5-tuple rule as a ClassBench rule line (ports must be ranges, addresses prefixes, the
/// protocol exact or wildcard); kInvalidArgument otherwise.
Result<std::string> format_classbench(const Rule& r);

/// Whether `key` matches rule `r` (the plain definition; the reference engine's test).
bool rule_matches(const Rule& r, KeyLayout layout, const uint32_t* key);

}  // namespace warpath::classify
