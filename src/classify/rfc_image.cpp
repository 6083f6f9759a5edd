// RFC tree building: see rfc_image.hpp.
#include "classify/rfc_image.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <cstdlib>
#include <cstring>
#include <new>
#include <numeric>
#include <utility>

namespace warpath::classify::detail {
namespace {

constexpr unsigned kAllChunks = (1u << core::kChunks) - 1;
constexpr unsigned kAddrChunks =
    1u << core::kSrcHi | 1u << core::kSrcLo | 1u << core::kDstHi | 1u << core::kDstLo;

uint64_t hash_list(const uint32_t* s, uint32_t n) {
  uint64_t h = 0x9E37'79B9'7F4A'7C15ull ^ n;
  for (uint32_t i = 0; i < n; ++i) {
    h ^= s[i];
    h *= 0xFF51'AFD7'ED55'8CCDull;
    h ^= h >> 29;
  }
  return h ^ (h >> 32);
}

// The 16-bit (or proto_mask-wide) values x with (x & m) == v and lo <= x <= hi, as sorted
// intervals [first, second].
void masked_intervals(uint32_t v, uint32_t m, uint32_t domain_mask, uint32_t lo, uint32_t hi,
                      std::vector<std::pair<uint32_t, uint32_t>>& out) {
  out.clear();
  if (lo > hi) return;
  m &= domain_mask;
  v &= m;
  const uint32_t free = ~m & domain_mask;
  const uint32_t low  = ((free + 1) & ~free) - 1;  // free bits contiguous from bit 0
  const uint32_t high = free & ~low;
  for (uint32_t s = 0;;) {
    const uint32_t a = std::max(v | s, lo), b = std::min(v | s | low, hi);
    if (a <= b) out.emplace_back(a, b);
    if (s == high) break;
    s = (s - high) & high;
  }
}

// Rule r's condition on chunk c as (value, mask, domain mask, lo, hi).
struct ChunkCond {
  uint32_t v, m, dm, lo, hi;
};
ChunkCond chunk_cond(const Rule& r, unsigned c, uint32_t proto_mask) {
  switch (c) {
    case core::kSrcHi:
      return {r.value[0] >> 16, r.mask[0] >> 16, 0xFFFF, 0, 0xFFFF};
    case core::kSrcLo:
      return {r.value[0] & 0xFFFF, r.mask[0] & 0xFFFF, 0xFFFF, 0, 0xFFFF};
    case core::kDstHi:
      return {r.value[1] >> 16, r.mask[1] >> 16, 0xFFFF, 0, 0xFFFF};
    case core::kDstLo:
      return {r.value[1] & 0xFFFF, r.mask[1] & 0xFFFF, 0xFFFF, 0, 0xFFFF};
    case core::kSport:
      return {r.value[2] >> 16, r.mask[2] >> 16, 0xFFFF, r.sport_lo, r.sport_hi};
    case core::kDport:
      return {r.value[2] & 0xFFFF, r.mask[2] & 0xFFFF, 0xFFFF, r.dport_lo, r.dport_hi};
    default:
      return {r.value[3] & proto_mask, r.mask[3] & proto_mask, proto_mask, 0, proto_mask};
  }
}

}  // namespace

std::vector<uint32_t> rank_order(const RuleSet& rules) {
  std::vector<uint32_t> order(rules.rules.size());
  std::iota(order.begin(), order.end(), 0u);
  std::stable_sort(order.begin(), order.end(), [&](uint32_t x, uint32_t y) {
    return rules.rules[x].priority > rules.rules[y].priority;
  });
  return order;
}

std::string mib(uint64_t bytes) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.2f MiB", double(bytes) / (1 << 20));
  return buf;
}

// ---- SetPool ----

SetPool::SetPool() : offsets_{0}, slots_(1024, 0) {}

void SetPool::grow() {
  std::vector<uint32_t> slots(slots_.size() * 2, 0);
  const uint64_t mask = slots.size() - 1;
  for (uint32_t id = 0; id < size(); ++id) {
    uint64_t i = hashes_[id] & mask;
    while (slots[i]) i = (i + 1) & mask;
    slots[i] = id + 1;
  }
  slots_.swap(slots);
}

uint32_t SetPool::intern(const uint32_t* s, uint32_t n) {
  const uint64_t h    = hash_list(s, n);
  const uint64_t mask = slots_.size() - 1;
  uint64_t i          = h & mask;
  for (; slots_[i]; i = (i + 1) & mask) {
    const uint32_t id = slots_[i] - 1;
    if (hashes_[id] == h && length(id) == n &&
        (n == 0 || std::memcmp(data(id), s, n * sizeof(uint32_t)) == 0))
      return id;
  }
  const uint32_t id = size();
  slots_[i]         = id + 1;
  hashes_.push_back(h);
  pool_.insert(pool_.end(), s, s + n);
  offsets_.push_back(pool_.size());
  if (uint64_t(size()) * 2 > slots_.size()) grow();
  return id;
}

// ---- RfcBuilder ----

Result<std::unique_ptr<RfcBuilder>> RfcBuilder::create(const RuleSet& rules, uint64_t max_bytes) {
  if (rules.layout != KeyLayout::kFiveTuple)
    return Status(Errc::kNotSupported, "RFC classifies 5-tuple rules only");
  std::unique_ptr<RfcBuilder> b(new RfcBuilder());
  b->rules_        = &rules.rules;
  b->max_bytes_    = max_bytes;
  const uint32_t n = uint32_t(rules.rules.size());
  uint32_t proto   = 0;
  for (const Rule& r : rules.rules) proto |= r.mask[3];
  if (proto & 0xFFFF'0000u)
    return Status(Errc::kNotSupported,
                  "RFC takes protocol masks of at most 16 bits (a rule masks 0x" +
                      std::to_string(proto) + ")");
  b->proto_mask_ = proto & 0xFF00u ? 0xFFFFu : 0xFFu;
  b->rank_index_ = rank_order(rules);
  b->wild_.resize(n);
  for (uint32_t rank = 0; rank < n; ++rank) {
    const Rule& r = rules.rules[b->rank_index_[rank]];
    unsigned w    = 0;
    for (unsigned c = 0; c < core::kChunks; ++c) {
      const ChunkCond k = chunk_cond(r, c, b->proto_mask_);
      if ((k.m & k.dm) == 0 && k.lo == 0 && k.hi == k.dm) w |= 1u << c;
    }
    b->wild_[rank] = uint8_t(w);
  }
  WARPATH_TRY(b->charge(uint64_t(n) * 16, "rule ranks", n));
  return b;
}

Status RfcBuilder::charge(uint64_t bytes, const char* what, uint64_t entries) {
  if (charged_ + bytes > max_bytes_)
    return Status(Errc::kCapacity, std::string("RFC ") + what + " needs " +
                                       std::to_string(entries) + " entries (" + mib(bytes) +
                                       ") on top of " + mib(charged_) + " built so far: over the " +
                                       mib(max_bytes_) + " image limit");
  charged_ += bytes;
  return Status::ok();
}

Status RfcBuilder::check_pool(const SetPool& pool, const char* what) const {
  // Twice the bytes: a growing vector may hold its old and new storage at once.
  if (charged_ + 2 * pool.bytes() <= max_bytes_) return Status::ok();
  return Status(Errc::kCapacity, std::string("RFC ") + what + ": the class lists reach " +
                                     mib(pool.bytes()) + " (" + std::to_string(pool.size()) +
                                     " classes) on top of " + mib(charged_) +
                                     " built so far: over the " + mib(max_bytes_) + " limit");
}

Status RfcBuilder::chunk(unsigned c, RfcPhase& out) {
  const uint32_t dm   = c == core::kProto ? proto_mask_ : 0xFFFFu;
  const uint32_t n    = rules();
  const unsigned seen = 1u << c;
  out.seen            = seen;
  // Rules matching every value of c are in every class: implicit (up to the class's end).
  uint32_t wild_end = n;
  std::vector<uint64_t> events;  // pos << 32 | rank << 1 | add
  std::vector<std::pair<uint32_t, uint32_t>> iv;
  for (uint32_t rank = 0; rank < n; ++rank) {
    if (wild_[rank] & seen) {
      if (wild_end == n && (wild_[rank] | seen) == kAllChunks) wild_end = rank;
      continue;
    }
    const ChunkCond k = chunk_cond(rule_at_rank(rank), c, proto_mask_);
    masked_intervals(k.v, k.m, k.dm, k.lo, std::min(k.hi, k.dm), iv);
    for (const auto& [a, b] : iv) {
      events.push_back(uint64_t(a) << 32 | uint64_t(rank) << 1 | 1);
      events.push_back(uint64_t(b + 1) << 32 | uint64_t(rank) << 1);
    }
  }
  std::sort(events.begin(), events.end());
  WARPATH_TRY(charge(uint64_t(dm + 1) * 4, "phase-0 chunk", dm + 1));
  out.table.assign(size_t(dm) + 1, 0);
  std::vector<uint64_t> active((n + 63) / 64, 0);
  std::vector<uint32_t> list;
  size_t e = 0;
  for (uint32_t pos = 0; pos <= dm;) {
    for (; e < events.size() && uint32_t(events[e] >> 32) == pos; ++e) {
      const uint32_t rank = uint32_t(events[e] >> 1) & 0x7FFF'FFFFu;
      if (events[e] & 1) {
        active[rank / 64] |= uint64_t(1) << (rank % 64);
      } else {
        active[rank / 64] &= ~(uint64_t(1) << (rank % 64));
      }
    }
    const uint32_t next = e < events.size() ? std::min(uint32_t(events[e] >> 32), dm + 1) : dm + 1;
    list.clear();
    uint32_t end = wild_end;
    bool done    = false;
    for (size_t w = 0; w < active.size() && !done; ++w)
      for (uint64_t bits = active[w]; bits && !done; bits &= bits - 1) {
        const uint32_t rank = uint32_t(w * 64 + __builtin_ctzll(bits));
        if (rank > end) {
          done = true;
          break;
        }
        list.push_back(rank);
        if ((wild_[rank] | seen) == kAllChunks) {
          end  = rank;
          done = true;
        }
      }
    list.push_back(end);
    const uint32_t id = out.sets.intern(list.data(), uint32_t(list.size()));
    if (id + 1 == out.sets.size()) WARPATH_TRY(check_pool(out.sets, "phase-0 classes"));
    std::fill(out.table.begin() + pos, out.table.begin() + next, id);
    pos = next;
  }
  return charge(out.sets.bytes(), "phase-0 classes", out.sets.total_length());
}

std::vector<uint32_t> RfcBuilder::covering(unsigned s) const {
  std::vector<uint32_t> out;
  for (uint32_t r = 0; r < rules(); ++r)
    if ((wild_[r] & s) == s) out.push_back(r);
  return out;
}

void RfcBuilder::expand(const RfcPhase& p, uint32_t cls, const std::vector<uint32_t>& cover,
                        std::vector<uint32_t>& out) {
  out.clear();
  const uint32_t* s  = p.sets.data(cls);
  const uint32_t len = p.sets.length(cls) - 1, end = s[len];
  size_t k = 0;
  for (uint32_t i = 0; i < len; ++i) {
    for (; k < cover.size() && cover[k] < s[i]; ++k) out.push_back(cover[k]);
    out.push_back(s[i]);
  }
  for (; k < cover.size() && cover[k] <= end; ++k) out.push_back(cover[k]);
}

// cross()'s work. A rule in a class of `a` either matches every value of b's chunks or not,
// and the same the other way round. Every class is the (pruned) set of rules matching some
// values of its chunks, so with G = the rules matching every value of both sides,
//   a AND b = G u U_a u V_b u (N_a n N_b),
// U_a: a's rules matching all of b's chunks (not all of a's), V_b: b's rules matching all of
// a's chunks (not all of b's), N: the rules of a class matching all of neither. U_a and N_a
// come from a's explicit ranks (its implicit rules match all of a's chunks: they are in G or
// V_b), V_b and N_b from b's, and G is implicit in the result. The parts are disjoint, so
// (U_a, V_b, N_a n N_b) names the set, and pruning at the first rule that matches everything
// unseen cuts each part at the same rank `end` (each side's own end is a rule of U_a, V_b or
// G, so the smallest of theirs bounds `end`). Only the pairs with a common N rule are visited
// rule by rule; the others take a cached class per (U_a, V_b), and a list is written out once
// per distinct (U_a, V_b, N_a n N_b) key.
struct RfcBuilder::Cross {
  static constexpr uint32_t kNone = 0xFFFF'FFFFu;
  struct Side {
    SetPool own;                    // distinct U (or V) lists
    std::vector<uint32_t> own_end;  // per own list: its first rank that ends a list
    std::vector<uint32_t> own_id;   // per class
    std::vector<uint64_t> n_off{0};
    std::vector<uint32_t> n_rank;  // per class: its N part
  };
  struct Entry {  // (U id, V id, N id) -> class, open addressing
    uint32_t u, v, nn, id;
  };

  Cross(RfcBuilder& builder, const RfcPhase& left, const RfcPhase& right, unsigned seen_bits,
        const char* table_name, RfcPhase& result, uint64_t next)
      : bld(builder), a(left), b(right), seen(seen_bits), name(table_name), out(result),
        next_entries(next) {}

  RfcBuilder& bld;
  const RfcPhase &a, &b;
  unsigned seen;
  const char* name;
  RfcPhase& out;
  uint64_t next_entries;
  uint64_t na = a.classes(), nb = b.classes(), entries = na * nb;
  uint32_t n     = bld.rules();
  uint32_t g_end = n;  // G is implicit in the result (it covers the result's chunks)
  double steps   = double(entries);
  Side sa_side, sb_side;
  std::vector<uint64_t> by_rule_off;  // b's classes by N rule
  std::vector<uint32_t> by_rule;
  std::vector<Entry> map = std::vector<Entry>(1024, Entry{0, 0, 0, kNone});
  uint64_t used          = 0;
  SetPool npool;
  std::vector<uint32_t> list, nl;

  bool covers(uint32_t r, unsigned s) const { return (bld.wild_[r] & s) == s; }
  bool ends(uint32_t r) const { return (bld.wild_[r] | seen) == kAllChunks; }

  Status too_long(double scanned) const {
    return Status(Errc::kCapacity, std::string("RFC ") + name + " (" + std::to_string(entries) +
                                       " entries) would scan " + std::to_string(uint64_t(scanned)) +
                                       " class-list elements to build, over the limit of " +
                                       std::to_string(uint64_t(kRfcMaxBuildSteps)));
  }

  /// Each class of `p` as its own list (the rules covering `other`) and its N part.
  void split(const RfcPhase& p, unsigned other, Side& side) {
    std::vector<uint32_t> own;
    side.own_id.resize(p.classes());
    for (uint32_t c = 0; c < p.classes(); ++c) {
      own.clear();
      const uint32_t* s = p.sets.data(c);
      for (uint32_t k = 0, len = p.sets.length(c) - 1; k < len; ++k) {
        const uint32_t r = s[k];  // never covers `mine`: those are implicit
        if (covers(r, other)) {
          own.push_back(r);
        } else {
          side.n_rank.push_back(r);
        }
      }
      const uint32_t id = side.own.intern(own.data(), uint32_t(own.size()));
      if (id == side.own_end.size()) {
        uint32_t e = n;
        for (uint32_t r : own)
          if (ends(r)) {
            e = r;
            break;
          }
        side.own_end.push_back(e);
      }
      side.own_id[c] = id;
      side.n_off.push_back(side.n_rank.size());
    }
  }

  /// G's end, both sides split, b's classes by N rule; kCapacity when the build would scan
  /// too much.
  Status prepare() {
    for (uint32_t r = 0; r < n && g_end == n; ++r)
      if (covers(r, a.seen | b.seen) && ends(r)) g_end = r;
    split(a, b.seen, sa_side);
    split(b, a.seen, sb_side);
    by_rule_off.assign(uint64_t(n) + 1, 0);
    for (uint32_t r : sb_side.n_rank) ++by_rule_off[r + 1];
    for (uint32_t r = 0; r < n; ++r) by_rule_off[r + 1] += by_rule_off[r];
    by_rule.resize(sb_side.n_rank.size());
    std::vector<uint64_t> fill(by_rule_off.begin(), by_rule_off.end() - 1);
    for (uint32_t c = 0; c < nb; ++c)
      for (uint64_t k = sb_side.n_off[c]; k < sb_side.n_off[c + 1]; ++k)
        by_rule[fill[sb_side.n_rank[k]]++] = c;
    for (uint32_t r : sa_side.n_rank) steps += double(by_rule_off[r + 1] - by_rule_off[r]);
    return steps > kRfcMaxBuildSteps ? too_long(steps) : Status::ok();
  }

  static Entry& slot_of(std::vector<Entry>& m, uint32_t u, uint32_t v, uint32_t nn) {
    uint64_t h          = (uint64_t(u) << 32 | v) * 0x9E37'79B9'7F4A'7C15ull;
    h                   = (h ^ (h >> 31) ^ nn) * 0xFF51'AFD7'ED55'8CCDull;
    const uint64_t mask = m.size() - 1;
    for (uint64_t i = (h ^ (h >> 29)) & mask;; i = (i + 1) & mask)
      if (m[i].id == kNone || (m[i].u == u && m[i].v == v && m[i].nn == nn)) return m[i];
  }

  /// kCapacity when the classes made so far would make the next table too large.
  Status next_table_fits() const {
    // Classes are distinct sets, so all but one (the empty set) take the next entries.
    const uint64_t next = uint64_t(out.sets.size() - 1) * next_entries;
    if (next && bld.charged_ + out.sets.bytes() + map.size() * sizeof(Entry) + next * 2 > bld.max_bytes_)
      return Status(Errc::kCapacity,
                    std::string("RFC ") + name + " reaches " + std::to_string(out.sets.size()) +
                        " classes: the next table would need at least " + std::to_string(next) +
                        " entries (" + mib(next * 2) + ") on top of " + mib(bld.charged_) +
                        " built so far: over the " + mib(bld.max_bytes_) + " image limit");
    return Status::ok();
  }

  /// The class of (U u, V v, the common N rules): from the map, or its list made and interned.
  Status combine(uint32_t u, uint32_t v, std::vector<uint32_t>& common, uint32_t& id) {
    uint32_t end = std::min({sa_side.own_end[u], sb_side.own_end[v], g_end});
    size_t keep  = 0;
    for (; keep < common.size() && common[keep] <= end; ++keep)
      if (ends(common[keep])) {
        end = common[keep++];
        break;
      }
    const uint32_t nn = common.empty() ? 0 : npool.intern(common.data(), uint32_t(keep));
    Entry& e          = slot_of(map, u, v, nn);
    if (e.id != kNone) {
      id = e.id;
      return Status::ok();
    }
    list.assign(common.begin(), common.begin() + keep);
    auto add = [&](const uint32_t* s, uint32_t len) {
      for (uint32_t k = 0; k < len && s[k] <= end; ++k) list.push_back(s[k]);
    };
    add(sa_side.own.data(u), sa_side.own.length(u));
    add(sb_side.own.data(v), sb_side.own.length(v));
    std::sort(list.begin(), list.end());
    list.push_back(end);
    steps += double(list.size());
    if (steps > kRfcMaxBuildSteps) return too_long(steps);
    id = out.sets.intern(list.data(), uint32_t(list.size()));
    if (id + 1 == out.sets.size()) {
      WARPATH_TRY(bld.check_pool(out.sets, name));
      WARPATH_TRY(next_table_fits());
    }
    e = Entry{u, v, nn, id};
    if (++used * 2 > map.size()) {
      std::vector<Entry> bigger(map.size() * 2, Entry{0, 0, 0, kNone});
      for (const Entry& x : map)
        if (x.id != kNone) slot_of(bigger, x.u, x.v, x.nn) = x;
      map.swap(bigger);
    }
    return Status::ok();
  }

  /// Every entry of the table, a row of `a`'s classes at a time.
  Status fill() {
    npool.intern(nullptr, 0);  // id 0: no common N rule
    std::vector<uint32_t> row(sb_side.own.size(), kNone);
    std::vector<uint64_t> pairs;  // b << 32 | rank
    for (uint32_t ai = 0; ai < na; ++ai) {
      const uint32_t u = sa_side.own_id[ai];
      std::fill(row.begin(), row.end(), kNone);
      pairs.clear();
      for (uint64_t k = sa_side.n_off[ai]; k < sa_side.n_off[ai + 1]; ++k) {
        const uint32_t r = sa_side.n_rank[k];
        for (uint64_t j = by_rule_off[r]; j < by_rule_off[r + 1]; ++j)
          pairs.push_back(uint64_t(by_rule[j]) << 32 | r);
      }
      std::sort(pairs.begin(), pairs.end());
      uint32_t* dst = out.table.data() + uint64_t(ai) * nb;
      size_t q      = 0;
      for (uint32_t bi = 0; bi < nb; ++bi) {
        const uint32_t v = sb_side.own_id[bi];
        if (q < pairs.size() && uint32_t(pairs[q] >> 32) == bi) {
          nl.clear();
          for (; q < pairs.size() && uint32_t(pairs[q] >> 32) == bi; ++q)
            nl.push_back(uint32_t(pairs[q]));
          WARPATH_TRY(combine(u, v, nl, dst[bi]));
        } else {
          if (row[v] == kNone) {
            nl.clear();
            WARPATH_TRY(combine(u, v, nl, row[v]));
          }
          dst[bi] = row[v];
        }
      }
    }
    return Status::ok();
  }
};

Status RfcBuilder::cross(const RfcPhase& a, const RfcPhase& b, unsigned seen, const char* name,
                         RfcPhase& out, uint64_t next_entries) {
  const uint64_t entries = uint64_t(a.classes()) * b.classes();
  WARPATH_TRY(charge(entries * 4, name, entries));
  out.table.assign(entries, 0);
  out.seen = seen;
  Cross x(*this, a, b, seen, name, out, next_entries);
  WARPATH_TRY(x.prepare());
  WARPATH_TRY(x.fill());
  return charge(out.sets.bytes(), name, out.sets.total_length());
}

Status RfcBuilder::cross3(const RfcPhase& a, const RfcPhase& b, const RfcPhase& c, unsigned seen_ab,
                          unsigned seen, const char* name, RfcPhase& out) {
  RfcPhase ab, abc;
  WARPATH_TRY(cross(a, b, seen_ab, name, ab));
  WARPATH_TRY(cross(ab, c, seen, name, abc));
  const uint64_t nab = ab.table.size(), nc = c.classes();
  WARPATH_TRY(charge(nab * nc * 4, name, nab * nc));
  out.table.resize(nab * nc);
  for (uint64_t i = 0; i < nab; ++i)
    for (uint64_t k = 0; k < nc; ++k) out.table[i * nc + k] = abc.table[ab.table[i] * nc + k];
  out.sets = std::move(abc.sets);
  out.seen = seen;
  return Status::ok();
}

Status RfcBuilder::final_table(const RfcPhase& p, const RfcPhase& z, std::vector<uint32_t>& out) {
  const uint64_t np = p.classes(), nz = z.classes(), entries = np * nz;
  WARPATH_TRY(charge(entries * 4, "phase-3 table F", entries));
  out.assign(entries, 0);
  // As in cross(): the best rule of both classes is the first of G (the rules matching
  // everything, implicit in both up to their ends), p's explicit rules covering z's chunks (up
  // to z's end), z's explicit rules covering p's chunks (up to p's end), and the rules
  // explicit in both, found rule by rule through z's classes of each rule.
  const uint32_t n = rules();
  uint32_t g       = n;
  for (uint32_t r = 0; r < n && g == n; ++r)
    if (wild_[r] == kAllChunks) g = r;
  struct Side {
    std::vector<uint32_t> end, first_cover;
    std::vector<uint64_t> n_off{0};
    std::vector<uint32_t> n_rank;
  };
  auto split = [&](const RfcPhase& ph, unsigned other, Side& side) {
    for (uint32_t c = 0; c < ph.classes(); ++c) {
      const uint32_t* s  = ph.sets.data(c);
      const uint32_t len = ph.sets.length(c) - 1;
      uint32_t first     = n;
      for (uint32_t k = 0; k < len; ++k) {
        if ((wild_[s[k]] & other) == other) {
          first = std::min(first, s[k]);
        } else {
          side.n_rank.push_back(s[k]);
        }
      }
      side.end.push_back(s[len]);
      side.first_cover.push_back(first);
      side.n_off.push_back(side.n_rank.size());
    }
  };
  Side ps, zs;
  split(p, z.seen, ps);
  split(z, p.seen, zs);
  std::vector<uint64_t> by_rule_off(uint64_t(n) + 1, 0);
  for (uint32_t r : zs.n_rank) ++by_rule_off[r + 1];
  for (uint32_t r = 0; r < n; ++r) by_rule_off[r + 1] += by_rule_off[r];
  std::vector<uint32_t> by_rule(zs.n_rank.size());
  {
    std::vector<uint64_t> fill(by_rule_off.begin(), by_rule_off.end() - 1);
    for (uint32_t c = 0; c < nz; ++c)
      for (uint64_t k = zs.n_off[c]; k < zs.n_off[c + 1]; ++k) by_rule[fill[zs.n_rank[k]]++] = c;
  }
  double steps = double(entries);
  for (uint32_t r : ps.n_rank) steps += double(by_rule_off[r + 1] - by_rule_off[r]);
  if (steps > kRfcMaxBuildSteps)
    return Status(Errc::kCapacity, "RFC phase-3 table F (" + std::to_string(entries) +
                                       " entries) would scan " + std::to_string(uint64_t(steps)) +
                                       " class-list elements to build, over the limit of " +
                                       std::to_string(uint64_t(kRfcMaxBuildSteps)));
  std::vector<uint32_t> common(nz, n);
  for (uint32_t pi = 0; pi < np; ++pi) {
    for (uint64_t k = ps.n_off[pi + 1]; k-- > ps.n_off[pi];) {  // descending: the first wins
      const uint32_t r = ps.n_rank[k];
      for (uint64_t j = by_rule_off[r]; j < by_rule_off[r + 1]; ++j) common[by_rule[j]] = r;
    }
    const uint32_t pend = ps.end[pi], pcover = ps.first_cover[pi];
    uint32_t* dst = out.data() + uint64_t(pi) * nz;
    for (uint32_t zi = 0; zi < nz; ++zi) {
      const uint32_t zend = zs.end[zi];
      uint32_t best       = common[zi];
      common[zi]          = n;
      if (pcover <= zend) best = std::min(best, pcover);
      if (zs.first_cover[zi] <= pend) best = std::min(best, zs.first_cover[zi]);
      if (g <= std::min(pend, zend)) best = std::min(best, g);
      dst[zi] = best == n ? 0 : best + 1;
    }
  }
  return Status::ok();
}

// ---- PackedTables ----

void PackedTables::Free::operator()(uint8_t* p) const { std::free(p); }

PackedTables::Slot PackedTables::add(const std::vector<uint32_t>& values, uint32_t max_value) {
  const bool single =
      values.size() > 1 &&
      std::all_of(values.begin(), values.end(), [&](uint32_t v) { return v == values.front(); });
  if (single) {
    Slot s   = add(std::vector<uint32_t>{values.front()}, max_value);
    s.single = 1;
    return s;
  }
  Slot s;
  s.shift   = max_value > 0xFFFFu ? 2 : max_value > 0xFFu ? 1 : 0;
  s.entries = values.size();
  s.offset  = (size_ + 63) & ~uint64_t(63);
  std::vector<uint8_t> part(s.bytes());
  for (size_t i = 0; i < values.size(); ++i) {
    if (s.shift == 2) std::memcpy(part.data() + 4 * i, &values[i], 4);
    if (s.shift == 1) {
      const uint16_t v = uint16_t(values[i]);
      std::memcpy(part.data() + 2 * i, &v, 2);
    }
    if (s.shift == 0) part[i] = uint8_t(values[i]);
  }
  size_ = s.offset + part.size();
  part_offsets_.push_back(s.offset);
  parts_.push_back(std::move(part));
  return s;
}

PackedTables::Slot PackedTables::add_words(const std::vector<uint32_t>& words) {
  return add_bytes(words.data(), words.size() * 4);
}

PackedTables::Slot PackedTables::add_bytes(const void* data, uint64_t bytes) {
  Slot s;
  s.shift       = 2;
  s.entries     = bytes / 4;
  s.offset      = (size_ + 63) & ~uint64_t(63);
  const auto* p = static_cast<const uint8_t*>(data);
  parts_.emplace_back(p, p + bytes);
  part_offsets_.push_back(s.offset);
  size_ = s.offset + bytes;
  return s;
}

void PackedTables::release() {
  buffer_.reset();
  size_ = 0;
}

void PackedTables::finish() {
  // Tables of 2 MiB and more on transparent huge pages (2 MiB-aligned, advised), as the lookup
  // images are: a random read then rarely waits on a page walk.
  constexpr uint64_t kHuge = uint64_t(2) << 20;
  const bool huge      = size_ >= kHuge;
  const uint64_t align = huge ? kHuge : 64;
  const uint64_t bytes = std::max<uint64_t>(64, (size_ + align - 1) & ~(align - 1));
  buffer_.reset(static_cast<uint8_t*>(std::aligned_alloc(align, bytes)));
  if (!buffer_) throw std::bad_alloc();
  if (huge) ::madvise(buffer_.get(), bytes, MADV_HUGEPAGE);  // advice only
  // Only the padding is cleared, so that each part's pages are first touched as it is copied
  // (and the part freed): the peak stays near one copy of the tables, not two.
  uint64_t at = 0;
  for (size_t i = 0; i < parts_.size(); ++i) {
    std::memset(buffer_.get() + at, 0, part_offsets_[i] - at);
    if (!parts_[i].empty())
      std::memcpy(buffer_.get() + part_offsets_[i], parts_[i].data(), parts_[i].size());
    at = part_offsets_[i] + parts_[i].size();
    std::vector<uint8_t>().swap(parts_[i]);
  }
  std::memset(buffer_.get() + at, 0, bytes - at);
  size_ = bytes;
}

// ---- address stage, RfcImage ----

core::RfcView RfcAddressLayout::view(const uint8_t* base) const {
  core::RfcView v;
  for (unsigned c = 0; c < 4; ++c) {
    v.chunk[c] = PackedTables::table(base, chunk[c]);
    v.n[c]     = n[c];
  }
  v.x  = PackedTables::table(base, x);
  v.y  = PackedTables::table(base, y);
  v.p  = PackedTables::table(base, p);
  v.nx = nx;
  v.ny = ny;
  v.np = np;
  return v;
}

Status build_address_stage(RfcBuilder& b, RfcPhase chunks[4], RfcPhase& x, RfcPhase& y, RfcPhase& p,
                           uint64_t p_next_entries) {
  for (unsigned c = 0; c < 4; ++c) WARPATH_TRY(b.chunk(c, chunks[c]));
  WARPATH_TRY(b.cross(chunks[core::kSrcHi], chunks[core::kSrcLo],
                      1u << core::kSrcHi | 1u << core::kSrcLo, "phase-1 table X (source)", x));
  WARPATH_TRY(b.cross(chunks[core::kDstHi], chunks[core::kDstLo],
                      1u << core::kDstHi | 1u << core::kDstLo, "phase-1 table Y (destination)", y));
  return b.cross(x, y, kAddrChunks, "phase-2 table P (address pair)", p, p_next_entries);
}

std::string table_text(const char* name, const PackedTables::Slot& s, uint32_t classes) {
  return std::string(name) + " " + std::to_string(s.entries) + "x" + std::to_string(1u << s.shift) +
         "B/" + std::to_string(classes) + "cl";
}

Result<std::unique_ptr<RfcImage>> RfcImage::build(const RuleSet& rules, uint64_t max_bytes) {
  WARPATH_ASSIGN_OR_RETURN(auto b, RfcBuilder::create(rules, max_bytes));
  std::unique_ptr<RfcImage> img(new RfcImage());
  img->rules_      = b->rules();
  img->proto_mask_ = b->proto_mask();
  RfcPhase chunks[core::kChunks], x, y, p, z;
  for (unsigned c = 0; c < core::kChunks; ++c) WARPATH_TRY(b->chunk(c, chunks[c]));
  WARPATH_TRY(b->cross(chunks[core::kSrcHi], chunks[core::kSrcLo],
                       1u << core::kSrcHi | 1u << core::kSrcLo, "phase-1 table X (source)", x));
  WARPATH_TRY(b->cross(chunks[core::kDstHi], chunks[core::kDstLo],
                       1u << core::kDstHi | 1u << core::kDstLo, "phase-1 table Y (destination)",
                       y));
  WARPATH_TRY(b->cross3(chunks[core::kSport], chunks[core::kDport], chunks[core::kProto],
                        1u << core::kSport | 1u << core::kDport,
                        1u << core::kSport | 1u << core::kDport | 1u << core::kProto,
                        "phase-1 table Z (ports, protocol)", z));
  // Shape 0: P = (X, Y), F = (P, Z). Where that does not fit (firewall sets: nearly every
  // address pair is a class of its own), shape 1: P = (Y, Z), F = (P, X).
  std::vector<uint32_t> f;
  const uint64_t before = b->charged();
  Status st = b->cross(x, y, kAddrChunks, "phase-2 table P (address pair)", p, z.classes());
  if (st.is_ok()) st = b->final_table(p, z, f);
  if (!st.is_ok()) {
    if (st.code() != Errc::kCapacity) return st;
    p = RfcPhase();
    std::vector<uint32_t>().swap(f);
    b->release_to(before);
    Status st1 =
        b->cross(y, z, y.seen | z.seen, "phase-2 table P (destination, ports)", p, x.classes());
    if (st1.is_ok()) st1 = b->final_table(p, x, f);
    if (!st1.is_ok())
      return st1.code() == Errc::kCapacity
                 ? Status(Errc::kCapacity, st.message() + "; then " + st1.message())
                 : st1;
    img->shape_ = 1;
  }
  RfcPhase* phase[3] = {&x, &y, &z};  // the tables behind the view's x, y, z
  if (img->shape_) phase[0] = &y, phase[1] = &z, phase[2] = &x;

  PackedTables& t     = img->tables_;
  RfcAddressLayout& a = img->addr_;
  std::string d       = "phase0";
  uint64_t p0 = 0, p1 = 0;
  const char* names[core::kChunks] = {"src_hi", "src_lo", "dst_hi", "dst_lo",
                                      "sport",  "dport",  "proto"};
  for (unsigned c = 0; c < core::kChunks; ++c) {
    const uint32_t n = chunks[c].classes();
    const auto slot  = t.add(chunks[c].table, n - 1);
    if (c < 4) {
      a.chunk[c] = slot;
      a.n[c]     = n;
    } else {
      img->ports_[c - 4]   = slot;
      img->n_ports_[c - 4] = n;
    }
    p0 += slot.bytes();
    d += std::string(c ? ", " : " ") + names[c] + " " + std::to_string(n) + "cl";
    std::vector<uint32_t>().swap(chunks[c].table);
  }
  const PackedTables::Slot sx     = t.add(x.table, x.classes() - 1);
  const PackedTables::Slot sy     = t.add(y.table, y.classes() - 1);
  const PackedTables::Slot sz     = t.add(z.table, z.classes() - 1);
  const PackedTables::Slot* ss[3] = {&sx, &sy, &sz};
  if (img->shape_) ss[0] = &sy, ss[1] = &sz, ss[2] = &sx;
  a.x      = *ss[0];
  a.nx     = phase[0]->classes();
  a.y      = *ss[1];
  a.ny     = phase[1]->classes();
  img->z_  = *ss[2];
  img->nz_ = phase[2]->classes();
  for (RfcPhase* ph : phase) std::vector<uint32_t>().swap(ph->table);
  a.p  = t.add(p.table, p.classes() - 1);
  a.np = p.classes();
  std::vector<uint32_t>().swap(p.table);
  img->f_ = t.add(f, b->rules());
  std::vector<uint32_t>().swap(f);
  std::vector<uint32_t> answers(b->rules() + 1, kNoMatch);
  for (uint32_t r = 0; r < b->rules(); ++r) answers[r + 1] = b->rule_of_rank(r);
  img->answers_ = t.add_words(answers);
  for (const auto* s : {&sx, &sy, &sz}) p1 += s->bytes();
  d += " (" + mib(p0) + "); phase1 " + table_text("X", sx, x.classes()) + ", " +
       table_text("Y", sy, y.classes()) + ", " + table_text("Z", sz, z.classes()) + " (" + mib(p1) +
       "); phase2 " + table_text(img->shape_ ? "P=(Y,Z)" : "P", a.p, a.np) + " (" +
       mib(a.p.bytes()) + "); phase3 " + (img->shape_ ? "F=(P,X) " : "F ") +
       std::to_string(img->f_.entries) + "x" + std::to_string(1u << img->f_.shift) + "B (" +
       mib(img->f_.bytes()) + ")";
  t.finish();
  d += "; total " + mib(t.bytes());
  img->detail_ = std::move(d);
  return img;
}

core::RfcView RfcImage::view(const uint8_t* base) const {
  core::RfcView v = addr_.view(base);
  for (unsigned c = 0; c < 3; ++c) {
    v.chunk[4 + c] = PackedTables::table(base, ports_[c]);
    v.n[4 + c]     = n_ports_[c];
  }
  v.z          = PackedTables::table(base, z_);
  v.nz         = nz_;
  v.f          = PackedTables::table(base, f_);
  v.answers    = reinterpret_cast<const uint32_t*>(base + answers_.offset);
  v.proto_mask = proto_mask_;
  v.shape      = shape_;
  return v;
}

}  // namespace warpath::classify::detail
