// src/lookup/bsl6_image.cpp: builds the binary-search-on-lengths image (see bsl6_image.hpp).
#include "lookup/bsl6_image.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>

namespace warpath::lookup::detail {
namespace {

using core::Bsl6Bucket;
using core::Bsl6Node;
using core::kBsl6MaxProbe;

// Share of a table's slots in use: half keeps overflow into a second line rare (measured on
// the full table: see cpu/bsl6_cpu.cpp) at about 25 bytes per entry.
constexpr double kLoad = 0.5;

// The traffic a leaf's search tree is shaped for: each prefix under the leaf equally likely
// (on the full table this takes the mean search under a random prefix from 2.29 probes with
// the table-wide length counts to 1.93), plus this share (of the leaf's prefixes' weight) for
// addresses that match nothing longer than the leaf. Uniform random addresses rarely reach a leaf
// with a tree (59 of 8,192 /16s of 2000::/3 hold longer prefixes in the full table) and the initial
// array answers them, so the miss gap gets a small weight, enough to keep a miss path short in a
// sparse leaf.
constexpr double kLeafMissShare = 0.1;
// Every gap also gets this share of the mean weight, which bounds the tail: on the full table
// the longest search falls from 9 probes to 6 (3 % of lookups took 7 to 9) while the mean
// stays 2.29. A lockstep burst waits for its longest search, and so does a GPU warp.
constexpr double kGapFloor = 0.5;

constexpr uint32_t kNoBlock = ~0u;

struct Ip6Hash {
  size_t operator()(const Ip6& a) const noexcept { return core::bsl6_hash128(a.hi, a.lo); }
};

struct Entry {
  NextHop nh;
  bool prefix;
};
using Table = std::unordered_map<Ip6, Entry, Ip6Hash>;

std::string route_text(const Route6& r) {
  return format_ipv6(r.prefix) + "/" + std::to_string(unsigned(r.len));
}

uint64_t mask_hi(unsigned len) { return mask6(Ip6{~0ull, ~0ull}, len).hi; }
uint64_t mask_lo(unsigned len) { return mask6(Ip6{~0ull, ~0ull}, len).lo; }

// The search tree that minimises the expected number of probes (Knuth's optimal binary search
// tree; Waldvogel's "asymmetric binary search") over n = weights.size() - 1 sorted lengths. A
// search always ends at a gap between two lengths: an address whose longest match has length
// lens[i] ends in gap i + 1, one that matches nothing longer than the leaf in gap 0.
// weights[g] is the share of lookups ending in gap g. Returns the root (n for an empty tree)
// and fills left/right (n: the terminal node) and the height.
struct Tree {
  uint32_t root = 0, height = 0;
  std::vector<uint32_t> left, right;
};
Tree build_tree(const std::vector<double>& weights) {
  const uint32_t n = uint32_t(weights.size()) - 1;
  // cost[i][j], best[i][j]: keys [i, j), gaps i..j; (n + 1)^2 entries of at most 112^2.
  std::vector<double> cost(size_t(n + 1) * (n + 1), 0.0), sum(n + 2, 0.0);
  std::vector<uint32_t> best(size_t(n + 1) * (n + 1), 0);
  for (uint32_t g = 0; g <= n; ++g) sum[g + 1] = sum[g] + weights[g];
  auto at = [n](uint32_t i, uint32_t j) { return size_t(i) * (n + 1) + j; };
  for (uint32_t width = 1; width <= n; ++width) {
    for (uint32_t i = 0; i + width <= n; ++i) {
      const uint32_t j = i + width;
      double low       = -1;
      // Ties go to the root nearest the middle, so equal weights give a balanced tree.
      auto off = [&](uint32_t r) { return 2 * r > i + j ? 2 * r - i - j : i + j - 2 * r; };
      for (uint32_t r = i; r < j; ++r) {
        const double c = cost[at(i, r)] + cost[at(r + 1, j)];
        if (low < 0 || c < low - 1e-9 || (c <= low + 1e-9 && off(r) < off(best[at(i, j)]))) {
          low            = c;
          best[at(i, j)] = r;
        }
      }
      cost[at(i, j)] = low + sum[j + 1] - sum[i];
    }
  }
  struct Frame {
    uint32_t i, j, depth;
    uint32_t* link;
  };
  Tree t;
  t.root = n;
  t.left.assign(n, n);
  t.right.assign(n, n);
  std::vector<Frame> stack = {{0, n, 1, &t.root}};
  while (!stack.empty()) {
    const Frame f = stack.back();
    stack.pop_back();
    if (f.i >= f.j) continue;
    const uint32_t r = best[at(f.i, f.j)];
    *f.link          = r;
    t.height         = std::max(t.height, f.depth);
    stack.push_back({f.i, r, f.depth + 1, &t.left[r]});
    stack.push_back({r + 1, f.j, f.depth + 1, &t.right[r]});
  }
  return t;
}

struct Slot {
  Ip6 key;
  NextHop nh;
};

uint32_t& meta_of(Bsl6Bucket& b, bool wide) {
  return wide ? b.wide.vals[core::kBsl6WideSlots] : b.narrow.vals[core::kBsl6NarrowSlots];
}

// Hashes `slots` into `nb` home buckets (+ kBsl6MaxProbe - 1 spares) starting at out[0].
// False when a key cannot be placed within the probe bound or a probe run would exceed it.
bool place(const std::vector<Slot>& slots, bool wide, uint32_t nb, Bsl6Bucket* out) {
  const uint32_t cap = wide ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
  const uint32_t all = nb + kBsl6MaxProbe - 1;
  for (uint32_t b = 0; b < all; ++b) {
    if (wide)
      out[b].wide = core::Bsl6Wide{};
    else
      out[b].narrow = core::Bsl6Narrow{};
  }
  for (const Slot& s : slots) {
    const uint64_t h = wide ? core::bsl6_hash128(s.key.hi, s.key.lo) : core::bsl6_hash64(s.key.hi);
    const uint32_t home = core::bsl6_home(h, nb);
    uint32_t d          = 0;
    while (d < kBsl6MaxProbe && (meta_of(out[home + d], wide) & 0xFFu) == cap) ++d;
    if (d == kBsl6MaxProbe) return false;
    for (uint32_t k = 0; k < d; ++k) meta_of(out[home + k], wide) |= core::kBsl6Overflow;
    Bsl6Bucket& b    = out[home + d];
    const uint32_t i = meta_of(b, wide) & 0xFFu;
    if (wide) {
      b.wide.his[i]  = s.key.hi;
      b.wide.los[i]  = s.key.lo;
      b.wide.vals[i] = s.nh;
    } else {
      b.narrow.keys[i] = s.key.hi;
      b.narrow.vals[i] = s.nh;
    }
    meta_of(b, wide) += 1;
  }
  // A lookup walks on while the overflow flag is set: bound the longest such walk too.
  uint32_t run = 0;
  for (uint32_t b = 0; b < all; ++b) {
    run = (meta_of(out[b], wide) & core::kBsl6Overflow) ? run + 1 : 0;
    if (run >= kBsl6MaxProbe) return false;
  }
  return true;
}

// The leaf (index into starts) an address under prefix p falls in, given the /16's block.
uint32_t leaf_of(Ip6 p, const std::vector<uint32_t>& block_of) {
  const uint32_t top = uint32_t(p.hi >> 48);
  if (block_of[top] == kNoBlock) return top;
  return core::kBsl6TopEntries + (block_of[top] << core::kBsl6BlockBits) +
         (uint32_t(p.hi >> 40) & 0xFFu);
}
unsigned leaf_depth(uint32_t leaf) { return leaf < core::kBsl6TopEntries ? 16 : 24; }

}  // namespace

Result<std::unique_ptr<Bsl6Image>> Bsl6Image::build(const std::vector<Route6>& routes,
                                                    uint32_t max_blocks) {
  try {
    // Validate and collect the prefixes of each length.
    std::vector<Table> by_len(129);
    NextHop default_nh = kNoRoute;
    for (const Route6& r : routes) {
      if (r.len > 128)
        return Status(Errc::kInvalidArgument,
                      "route " + route_text(r) + ": prefix length above 128");
      if (r.nh > kMaxNextHop)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": next hop " +
                                                  std::to_string(r.nh) + " above the maximum " +
                                                  std::to_string(kMaxNextHop));
      if (mask6(r.prefix, r.len) != r.prefix)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": host bits set");
      if (!by_len[r.len].emplace(r.prefix, Entry{r.nh, true}).second)
        return Status(Errc::kInvalidArgument, "route " + route_text(r) + ": duplicate prefix");
      if (r.len == 0) default_nh = r.nh;
    }

    std::unique_ptr<Bsl6Image> img(new Bsl6Image());
    img->routes_     = routes.size();
    img->default_nh_ = default_nh;

    // 1. Blocks: the /16s holding prefixes longer than 16, most such prefixes first, up to
    //    max_blocks (the rest keep one tree over all their lengths).
    std::vector<uint32_t> longer(core::kBsl6TopEntries, 0);
    for (unsigned len = 17; len <= 128; ++len)
      for (const auto& [prefix, e] : by_len[len]) ++longer[prefix.hi >> 48];
    std::vector<uint32_t> dense;
    for (uint32_t top = 0; top < core::kBsl6TopEntries; ++top)
      if (longer[top] > 0) dense.push_back(top);
    std::stable_sort(dense.begin(), dense.end(),
                     [&](uint32_t x, uint32_t y) { return longer[x] > longer[y]; });
    if (dense.size() > max_blocks) dense.resize(max_blocks);
    std::sort(dense.begin(), dense.end());  // blocks in address order
    std::vector<uint32_t> block_of(core::kBsl6TopEntries, kNoBlock);
    for (uint32_t b = 0; b < dense.size(); ++b) block_of[dense[b]] = b;
    img->blocks_ = uint32_t(dense.size());

    // 2. The initial array: the /16 leaves painted with routes of length <= 16, shortest
    //    first, then each block with its /16's bmp and the routes of length 17..24 under it.
    auto& starts = img->starts_;
    starts.assign(core::kBsl6TopEntries + (size_t(dense.size()) << core::kBsl6BlockBits),
                  core::Bsl6Start{default_nh, core::kBsl6Terminal});
    for (unsigned len = 1; len <= 16; ++len)
      for (const auto& [prefix, e] : by_len[len]) {
        const uint32_t first = uint32_t(prefix.hi >> 48), count = 1u << (16 - len);
        for (uint32_t k = 0; k < count; ++k) starts[first + k].bmp = e.nh;
      }
    for (uint32_t b = 0; b < dense.size(); ++b) {
      core::Bsl6Start* blk = &starts[core::kBsl6TopEntries + (size_t(b) << core::kBsl6BlockBits)];
      for (uint32_t k = 0; k < (1u << core::kBsl6BlockBits); ++k) blk[k].bmp = starts[dense[b]].bmp;
      starts[dense[b]].node = core::kBsl6Block | b;
    }
    for (unsigned len = 17; len <= 24; ++len)
      for (const auto& [prefix, e] : by_len[len]) {
        const uint32_t top = uint32_t(prefix.hi >> 48);
        if (block_of[top] == kNoBlock) continue;
        const uint32_t first = leaf_of(prefix, block_of), count = 1u << (24 - len);
        for (uint32_t k = 0; k < count; ++k) starts[first + k].bmp = e.nh;
      }

    // 3. The lengths below each leaf and how many prefixes each has there; one search tree
    //    per distinct profile (the lengths with their counts rounded to half powers of two,
    //    so that leaves of similar shape share a tree). Weights: a length's count under the
    //    leaf (each prefix equally likely), a small share for addresses matching nothing
    //    longer than the leaf, and a floor on every gap.
    std::unordered_map<uint32_t, std::vector<uint32_t>> leaf_count;  // leaf -> count by length
    for (unsigned len = 17; len <= 128; ++len)
      for (const auto& [prefix, e] : by_len[len]) {
        const uint32_t leaf = leaf_of(prefix, block_of);
        if (len <= leaf_depth(leaf)) continue;
        std::vector<uint32_t>& count = leaf_count[leaf];
        if (count.empty()) count.assign(129, 0);
        ++count[len];
      }
    std::vector<unsigned> node_len = {0};  // node -> length (0: terminal)
    auto& nodes                    = img->nodes_;
    nodes.assign(1, Bsl6Node{});  // the terminal node: masks 0, bucket 0, children 0
    nodes[0].buckets = 1;
    std::map<std::vector<uint32_t>, uint32_t> tree_of;  // profile -> root
    // Leaves in index order so that node numbering (and the image) is the same on every run.
    std::vector<uint32_t> leaves;
    leaves.reserve(leaf_count.size());
    for (const auto& [leaf, count] : leaf_count) leaves.push_back(leaf);
    std::sort(leaves.begin(), leaves.end());
    for (const uint32_t leaf : leaves) {
      const std::vector<uint32_t>& count = leaf_count[leaf];
      std::vector<unsigned> lens;
      std::vector<uint32_t> profile;  // length, rounded log2 count, length, ...
      for (unsigned len = 17; len <= 128; ++len) {
        if (count[len] == 0) continue;
        lens.push_back(len);
        profile.push_back(len);
        profile.push_back(uint32_t(std::lround(2 * std::log2(double(count[len])))));
      }
      auto [it, fresh] = tree_of.try_emplace(profile, 0);
      if (fresh) {
        std::vector<double> weights(lens.size() + 1, 0.0);
        double total = 0;
        for (size_t i = 0; i < lens.size(); ++i)
          total += weights[i + 1] = std::exp2(profile[2 * i + 1] / 2.0);
        weights[0] = total * kLeafMissShare;
        for (double& w : weights) w += kGapFloor * total / double(lens.size() + 1);
        const Tree t     = build_tree(weights);
        const uint32_t n = uint32_t(lens.size()), base = uint32_t(nodes.size());
        if (uint64_t(base) + n >= core::kBsl6Block)
          return Status(Errc::kCapacity, "IPv6 image too large");
        auto global = [&](uint32_t local) {
          return local == n ? core::kBsl6Terminal : base + local;
        };
        for (uint32_t i = 0; i < n; ++i) {
          Bsl6Node node{};
          node.mask_hi = mask_hi(lens[i]);
          node.mask_lo = mask_lo(lens[i]);
          node.left    = global(t.left[i]);
          node.right   = global(t.right[i]);
          nodes.push_back(node);
          node_len.push_back(lens[i]);
        }
        it->second   = global(t.root);
        img->height_ = std::max(img->height_, t.height);
        ++img->trees_;
      }
      starts[leaf].node = it->second;
    }

    // 4. Hash table contents: every prefix below its leaf's depth, and the markers of its
    //    path: the prefix cut to every length where the path turns right.
    std::vector<Table> tables(129);
    for (unsigned len = 17; len <= 128; ++len)
      for (const auto& [prefix, e] : by_len[len]) {
        const uint32_t leaf = leaf_of(prefix, block_of);
        if (len <= leaf_depth(leaf)) continue;
        tables[len].try_emplace(prefix, e).first->second = e;  // a marker becomes the prefix
        for (uint32_t node = starts[leaf].node; node_len[node] != len;) {
          const unsigned l = node_len[node];
          if (l < len) {
            tables[l].try_emplace(mask6(prefix, l), Entry{kNoRoute, false});
            node = nodes[node].right;
          } else {
            node = nodes[node].left;
          }
        }
      }
    // A marker's next hop: its best matching real prefix (::/0 included).
    std::vector<unsigned> all_lens;  // lengths with prefixes, ascending
    for (unsigned len = 1; len <= 128; ++len)
      if (!by_len[len].empty()) all_lens.push_back(len);
    for (unsigned len = 17; len <= 128; ++len) {
      for (auto& [key, e] : tables[len]) {
        if (e.prefix) continue;
        ++img->markers_;
        e.nh = default_nh;
        for (size_t j = all_lens.size(); j-- > 0;) {
          if (all_lens[j] >= len) continue;
          const auto found = by_len[all_lens[j]].find(mask6(key, all_lens[j]));
          if (found != by_len[all_lens[j]].end()) {
            e.nh = found->second.nh;
            break;
          }
        }
      }
    }

    // 5. Hash tables, one per length in use. Bucket 0 is the terminal node's, always empty.
    std::vector<uint32_t> first_bucket(129, 0), nbs(129, 0);
    std::vector<std::vector<Slot>> slots(129);
    uint64_t total = 1;
    std::vector<Bsl6Bucket> scratch;
    for (unsigned len = 17; len <= 128; ++len) {
      if (tables[len].empty()) continue;
      ++img->lengths_;
      std::vector<Slot>& sl = slots[len];
      sl.reserve(tables[len].size());
      for (const auto& [key, e] : tables[len]) sl.push_back(Slot{key, e.nh});
      // Key order, not unordered_map order, so the image is the same on every run.
      std::sort(sl.begin(), sl.end(), [](const Slot& x, const Slot& y) {
        return x.key.hi != y.key.hi ? x.key.hi < y.key.hi : x.key.lo < y.key.lo;
      });
      const bool wide    = len > 64;
      const uint32_t cap = wide ? core::kBsl6WideSlots : core::kBsl6NarrowSlots;
      const double want  = double(sl.size()) / (cap * kLoad);
      if (want > double(1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
      nbs[len] = std::max<uint32_t>(1, uint32_t(want + 1));
      for (;;) {
        scratch.resize(size_t(nbs[len]) + kBsl6MaxProbe - 1);
        if (place(sl, wide, nbs[len], scratch.data())) break;
        const uint64_t grown = uint64_t(nbs[len]) + nbs[len] / 4 + 1;
        if (grown > (1u << 31)) return Status(Errc::kCapacity, "IPv6 image too large");
        nbs[len] = uint32_t(grown);
      }
      first_bucket[len] = uint32_t(total);
      total += uint64_t(nbs[len]) + kBsl6MaxProbe - 1;
      if (total > 0xFFFF'FFFFull) return Status(Errc::kCapacity, "IPv6 image too large");
    }
    img->buckets_.resize(total);
    img->buckets_[0].narrow = core::Bsl6Narrow{};
    for (unsigned len = 17; len <= 128; ++len)
      if (!slots[len].empty())
        place(slots[len], len > 64, nbs[len], img->buckets_.data() + first_bucket[len]);
    for (size_t i = 1; i < nodes.size(); ++i) {
      nodes[i].first_bucket = first_bucket[node_len[i]];
      nodes[i].buckets      = nbs[node_len[i]];
    }
    return img;
  } catch (const std::bad_alloc&) {
    return Status(Errc::kOutOfMemory, "out of memory building the IPv6 image");
  }
}

core::Bsl6View Bsl6Image::view() const noexcept {
  core::Bsl6View v;
  v.starts     = starts_.data();
  v.nodes      = nodes_.data();
  v.buckets    = buckets_.data();
  v.height     = height_;
  v.default_nh = default_nh_;
  return v;
}

uint64_t Bsl6Image::memory_bytes() const noexcept {
  return starts_.size() * sizeof(core::Bsl6Start) + nodes_.size() * sizeof(core::Bsl6Node) +
         buckets_.size() * sizeof(core::Bsl6Bucket);
}

}  // namespace warpath::lookup::detail
