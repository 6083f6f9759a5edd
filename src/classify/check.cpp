// Generators and differential checks for classifiers (include/warpath/classify/check.hpp).
#include "warpath/classify/check.hpp"

#include <algorithm>
#include <random>
#include <set>
#include <unordered_set>

#include "classify/engines.hpp"

namespace warpath::classify {
namespace {

// A field of a key layout: word, shift, width (the generator wildcards whole fields or, for
// 32-bit address fields, prefixes of them).
struct Field {
  unsigned word, shift, bits;
};
const std::vector<Field>& fields_of(KeyLayout l) {
  static const std::vector<Field> five = {
      {0, 0, 32}, {1, 0, 32}, {2, 16, 16}, {2, 0, 16}, {3, 0, 8}};
  static const std::vector<Field> of = {
      {0, 16, 16}, {0, 0, 16}, {1, 0, 32}, {2, 16, 16}, {2, 0, 16}, {3, 0, 32},  {4, 16, 16},
      {4, 8, 8},   {4, 0, 8},  {5, 24, 8}, {6, 0, 32},  {7, 0, 32}, {8, 16, 16}, {8, 0, 16}};
  return l == KeyLayout::kFiveTuple ? five : of;
}

uint32_t field_mask(const Field& f, unsigned keep_bits) {
  const uint32_t full = f.bits == 32 ? 0xFFFF'FFFFu : (1u << f.bits) - 1;
  const uint32_t pre  = keep_bits == 0        ? 0
                        : keep_bits >= f.bits ? full
                                              : full & ~((1u << (f.bits - keep_bits)) - 1);
  return pre << f.shift;
}

// A rule that matches `key & mask` exactly; ports of 5-tuple rules become ranges lo == hi or
// full ranges, the way ClassBench writes them.
Rule rule_from(const uint32_t* key, const uint32_t* mask, KeyLayout l) {
  Rule r;
  for (unsigned w = 0; w < key_words(l); ++w) {
    r.mask[w]  = mask[w];
    r.value[w] = key[w] & mask[w];
  }
  if (l == KeyLayout::kFiveTuple) {
    const unsigned pw = ports_word(l);
    const uint32_t m = r.mask[pw], v = r.value[pw];
    if ((m >> 16) == 0xFFFF) r.sport_lo = r.sport_hi = uint16_t(v >> 16);
    if ((m & 0xFFFF) == 0xFFFF) r.dport_lo = r.dport_hi = uint16_t(v);
    // Partial port masks are kept as masks (value/mask rules are valid 5-tuple rules too).
    if ((m >> 16) == 0xFFFF) r.mask[pw] &= 0xFFFF, r.value[pw] &= 0xFFFF;
    if ((m & 0xFFFF) == 0xFFFF) r.mask[pw] &= 0xFFFF0000u, r.value[pw] &= 0xFFFF0000u;
  }
  return r;
}

// Clears the bits a real key of the layout cannot have (the 5-tuple protocol word holds 8
// bits; OpenFlow's nw_proto word only its top byte).
void make_valid(KeyLayout l, uint32_t* key) {
  if (l == KeyLayout::kFiveTuple) key[3] &= 0xFFu;
  if (l == KeyLayout::kOpenFlow) key[5] &= 0xFF00'0000u;
}

}  // namespace

Result<SyntheticSet> synthetic_rules(const SyntheticParams& p) {
  if (p.fields != 5 && p.fields != 12)
    return Status(Errc::kInvalidArgument, "fields must be 5 or 12");
  if (p.classes == 0 || p.full == 0 || p.full > p.classes || p.matching == 0 ||
      p.matching > p.classes || p.rules < p.classes)
    return Status(Errc::kInvalidArgument,
                  "need 1 <= F <= C, 1 <= Cm <= C and N >= C (N=" + std::to_string(p.rules) +
                      " C=" + std::to_string(p.classes) + " F=" + std::to_string(p.full) +
                      " Cm=" + std::to_string(p.matching) + ")");
  const KeyLayout l    = p.fields == 5 ? KeyLayout::kFiveTuple : KeyLayout::kOpenFlow;
  const unsigned words = key_words(l);
  const auto& fields   = fields_of(l);
  std::mt19937_64 rng(p.seed);
  // C distinct masks: each field kept or wildcarded; addresses may keep a prefix.
  std::set<std::vector<uint32_t>> seen;
  std::vector<std::vector<uint32_t>> masks;
  for (uint64_t tries = 0; masks.size() < p.classes; ++tries) {
    if (tries > 1000ull * p.classes + 100000)
      return Status(Errc::kInvalidArgument, "cannot make " + std::to_string(p.classes) +
                                                " distinct masks with " + std::to_string(p.fields) +
                                                " fields");
    std::vector<uint32_t> m(words, 0);
    for (const Field& f : fields) {
      if (rng() % 2) continue;
      const unsigned keep = f.bits == 32 ? unsigned(8 + rng() % 25) : f.bits;
      m[f.word] |= field_mask(f, keep);
    }
    if (seen.insert(m).second) masks.push_back(m);
  }
  // Class sizes: F full classes share N - (C - F) rules, the rest hold one.
  std::vector<uint32_t> size(p.classes, 1);
  const uint32_t in_full = p.rules - (p.classes - p.full);
  for (uint32_t c = 0; c < p.full; ++c) size[c] = in_full / p.full + (c < in_full % p.full ? 1 : 0);
  std::shuffle(size.begin(), size.end(), rng);
  // Groups of Cm classes share base tuples: base j of a group yields rule j of each class in
  // it, so a tuple equal to a base matches Cm classes.
  SyntheticSet out;
  out.rules.layout = l;
  out.rules.name   = "synthetic N=" + std::to_string(p.rules) + " C=" + std::to_string(p.classes) +
                   " F=" + std::to_string(p.full) + " Cm=" + std::to_string(p.matching) +
                   " f=" + std::to_string(p.fields) + " seed=" + std::to_string(p.seed);
  std::vector<std::vector<std::vector<uint32_t>>> bases;  // [group][j] -> key
  std::vector<uint32_t> shared;  // per group: bases every class of the group has a rule from
  for (uint32_t g0 = 0; g0 < p.classes; g0 += p.matching) {
    const uint32_t g1 = std::min(p.classes, g0 + p.matching);
    uint32_t most = 0, least = ~0u;
    for (uint32_t c = g0; c < g1; ++c)
      most = std::max(most, size[c]), least = std::min(least, size[c]);
    shared.push_back(least);
    std::vector<std::vector<uint32_t>> group(most, std::vector<uint32_t>(words));
    for (auto& b : group) {
      for (auto& w : b) w = uint32_t(rng());
      make_valid(l, b.data());
    }
    for (uint32_t c = g0; c < g1; ++c) {
      std::set<std::vector<uint32_t>> values;  // distinct rules within a class
      for (uint32_t j = 0; j < size[c]; ++j) {
        std::vector<uint32_t>& b = group[j];
        std::vector<uint32_t> v(words);
        for (int attempt = 0; attempt < 64; ++attempt) {
          for (unsigned w = 0; w < words; ++w) v[w] = b[w] & masks[c][w];
          if (values.insert(v).second) break;
          for (auto& w : b) w = uint32_t(rng());  // collision: a new base for this slot
          make_valid(l, b.data());
        }
        Rule r     = rule_from(b.data(), masks[c].data(), l);
        r.priority = uint32_t(rng() % (uint64_t(p.rules) * 4));
        out.rules.rules.push_back(std::move(r));
      }
    }
    bases.push_back(std::move(group));
  }
  out.keys = KeyBuffer(l, p.tuples);
  for (uint32_t i = 0; i < p.tuples; ++i) {
    // A base that every class of its group cut a rule from: the tuple matches Cm classes.
    const size_t g = rng() % bases.size();
    out.keys.set(i, bases[g][rng() % shared[g]].data());
  }
  return out;
}

RuleSet random_rule_set(uint64_t seed, KeyLayout layout, uint32_t n) {
  std::mt19937_64 rng(seed);
  RuleSet set;
  set.layout           = layout;
  set.name             = "random seed=" + std::to_string(seed);
  const unsigned words = key_words(layout);
  auto port_range      = [&](uint16_t& lo, uint16_t& hi) {
    switch (rng() % 7) {
      case 0:
        lo = 0, hi = 65535;
        break;
      case 1:
        lo = hi = uint16_t(rng());
        break;
      case 2:
        lo = 0, hi = 0;
        break;
      case 3:
        lo = hi = 65535;
        break;
      case 4:
        lo = 1024, hi = 65535;
        break;
      case 5:
        lo = 0, hi = uint16_t(rng() % 1024);
        break;
      default: {
        uint16_t a = uint16_t(rng()), b = uint16_t(rng());
        lo = std::min(a, b), hi = std::max(a, b);
      }
    }
  };
  for (uint32_t i = 0; i < n; ++i) {
    if (i > 0 && rng() % 16 == 0) {  // a duplicate of an earlier rule
      Rule dup     = set.rules[rng() % set.rules.size()];
      dup.priority = rng() % 2 ? dup.priority : uint32_t(rng() % (4ull * n + 1));
      set.rules.push_back(dup);
      continue;
    }
    Rule r;
    if (layout == KeyLayout::kFiveTuple) {
      static const unsigned lens[] = {0, 8, 16, 24, 32};
      for (unsigned w = 0; w < 2; ++w) {
        const unsigned len = rng() % 3 == 0 ? unsigned(rng() % 33) : lens[rng() % 5];
        r.mask[w]          = len == 0 ? 0 : 0xFFFF'FFFFu << (32 - len);
        r.value[w]         = uint32_t(rng() % 4 ? (rng() & 0x0F0F0F0F) : rng()) & r.mask[w];
      }
      port_range(r.sport_lo, r.sport_hi);
      port_range(r.dport_lo, r.dport_hi);
      if (rng() % 2) {
        r.mask[3]  = 0xFF;
        r.value[3] = rng() % 2 ? 6u : 17u;
      }
    } else {
      for (const Field& f : fields_of(layout)) {
        const unsigned pick = unsigned(rng() % 4);
        if (pick == 0) continue;  // wildcard
        const unsigned keep = pick == 1 ? unsigned(rng() % (f.bits + 1)) : f.bits;
        const uint32_t m    = field_mask(f, keep);
        r.mask[f.word] |= m;
        r.value[f.word] |= uint32_t(rng() % 4 ? (rng() & 0x03030303) : rng()) & m;
      }
    }
    r.priority = layout == KeyLayout::kFiveTuple ? n - 1 - i : uint32_t(rng() % (4ull * n + 1));
    set.rules.push_back(r);
    (void)words;
  }
  if (layout == KeyLayout::kFiveTuple && n > 0) {
    set.rules.back()          = Rule{};  // the catch-all, last as in ClassBench files
    set.rules.back().priority = 0;
  }
  return set;
}

KeyBuffer random_keys(const RuleSet& set, uint64_t seed, uint32_t count) {
  std::mt19937_64 rng(seed ^ 0x9e3779b97f4a7c15ull);
  const unsigned words = key_words(set.layout), pw = ports_word(set.layout);
  KeyBuffer keys(set.layout, count);
  uint32_t k[kMaxKeyWords];
  for (uint32_t i = 0; i < count; ++i) {
    for (unsigned w = 0; w < words; ++w) k[w] = uint32_t(rng() % 4 ? (rng() & 0x0F0F0F0F) : rng());
    make_valid(set.layout, k);
    if (!set.rules.empty() && rng() % 2) {
      const Rule& r = set.rules[rng() % set.rules.size()];
      for (unsigned w = 0; w < words; ++w) k[w] = (k[w] & ~r.mask[w]) | r.value[w];
      auto pick = [&](uint16_t lo, uint16_t hi) -> uint32_t {
        switch (rng() % 3) {
          case 0:
            return lo;
          case 1:
            return hi;
          default:
            return lo + uint32_t(rng() % (uint32_t(hi) - lo + 1));
        }
      };
      const uint32_t sp = pick(r.sport_lo, r.sport_hi), dp = pick(r.dport_lo, r.dport_hi);
      const uint32_t ports = sp << 16 | dp;
      // The range picks win where the rule's port mask leaves bits free.
      k[pw] = (ports & ~r.mask[pw]) | r.value[pw];
    }
    keys.set(i, k);
  }
  return keys;
}

std::string compare_classifier(const Classifier& engine, const Classifier& ref,
                               const KeyBuffer& keys, const std::vector<uint32_t>& sizes) {
  ExecContext ctx;
  const uint32_t n   = keys.size();
  const KeyBatch all = keys.view();
  std::vector<uint32_t> want(n), got(n);
  if (Status s = ref.classify(all, {want.data(), n}, ctx); !s.is_ok()) return s.message();
  for (uint32_t size : sizes) {
    std::fill(got.begin(), got.end(), 0xDEADBEEFu);
    if (size == 0) {
      if (Status s = engine.classify(all.slice(0, 0), {got.data(), 0}, ctx); !s.is_ok())
        return "burst 0: " + s.message();
      if (std::any_of(got.begin(), got.end(), [](uint32_t x) { return x != 0xDEADBEEFu; }))
        return "burst 0 wrote results";
      continue;
    }
    const uint32_t cover = check_cover(n, size);  // a prefix for small bursts
    for (uint32_t off = 0; off < cover; off += size) {
      const uint32_t k = std::min(size, cover - off);
      if (Status s = engine.classify(all.slice(off, k), {got.data() + off, k}, ctx); !s.is_ok())
        return "burst " + std::to_string(size) + ": " + s.message();
    }
    for (uint32_t i = 0; i < cover; ++i)
      if (got[i] != want[i]) {
        std::string key;
        for (unsigned w = 0; w < key_words(keys.layout()); ++w)
          key += (w ? " " : "") + std::to_string(all.word(w, i));
        auto text = [](uint32_t a) {
          return a == kNoMatch ? std::string("-1") : std::to_string(a);
        };
        return "key " + std::to_string(i) + " [" + key + "] at burst " + std::to_string(size) +
               ": got rule " + text(got[i]) + ", reference rule " + text(want[i]);
      }
  }
  return {};
}

CheckReport check_classifier_engine(std::string_view id, uint64_t seed, uint64_t items) {
  CheckReport report{"classify", std::string(id), seed, 0, false, {}};
  const auto n = uint32_t(std::clamp<uint64_t>(items, 1, 1u << 22));
  for (KeyLayout layout : {KeyLayout::kFiveTuple, KeyLayout::kOpenFlow}) {
    const RuleSet rules = random_rule_set(seed, layout, 500);
    auto engine         = make_classifier(id, rules);
    if (!engine.is_ok()) {
      if (engine.status().code() == Errc::kNotSupported && layout == KeyLayout::kOpenFlow &&
          report.items > 0)
        continue;  // a 5-tuple-only engine
      report.skipped = engine.status().code() == Errc::kNotSupported;
      report.detail  = engine.status().message();
      return report;
    }
    auto ref = detail::make_ref_linear(rules);
    if (!ref.is_ok()) {
      report.detail = ref.status().message();
      return report;
    }
    const KeyBuffer keys = random_keys(rules, seed, n);
    report.detail =
        compare_classifier(**engine, **ref, keys, {0, 1, 31, 32, 33, 255, 256, 257, 4096, n});
    if (!report.detail.empty()) {
      report.detail =
          (layout == KeyLayout::kFiveTuple ? "5-tuple: " : "OpenFlow: ") + report.detail;
      return report;
    }
    report.items += n;
    // Engines that update in place: random erases and inserts (rules of another random set,
    // at new and reused indexes) on the engine and the reference alike, past a TupleMerge
    // collection (1,024 updates), compared every 275 updates on 4,096 keys (few calls: the
    // GPU self-test has minutes, not hours).
    const RuleSet more   = random_rule_set(seed + 1, layout, 300);
    const KeyBuffer some = random_keys(rules, seed + 2, 4096);
    std::mt19937_64 rng(seed ^ 0x5eedu);
    for (uint32_t u = 1; u <= 1100; ++u) {
      const uint32_t index = uint32_t(rng() % 800);
      const bool insert    = rng() % 2;
      const Rule& r        = more.rules[rng() % more.rules.size()];
      const Status a = insert ? (*engine)->insert(index, r) : (*engine)->erase(index);
      if (a.code() == Errc::kNotSupported) break;  // an engine that only rebuilds
      const Status b = insert ? (*ref)->insert(index, r) : (*ref)->erase(index);
      if (a.is_ok() != b.is_ok()) {
        report.detail = std::string(insert ? "insert" : "erase") + " of rule " +
                        std::to_string(index) + " at update " + std::to_string(u) + ": " +
                        (a.is_ok() ? "ok" : a.message()) + ", the reference: " +
                        (b.is_ok() ? "ok" : b.message());
        return report;
      }
      if (u % 275 != 0) continue;
      report.detail = compare_classifier(**engine, **ref, some, {33, 4096});
      if (!report.detail.empty()) {
        report.detail = (layout == KeyLayout::kFiveTuple ? "5-tuple" : "OpenFlow") +
                        std::string(", after ") + std::to_string(u) + " updates: " + report.detail;
        return report;
      }
      report.items += 4096;
    }
  }
  // One tuple class of 700 rules (every rule /24 to /24, TCP, exact ports): more values than a
  // GPU tuple table holds (256, GSwitch Table 2), so cuda.tuple/bloom split the class over
  // three tables, which random sets rarely make them do.
  RuleSet big;
  big.layout = KeyLayout::kFiveTuple;
  big.name   = "one class of 700 rules";
  std::mt19937_64 rng(seed ^ 0xc1a55u);
  for (uint32_t i = 0; i < 700; ++i) {
    Rule r;
    r.mask[0] = r.mask[1] = 0xFFFF'FF00u;
    r.value[0]            = uint32_t(rng()) & 0x0F0F'0F00u;
    r.value[1]            = uint32_t(rng()) & 0x0F0F'0F00u;
    r.mask[3]             = 0xFF;
    r.value[3]            = 6;
    r.sport_lo = r.sport_hi = uint16_t(rng());
    r.dport_lo = r.dport_hi = uint16_t(80 + rng() % 4);
    r.priority              = 700 - i;
    big.rules.push_back(r);
  }
  auto engine = make_classifier(id, big);
  auto ref    = detail::make_ref_linear(big);
  if (!engine.is_ok() && engine.status().code() == Errc::kNotSupported) return report;
  if (!engine.is_ok() || !ref.is_ok()) {
    report.detail = big.name + ": " + (engine.is_ok() ? ref.status() : engine.status()).message();
    return report;
  }
  const uint32_t m     = std::min<uint32_t>(n, 65536);
  const KeyBuffer keys = random_keys(big, seed + 3, m);
  report.detail        = compare_classifier(**engine, **ref, keys, {1, 257, 4096, m});
  if (!report.detail.empty()) report.detail = big.name + ": " + report.detail;
  report.items += m;
  return report;
}

}  // namespace warpath::classify
