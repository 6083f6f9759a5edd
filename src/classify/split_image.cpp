// The address-split builder: see split_image.hpp.
#include "classify/split_image.hpp"

#include <algorithm>
#include <bit>
#include <cstring>
#include <numeric>
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

/// A rule filed under one address: its prefix there, and the rest of its check.
struct Filed {
  uint32_t start = 0, end = 0;  ///< the prefix, inclusive
  SplitCand cand;
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
  uint32_t rules = 0, prefixes = 0, max_run = 0;
  uint64_t run_total = 0;  ///< summed over intervals
};

/// Builds one part's runs (appended to cands) and intervals. `filed` is in rank order.
Status build_part(const std::vector<Filed>& filed, const char* name, uint64_t max_cands,
                  std::vector<SplitCand>& cands, Sweep& sweep, PartStats& st) {
  st.rules = uint32_t(filed.size());
  std::vector<uint32_t> order(filed.size());
  std::iota(order.begin(), order.end(), 0u);
  // (start asc, end desc): containers first; then rank asc (filed is in rank order).
  std::stable_sort(order.begin(), order.end(), [&](uint32_t a, uint32_t b) {
    if (filed[a].start != filed[b].start) return filed[a].start < filed[b].start;
    return filed[a].end > filed[b].end;
  });
  struct Open {
    uint32_t end;
    SplitList run;
  };
  std::vector<Open> stack;
  std::vector<SplitCand> merged;
  auto top_run = [&] { return stack.empty() ? SplitList{} : stack.back().run; };
  for (size_t i = 0; i < order.size();) {
    const Filed& f = filed[order[i]];
    size_t j       = i;
    while (j < order.size() && filed[order[j]].start == f.start && filed[order[j]].end == f.end)
      ++j;
    while (!stack.empty() && stack.back().end < f.start) {
      const uint32_t after = stack.back().end + 1;
      stack.pop_back();
      sweep.emit(after, top_run());
    }
    // This prefix's run: its own rules (order[i, j), ascending rank) merged with its
    // container's run.
    const SplitList outer = top_run();
    merged.clear();
    size_t a = i, b = 0;
    while (a < j || b < outer.count) {
      if (b == outer.count || (a < j && filed[order[a]].cand.rank < cands[outer.offset + b].rank))
        merged.push_back(filed[order[a++]].cand);
      else
        merged.push_back(cands[outer.offset + b++]);
    }
    if (cands.size() + merged.size() > max_cands)
      return Status(Errc::kCapacity,
                    std::string("split: the candidate runs of the part ") + name + " pass " +
                        std::to_string(max_cands) + " entries (" +
                        mib(max_cands * sizeof(SplitCand)) +
                        ", the image limit): too many rules under nested prefixes");
    const SplitList run{uint32_t(cands.size()), uint32_t(merged.size())};
    cands.insert(cands.end(), merged.begin(), merged.end());
    stack.push_back({f.end, run});
    sweep.emit(f.start, run);
    ++st.prefixes;
    i = j;
  }
  while (!stack.empty()) {
    const uint32_t end = stack.back().end;
    stack.pop_back();
    if (end != 0xFFFF'FFFFu) sweep.emit(end + 1, top_run());
  }
  for (const SplitList& l : sweep.lists) {
    st.run_total += l.count;
    st.max_run = std::max(st.max_run, l.count);
  }
  return Status::ok();
}

}  // namespace

Result<std::unique_ptr<SplitImage>> SplitImage::build(const RuleSet& rules, uint64_t max_bytes,
                                                      uint32_t min_prefix) {
  if (min_prefix) return build_with(rules, max_bytes, min_prefix, max_bytes);
  std::string tried;
  const size_t n = std::size(kSplitMinPrefixes);
  for (size_t i = 0; i < n; ++i) {
    auto img =
        build_with(rules, max_bytes, kSplitMinPrefixes[i], i + 1 < n ? max_bytes / 4 : max_bytes);
    if (img.is_ok() || img.status().code() != Errc::kCapacity) return img;
    tried += (tried.empty() ? "" : "; ") + img.status().message();
  }
  return Status(Errc::kCapacity, tried);
}

Result<std::unique_ptr<SplitImage>> SplitImage::build_with(const RuleSet& rules, uint64_t max_bytes,
                                                           uint32_t min_prefix,
                                                           uint64_t rest_bytes) {
  if (rules.layout != KeyLayout::kFiveTuple)
    return Status(Errc::kNotSupported, "address split classifies 5-tuple rules only");
  const uint32_t n = uint32_t(rules.rules.size());
  std::vector<uint32_t> rank_index(n);
  std::iota(rank_index.begin(), rank_index.end(), 0u);
  std::stable_sort(rank_index.begin(), rank_index.end(), [&](uint32_t x, uint32_t y) {
    return rules.rules[x].priority > rules.rules[y].priority;
  });

  // Where each rule goes: 0 by source, 1 by destination, 2 rest, 3 never matches.
  std::vector<uint8_t> part(n, 2), ranges(n, 1);  // ranges: both ports are ranges
  std::vector<SplitCand> base(n);                 // per rank: the check without the indexed address
  std::unordered_map<uint64_t, uint32_t> sharing[2];  // (address, length) -> rules
  auto prefix_key = [](uint32_t value, int len) { return uint64_t(value) << 6 | uint32_t(len); };
  for (uint32_t rank = 0; rank < n; ++rank) {
    const Rule& r  = rules.rules[rank_index[rank]];
    SplitCand& c   = base[rank];
    const Ports sp = port_range(r.sport_lo, r.sport_hi, r.value[2] >> 16, r.mask[2] >> 16,
                                c.sport_lo, c.sport_hi);
    const Ports dp = port_range(r.dport_lo, r.dport_hi, r.value[2] & 0xFFFFu, r.mask[2] & 0xFFFFu,
                                c.dport_lo, c.dport_hi);
    c.proto        = r.value[3];
    c.proto_mask   = r.mask[3];
    c.rank         = rank;
    c.index        = rank_index[rank];
    if (sp == Ports::kNever || dp == Ports::kNever) {
      part[rank] = 3;
      continue;
    }
    if (sp == Ports::kNotRange || dp == Ports::kNotRange) {
      ranges[rank] = 0;
      continue;
    }
    for (unsigned w = 0; w < 2; ++w) {
      const int len = prefix_len(r.mask[w]);
      if (len >= int(min_prefix)) ++sharing[w][prefix_key(r.value[w], len)];
    }
  }
  for (uint32_t rank = 0; rank < n; ++rank) {
    if (part[rank] == 3 || !ranges[rank]) continue;
    const Rule& r = rules.rules[rank_index[rank]];
    int len[2];
    uint32_t shared[2] = {0, 0};
    for (unsigned w = 0; w < 2; ++w) {
      len[w]    = prefix_len(r.mask[w]);
      auto it   = sharing[w].find(prefix_key(r.value[w], len[w]));
      shared[w] = it == sharing[w].end() || len[w] < int(min_prefix) ? 0 : it->second;
    }
    if (!shared[0] && !shared[1]) continue;  // rest
    if (!shared[1])
      part[rank] = 0;
    else if (!shared[0])
      part[rank] = 1;
    else if (shared[0] != shared[1])
      part[rank] = shared[0] < shared[1] ? 0 : 1;
    else
      part[rank] = len[1] > len[0] ? 1 : 0;
  }

  std::unique_ptr<SplitImage> img(new SplitImage());
  img->min_prefix_         = min_prefix;
  const uint64_t max_cands = max_bytes / sizeof(SplitCand);
  std::vector<SplitCand> cands;
  Sweep sweep[2];
  PartStats st[2];
  for (unsigned p = 0; p < 2; ++p) {
    std::vector<Filed> filed;
    for (uint32_t rank = 0; rank < n; ++rank) {
      if (part[rank] != p) continue;
      const Rule& r = rules.rules[rank_index[rank]];
      Filed f;
      f.start           = r.value[p];
      f.end             = r.value[p] | ~r.mask[p];
      f.cand            = base[rank];
      f.cand.other      = r.value[1 - p];
      f.cand.other_mask = r.mask[1 - p];
      filed.push_back(f);
    }
    if (filed.empty()) continue;
    WARPATH_TRY(
        build_part(filed, p ? "by destination" : "by source", max_cands, cands, sweep[p], st[p]));
  }
  for (uint32_t rank = 0; rank < n; ++rank) {
    Counts& k = img->counts_;
    (part[rank] == 0   ? k.by_source
     : part[rank] == 1 ? k.by_destination
     : part[rank] == 2 ? k.rest
                       : k.never_match)++;
  }

  PackedTables& t = img->tables_;
  uint64_t used   = 0;
  std::string d   = "min prefix /" + std::to_string(min_prefix) + "; ";
  for (unsigned p = 0; p < 2; ++p) {
    IndexLayout& L   = img->part_[p];
    const char* name = p ? "by destination" : "by source";
    if (st[p].rules == 0) {
      d += std::string(name) + " 0 rules; ";
      continue;
    }
    const std::vector<uint32_t>& bounds = sweep[p].bounds;
    const uint32_t m                    = uint32_t(bounds.size());
    // Layer sizes, leaves last.
    std::vector<uint32_t> sizes{(m + core::kSplitNodeKeys - 1) / core::kSplitNodeKeys};
    while (sizes.back() > 1)
      sizes.push_back((sizes.back() + core::kSplitFanout - 1) / core::kSplitFanout);
    std::reverse(sizes.begin(), sizes.end());
    if (sizes.size() > core::kSplitMaxLayers)
      return Status(Errc::kCapacity, "split: index too deep");
    L.layers    = uint32_t(sizes.size());
    L.bounds    = m;
    uint32_t at = 0;
    for (uint32_t l = 0; l < L.layers; ++l) {
      L.layer_start[l] = at;
      L.layer_nodes[l] = sizes[l];
      at += sizes[l];
    }
    std::vector<uint32_t> nodes(uint64_t(at) * core::kSplitNodeKeys, 0xFFFF'FFFFu);
    const uint32_t leaf = L.layers - 1;
    std::copy(bounds.begin(), bounds.end(),
              nodes.begin() + uint64_t(L.layer_start[leaf]) * core::kSplitNodeKeys);
    for (uint32_t l = 0; l < leaf; ++l)
      for (uint32_t k = 0; k < sizes[l]; ++k)
        for (uint32_t j = 0; j < core::kSplitNodeKeys; ++j) {
          // Child j + 1's first key: the first key of its leftmost leaf.
          uint64_t c = uint64_t(k) * core::kSplitFanout + j + 1;
          if (c >= sizes[l + 1]) break;
          for (uint32_t below = l + 1; below < leaf; ++below) c *= core::kSplitFanout;
          nodes[(uint64_t(L.layer_start[l]) + k) * core::kSplitNodeKeys + j] =
              bounds[c * core::kSplitNodeKeys];
        }
    L.nodes = t.add_words(nodes);
    std::vector<uint32_t> lists(uint64_t(m) * 2);
    std::memcpy(lists.data(), sweep[p].lists.data(), lists.size() * 4);
    L.lists = t.add_words(lists);
    used += nodes.size() * 4 + lists.size() * 4;
    char buf[200];
    std::snprintf(buf, sizeof buf,
                  "%s %u rules, %u prefixes, %u intervals, %u layers, run mean %.2f max %u; ", name,
                  st[p].rules, st[p].prefixes, m, L.layers, double(st[p].run_total) / m,
                  st[p].max_run);
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

  // The rest: an RFC tree over those rules alone, in rank order.
  RuleSet rest;
  std::vector<uint32_t> rest_rank, rest_index;
  for (uint32_t rank = 0; rank < n; ++rank)
    if (part[rank] == 2) {
      rest.rules.push_back(rules.rules[rank_index[rank]]);
      rest_rank.push_back(rank);
      rest_index.push_back(rank_index[rank]);
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
                        ": " + rfc.status().message());
    img->rest_        = std::move(rfc).value();
    img->rest_tables_ = t.add_bytes(img->rest_->data(), img->rest_->bytes());
    d += "rest " + std::to_string(rest.rules.size()) + " rules (RFC " + mib(img->rest_->bytes()) +
         ")";
    img->rest_->release_tables();
    img->rest_rank_  = t.add_words(rest_rank);
    img->rest_index_ = t.add_words(rest_index);
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
  for (unsigned p = 0; p < 2; ++p) {
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
  if (rest_) {
    v.has_rest   = 1;
    v.rest       = rest_->view(base + rest_tables_.offset);
    v.rest_rank  = reinterpret_cast<const uint32_t*>(base + rest_rank_.offset);
    v.rest_index = reinterpret_cast<const uint32_t*>(base + rest_index_.offset);
  }
  return v;
}

}  // namespace warpath::classify::detail
