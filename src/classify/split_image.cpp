// The address-split builder: see split_image.hpp.
#include "classify/split_image.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cstring>
#include <unordered_map>
#include <vector>

namespace warpath::classify::detail {
namespace {

using core::SplitCand;
using core::SplitList;

/// Length of a prefix-shaped mask (ones from the top), or -1.
int prefix_len(uint32_t mask) {
  const uint32_t inv = ~mask;
  return (inv & (inv + 1)) ? -1 : std::popcount(mask);
}

enum class Ports { kOk, kNever, kNotRange };

/// One port's condition as an inclusive range: [lo, hi] of the rule intersected with the
/// 16-bit value/mask, when that mask is prefix-shaped.
Ports port_range(uint16_t lo, uint16_t hi, uint32_t value, uint32_t mask, uint16_t& out_lo,
                 uint16_t& out_hi) {
  const uint32_t inv = ~mask & 0xFFFFu;
  if (inv & (inv + 1)) return Ports::kNotRange;
  const uint32_t a = std::max<uint32_t>(lo, value & mask), b = std::min<uint32_t>(hi, value | inv);
  if (a > b) return Ports::kNever;
  out_lo = uint16_t(a);
  out_hi = uint16_t(b);
  return Ports::kOk;
}

/// A rule's condition on one field: the inclusive range of values it accepts.
struct Filed {
  uint32_t start = 0, end = 0;
  uint32_t rank = 0;
};

bool same_list(const SplitList& a, const SplitList& b) {
  return a.offset == b.offset && a.count == b.count;
}

/// Intervals of one part under construction.
struct Sweep {
  std::vector<uint32_t> bounds{0};
  std::vector<SplitList> lists{SplitList{}};
  /// From `pos` on, the run is `l` (pos never decreases).
  void emit(uint32_t pos, SplitList l) {
    if (bounds.back() == pos) {
      lists.back() = l;
      if (lists.size() >= 2 && same_list(lists[lists.size() - 2], l)) {
        bounds.pop_back();
        lists.pop_back();
      }
    } else if (!same_list(lists.back(), l)) {
      bounds.push_back(pos);
      lists.push_back(l);
    }
  }
};

struct PartStats {
  uint32_t rules = 0, max_run = 0;
  uint64_t run_total = 0;  ///< summed over intervals
};

// The search index over one part's interval bounds: its layers (sizes and first nodes, leaves
// last) and their nodes, kSplitNodeKeys keys each; an inner node's key j is the first key of its
// child j + 1's leftmost leaf. kCapacity when it would be deeper than kSplitMaxLayers.
struct PartIndex {
  std::vector<uint32_t> sizes, start, nodes;
};

Result<PartIndex> part_index(const std::vector<uint32_t>& bounds) {
  const uint32_t m = uint32_t(bounds.size());
  PartIndex ix;
  std::vector<uint32_t>& sizes = ix.sizes;
  sizes.push_back((m + core::kSplitNodeKeys - 1) / core::kSplitNodeKeys);
  while (sizes.back() > 1)
    sizes.push_back((sizes.back() + core::kSplitFanout - 1) / core::kSplitFanout);
  std::reverse(sizes.begin(), sizes.end());
  if (sizes.size() > core::kSplitMaxLayers) return Status(Errc::kCapacity, "split: index too deep");
  const uint32_t layers = uint32_t(sizes.size());
  uint32_t at           = 0;
  for (uint32_t l = 0; l < layers; ++l) {
    ix.start.push_back(at);
    at += sizes[l];
  }
  ix.nodes.assign(uint64_t(at) * core::kSplitNodeKeys, 0xFFFF'FFFFu);
  const uint32_t leaf = layers - 1;
  std::copy(bounds.begin(), bounds.end(),
            ix.nodes.begin() + uint64_t(ix.start[leaf]) * core::kSplitNodeKeys);
  for (uint32_t l = 0; l < leaf; ++l)
    for (uint32_t k = 0; k < sizes[l]; ++k)
      for (uint32_t j = 0; j < core::kSplitNodeKeys; ++j) {
        uint64_t c = uint64_t(k) * core::kSplitFanout + j + 1;
        if (c >= sizes[l + 1]) break;
        for (uint32_t below = l + 1; below < leaf; ++below) c *= core::kSplitFanout;
        ix.nodes[(uint64_t(ix.start[l]) + k) * core::kSplitNodeKeys + j] =
            bounds[c * core::kSplitNodeKeys];
      }
  return ix;
}

struct RunHash {
  size_t operator()(const std::vector<uint32_t>& v) const {
    uint64_t h = 0x9E37'79B9'7F4A'7C15ull;
    for (uint32_t x : v) h = (h ^ x) * 0x1000'0000'01B3ull;
    return size_t(h);
  }
};

/// Builds one part's runs (appended to cands, from each rank's candidate) and intervals: a
/// sweep over the conditions' ends with the set of conditions covering each position.
Status build_part(const std::vector<Filed>& filed, const std::vector<SplitCand>& by_rank,
                  const char* name, uint64_t max_cands, std::vector<SplitCand>& cands, Sweep& sweep,
                  PartStats& st) {
  st.rules = uint32_t(filed.size());
  struct Event {
    uint64_t pos;
    uint32_t rank;
    bool add;
  };
  std::vector<Event> events;
  events.reserve(filed.size() * 2);
  for (const Filed& f : filed) {
    events.push_back({f.start, f.rank, true});
    events.push_back({uint64_t(f.end) + 1, f.rank, false});
  }
  std::sort(events.begin(), events.end(),
            [](const Event& a, const Event& b) { return a.pos < b.pos; });
  std::vector<uint32_t> active;  // ranks covering the position, ascending
  std::unordered_map<std::vector<uint32_t>, SplitList, RunHash> runs;
  for (size_t i = 0; i < events.size();) {
    const uint64_t pos = events[i].pos;
    for (; i < events.size() && events[i].pos == pos; ++i) {
      const auto at = std::lower_bound(active.begin(), active.end(), events[i].rank);
      if (events[i].add)
        active.insert(at, events[i].rank);
      else
        active.erase(at);
    }
    if (pos > 0xFFFF'FFFFu) break;  // past the last value
    SplitList l;
    if (!active.empty()) {
      auto [it, fresh] = runs.try_emplace(active);
      if (fresh) {
        if (cands.size() + active.size() > max_cands)
          return Status(Errc::kCapacity,
                        std::string("split: the candidate runs of the part ") + name + " pass " +
                            std::to_string(max_cands) + " entries (" +
                            mib(max_cands * sizeof(SplitCand)) +
                            ", the image limit): too many rules under nested conditions");
        it->second = {uint32_t(cands.size()), uint32_t(active.size())};
        for (uint32_t r : active) cands.push_back(by_rank[r]);
      }
      l = it->second;
    }
    sweep.emit(uint32_t(pos), l);
  }
  for (const SplitList& l : sweep.lists) {
    st.run_total += l.count;
    st.max_run = std::max(st.max_run, l.count);
  }
  return Status::ok();
}

}  // namespace

namespace {

// Where each rule goes (a SplitField, kRest or kNever: its port ranges do not meet), its
// candidate record by rank, and its condition on each field. A rule is filed on the field where
// the fewest other rules share its condition (then the narrowest); a rule with an address part
// never goes by port: ports are for what addresses cannot tell.
constexpr uint8_t kRest = core::kSplitFields, kNever = kRest + 1;
struct Assignment {
  std::vector<uint8_t> part;
  std::vector<SplitCand> by_rank;
  std::vector<std::array<Filed, core::kSplitFields>> cond;
};

Assignment assign_parts(const RuleSet& rules, const std::vector<uint32_t>& rank_index,
                        SplitTry how) {
  const uint32_t min_prefix = how.min_prefix;
  Assignment a;
  const uint32_t n = uint32_t(rules.rules.size());
  std::vector<uint8_t>& part = a.part;
  std::vector<SplitCand>& by_rank = a.by_rank;
  std::vector<std::array<Filed, core::kSplitFields>>& cond = a.cond;
  part.assign(n, kRest);
  by_rank.resize(n);
  cond.resize(n);
  std::vector<std::array<bool, core::kSplitFields>> can(n);
  std::unordered_map<uint64_t, uint32_t> sharing[core::kSplitFields];  // (start, end) -> rules
  auto key_of = [](const Filed& f) { return uint64_t(f.start) << 32 | f.end; };
  for (uint32_t rank = 0; rank < n; ++rank) {
    const Rule& r  = rules.rules[rank_index[rank]];
    SplitCand& c   = by_rank[rank];
    const Ports sp = port_range(r.sport_lo, r.sport_hi, r.value[2] >> 16, r.mask[2] >> 16,
                                c.sport_lo, c.sport_hi);
    const Ports dp = port_range(r.dport_lo, r.dport_hi, r.value[2] & 0xFFFFu, r.mask[2] & 0xFFFFu,
                                c.dport_lo, c.dport_hi);
    c.src          = r.value[0];
    c.src_mask     = r.mask[0];
    c.dst          = r.value[1];
    c.dst_mask     = r.mask[1];
    c.proto        = uint16_t(r.value[3]);
    c.proto_mask   = uint16_t(r.mask[3]);
    c.rank         = rank;
    can[rank].fill(false);
    if (sp == Ports::kNever || dp == Ports::kNever) {
      part[rank] = kNever;
      continue;
    }
    if (sp == Ports::kNotRange || dp == Ports::kNotRange || (r.mask[3] >> 16)) continue;
    for (unsigned w = 0; w < 2; ++w) {
      const int len = prefix_len(r.mask[w]);
      cond[rank][w] = {r.value[w], r.value[w] | ~r.mask[w], rank};
      can[rank][w]  = len >= int(min_prefix);
    }
    cond[rank][core::kSplitSport] = {c.sport_lo, c.sport_hi, rank};
    cond[rank][core::kSplitDport] = {c.dport_lo, c.dport_hi, rank};
    for (unsigned f = core::kSplitSport; f <= core::kSplitDport; ++f)
      can[rank][f] = how.ports && cond[rank][f].end - cond[rank][f].start < kSplitMaxPortSpan;
    for (unsigned f = 0; f < core::kSplitFields; ++f)
      if (can[rank][f]) ++sharing[f][key_of(cond[rank][f])];
  }
  // A rule with an address part never goes by port: ports are for what addresses cannot tell.
  for (uint32_t rank = 0; rank < n; ++rank) {
    if (part[rank] == kNever) continue;
    const bool address   = can[rank][core::kSplitSrc] || can[rank][core::kSplitDst];
    uint32_t best_shared = 0, best_span = 0;
    for (unsigned f = 0; f < core::kSplitFields; ++f) {
      if (!can[rank][f] || (address && f >= core::kSplitSport)) continue;
      const uint32_t shared = sharing[f][key_of(cond[rank][f])];
      const uint32_t span   = cond[rank][f].end - cond[rank][f].start;
      if (part[rank] == kRest || shared < best_shared ||
          (shared == best_shared && span < best_span)) {
        part[rank]  = uint8_t(f);
        best_shared = shared;
        best_span   = span;
      }
    }
  }

  return a;
}

}  // namespace

Result<std::unique_ptr<SplitImage>> SplitImage::build(const RuleSet& rules, uint64_t max_bytes,
                                                      uint32_t min_prefix, bool ports) {
  if (min_prefix) return build_with(rules, max_bytes, {min_prefix, ports}, max_bytes);
  std::string tried;
  const size_t n = std::size(kSplitTries);
  for (size_t i = 0; i < n; ++i) {
    auto img = build_with(rules, max_bytes, kSplitTries[i], i + 1 < n ? max_bytes / 4 : max_bytes);
    if (img.is_ok() || img.status().code() != Errc::kCapacity) return img;
    tried += (tried.empty() ? "" : "; ") + img.status().message();
  }
  return Status(Errc::kCapacity, tried);
}

Result<std::unique_ptr<SplitImage>> SplitImage::build_with(const RuleSet& rules, uint64_t max_bytes,
                                                           SplitTry how, uint64_t rest_bytes) {
  const uint32_t min_prefix = how.min_prefix;
  if (rules.layout != KeyLayout::kFiveTuple)
    return Status(Errc::kNotSupported, "address split classifies 5-tuple rules only");
  const uint32_t n                       = uint32_t(rules.rules.size());
  const std::vector<uint32_t> rank_index = rank_order(rules);

  Assignment assigned = assign_parts(rules, rank_index, how);
  std::vector<uint8_t>& part = assigned.part;
  const std::vector<SplitCand>& by_rank = assigned.by_rank;
  const std::vector<std::array<Filed, core::kSplitFields>>& cond = assigned.cond;

  std::unique_ptr<SplitImage> img(new SplitImage());
  img->min_prefix_         = min_prefix;
  const uint64_t max_cands = max_bytes / sizeof(SplitCand);
  std::vector<SplitCand> cands;
  Sweep sweep[core::kSplitFields];
  PartStats st[core::kSplitFields];
  static const char* const kNames[] = {"by source", "by destination", "by source port",
                                       "by destination port"};
  for (unsigned p = 0; p < core::kSplitFields; ++p) {
    std::vector<Filed> filed;
    for (uint32_t rank = 0; rank < n; ++rank)
      if (part[rank] == p) filed.push_back(cond[rank][p]);
    if (filed.empty()) continue;
    WARPATH_TRY(build_part(filed, by_rank, kNames[p], max_cands, cands, sweep[p], st[p]));
  }
  for (uint32_t rank = 0; rank < n; ++rank) {
    Counts& k = img->counts_;
    if (part[rank] < core::kSplitFields)
      ++k.by_field[part[rank]];
    else
      ++(part[rank] == kRest ? k.rest : k.never_match);
  }

  PackedTables& t = img->tables_;
  uint64_t used   = 0;
  std::string d =
      "min prefix /" + std::to_string(min_prefix) + (how.ports ? ", ports indexed; " : "; ");
  for (unsigned p = 0; p < core::kSplitFields; ++p) {
    IndexLayout& L   = img->part_[p];
    const char* name = kNames[p];
    if (st[p].rules == 0) continue;
    const std::vector<uint32_t>& bounds = sweep[p].bounds;
    const uint32_t m                    = uint32_t(bounds.size());
    WARPATH_ASSIGN_OR_RETURN(const PartIndex ix, part_index(bounds));
    L.layers = uint32_t(ix.sizes.size());
    L.bounds = m;
    for (uint32_t l = 0; l < L.layers; ++l) {
      L.layer_start[l] = ix.start[l];
      L.layer_nodes[l] = ix.sizes[l];
    }
    const std::vector<uint32_t>& nodes = ix.nodes;
    L.nodes                            = t.add_words(nodes);
    std::vector<uint32_t> lists(uint64_t(m) * 2);
    std::memcpy(lists.data(), sweep[p].lists.data(), lists.size() * 4);
    L.lists = t.add_words(lists);
    used += nodes.size() * 4 + lists.size() * 4;
    char buf[200];
    std::snprintf(buf, sizeof buf, "%s %u rules, %u intervals, %u layers, run mean %.2f max %u; ",
                  name, st[p].rules, m, L.layers, double(st[p].run_total) / m, st[p].max_run);
    d += buf;
  }
  {
    static_assert(sizeof(SplitCand) == 32);
    std::vector<uint32_t> words(std::max<size_t>(cands.size(), 1) * 8);
    if (!cands.empty()) std::memcpy(words.data(), cands.data(), cands.size() * sizeof(SplitCand));
    img->cands_ = t.add_words(words);
    used += words.size() * 4;
    d += "runs " + std::to_string(cands.size()) + " candidates (" +
         mib(cands.size() * sizeof(SplitCand)) + "); ";
    std::vector<SplitCand>().swap(cands);
  }
  // Ranks are answers when priorities follow file order (ClassBench): no table, no read.
  img->ranks_are_indices_ = true;
  for (uint32_t r = 0; r < n; ++r) img->ranks_are_indices_ &= rank_index[r] == r;
  if (!img->ranks_are_indices_) {
    img->rank_index_ = t.add_words(rank_index);
    used += uint64_t(n) * 4;
  }

  // The rest: an RFC tree over those rules alone, in rank order.
  RuleSet rest;
  std::vector<uint32_t> rest_rank;
  for (uint32_t rank = 0; rank < n; ++rank)
    if (part[rank] == kRest) {
      rest.rules.push_back(rules.rules[rank_index[rank]]);
      rest_rank.push_back(rank);
    }
  for (size_t j = 0; j < rest.rules.size(); ++j)
    rest.rules[j].priority = uint32_t(rest.rules.size() - 1 - j);
  if (!rest.rules.empty()) {
    if (used >= max_bytes) return Status(Errc::kCapacity, "split: over the image limit");
    auto rfc = RfcImage::build(rest, std::min(max_bytes - used, rest_bytes));
    if (!rfc.is_ok())
      return Status(rfc.status().code(),
                    "split: the RFC tree of the " + std::to_string(rest.rules.size()) +
                        " rules with no address prefix of at least /" + std::to_string(min_prefix) +
                        " or narrow port: " + rfc.status().message());
    img->rest_        = std::move(rfc).value();
    img->rest_tables_ = t.add_bytes(img->rest_->data(), img->rest_->bytes());
    d += "rest " + std::to_string(rest.rules.size()) + " rules (RFC " + mib(img->rest_->bytes()) +
         ")";
    img->rest_->release_tables();
    img->rest_rank_ = t.add_words(rest_rank);
  } else {
    d += "rest 0 rules";
  }
  if (img->counts_.never_match)
    d += "; " + std::to_string(img->counts_.never_match) + " rules never match (empty port range)";
  t.finish();
  d += "; total " + mib(t.bytes());
  img->detail_ = std::move(d);
  return img;
}

core::SplitView SplitImage::view(const uint8_t* base) const {
  core::SplitView v;
  for (unsigned p = 0; p < core::kSplitFields; ++p) {
    const IndexLayout& L = part_[p];
    core::SplitIndex& ix = v.part[p];
    ix.layers            = L.layers;
    ix.bounds            = L.bounds;
    if (!L.layers) continue;
    ix.nodes = reinterpret_cast<const uint32_t*>(base + L.nodes.offset);
    ix.lists = reinterpret_cast<const core::SplitList*>(base + L.lists.offset);
    for (unsigned l = 0; l < core::kSplitMaxLayers; ++l) {
      ix.layer_start[l] = L.layer_start[l];
      ix.layer_nodes[l] = L.layer_nodes[l];
    }
  }
  v.cands = reinterpret_cast<const core::SplitCand*>(base + cands_.offset);
  v.rank_index =
      ranks_are_indices_ ? nullptr : reinterpret_cast<const uint32_t*>(base + rank_index_.offset);
  if (rest_) {
    v.has_rest  = 1;
    v.rest      = rest_->view(base + rest_tables_.offset);
    v.rest_rank = reinterpret_cast<const uint32_t*>(base + rest_rank_.offset);
  }
  return v;
}

}  // namespace warpath::classify::detail
