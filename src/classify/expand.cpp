#include "classify/expand.hpp"

namespace warpath::classify::detail {

std::vector<PortPrefix> range_to_prefixes(uint16_t lo, uint16_t hi) {
  std::vector<PortPrefix> out;
  uint32_t a       = lo;
  const uint32_t b = hi;
  while (a <= b) {
    // The largest aligned block starting at a that stays within [a, b].
    unsigned size_bits = 0;
    while (size_bits < 16) {
      const uint32_t next = size_bits + 1;
      if ((a & ((1u << next) - 1)) != 0 || a + (1u << next) - 1 > b) break;
      size_bits = next;
    }
    out.push_back({uint16_t(a), uint8_t(16 - size_bits)});
    a += 1u << size_bits;
  }
  return out;
}

size_t expand_rule(const Rule& r, uint32_t index, KeyLayout layout, std::vector<Entry>& out) {
  const unsigned words = key_words(layout), pw = ports_word(layout);
  const auto sp = range_to_prefixes(r.sport_lo, r.sport_hi);
  const auto dp = range_to_prefixes(r.dport_lo, r.dport_hi);
  size_t added  = 0;
  for (const PortPrefix& s : sp)
    for (const PortPrefix& d : dp) {
      Entry e;
      for (unsigned w = 0; w < words; ++w) {
        e.value[w] = r.value[w];
        e.mask[w]  = r.mask[w];
      }
      const uint32_t smask = s.len ? (0xFFFFu << (16 - s.len)) & 0xFFFFu : 0;
      const uint32_t dmask = d.len ? (0xFFFFu << (16 - d.len)) & 0xFFFFu : 0;
      const uint32_t pmask = smask << 16 | dmask, pvalue = uint32_t(s.value) << 16 | d.value;
      // Bits both the rule's port mask and the range fix must agree, else nothing matches.
      if (((e.value[pw] ^ pvalue) & e.mask[pw] & pmask) != 0) continue;
      e.mask[pw] |= pmask;
      e.value[pw] = (e.value[pw] | pvalue) & e.mask[pw];
      e.priority  = r.priority;
      e.index     = index;
      out.push_back(e);
      ++added;
    }
  return added;
}

std::vector<Entry> expand_rules(const RuleSet& rules) {
  std::vector<Entry> out;
  out.reserve(rules.rules.size());
  for (size_t i = 0; i < rules.rules.size(); ++i)
    expand_rule(rules.rules[i], uint32_t(i), rules.layout, out);
  return out;
}

}  // namespace warpath::classify::detail
